package callback

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckoutIPNGET(t *testing.T) {
	a, b := testKeys(t)
	v := newTestVerifier(t)
	target := fixture(t, "checkout_ipn.target")

	c, err := v.CheckoutIPN(signedGET(t, a, target))
	require.NoError(t, err)
	assert.Equal(t, "https://pay.example/payment/aB3dE5fG7h", c.PaymentURL)
	assert.Equal(t, "https://shop.example/thanks?order=A-77", c.RedirectURL)
	assertDec(t, "49.90", c.Value)
	assert.Equal(t, "usd", c.Currency)
	assert.Equal(t, "1", c.IsPaid)
	assertDec(t, "49.93", c.PaidAmount)
	assert.Equal(t, "trc20_usdt", c.PaidCoin)
	assertDec(t, "0.9994", c.ExchangeRate)
	require.Len(t, c.TxIDs, 2)
	assert.True(t, strings.HasPrefix(c.TxIDs[1], "b2c3"))
	assert.Equal(t, "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7", c.Address)
	assert.Equal(t, "done", c.Status)
	assert.Equal(t, url.Values{"order_id": {"A-77"}}, c.Custom)
	assert.True(t, c.Paid())
	assert.True(t, c.TokenMatches("qRk2Vn8ZtY4wPc6LsD0hFj"))
	assert.False(t, c.TokenMatches("qRk2Vn8ZtY4wPc6LsD0hFk"))
	assert.False(t, c.TokenMatches(""))

	_, err = v.CheckoutIPN(signedGET(t, b, target))
	assert.ErrorIs(t, err, ErrBadSignature)
	_, err = v.CheckoutIPN(signedGET(t, nil, target))
	assert.ErrorIs(t, err, ErrMissingSignature)
	r := signedGET(t, a, target)
	r.RequestURI = strings.Replace(target, "is_paid=1", "is_paid=0", 1)
	_, err = v.CheckoutIPN(r)
	assert.ErrorIs(t, err, ErrBadSignature)
}

func TestCheckoutIPNPOST(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	form := url.Values{
		"payment_url": {"https://pay.example/payment/x"}, "value": {"10"}, "success_token": {"tok"},
		"currency": {"eur"}, "is_paid": {"done"}, "paid_amount": {"0.0003"}, "paid_coin": {"btc"},
		"exchange_rate": {"33333.33"}, "txid": {"t1"}, "address": {"bc1q"}, "status": {"done"},
	}.Encode()
	c, err := v.CheckoutIPN(signedPOST(t, a, "/ipn?order_id=9", formType, form))
	require.NoError(t, err)
	assert.Equal(t, []string{"t1"}, c.TxIDs)
	assert.Equal(t, url.Values{"order_id": {"9"}}, c.Custom)
	assert.True(t, c.Paid())

	jsonBody := `{"value": 10, "success_token": "tok", "is_paid": 1, "paid_amount": "0.0003", "txid": "t1, t2,", "status": "done"}`
	c, err = v.CheckoutIPN(signedPOST(t, a, "/ipn", "application/json", jsonBody))
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t2"}, c.TxIDs)
	assert.True(t, c.Paid())

	_, err = v.CheckoutIPN(signedPOST(t, a, "/ipn", formType, "paid_amount=lots"))
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestCheckoutIPNPaid(t *testing.T) {
	tests := []struct {
		isPaid, status string
		want           bool
	}{
		{"1", "done", true},
		{"true", "", true},
		{"DONE", "Done", true},
		{" 1 ", "done", true},
		{"0", "done", false},
		{"", "done", false},
		{"false", "", false},
		{"pending", "", false},
		{"1", "pending", false},
		{"1", "expired", false},
		{"yes", "done", false},
	}
	for _, tt := range tests {
		t.Run(tt.isPaid+"/"+tt.status, func(t *testing.T) {
			assert.Equal(t, tt.want, (&CheckoutIPN{IsPaid: tt.isPaid, Status: tt.status}).Paid())
		})
	}
}

func TestDepositIPN(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	body := fixture(t, "deposit_ipn_post.body") + "&network_fee=0.0001"
	d, err := v.DepositIPN(signedPOST(t, a, "/ipn/deposit?user=42", formType, body))
	require.NoError(t, err)
	assert.Equal(t, "https://pay.example/deposit/z9Y8x7W6v5", d.PaymentURL)
	assertDec(t, "0.015", d.PaidAmount)
	assert.Equal(t, "eth", d.PaidCoin)
	assertDec(t, "3120.44", d.ExchangeRate)
	assertDec(t, "46.81", d.Value)
	assert.Len(t, d.TxIDs, 1)
	assert.Equal(t, "done", d.Status)
	assert.True(t, d.Paid())
	assert.Equal(t, url.Values{"user": {"42"}}, d.Custom)
	assert.Equal(t, "0.0001", d.Raw.Get("network_fee"), "fields not modelled are kept")

	// GET: unknown fields count as custom, and stay in Raw.
	target := "/ipn/deposit?user=42&" + fixture(t, "deposit_ipn_post.body")
	d, err = v.DepositIPN(signedGET(t, a, target))
	require.NoError(t, err)
	assert.Equal(t, url.Values{"user": {"42"}}, d.Custom)
	assert.Equal(t, "42", d.Raw.Get("user"))

	_, err = v.DepositIPN(signedPOST(t, a, "/ipn", formType, body+"&txid=again"))
	assert.ErrorIs(t, err, ErrMalformed)
	_, err = v.DepositIPN(signedPOST(t, nil, "/ipn", formType, body))
	assert.ErrorIs(t, err, ErrMissingSignature)
	r := signedPOST(t, a, "/ipn", formType, body)
	r.Method = http.MethodPatch
	_, err = v.DepositIPN(r)
	assert.ErrorIs(t, err, ErrMethod)
}

func TestDepositIPNPaid(t *testing.T) {
	tests := []struct {
		isPaid, status string
		want           bool
	}{
		{"", "done", true},
		{"", "", false},
		{"", "pending", false},
		{"1", "", true},
		{"1", "done", true},
		{"0", "done", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, (&DepositIPN{IsPaid: tt.isPaid, Status: tt.status}).Paid(), "%q/%q", tt.isPaid, tt.status)
	}
}

func TestStatusCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{ErrBodyTooLarge, 413},
		{ErrMethod, 405},
		{ErrMissingSignature, 401},
		{ErrMalformedSignature, 403},
		{ErrBadSignature, 403},
		{ErrUnknownAddress, 403},
		{ErrNoPublicKey, 503},
		{malformed("x", "y"), 400},
		{ErrPublicURLRequired, 500},
		{ErrNoPaymentKey, 500},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, StatusCode(tt.err), "%v", tt.err)
	}
}

func TestCheckoutIPNHidesSuccessToken(t *testing.T) {
	ipn := &CheckoutIPN{PaymentURL: "https://pay.example/p/1/", SuccessToken: "tok-secret-123",
		Raw: url.Values{"success_token": {"tok-secret-123"}}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d"} {
		for _, v := range []any{ipn, *ipn, []CheckoutIPN{*ipn}} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "tok-secret-123", "%s of %T", verb, v)
			assert.Contains(t, out, "https://pay.example/p/1/", "%s of %T", verb, v)
		}
	}
}

// TestIPNFieldsOfTheAPIKeyService: the fields the API-key service's
// plugins read are named, with amounts as numbers or text, and fields the
// SDK does not know stay in Raw without leaking into Custom.
func TestIPNFieldsOfTheAPIKeyService(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	for name, body := range map[string]string{
		"form": url.Values{
			"payment_id": {"OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2"}, "paid_amount_fiat": {"49.93"}, "received_amount": {"0.0005"},
			"received_amount_fiat": {"30.01"}, "type": {"payment"}, "is_paid": {"0"}, "status": {"done"},
			"value": {"60"}, "currency": {"usd"}, "paid_coin": {"btc"}, "next_field": {"kept"},
		}.Encode(),
		"json": `{"payment_id":"OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2","paid_amount_fiat":49.93,"received_amount":0.0005,` +
			`"received_amount_fiat":"30.01","type":"payment","is_paid":0,"status":"done","value":60,"currency":"usd","paid_coin":"btc","next_field":"kept"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ct := formType
			if name == "json" {
				ct = "application/json"
			}
			c, err := v.CheckoutIPN(signedPOST(t, a, "/ipn?order_id=9", ct, body))
			require.NoError(t, err)
			assert.Equal(t, "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2", c.PaymentID)
			assertDec(t, "49.93", c.PaidAmountFiat)
			assertDec(t, "0.0005", c.ReceivedAmount)
			assertDec(t, "30.01", c.ReceivedAmountFiat)
			assert.Equal(t, "payment", c.Type)
			assert.False(t, c.Paid(), "a partial payment's IPN is not paid")
			assert.Equal(t, "kept", c.Raw.Get("next_field"))
			assert.Equal(t, url.Values{"order_id": {"9"}}, c.Custom)

			d, err := v.DepositIPN(signedPOST(t, a, "/deposit?user=5", ct, body))
			require.NoError(t, err)
			assert.Equal(t, "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2", d.PaymentID)
			assertDec(t, "49.93", d.PaidAmountFiat)
			assertDec(t, "0.0005", d.ReceivedAmount)
			assertDec(t, "30.01", d.ReceivedAmountFiat)
			assert.Equal(t, "payment", d.Type)
			assert.Equal(t, "kept", d.Raw.Get("next_field"))
			assert.Equal(t, url.Values{"user": {"5"}}, d.Custom)
		})
	}
}
