package callback

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// assertDec compares amounts by value, so "3.20" equals "3.2".
func assertDec(t *testing.T, want string, got decimal.Decimal, msg ...any) {
	t.Helper()
	assert.True(t, dec(want).Equal(got), "want %s, got %s %v", want, got, msg)
}

func getReq(target string) *http.Request { return httptest.NewRequest(http.MethodGet, target, nil) }

func postReq(target, ctype, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	r.Header.Set("Content-Type", ctype)
	return r
}

func TestParseFixtureGETPending(t *testing.T) {
	p, err := ParseUnverified(getReq(fixture(t, "get_pending.target")))
	require.NoError(t, err)
	assert.Equal(t, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2", p.UUID)
	assert.Equal(t, "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7", p.AddressIn)
	assert.Equal(t, "TFzwG8xXcYvxcqwd3DKj1HaVk6c6okZ9na", p.AddressOut)
	assert.Equal(t, "trc20_usdt", p.Coin)
	assert.True(t, p.Pending)
	assert.False(t, p.Confirmed())
	assert.Equal(t, 0, p.Confirmations)
	assertDec(t, "3.2", p.ValueCoin)
	assertDec(t, "3200000", p.Value)
	assertDec(t, "1.0003", p.Price)
	require.Len(t, p.ValueCoinConvert, 2)
	assertDec(t, "3.20", p.ValueCoinConvert["USD"])
	assertDec(t, "2.94", p.ValueCoinConvert["EUR"])
	assert.Nil(t, p.ValueForwardedCoinConvert)
	assert.Equal(t, url.Values{"order_id": {"1042"}, "nonce": {"7f3c9a21e0b84d56"}}, p.Custom)
	assert.Equal(t, "1042", p.Raw.Get("order_id"))
	assert.Equal(t, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2:pending", PaymentKey(p))
}

func TestParseFixtureGETConfirmed(t *testing.T) {
	p, err := ParseUnverified(getReq(fixture(t, "get_confirmed.target")))
	require.NoError(t, err)
	assert.False(t, p.Pending)
	assert.Equal(t, 1, p.Confirmations)
	assert.Equal(t, "5e0c1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6", p.TxIDOut)
	assertDec(t, "3.168", p.ValueForwardedCoin)
	assertDec(t, "3168000", p.ValueForwarded)
	assertDec(t, "0.032", p.FeeCoin)
	assertDec(t, "32000", p.Fee)
	assertDec(t, "3.17", p.ValueForwardedCoinConvert["USD"])
	assert.Equal(t, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2:confirmed", PaymentKey(p))
}

func TestParseFixturePOSTForm(t *testing.T) {
	p, err := ParseUnverified(postReq("/callback?order_id=77", formType, fixture(t, "post_form_confirmed.body")))
	require.NoError(t, err)
	assert.Equal(t, "btc", p.Coin)
	assert.Equal(t, `{"1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP": 0.70, "1PE5U4temq1rFzseHHGE2L8smwHCyRbkx3": 0.30}`, p.AddressOut)
	assertDec(t, "0.00125", p.ValueCoin)
	assertDec(t, "0.0000125", p.FeeCoin)
	assertDec(t, "64210.55", p.Price)
	assert.Equal(t, 2, p.Confirmations)
	assert.Equal(t, url.Values{"order_id": {"77"}}, p.Custom)
	assert.Nil(t, p.ValueCoinConvert)
}

func TestParseFixturePOSTJSON(t *testing.T) {
	body := fixture(t, "post_json_confirmed.json")
	for _, ctype := range []string{"application/json", "application/json; charset=utf-8", "text/plain", ""} {
		p, err := ParseUnverified(postReq("/callback?order_id=5", ctype, body))
		require.NoError(t, err, ctype)
		assert.Equal(t, "7d2f9c1a-3b5e-4a8d-9c0f-1e2a3b4c5d6e", p.UUID)
		assert.Equal(t, "bep20_usdt", p.Coin)
		assert.False(t, p.Pending)
		assert.Equal(t, 12, p.Confirmations)
		assertDec(t, "250000000000000000000", p.Value) // beyond 64 bits
		assertDec(t, "247500000000000000000", p.ValueForwarded)
		assertDec(t, "250", p.ValueCoin)
		assertDec(t, "247.5", p.ValueForwardedCoin)
		assertDec(t, "250.05", p.ValueCoinConvert["USD"])
		assertDec(t, "227.50", p.ValueForwardedCoinConvert["EUR"])
		assert.Equal(t, "done", p.Raw.Get("result"))
		assert.Equal(t, url.Values{"order_id": {"5"}}, p.Custom)
	}
}

func TestParsePendingFlag(t *testing.T) {
	tests := []struct {
		value   string
		pending bool
		ok      bool
	}{
		{"1", true, true},
		{"0", false, true},
		{"true", true, true},
		{"false", false, true},
		{"True", true, true},
		{" 0 ", false, true},
		{"", false, false},
		{"null", false, false},
		{"2", false, false},
		{"maybe", false, false},
	}
	for _, tt := range tests {
		t.Run("form "+tt.value, func(t *testing.T) {
			q := url.Values{"uuid": {"u"}, "address_in": {"a"}, "address_out": {"o"}, "txid_in": {"t"}, "coin": {"btc"}, "price": {"1"}, "pending": {tt.value}}
			p, err := ParseUnverified(postReq("/cb", formType, q.Encode()))
			if !tt.ok {
				assert.ErrorIs(t, err, ErrMalformed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.pending, p.Pending)
		})
	}
	// JSON booleans and numbers.
	for body, want := range map[string]bool{
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":true}`:  true,
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":1}`:     true,
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":false}`: false,
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":"0"}`:   false,
	} {
		p, err := ParseUnverified(postReq("/cb", "application/json", body))
		require.NoError(t, err, body)
		assert.Equal(t, want, p.Pending, body)
	}
	for _, body := range []string{
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1"}`,
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":null}`,
		`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":{"x":1}}`,
	} {
		_, err := ParseUnverified(postReq("/cb", "application/json", body))
		assert.ErrorIs(t, err, ErrMalformed, body)
	}
}

func TestParseMalformed(t *testing.T) {
	base := minimalForm + "&pending=0"
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"missing pending", minimalForm, "pending"},
		{"missing address_in", strings.Replace(base, "address_in=a", "", 1), "address_in"},
		{"blank address_in", strings.Replace(base, "address_in=a", "address_in=+", 1), "address_in"},
		{"missing uuid", strings.Replace(base, "uuid=u", "", 1), "uuid"},
		{"missing address_out", strings.Replace(base, "address_out=o", "", 1), "address_out"},
		{"missing txid_in", strings.Replace(base, "txid_in=t", "", 1), "txid_in"},
		{"missing coin", strings.Replace(base, "coin=btc", "", 1), "coin"},
		{"missing price", strings.Replace(base, "price=1", "", 1), "price"},
		{"bad value_coin", base + "&value_coin=abc", "value_coin"},
		{"bad price", strings.Replace(base, "price=1", "price=1,5", 1), "price"},
		{"huge exponent", base + "&value=1e999999", "value"},
		{"bad confirmations", base + "&confirmations=x", "confirmations"},
		{"negative confirmations", base + "&confirmations=-1", "confirmations"},
		{"bad convert", base + "&value_coin_convert=USD:3", "value_coin_convert"},
		{"convert not amounts", base + `&value_coin_convert={"USD":"x"}`, "value_coin_convert"},
		{"duplicate uuid", base + "&uuid=v", "uuid"},
		{"duplicate pending", base + "&pending=1", "pending"},
		{"bad escape", base + "&x=%zz", "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseUnverified(postReq("/cb", formType, tt.body))
			require.ErrorIs(t, err, ErrMalformed)
			assert.Contains(t, err.Error(), "field "+tt.field+":")
			assert.Equal(t, 400, StatusCode(err))
		})
	}
	for _, body := range []string{`[]`, `null`, `"x"`, `{"a":`, `{} {}`, `{"uuid":"u"`} {
		_, err := ParseUnverified(postReq("/cb", "application/json", body))
		assert.ErrorIs(t, err, ErrMalformed, body)
	}
	_, err := ParseUnverified(getReq("/cb?" + base + "&x=%zz"))
	assert.ErrorIs(t, err, ErrMalformed)
	_, err = ParseUnverified(postReq("/cb?x=%zz", formType, base))
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestParseLenientValues(t *testing.T) {
	// Unknown fields are ignored (kept in Raw); amounts in every form the
	// service uses; a convert map sent as an object rather than text.
	body := `{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":0,"confirmations":"3","value_coin":"0E-8",` +
		`"value":9.5187e+24,"fee_coin":"","value_coin_convert":{"USD":3.2,"EUR":"2.9"},` +
		`"value_forwarded_coin_convert":"","brand_new_field":{"nested":[1,2]},"fee_percent":"1"}`
	p, err := ParseUnverified(postReq("/cb", "application/json", body))
	require.NoError(t, err)
	assert.Equal(t, 3, p.Confirmations)
	assert.True(t, p.ValueCoin.IsZero())
	assertDec(t, "9518700000000000000000000", p.Value)
	assertDec(t, "3.2", p.ValueCoinConvert["USD"])
	assertDec(t, "2.9", p.ValueCoinConvert["EUR"])
	assert.Nil(t, p.ValueForwardedCoinConvert)
	assert.JSONEq(t, `{"nested":[1,2]}`, p.Raw.Get("brand_new_field"))
	assert.Empty(t, p.Custom)

	// GET: anything not a callback field is custom.
	p, err = ParseUnverified(getReq("/cb?order_id=1&" + minimalForm + "&pending=1&result=pending&fee_percent=1&tag=x&tag=y"))
	require.NoError(t, err)
	assert.Equal(t, url.Values{"order_id": {"1"}, "tag": {"x", "y"}}, p.Custom)
}

func TestPaymentKey(t *testing.T) {
	tests := []struct {
		name string
		p    *Payment
		want string
	}{
		{"nil", nil, ""},
		{"uuid confirmed", &Payment{UUID: "u-1"}, "u-1:confirmed"},
		{"uuid pending", &Payment{UUID: "u-1", Pending: true}, "u-1:pending"},
		// A payment is keyed by its uuid alone, so that it has one key
		// however it arrives: no key from other fields.
		{"txid without uuid", &Payment{TxIDIn: "tx", ValueCoin: dec("3.20")}, ""},
		{"txid without uuid pending", &Payment{TxIDIn: "tx", ValueCoin: dec("3.2"), Pending: true}, ""},
		{"nothing", &Payment{ValueCoin: dec("1")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PaymentKey(tt.p))
		})
	}
	_, err := ParseUnverified(getReq("/cb?txid_in=abc&value_coin=0.50&address_in=a&address_out=o&coin=btc&price=1&pending=0"))
	assert.ErrorIs(t, err, ErrMalformed, "a callback without uuid is refused")
}

func TestParseUnverifiedMethod(t *testing.T) {
	_, err := ParseUnverified(httptest.NewRequest(http.MethodDelete, "/cb", nil))
	assert.ErrorIs(t, err, ErrMethod)
}
