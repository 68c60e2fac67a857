package cryptapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInfo(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
		info, err := c.Info(context.Background(), "btc", nil)
		require.NoError(t, err)
		assert.False(t, api.last().Query.Has("prices"), "prices are asked for by default")

		assert.Equal(t, "Bitcoin", info.Coin)
		assert.Equal(t, "btc", info.Ticker)
		assertDec(t, "8000", info.MinimumTransaction)
		assertDec(t, "0.00008", info.MinimumTransactionCoin)
		assertDec(t, "546", info.MinimumFee)
		assertDec(t, "0.00000546", info.MinimumFeeCoin)
		assertDec(t, "1", info.FeePercent)
		assertDec(t, "0.00002094", info.NetworkFeeEstimation)
		assert.Len(t, info.Prices, 18)
		assertDec(t, "67152.91", info.Prices["USD"])
		assertDec(t, "254915424.90", info.Prices["UGX"])
		assert.Equal(t, time.Date(2024, 5, 21, 9, 14, 33, 512346000, time.UTC), info.PricesUpdated)
		assert.Equal(t, "success", info.Status)
	})
}

// TestInfoToken: a token by either spelling; amounts as strings and as a
// number, 0E-8, "prices": {} and "prices_updated": null. The record names
// the token without its network; Ticker is the canonical form.
func TestInfoToken(t *testing.T) {
	for _, tk := range []string{"trc20_usdt", "trc20/usdt", "TRC20_usdt"} {
		c, api := setup(t)
		api.handle("GET /trc20/usdt/info/", serveFixture(t, "info_trc20_usdt.json"))
		info, err := c.Info(context.Background(), tk, nil)
		require.NoError(t, err, tk)
		assert.Equal(t, "/trc20/usdt/info/", api.last().Path)
		assert.Equal(t, "trc20_usdt", info.Ticker)
		assertDec(t, "5000000", info.MinimumTransaction)
		assertDec(t, "5", info.MinimumTransactionCoin)
		assertDec(t, "1", info.MinimumFeeCoin)
		assert.True(t, info.NetworkFeeEstimation.IsZero(), "0E-8")
		assert.NotNil(t, info.Prices)
		assert.Empty(t, info.Prices)
		assert.True(t, info.PricesUpdated.IsZero(), "null")
	}
}

// TestInfoNoPrices: prices=0 is sent; the answer has exponent form and
// integers beyond 64 bits, "prices": [] and an empty amount.
func TestInfoNoPrices(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /erc20/shib/info/", serveFixture(t, "info_erc20_shib_noprices.json"))
		info, err := c.Info(context.Background(), "erc20_shib", &InfoOptions{NoPrices: true})
		require.NoError(t, err)
		assert.Equal(t, "0", api.last().Query.Get("prices"))
		assert.Equal(t, "9518700000000000000000000", info.MinimumTransaction.String())
		assertDec(t, "9518700", info.MinimumTransactionCoin)
		assert.Equal(t, "1000000000000000000000000", info.MinimumFee.String())
		assertDec(t, "1", info.FeePercent)
		assert.True(t, info.NetworkFeeEstimation.IsZero(), `""`)
		assert.NotNil(t, info.Prices)
		assert.Empty(t, info.Prices, "[]")
		assert.True(t, info.PricesUpdated.IsZero())
	})
}

// TestAmountForms: every form the service writes an amount in decodes to
// the exact value; text that is not an amount is a decode error.
func TestAmountForms(t *testing.T) {
	good := map[string]string{
		`0.0012`:                             "0.0012",
		`"0.0012"`:                           "0.0012",
		`" 0.0012 "`:                         "0.0012",
		`9.5187e+24`:                         "9518700000000000000000000",
		`"9.5187e+24"`:                       "9518700000000000000000000",
		`"9.5187E24"`:                        "9518700000000000000000000",
		`0E-8`:                               "0",
		`"0E-8"`:                             "0",
		`1.5e-7`:                             "0.00000015",
		`123456789012345678901234567890`:     "123456789012345678901234567890",
		`"123456789012345678901234567890.5"`: "123456789012345678901234567890.5",
		`18446744073709551617`:               "18446744073709551617",
		`-3`:                                 "-3",
		`""`:                                 "0",
		`null`:                               "0",
		`"null"`:                             "0",
	}
	for in, want := range good {
		var ci CoinInfo
		require.NoError(t, json.Unmarshal([]byte(`{"coin":"X","minimum_transaction_coin":`+in+`}`), &ci), in)
		assertDec(t, want, ci.MinimumTransactionCoin, in)
	}
	var absent CoinInfo
	require.NoError(t, json.Unmarshal([]byte(`{"coin":"X"}`), &absent))
	assert.True(t, absent.MinimumTransactionCoin.IsZero())

	for _, in := range []string{`"abc"`, `true`, `{}`, `[1]`, `"1e999"`, `"0x10"`, `"1,5"`, `"NaN"`, `"Infinity"`, `"` + strings.Repeat("9", 200) + `"`} {
		c, api := setup(t)
		api.handle("GET /btc/info/", serveJSON(`{"coin":"X","minimum_transaction_coin":`+in+`,"status":"success"}`))
		_, err := c.Info(context.Background(), "btc", nil)
		var de *DecodeError
		assert.ErrorAs(t, err, &de, in)
	}
}

func TestPricesUpdatedForms(t *testing.T) {
	cases := map[string]time.Time{
		`"2024-05-21T09:14:33.512346Z"`:      time.Date(2024, 5, 21, 9, 14, 33, 512346000, time.UTC),
		`"2024-05-21T09:14:33Z"`:             time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		`"2024-05-21T11:14:33+02:00"`:        time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		`"2024-05-21T09:14:33.5"`:            time.Date(2024, 5, 21, 9, 14, 33, 500000000, time.UTC),
		`"2024-05-21 09:14:33"`:              time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		`"2024-05-21 09:14:33.123456+00:00"`: time.Date(2024, 5, 21, 9, 14, 33, 123456000, time.UTC),
		`"21/05/2024 09:14:33"`:              time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		`null`:                               {},
		`""`:                                 {},
	}
	for in, want := range cases {
		var ci CoinInfo
		require.NoError(t, json.Unmarshal([]byte(`{"coin":"X","prices_updated":`+in+`}`), &ci), in)
		assert.True(t, want.Equal(ci.PricesUpdated), "%s: got %v", in, ci.PricesUpdated)
		assert.Equal(t, time.UTC, ci.PricesUpdated.Location(), in)
	}
}

func TestCoins(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /info/", serveFixture(t, "info_all.json"))
		coins, err := c.Coins(context.Background(), nil)
		require.NoError(t, err)
		assert.Equal(t, "/info/", api.last().Path)
		assert.False(t, api.last().Query.Has("prices"))

		assert.Len(t, coins, allCoinsRecords(), "every native and token record, nothing else")
		assert.NotContains(t, coins, "fee_tiers", "a key that is not a coin")
		for key, ci := range coins {
			require.NotNil(t, ci, key)
			tk, err := ticker.Parse(key)
			require.NoError(t, err, key)
			assert.Equal(t, tk.Key(), key)
			assert.Equal(t, key, ci.Ticker)
			assert.NotEmpty(t, ci.Coin, key)
			assert.True(t, ci.MinimumTransactionCoin.IsPositive(), key)
			assert.True(t, ci.MinimumTransaction.IsPositive(), key)
			assert.NotNil(t, ci.Prices, key)
		}
		btc := coins["btc"]
		require.NotNil(t, btc)
		assert.Equal(t, "Bitcoin", btc.Coin)
		assertDec(t, "8000", btc.MinimumTransaction)
		assertDec(t, "0.00008", btc.MinimumTransactionCoin)
		assert.Len(t, btc.Prices, len(fiat))
		assert.False(t, btc.PricesUpdated.IsZero())

		usdt := coins["trc20_usdt"]
		require.NotNil(t, usdt)
		assert.Equal(t, "Tether USD", usdt.Coin)
		assertDec(t, "5", usdt.MinimumTransactionCoin)
		assertDec(t, "5000000", usdt.MinimumTransaction)

		require.Contains(t, coins, "avax-c")
		require.Contains(t, coins, "polygon_usdc.e")
		require.Contains(t, coins, "erc20_1inch")
		shib := coins["erc20_shib"]
		require.NotNil(t, shib)
		assert.Equal(t, "9518700000000000000000000", shib.MinimumTransaction.String(), "9.5187e+24")
		assert.Equal(t, "5000000000000000000", coins["erc20_usdt"].MinimumTransaction.Mul(mustDec("1e12")).String())
		assert.Equal(t, "5000000000000000000", coins["bep20_usdt"].MinimumTransaction.String(), "18 decimals")
		assert.Equal(t, "500000000000000000000000000", coins["erc20_pepe"].MinimumTransaction.String(), "beyond 64 bits")

		var emptyPrices, nullUpdated, exponentFee int
		for _, ci := range coins {
			if len(ci.Prices) == 0 {
				emptyPrices++
			}
			if ci.PricesUpdated.IsZero() {
				nullUpdated++
			}
			if ci.NetworkFeeEstimation.IsZero() {
				exponentFee++
			}
		}
		assert.Positive(t, emptyPrices, "records with prices {} and []")
		assert.Equal(t, emptyPrices, nullUpdated)
		assert.Positive(t, exponentFee, `records with "0E-8"`)
	})
}

func TestCoinsNoPrices(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /info/", serveJSON(`{"btc": {"coin": "Bitcoin", "minimum_transaction_coin": "0.00008", "prices": {}, "prices_updated": null}}`))
	coins, err := c.Coins(context.Background(), &InfoOptions{NoPrices: true})
	require.NoError(t, err)
	assert.Equal(t, "0", api.last().Query.Get("prices"))
	require.Contains(t, coins, "btc")
	assert.Empty(t, coins["btc"].Prices)
}

// TestCoinsSkipsWhatIsNotACoin: keys that are not tickers and values that
// are not records are left out, not failed on.
func TestCoinsSkipsWhatIsNotACoin(t *testing.T) {
	body := `{
		"btc": {"coin": "Bitcoin", "ticker": "btc", "minimum_transaction_coin": "0.00008"},
		"fee_tiers": [{"minimum": "0", "fee": "1.000"}],
		"Not A Ticker": {"coin": "X", "minimum_transaction_coin": "1"},
		"../admin": {"coin": "X", "minimum_transaction_coin": "1"},
		"status": "success",
		"updated": "2024-05-21T09:14:33Z",
		"trc20": {
			"usdt": {"coin": "USDT", "ticker": "usdt", "minimum_transaction": 5000000},
			"bad token": {"coin": "X", "minimum_transaction": 1},
			"note": "tokens on Tron",
			"empty": {}
		},
		"erc20": {}
	}`
	var coins Coins
	require.NoError(t, json.Unmarshal([]byte(body), &coins))
	keys := make([]string, 0, len(coins))
	for k := range coins {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"btc", "trc20_usdt"}, keys)
	assert.Equal(t, "trc20_usdt", coins["trc20_usdt"].Ticker)
}

func TestCoinsErrorAnswer(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		c, api := setup(t, WithoutRetries())
		api.handle("GET /info/", serveBody(status, "application/json", fixture(t, "error_message.json")))
		coins, err := c.Coins(context.Background(), nil)
		assert.Nil(t, coins)
		var ae *APIError
		require.ErrorAs(t, err, &ae, "HTTP %d", status)
		assert.Equal(t, status, ae.StatusCode)
		assert.Contains(t, ae.Message, "Callback URL not found")
	}
}

func TestInfoErrorAnswer(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/info/", serveJSON(`{"status":"error","error":"Error fetching info"}`))
	info, err := c.Info(context.Background(), "btc", nil)
	assert.Nil(t, info)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Error fetching info", ae.Message)
	assert.Equal(t, http.StatusOK, ae.StatusCode)
}

// FuzzCoinsDecode: decoding any bytes into Coins never panics, and every
// key of a decoded answer is a ticker in key form with a record.
func FuzzCoinsDecode(f *testing.F) {
	f.Add(fixture(f, "info_btc.json"))
	f.Add(fixture(f, "info_trc20_usdt.json"))
	f.Add(fixture(f, "error_message.json"))
	for _, s := range []string{
		`{}`, `{"btc":{}}`, `{"btc":{"coin":"B"}}`, `{"trc20":{"usdt":{"coin":"U"}}}`, `{"trc20":{"usdt":{"coin":7}}}`,
		`{"a_b":{"c":{"coin":"x"}}}`, `{"trc20":{"usdt":{"prices":[]}}}`, `{"status":"error"}`, `{"x":{"minimum_transaction":"9.5187e+24"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var cs Coins
		if err := json.Unmarshal(b, &cs); err != nil {
			return
		}
		for key, ci := range cs {
			if ci == nil {
				t.Fatalf("nil record for %q", key)
			}
			tk, err := ticker.Parse(key)
			if err != nil || tk.Key() != key {
				t.Fatalf("key %q is not a ticker in key form", key)
			}
		}
	})
}

// TestCoinsRecordStartingWithAnObject: a record whose first field is an
// object is still read as a record, not as a network of tokens.
func TestCoinsRecordStartingWithAnObject(t *testing.T) {
	var coins Coins
	require.NoError(t, json.Unmarshal([]byte(`{
		"btc": {"prices": {"USD": "60000"}, "coin": "Bitcoin", "minimum_transaction_coin": "0.0001"},
		"trc20": {"usdt": {"coin": "USDT", "minimum_transaction_coin": "5"}},
		"erc20": {"u\"sdt": {"coin": "X"}, "usdc": {"coin": "USDC", "minimum_transaction_coin": 5}}
	}`), &coins))
	require.Contains(t, coins, "btc")
	assertDec(t, "60000", coins["btc"].Prices["USD"])
	assert.Contains(t, coins, "trc20_usdt")
	assert.Contains(t, coins, "erc20_usdc")
	assert.Len(t, coins, 3)
}

// TestCoinsKeysAreCanonical: keys are lower-case tickers in "trc20_usdt"
// form whatever the case the answer uses.
func TestCoinsKeysAreCanonical(t *testing.T) {
	var coins Coins
	require.NoError(t, json.Unmarshal([]byte(`{
		"BTC": {"coin": "Bitcoin", "minimum_transaction_coin": "0.0001"},
		"TRC20": {"USDT": {"coin": "USDT", "minimum_transaction_coin": "5"}}
	}`), &coins))
	require.Contains(t, coins, "btc")
	require.Contains(t, coins, "trc20_usdt")
	assert.Equal(t, "btc", coins["btc"].Ticker)
	assert.Len(t, coins, 2)
}
