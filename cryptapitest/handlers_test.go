package cryptapitest_test

import (
	"bytes"
	"encoding/json"
	"image"
	_ "image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/address"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAPIKeyForm(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithAPIKey("secret-key"))
	assert.Equal(t, "secret-key", s.APIKey())
	good := newClient(t, s, cryptapi.WithAPIKey("secret-key"))
	wrong := newClient(t, s, cryptapi.WithAPIKey("other"))
	none := newClient(t, s)

	_, err := good.Info(ctx, "btc", nil)
	require.NoError(t, err)
	ae := apiError(t, func() error { _, err := wrong.Info(ctx, "btc", nil); return err }(), http.StatusUnauthorized)
	assert.Equal(t, "Invalid API Key", ae.Message)
	// The public reads answer without a key, as the service answers its
	// own libraries; the rest needs one.
	_, err = none.Info(ctx, "btc", nil)
	require.NoError(t, err)
	_, err = none.PublicKey(ctx)
	require.NoError(t, err)
	_, err = none.Coins(ctx, nil)
	require.NoError(t, err)
	_, err = none.Convert(ctx, "btc", &cryptapi.ConvertOptions{Value: dec("10"), From: "USD"})
	require.NoError(t, err)
	_, err = none.ConvertAny(ctx, "eth", &cryptapi.ConvertOptions{Value: dec("0.1"), From: "btc"})
	require.NoError(t, err)
	_, err = none.Estimate(ctx, "btc", nil)
	require.NoError(t, err)
	_, err = none.QRCode(ctx, "btc", &cryptapi.QRCodeOptions{Address: btcDest})
	require.NoError(t, err)
	_, err = none.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/0", Address: btcDest})
	ae = apiError(t, err, http.StatusUnauthorized)
	assert.Equal(t, "API Key is required", ae.Message)
	_, err = none.Logs(ctx, "btc", "https://shop.example/0")
	apiError(t, err, http.StatusUnauthorized)
	// A wrong key is refused on the public reads too.
	_, err = wrong.PublicKey(ctx)
	apiError(t, err, http.StatusUnauthorized)
	_, err = wrong.Coins(ctx, nil)
	apiError(t, err, http.StatusUnauthorized)
	status, _ := rawGet(t, s, "/btc/info/?apikey=")
	assert.Equal(t, http.StatusUnauthorized, status, "an empty key is a wrong key")

	// API-key form: address may be left out; the dashboard address is used.
	a1, err := good.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/1"})
	require.NoError(t, err)
	a2, err := good.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/2"})
	require.NoError(t, err)
	assert.True(t, s.ValidAddress("btc", a1.AddressOut))
	assert.Equal(t, a1.AddressOut, a2.AddressOut)
	assert.NotEqual(t, a1.AddressIn, a2.AddressIn)

	// The key goes in the query string, also on POST.
	_, err = good.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{btcDest: dec("0.1")})
	require.NoError(t, err)
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	assert.Equal(t, http.MethodPost, last.Method)
	assert.Equal(t, "/btc/payout/request/bulk/", last.Path)
	assert.Equal(t, "secret-key", last.Query.Get("apikey"))
	assert.Equal(t, http.StatusOK, last.Status)
}

func TestKeylessForm(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	// A client with a key against the keyless service: the key is ignored
	// where the keyless form needs none, and key-only operations fail.
	keyed := newClient(t, s, cryptapi.WithAPIKey("whatever"))
	_, err := keyed.Info(ctx, "btc", nil)
	require.NoError(t, err)
	_, err = keyed.CreateCheckout(ctx, &cryptapi.CheckoutOptions{RedirectURL: "https://shop.example/done", Value: dec("10")})
	apiError(t, err, http.StatusUnauthorized)
	_, err = keyed.CreateDeposit(ctx, &cryptapi.DepositOptions{NotifyURL: "https://shop.example/ipn"})
	apiError(t, err, http.StatusUnauthorized)
	//lint:ignore SA1019 the legacy path needs the key like the rest
	_, err = keyed.CreatePayout(ctx, "btc", &cryptapi.PayoutOptions{Address: btcDest, Value: dec("1")})
	apiError(t, err, http.StatusUnauthorized)
	_, err = keyed.CheckoutLogs(ctx, "abc")
	apiError(t, err, http.StatusUnauthorized)
	// The keyless form requires the destination.
	_, err = keyed.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/cb"})
	ae := apiError(t, err, http.StatusBadRequest)
	assert.Equal(t, "address is required", ae.Message)
	assert.Empty(t, s.Payouts())
}

func TestCreateRefusals(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	// Through the SDK, where it lets the request go.
	_, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/cb", Address: btcDest, Priority: "ludicrous"})
	ae := apiError(t, err, http.StatusBadRequest)
	assert.Contains(t, string(ae.Body), `"status":"error"`)
	_, err = c.CreateAddress(ctx, "doge", &cryptapi.CreateOptions{Callback: "https://shop.example/cb", Address: "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"})
	apiError(t, err, http.StatusNotFound)

	// Addresses of another network, or with a mistyped character: the SDK
	// refuses them before the network, and the fake refuses them too.
	btcTypo := btcDest[:10] + "q" + btcDest[11:]
	for name, tc := range map[string]struct {
		ticker, path string
		o            cryptapi.CreateOptions
	}{
		"bitcoin address for a tron token":                {"trc20_usdt", "trc20/usdt", cryptapi.CreateOptions{Address: btcDest}},
		"tron address for bitcoin":                        {"btc", "btc", cryptapi.CreateOptions{Address: trxDest}},
		"short ethereum address":                          {"eth", "eth", cryptapi.CreateOptions{Address: "0x1234"}},
		"bitcoin cash address for bitcoin":                {"btc", "btc", cryptapi.CreateOptions{Address: bchDest[len("bitcoincash:"):]}},
		"a mistyped bech32 character":                     {"btc", "btc", cryptapi.CreateOptions{Address: btcTypo}},
		"a letter of an EIP-55 address in the other case": {"eth", "eth", cryptapi.CreateOptions{Address: strings.Replace(ethDest, "C", "c", 1)}},
		"one bad output": {"btc", "btc", cryptapi.CreateOptions{Outputs: []cryptapi.Output{
			{Address: btcDest, Share: dec("0.5")}, {Address: ethDest, Share: dec("0.5")}}}},
	} {
		t.Run(name, func(t *testing.T) {
			before := len(s.Requests())
			tc.o.Callback = "https://shop.example/cb"
			_, err := c.CreateAddress(ctx, tc.ticker, &tc.o)
			assert.ErrorIs(t, err, cryptapi.ErrInvalidAddress)
			assert.Len(t, s.Requests(), before, "refused before the network")
			addr := tc.o.Address
			if addr == "" {
				addr = "0.5@" + tc.o.Outputs[0].Address + "|0.5@" + tc.o.Outputs[1].Address
			}
			status, body := rawGet(t, s, "/"+tc.path+"/create/?callback="+url.QueryEscape(tc.o.Callback)+"&address="+url.QueryEscape(addr))
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "error", body["status"])
		})
	}

	// Directly, for requests the SDK refuses to send.
	cb := url.QueryEscape("https://shop.example/cb")
	shares := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "0.05@" + []string{btcDest, btcDest2, btcDest3}[i%3]
		}
		return url.QueryEscape(strings.Join(parts, "|"))
	}
	for name, tc := range map[string]struct {
		query string
		msg   string
	}{
		"no callback":          {"address=" + btcDest, "callback is required"},
		"relative callback":    {"callback=%2Fcb&address=" + btcDest, "Invalid callback URL"},
		"zero confirmations":   {"callback=" + cb + "&address=" + btcDest + "&confirmations=0", "confirmations"},
		"text confirmations":   {"callback=" + cb + "&address=" + btcDest + "&confirmations=many", "confirmations"},
		"shares not adding up": {"callback=" + cb + "&address=" + url.QueryEscape("0.5@"+btcDest+"|0.4@"+btcDest2), "add up to 1"},
		"21 outputs":           {"callback=" + cb + "&address=" + shares(21), "at most 20"},
		"repeated output":      {"callback=" + cb + "&address=" + url.QueryEscape("0.5@"+btcDest+"|0.5@"+btcDest), "repeated"},
		"bad flag":             {"callback=" + cb + "&address=" + btcDest + "&pending=maybe", "pending"},
		"too long":             {"callback=" + url.QueryEscape("https://shop.example/cb?x="+strings.Repeat("a", 8200)) + "&address=" + btcDest, "too long"},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := rawGet(t, s, "/btc/create/?"+tc.query)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "error", body["status"])
			assert.Contains(t, body["error"], tc.msg)
		})
	}
	// 20 outputs with shares adding up to 1 are fine.
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = "0.05@" + address.Segwit("bc", 0, []byte(strings.Repeat(string(rune('a'+i)), 20)))
	}
	status, body := rawGet(t, s, "/btc/create/?callback="+cb+"&address="+url.QueryEscape(strings.Join(twenty, "|")))
	assert.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "0.00073334", body["minimum_transaction_coin"].(json.Number).String(), "0.0001 x (1 + 19/3), rounded up")
}

func TestPathsAndMethods(t *testing.T) {
	s := newServer(t)
	for path, want := range map[string]int{
		"/btc/info/":                200,
		"/trc20/usdt/info/":         200,
		"/trc20_usdt/info/":         200,
		"/btc/info":                 404,
		"/btc/nothing/":             404,
		"/btc//info/":               404,
		"/a/b/c/info/":              404,
		"/doge/info/":               404,
		"/":                         404,
		"/info/":                    200,
		"/pubkey/":                  200,
		"/pay/unknown/":             404,
		"/btc/payout/request/x/":    404,
		"/btc/payout/request/bulk/": 405,
	} {
		status, body := rawGet(t, s, path)
		assert.Equal(t, want, status, path)
		if status != 200 && path != "/pay/unknown/" {
			assert.Equal(t, "error", body["status"], path)
		}
	}
	resp, err := http.Post(s.URL()+"/btc/info/", "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestInfo(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithClock(cryptapitest.NewFakeClock(t0)))
	c := newClient(t, s)
	info, err := c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "Bitcoin", info.Coin)
	assert.Equal(t, "btc", info.Ticker)
	assert.True(t, info.MinimumTransaction.Equal(dec("10000")))
	assert.True(t, info.MinimumTransactionCoin.Equal(dec("0.0001")))
	assert.True(t, info.MinimumFee.Equal(dec("1000")))
	assert.True(t, info.MinimumFeeCoin.Equal(dec("0.00001")))
	assert.True(t, info.FeePercent.Equal(dec("1")))
	assert.True(t, info.NetworkFeeEstimation.Equal(dec("0.00002")))
	assert.True(t, info.Prices["USD"].Equal(dec("60000")))
	assert.True(t, info.Prices["EUR"].Equal(dec("55200")))
	assert.Equal(t, t0, info.PricesUpdated)
	assert.Equal(t, "success", info.Status)

	usdt, err := c.Info(ctx, "bep20/usdt", &cryptapi.InfoOptions{NoPrices: true})
	require.NoError(t, err)
	assert.Empty(t, usdt.Prices)
	assert.True(t, usdt.MinimumTransaction.Equal(dec("5000000000000000000")), "18 decimals, beyond 64 bits")

	// The wire types of the published samples: numbers for
	// minimum_transaction and minimum_fee, text for the coin amounts.
	_, raw := rawGet(t, s, "/btc/info/")
	for _, k := range []string{"minimum_transaction_coin", "minimum_fee_coin", "fee_percent", "network_fee_estimation", "prices_updated", "logo"} {
		assert.IsType(t, "", raw[k], k)
	}
	assert.IsType(t, json.Number(""), raw["minimum_transaction"])
	assert.IsType(t, json.Number(""), raw["minimum_fee"])
	assert.Equal(t, "https://api.cryptapi.io/media/token_logos/btc.png", raw["logo"])
	assert.Equal(t, "https://api.cryptapi.io/media/token_logos/btc.png", info.Logo)
	assert.IsType(t, "", raw["prices"].(map[string]any)["USD"])
}

func TestCoins(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	coins, err := c.Coins(ctx, nil)
	require.NoError(t, err)
	keys := make([]string, 0, len(coins))
	for k := range coins {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, s.Tickers(), keys)
	assert.True(t, coins["trc20_usdt"].MinimumTransactionCoin.Equal(dec("5")))
	assert.True(t, coins["btc"].Prices["USD"].Equal(dec("60000")))

	_, raw := rawGet(t, s, "/info/?prices=0")
	assert.Contains(t, raw, "btc")
	assert.NotContains(t, raw, "trc20_usdt", "tokens live under their network")
	trc20 := raw["trc20"].(map[string]any)
	usdt := trc20["usdt"].(map[string]any)
	assert.Equal(t, "5", usdt["minimum_transaction_coin"])
	assert.IsType(t, json.Number(""), usdt["minimum_transaction"], "a number, as in the samples")
	assert.Equal(t, "https://api.cryptapi.io/media/token_logos/trc20/usdt.png", usdt["logo"])
	tiers, err := c.FeeTiers(ctx)
	require.NoError(t, err)
	assert.Len(t, tiers, 3)
	assert.NotContains(t, usdt, "prices")
	assert.IsType(t, []any{}, raw["fee_tiers"], "a key that is no ticker")
}

// decodeQR reads a QR code back from PNG bytes.
func decodeQR(t *testing.T, png []byte) (string, image.Image) {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(png))
	require.NoError(t, err)
	require.Equal(t, "png", format)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText(), img
}

func TestQRCode(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	for _, tc := range []struct {
		ticker, addr, value string
		size                int
		uri                 string
	}{
		{"btc", btcDest, "0.001", 0, "bitcoin:" + btcDest + "?amount=0.001"},
		{"btc", btcDest, "", 256, "bitcoin:" + btcDest},
		{"ltc", ltcDest, "1.5", 300, "litecoin:" + ltcDest + "?amount=1.5"},
		{"bch", bchDest, "0.25", 1024, bchDest + "?amount=0.25"},
		{"eth", ethDest, "0.1", 200, "ethereum:" + ethDest + "?amount=0.1"},
		{"trc20/usdt", trxDest, "12.5", 64, "tron:" + trxDest + "?amount=12.5"},
	} {
		o := &cryptapi.QRCodeOptions{Address: tc.addr, Size: tc.size}
		if tc.value != "" {
			o.Value = dec(tc.value)
		}
		qr, err := c.QRCode(ctx, tc.ticker, o)
		require.NoError(t, err, tc.ticker)
		assert.Equal(t, tc.uri, qr.PaymentURI)
		png, err := qr.PNG()
		require.NoError(t, err)
		text, img := decodeQR(t, png)
		assert.Equal(t, tc.uri, text, "the image encodes the payment URI")
		want := tc.size
		if want == 0 {
			want = 512
		}
		assert.Equal(t, image.Rect(0, 0, want, want), img.Bounds())
	}

	_, err := c.QRCode(ctx, "btc", &cryptapi.QRCodeOptions{Address: trxDest})
	apiError(t, err, http.StatusBadRequest)
	for _, q := range []string{"size=63", "size=1025", "size=big", "value=-1"} {
		status, body := rawGet(t, s, "/btc/qrcode/?address="+btcDest+"&"+q)
		assert.Equal(t, http.StatusBadRequest, status, q)
		assert.Equal(t, "error", body["status"], q)
	}
	status, _ := rawGet(t, s, "/btc/qrcode/")
	assert.Equal(t, http.StatusBadRequest, status)
}

func TestConvert(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	conv, err := c.Convert(ctx, "btc", &cryptapi.ConvertOptions{Value: dec("120"), From: "USD"})
	require.NoError(t, err)
	assert.Equal(t, "0.002", conv.ValueCoin.String())
	assert.Equal(t, "0.0000166666666667", conv.ExchangeRate.String(), "BTC per USD")

	conv, err = c.Convert(ctx, "trc20_usdt", &cryptapi.ConvertOptions{Value: dec("0.01"), From: "btc"})
	require.NoError(t, err)
	assert.Equal(t, "600", conv.ValueCoin.String())
	assert.Equal(t, "60000", conv.ExchangeRate.String())

	conv, err = c.Convert(ctx, "eth", &cryptapi.ConvertOptions{Value: dec("276"), From: "eur"})
	require.NoError(t, err)
	assert.Equal(t, "0.1", conv.ValueCoin.String())

	_, err = c.Convert(ctx, "btc", &cryptapi.ConvertOptions{Value: dec("1"), From: "XYZ"})
	apiError(t, err, http.StatusBadRequest)

	// The ticker-less form, with strings for amounts.
	status, body := rawGet(t, s, "/convert/?from=btc&to=usd&value=0.5")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "30000", body["value_coin"])
	assert.Equal(t, "60000", body["exchange_rate"])
	status, body = rawGet(t, s, "/convert/?from=usdt&to=trx&value=12")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "100", body["value_coin"])
	status, body = rawGet(t, s, "/convert/?from=usd&to=eur&value=100")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "92", body["value_coin"])
	status, _ = rawGet(t, s, "/convert/?from=usd&value=1")
	assert.Equal(t, http.StatusBadRequest, status)
	status, _ = rawGet(t, s, "/btc/convert/?from=usd")
	assert.Equal(t, http.StatusBadRequest, status)
}

func TestEstimate(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	one, err := c.Estimate(ctx, "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "0.00002", one.EstimatedCost.String())
	assert.True(t, one.EstimatedCostCurrency["USD"].Equal(dec("1.2")))
	three, err := c.Estimate(ctx, "btc", &cryptapi.EstimateOptions{Addresses: 3})
	require.NoError(t, err)
	assert.True(t, three.EstimatedCost.GreaterThan(one.EstimatedCost), "grows with addresses")
	fast, err := c.Estimate(ctx, "btc", &cryptapi.EstimateOptions{Priority: "fast"})
	require.NoError(t, err)
	assert.True(t, fast.EstimatedCost.GreaterThan(one.EstimatedCost))
	_, err = c.Estimate(ctx, "btc", &cryptapi.EstimateOptions{Priority: "fastest"})
	apiError(t, err, http.StatusBadRequest)

	_, raw := rawGet(t, s, "/eth/estimate/?addresses=2&priority=fastest")
	assert.IsType(t, "", raw["estimated_cost"])
	assert.IsType(t, "", raw["estimated_cost_currency"].(map[string]any)["USD"])
	status, _ := rawGet(t, s, "/btc/estimate/?addresses=21")
	assert.Equal(t, http.StatusBadRequest, status)
}

func TestPublicKey(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	pub, err := c.PublicKey(ctx)
	require.NoError(t, err)
	assert.True(t, pub.Equal(s.PublicKey()))
	assert.Equal(t, 1024, pub.N.BitLen())
	_, raw := rawGet(t, s, "/pubkey/")
	assert.Equal(t, "success", raw["status"])
	assert.True(t, strings.HasPrefix(raw["pubkey"].(string), "-----BEGIN PUBLIC KEY-----\n"))
	assert.Equal(t, s.PublicKeyPEM(), raw["pubkey"])

	other := newServer(t)
	assert.False(t, other.PublicKey().Equal(s.PublicKey()), "each server has its own key")
	verify(t, s.PublicKey(), []byte("data"), s.Sign([]byte("data")))
}

func TestRequestsAreRecorded(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	_, _ = c.Info(ctx, "btc", nil)
	_, _ = c.Info(ctx, "doge", nil)
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/btc/info/", reqs[0].Path)
	assert.Equal(t, http.StatusOK, reqs[0].Status)
	assert.Equal(t, http.StatusNotFound, reqs[1].Status)
}
