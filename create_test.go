package cryptapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	btcOut1 = "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP"
	btcOut2 = "1PE5U4temq1rFzseHHGE2L8smwHCyRbkx3"
	btcIn   = "3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub"
)

func TestCreateAddress(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
		addr, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{
			Callback: "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2",
			Address:  btcOut1,
		})
		require.NoError(t, err)
		req := api.last()
		assert.Equal(t, "/btc/create/", req.Path)
		assert.Equal(t, "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2", req.Query.Get("callback"))
		assert.Equal(t, btcOut1, req.Query.Get("address"))
		for _, absent := range []string{"pending", "confirmations", "post", "json", "priority", "email", "multi_token", "multi_chain", "convert"} {
			assert.False(t, req.Query.Has(absent), "%s is not sent unless set", absent)
		}

		assert.Equal(t, btcIn, addr.AddressIn)
		assert.Equal(t, btcOut1, addr.AddressOut)
		assert.Equal(t, []Output{{Address: btcOut1, Share: decimal.NewFromInt(1)}}, addr.Outputs)
		assert.Equal(t, "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2", addr.CallbackURL)
		assert.Equal(t, "default", addr.Priority)
		assert.True(t, mustDec("0.00008").Equal(addr.MinimumTransactionCoin), addr.MinimumTransactionCoin.String())
		assert.Equal(t, "success", addr.Status)
	})
}

// TestCreateAddressKeyWithoutDestination: the API-key form may leave the
// destination to the dashboard; no address parameter is sent then.
func TestCreateAddressKeyWithoutDestination(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
	_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb"})
	require.NoError(t, err)
	assert.False(t, api.last().Query.Has("address"))
}

func TestCreateAddressMultipleOutputs(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/create/", serveCreate(t, "create_multi.json"))
	addr, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{
		Callback: "https://shop.example/cryptapi/callback?order_id=1043&nonce=pQ7wE3rT9x",
		Outputs: []Output{
			{Address: btcOut1, Share: mustDec("0.70")},
			{Address: " " + btcOut2 + " ", Share: mustDec("0.3")},
		},
		Priority: "fast",
	})
	require.NoError(t, err)
	assert.Equal(t, "0.7@"+btcOut1+"|0.3@"+btcOut2, api.last().Query.Get("address"))
	assert.Equal(t, "fast", api.last().Query.Get("priority"))

	assert.Equal(t, `{"`+btcOut1+`": 0.70, "`+btcOut2+`": 0.30}`, addr.AddressOut)
	require.Len(t, addr.Outputs, 2)
	assert.Equal(t, btcOut1, addr.Outputs[0].Address)
	assert.True(t, mustDec("0.7").Equal(addr.Outputs[0].Share))
	assert.Equal(t, btcOut2, addr.Outputs[1].Address)
	assert.True(t, mustDec("0.3").Equal(addr.Outputs[1].Share))
	assert.True(t, mustDec("0.00010667").Equal(addr.MinimumTransactionCoin))
	assert.Equal(t, "fast", addr.Priority)
}

func TestCreateAddressFlags(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
	_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{
		Callback:      "https://shop.example/cb",
		Address:       btcOut1,
		Pending:       true,
		Confirmations: 3,
		Email:         "shop@shop.example",
		Post:          true,
		JSON:          true,
		Priority:      "fast",
		MultiToken:    true,
		MultiChain:    true,
		Convert:       true,
	})
	require.NoError(t, err)
	q := api.last().Query
	want := map[string]string{
		"pending": "1", "confirmations": "3", "email": "shop@shop.example", "post": "1", "json": "1",
		"priority": "fast", "multi_token": "1", "multi_chain": "1", "convert": "1",
		"callback": "https://shop.example/cb", "address": btcOut1,
	}
	for k, v := range want {
		assert.Equal(t, v, q.Get(k), k)
	}
	assert.Len(t, q, len(want))
}

// TestCreateAddressConfirmationsZeroIsDefault: in this SDK Confirmations 0
// means "the service default" (1) and is not sent; only a negative count is
// refused. The specification's minimum of 1 is met either way.
func TestCreateAddressConfirmationsZeroIsDefault(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
	_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1, Confirmations: 0})
	require.NoError(t, err)
	assert.False(t, api.last().Query.Has("confirmations"))

	_, err = c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1, Confirmations: 1})
	require.NoError(t, err)
	assert.Equal(t, "1", api.last().Query.Get("confirmations"))

	n := api.count()
	_, err = c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1, Confirmations: -1})
	assert.ErrorIs(t, err, ErrInvalidConfirmations)
	assert.Equal(t, n, api.count(), "a negative count is refused before the network")
}

// TestTickerForms: both spellings of a token ticker, in any case, go to
// the same path.
func TestTickerForms(t *testing.T) {
	cases := map[string]string{
		"btc":            "/btc/create/",
		"BTC":            "/btc/create/",
		"trc20_usdt":     "/trc20/usdt/create/",
		"trc20/usdt":     "/trc20/usdt/create/",
		"TRC20_USDT":     "/trc20/usdt/create/",
		"avax-c":         "/avax-c/create/",
		"polygon_usdc.e": "/polygon/usdc.e/create/",
		"bep20/1inch":    "/bep20/1inch/create/",
	}
	for in, path := range cases {
		t.Run(in, func(t *testing.T) {
			c, api := setup(t)
			// A destination of the ticker's network, bound as asked.
			dest := ethOut
			switch {
			case strings.Contains(path, "btc"):
				dest = btcOut1
			case strings.Contains(path, "trc20"):
				dest = "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"
			}
			api.handle("GET "+path, answerCreate(dest, "https://shop.example/cb"))
			_, err := c.CreateAddress(context.Background(), in, &CreateOptions{Callback: "https://shop.example/cb", Address: dest})
			require.NoError(t, err)
			assert.Equal(t, path, api.last().Path)
		})
	}
}

// badTickers are refused before any request by every operation that
// takes a ticker.
var badTickers = []string{
	"", " ", "..", ".", "../info", "btc/..", "../../admin", "/btc", "btc/", "/trc20/usdt", "trc20/usdt/",
	"trc20//usdt", "trc20/usdt/extra", "trc20_usdt_x", "trc20_/usdt", "trc20/_usdt", "b tc", " btc", "btc ",
	"btc?x=1", "btc#frag", "btc%2f..", "%2e%2e", "%2E%2E/info", "btc%00", "btc\x00", "btc\n", "btc\\..",
	"usdc..e", ".btc", "btc.", "-btc", "btc-", "trc20/.usdt", "a@b", "btc&apikey=x", "btc;", "bitcoin\u00a0",
	"\u212Aas", "\u0130", "btc\u200b", strings.Repeat("a", 33), "trc20/" + strings.Repeat("u", 33),
}

func TestInvalidTickersNeverSent(t *testing.T) {
	c, api := setup(t)
	ctx := context.Background()
	for _, tk := range badTickers {
		_, err := c.CreateAddress(ctx, tk, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1})
		assert.ErrorIs(t, err, ErrInvalidTicker, "create %q", tk)
		_, err = c.Logs(ctx, tk, "https://shop.example/cb")
		assert.ErrorIs(t, err, ErrInvalidTicker, "logs %q", tk)
		_, err = c.Info(ctx, tk, nil)
		assert.ErrorIs(t, err, ErrInvalidTicker, "info %q", tk)
		_, err = c.QRCode(ctx, tk, &QRCodeOptions{Address: btcIn})
		assert.ErrorIs(t, err, ErrInvalidTicker, "qrcode %q", tk)
		_, err = c.Convert(ctx, tk, &ConvertOptions{Value: mustDec("1"), From: "USD"})
		assert.ErrorIs(t, err, ErrInvalidTicker, "convert %q", tk)
		_, err = c.Estimate(ctx, tk, nil)
		assert.ErrorIs(t, err, ErrInvalidTicker, "estimate %q", tk)
	}
	k, kapi := setupKey(t)
	for _, tk := range badTickers {
		_, err := k.CreatePayout(ctx, tk, &PayoutOptions{Address: btcOut1, Value: mustDec("1")})
		assert.ErrorIs(t, err, ErrInvalidTicker, "payout %q", tk)
		_, err = k.CreatePayouts(ctx, tk, map[string]decimal.Decimal{btcOut1: mustDec("1")})
		assert.ErrorIs(t, err, ErrInvalidTicker, "bulk payout %q", tk)
	}
	assert.Zero(t, api.count(), "no request reached the server")
	assert.Zero(t, kapi.count(), "no request reached the server")
}

func TestInvalidTickerErrorIsBounded(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	_, err = c.Info(context.Background(), strings.Repeat("x/", 500), nil)
	require.ErrorIs(t, err, ErrInvalidTicker)
	assert.Less(t, len(err.Error()), 120)
}

// TestCreateValidationBeforeNetwork: each refused request fails with its
// sentinel error and never reaches the server.
func TestCreateValidationBeforeNetwork(t *testing.T) {
	tooMany := make([]Output, MaxOutputs+1)
	for i := range tooMany {
		tooMany[i] = Output{Address: "1Addr" + strconv.Itoa(i), Share: mustDec("1").Div(decimal.NewFromInt(int64(len(tooMany))))}
	}
	cases := []struct {
		name    string
		keyed   bool
		opts    *CreateOptions
		wantErr error
	}{
		{"nil options", false, nil, ErrCallbackRequired},
		{"missing callback", false, &CreateOptions{Address: btcOut1}, ErrCallbackRequired},
		{"blank callback", false, &CreateOptions{Callback: "  ", Address: btcOut1}, ErrCallbackRequired},
		{"missing callback with key", true, &CreateOptions{}, ErrCallbackRequired},
		{"relative callback", false, &CreateOptions{Callback: "/cb", Address: btcOut1}, ErrInvalidCallback},
		{"callback without scheme", false, &CreateOptions{Callback: "shop.example/cb", Address: btcOut1}, ErrInvalidCallback},
		{"ftp callback", false, &CreateOptions{Callback: "ftp://shop.example/cb", Address: btcOut1}, ErrInvalidCallback},
		{"callback with fragment", false, &CreateOptions{Callback: "https://shop.example/cb#x", Address: btcOut1}, ErrInvalidCallback},
		{"callback with space", false, &CreateOptions{Callback: "https://shop.example/c b", Address: btcOut1}, ErrInvalidCallback},
		{"callback with newline", false, &CreateOptions{Callback: "https://shop.example/cb\n", Address: btcOut1}, ErrInvalidCallback},
		{"keyless without address", false, &CreateOptions{Callback: "https://shop.example/cb"}, ErrAddressRequired},
		{"keyless with blank address", false, &CreateOptions{Callback: "https://shop.example/cb", Address: "   "}, ErrAddressRequired},
		{"negative confirmations", false, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1, Confirmations: -1}, ErrInvalidConfirmations},
		{"negative confirmations with key", true, &CreateOptions{Callback: "https://shop.example/cb", Confirmations: -5}, ErrInvalidConfirmations},
		{"address and outputs", false, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1,
			Outputs: []Output{{Address: btcOut2, Share: mustDec("1")}}}, ErrInvalidOutputs},
		{"address with space", false, &CreateOptions{Callback: "https://shop.example/cb", Address: "1H6Z ZpRm"}, ErrInvalidOutputs},
		{"address with pipe", false, &CreateOptions{Callback: "https://shop.example/cb", Address: "0.5@a|0.5@b"}, ErrInvalidOutputs},
		{"shares not adding to 1", false, &CreateOptions{Callback: "https://shop.example/cb",
			Outputs: []Output{{Address: btcOut1, Share: mustDec("0.5")}, {Address: btcOut2, Share: mustDec("0.4")}}}, ErrInvalidOutputs},
		{"zero share", false, &CreateOptions{Callback: "https://shop.example/cb",
			Outputs: []Output{{Address: btcOut1, Share: mustDec("1")}, {Address: btcOut2, Share: decimal.Zero}}}, ErrInvalidOutputs},
		{"share above 1", false, &CreateOptions{Callback: "https://shop.example/cb",
			Outputs: []Output{{Address: btcOut1, Share: mustDec("1.5")}, {Address: btcOut2, Share: mustDec("-0.5")}}}, ErrInvalidOutputs},
		{"empty output address", false, &CreateOptions{Callback: "https://shop.example/cb",
			Outputs: []Output{{Address: "", Share: mustDec("1")}}}, ErrInvalidOutputs},
		{"repeated output address", false, &CreateOptions{Callback: "https://shop.example/cb",
			Outputs: []Output{{Address: btcOut1, Share: mustDec("0.5")}, {Address: btcOut1, Share: mustDec("0.5")}}}, ErrInvalidOutputs},
		{"too many outputs", false, &CreateOptions{Callback: "https://shop.example/cb", Outputs: tooMany}, ErrInvalidOutputs},
		{"custom parameter named like a callback field", false, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1,
			Params: url.Values{"uuid": {"x"}}}, ErrInvalidOption},
		{"custom parameter PENDING", false, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1,
			Params: url.Values{"PENDING": {"1"}}}, ErrInvalidOption},
		{"empty custom parameter name", false, &CreateOptions{Callback: "https://shop.example/cb", Address: btcOut1,
			Params: url.Values{"": {"1"}}}, ErrInvalidOption},
		{"request too long", false, &CreateOptions{Callback: "https://shop.example/cb?pad=" + strings.Repeat("a", MaxCreateRequestLen), Address: btcOut1}, ErrRequestTooLong},
		{"request too long by params", true, &CreateOptions{Callback: "https://shop.example/cb",
			Params: url.Values{"note": {strings.Repeat("é", MaxCreateRequestLen/6)}}}, ErrRequestTooLong},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var (
				c   *Client
				api *mockAPI
			)
			if tc.keyed {
				c, api = setupKey(t)
			} else {
				c, api = setup(t)
			}
			api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
			addr, err := c.CreateAddress(context.Background(), "btc", tc.opts)
			assert.ErrorIs(t, err, tc.wantErr)
			assert.Nil(t, addr)
			assert.Zero(t, api.count(), "the request reached the server")
		})
	}
}

// TestCreateRequestLengthBoundary: a create request of exactly
// MaxCreateRequestLen characters is sent; one more character is refused.
func TestCreateRequestLengthBoundary(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		var (
			c   *Client
			api *mockAPI
		)
		if keyed {
			c, api = setupKey(t)
		} else {
			c, api = setup(t)
		}
		api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
		opts := func(pad int) *CreateOptions {
			return &CreateOptions{Callback: "https://shop.example/cb?pad=" + strings.Repeat("a", pad), Address: btcOut1}
		}
		// Measure the request with no padding; each padding byte is one
		// URL character.
		u, err := c.buildURL(&request{path: "btc/create/", opts: opts(0), query: url.Values{"callback": {opts(0).Callback}, "address": {btcOut1}}})
		require.NoError(t, err)
		pad := MaxCreateRequestLen - len(u.String())
		require.Positive(t, pad)

		_, err = c.CreateAddress(context.Background(), "btc", opts(pad))
		require.NoError(t, err, "exactly %d characters", MaxCreateRequestLen)
		assert.Equal(t, 1, api.count())

		_, err = c.CreateAddress(context.Background(), "btc", opts(pad+1))
		assert.ErrorIs(t, err, ErrRequestTooLong)
		assert.Equal(t, 1, api.count(), "the long request did not leave the process")
	}
}

// TestCreateAddressParamsMerge: custom data merged into the callback URL
// keeps the existing query byte for byte and is encoded exactly once, on
// the wire too.
func TestCreateAddressParamsMerge(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/create/", serveCreate(t, "create_single.json"))
	_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{
		Callback: "https://shop.example/cb?a=%2F&b=1",
		Params:   url.Values{"order": {"a b/c"}},
		Address:  btcOut1,
	})
	require.NoError(t, err)
	got := api.last().Query.Get("callback")
	assert.Equal(t, "https://shop.example/cb?a=%2F&b=1&order=a+b%2Fc", got)
	u, err := url.Parse(got)
	require.NoError(t, err)
	assert.Equal(t, "a b/c", u.Query().Get("order"), "decodes back to the value given")
	assert.Equal(t, "/", u.Query().Get("a"), "the existing parameter is untouched")
}

func TestCallbackURL(t *testing.T) {
	cases := []struct {
		base   string
		params url.Values
		want   string
	}{
		{"https://shop.example/cb", nil, "https://shop.example/cb"},
		{"https://shop.example/cb?a=%2F&b=1", url.Values{"order": {"a b/c"}}, "https://shop.example/cb?a=%2F&b=1&order=a+b%2Fc"},
		{"https://shop.example/cb", url.Values{"order": {"42"}, "nonce": {"x&y=z"}}, "https://shop.example/cb?nonce=x%26y%3Dz&order=42"},
		{"https://shop.example/cb?", url.Values{"order": {"42"}}, "https://shop.example/cb?order=42"},
		{"https://shop.example/cb?a=1&", url.Values{"order": {"42"}}, "https://shop.example/cb?a=1&order=42"},
		{"https://shop.example/cb?v=2", url.Values{"tag": {"a", "b"}}, "https://shop.example/cb?v=2&tag=a&tag=b"},
		{"http://127.0.0.1:8080/cb?x=%252F", url.Values{"id": {"%2F"}}, "http://127.0.0.1:8080/cb?x=%252F&id=%252F"},
		{"https://shop.example/cb?q=caf%C3%A9", url.Values{"n": {"é"}}, "https://shop.example/cb?q=caf%C3%A9&n=%C3%A9"},
	}
	for _, tc := range cases {
		got, err := CallbackURL(tc.base, tc.params)
		require.NoError(t, err, tc.base)
		assert.Equal(t, tc.want, got)
	}
	_, err := CallbackURL("", nil)
	assert.ErrorIs(t, err, ErrCallbackRequired)
	_, err = CallbackURL("mailto:shop@shop.example", nil)
	assert.ErrorIs(t, err, ErrInvalidCallback)
}

// TestAddressOutAnswers: address_out as a single address, a text map, an
// object or the pipes form is read and checked against the request; text
// that cannot be read cannot be checked, so CreateAddress refuses the
// address with a *DestinationMismatchError.
func TestAddressOutAnswers(t *testing.T) {
	half := []Output{{Address: btcOut1, Share: mustDec("0.5")}, {Address: btcOut2, Share: mustDec("0.5")}}
	cases := []struct {
		name       string
		addressOut string // JSON value
		asked      []Output
		wantText   string
		wantOuts   []Output // nil: refused
	}{
		{"single", `"` + btcOut1 + `"`, nil, btcOut1, []Output{{btcOut1, decimal.NewFromInt(1)}}},
		{"text map", `"{\"` + btcOut1 + `\": 0.70, \"` + btcOut2 + `\": 0.30}"`, []Output{{btcOut1, mustDec("0.7")}, {btcOut2, mustDec("0.3")}},
			`{"` + btcOut1 + `": 0.70, "` + btcOut2 + `": 0.30}`, []Output{{btcOut1, mustDec("0.7")}, {btcOut2, mustDec("0.3")}}},
		{"single-quoted text map", `"{'` + btcOut1 + `': 0.5, '` + btcOut2 + `': 0.5}"`, half, `{'` + btcOut1 + `': 0.5, '` + btcOut2 + `': 0.5}`, half},
		{"object", `{"` + btcOut1 + `": "0.25", "` + btcOut2 + `": 0.75}`, []Output{{btcOut2, mustDec("0.75")}, {btcOut1, mustDec("0.25")}},
			`{"` + btcOut1 + `": "0.25", "` + btcOut2 + `": 0.75}`, []Output{{btcOut1, mustDec("0.25")}, {btcOut2, mustDec("0.75")}}},
		{"pipes", `"0.5@` + btcOut1 + `|0.5@` + btcOut2 + `"`, half, "0.5@" + btcOut1 + "|0.5@" + btcOut2, half},
		{"broken map", `"{` + btcOut1 + `: 0.7, broken"`, nil, "{" + btcOut1 + ": 0.7, broken", nil},
		{"map with a bad share", `"{\"` + btcOut1 + `\": \"most\"}"`, nil, `{"` + btcOut1 + `": "most"}`, nil},
		{"text with spaces", `"see dashboard"`, nil, "see dashboard", nil},
		{"empty", `""`, nil, "", nil},
		{"null", `null`, nil, "", nil},
		{"absent", ``, nil, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			body := `{"address_in":"` + btcIn + `",`
			if tc.addressOut != "" {
				body += `"address_out":` + tc.addressOut + `,`
			}
			body += `"callback_url":"https://shop.example/cb","priority":"default","status":"success"}`
			api.handle("GET /btc/create/", serveJSON(body))
			o := &CreateOptions{Callback: "https://shop.example/cb", Outputs: tc.asked}
			if tc.asked == nil {
				o.Address = btcOut1
			}
			addr, err := c.CreateAddress(context.Background(), "btc", o)
			if tc.wantOuts == nil {
				assert.Nil(t, addr, "no address whose destination cannot be checked")
				var dm *DestinationMismatchError
				require.ErrorAs(t, err, &dm)
				assert.ErrorIs(t, err, ErrDestinationMismatch)
				assert.Equal(t, tc.wantText, dm.BoundAddressOut)
				assert.Nil(t, dm.BoundOutputs)
				assert.Contains(t, err.Error(), "cannot be read")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, btcIn, addr.AddressIn)
			assert.Equal(t, tc.wantText, addr.AddressOut)
			require.Len(t, addr.Outputs, len(tc.wantOuts))
			for i, o := range tc.wantOuts {
				assert.Equal(t, o.Address, addr.Outputs[i].Address)
				assert.True(t, o.Share.Equal(addr.Outputs[i].Share), "share %d: %s", i, addr.Outputs[i].Share)
			}
		})
	}
}

// TestAddressOutUnreadableWithoutDestination: the API-key form without a
// destination asks for the dashboard's; there is nothing to compare with,
// so unreadable address_out text leaves Outputs empty and the callback URL
// alone is checked.
func TestAddressOutUnreadableWithoutDestination(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /btc/create/", serveJSON(`{"address_in":"`+btcIn+`","address_out":"see dashboard","callback_url":"https://shop.example/cb","status":"success"}`))
	addr, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb"})
	require.NoError(t, err)
	assert.Empty(t, addr.Outputs)
	assert.Equal(t, "see dashboard", addr.AddressOut)

	api.handle("GET /btc/create/", serveJSON(`{"address_in":"`+btcIn+`","address_out":"see dashboard","callback_url":"https://shop.example/other","status":"success"}`))
	addr, err = c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: "https://shop.example/cb"})
	assert.Nil(t, addr)
	assert.ErrorIs(t, err, ErrDestinationMismatch)
}

func TestCreateAddressErrorAnswer(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /trc20/usdt/create/", serveBody(http.StatusOK, "application/json",
		[]byte(`{"status":"error","error":"The provided address is not valid for this ticker"}`)))
	addr, err := c.CreateAddress(context.Background(), "trc20_usdt", &CreateOptions{Callback: "https://shop.example/cb", Address: "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"})
	assert.Nil(t, addr)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "The provided address is not valid for this ticker", ae.Message)
	assert.Equal(t, 1, api.count(), "an error answer is not retried")
}

func TestParseAddressOut(t *testing.T) {
	good := []struct {
		in   string
		want []Output
	}{
		{btcOut1, []Output{{btcOut1, mustDec("1")}}},
		{"  " + btcOut1 + "\n", []Output{{btcOut1, mustDec("1")}}},
		{`{"a1": 0.70, "b2": 0.30}`, []Output{{"a1", mustDec("0.7")}, {"b2", mustDec("0.3")}}},
		{`{"b2": 0.30, "a1": 0.70}`, []Output{{"b2", mustDec("0.3")}, {"a1", mustDec("0.7")}}},
		{`{'a1': 0.5, 'b2': 0.5}`, []Output{{"a1", mustDec("0.5")}, {"b2", mustDec("0.5")}}},
		{`{"a1": 5E-1, "b2": 0.5}`, []Output{{"a1", mustDec("0.5")}, {"b2", mustDec("0.5")}}},
		{"0.5@a1|0.5@b2", []Output{{"a1", mustDec("0.5")}, {"b2", mustDec("0.5")}}},
		{"0.5@a1 | 0.5@b2", []Output{{"a1", mustDec("0.5")}, {"b2", mustDec("0.5")}}},
		{"1@bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", []Output{{"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", mustDec("1")}}},
	}
	for _, tc := range good {
		got, err := ParseAddressOut(tc.in)
		require.NoError(t, err, tc.in)
		require.Len(t, got, len(tc.want), tc.in)
		for i := range got {
			assert.Equal(t, tc.want[i].Address, got[i].Address, tc.in)
			assert.True(t, tc.want[i].Share.Equal(got[i].Share), "%s: %s", tc.in, got[i].Share)
		}
	}
	bad := []string{
		"", "  ", "{}", "{", `{"a1": 0.5`, `{"a1": 0.5}}x`, `{"a1": "half"}`, `{"a b": 0.5}`, `{"": 1}`,
		`{"a1": {"x": 1}}`, `{"a1": [1]}`, `["a1", 0.5]`, "two words", "@a1", "0.5@", "x@a1", "0.5@a|b",
		"0.5@a1|", "|0.5@a1", `{1: 0.5}`, "a\x00b", strings.Repeat("0.1@a|", 300),
	}
	for _, in := range bad {
		got, err := ParseAddressOut(in)
		assert.ErrorIs(t, err, ErrInvalidOutputs, "%q", in)
		assert.Empty(t, got, "%q", in)
	}
}

// FuzzParseAddressOut: never panics, and whatever it returns is a list of
// usable addresses.
func FuzzParseAddressOut(f *testing.F) {
	for _, name := range []string{"create_single.json", "create_multi.json", "create_trc20_usdt.json", "logs.json", "logs_bep20_token.json"} {
		var v struct {
			AddressOut json.RawMessage `json:"address_out"`
		}
		if err := json.Unmarshal(fixture(f, name), &v); err == nil {
			f.Add(addressOutText(v.AddressOut))
		}
	}
	for _, s := range []string{
		"", btcOut1, "0.5@a|0.5@b", `{"a": 0.70, "b": 0.30}`, `{'a': 1}`, `{"a": 1e999}`, `{"a": "1e-64"}`,
		`{"a":1}}`, `{"a":1} {"b":2}`, "@@@", "|||", "{'a\": 1}", `{"a": null}`, `{"a": ""}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		outs, err := ParseAddressOut(s)
		if err != nil {
			assert.Empty(t, outs)
			assert.ErrorIs(t, err, ErrInvalidOutputs)
			if len(s) > 16 {
				assert.NotContains(t, err.Error(), s, "the error does not quote the input")
			}
			return
		}
		require.NotEmpty(t, outs)
		for _, o := range outs {
			require.NotEmpty(t, o.Address)
			require.True(t, validAddressText(o.Address), "address %q", o.Address)
			require.NotContains(t, o.Address, " ")
		}
		// The lenient form used by answers agrees.
		assert.Equal(t, len(outs), len(parseOutputsLenient(s)))
	})
}

// TestCallbackURLWithServiceFieldIsRefused: the service appends its own
// fields to the callback URL; a base URL that already has one of them
// (?uuid=..., ?value=...) would make every callback ambiguous and never
// acknowledged, so it is refused before anything is sent.
func TestCallbackURLWithServiceFieldIsRefused(t *testing.T) {
	for _, cb := range []string{"https://shop.example/paid?uuid=order42", "https://shop.example/paid?order=1&Value_Coin=3"} {
		_, err := CallbackURL(cb, nil)
		assert.ErrorIs(t, err, ErrInvalidOption, cb)
	}
	got, err := CallbackURL("https://shop.example/paid?order=1", nil)
	require.NoError(t, err)
	assert.Equal(t, "https://shop.example/paid?order=1", got)
}

// TestCallbackURLsNoHandlerCanParseAreRefusedBeforeTheNetwork: a callback
// URL whose query the callback handler refuses (a ';' separator, a '%'
// that is not an escape) or that holds characters whose encoding on the
// wire is not fixed would have every callback refused forever and the
// payment never credited; CreateAddress and RequestPayment refuse it with
// ErrInvalidCallback and send nothing.
func TestCallbackURLsNoHandlerCanParseAreRefusedBeforeTheNetwork(t *testing.T) {
	for _, cb := range []string{
		"https://shop.example/callback?order_id=1;lang=en",
		"https://shop.example/callback?order_id=50%off",
		"https://shop.example/callback?order_id=1&=x",
		"https://shop.example/caf\u00e9?order_id=1",
		"https://shop.example/callback?order_id=1#top",
	} {
		c, api := setup(t)
		_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: cb, Address: btcOut1})
		assert.ErrorIs(t, err, ErrInvalidCallback, cb)
		_, err = c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: cb, Address: btcOut1, Params: url.Values{"nonce": {NewNonce()}}})
		assert.ErrorIs(t, err, ErrInvalidCallback, cb)
		_, err = c.RequestPayment(context.Background(), "btc", &PaymentRequestOptions{
			CreateOptions: CreateOptions{Callback: cb, Address: btcOut1}, Amount: mustDec("0.01"),
		})
		assert.ErrorIs(t, err, ErrInvalidCallback, cb)
		assert.Equal(t, 0, api.count(), "nothing is sent for %q", cb)
	}
}
