package cryptapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// FuzzCoinsDecode: decoding any bytes into Coins never panics, every
// key of a decoded answer is a ticker in key form with a record.
func FuzzCoinsDecode(f *testing.F) {
	f.Add(fixture(f, "info_all.json"))
	f.Add(fixture(f, "info_btc.json"))
	f.Add(fixture(f, "info_trc20_usdt.json"))
	f.Add(fixture(f, "error_message.json"))
	for _, s := range coinsDecodeCases {
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

// coinsDecodeCases are answers around the edges of the all-coins shape:
// keys given twice, values that are not records, "status": "error",
// trailing bytes, amount maps that must be refused.
var coinsDecodeCases = []string{
	`{}`, `{"btc":{}}`, `{"btc":{"coin":"B"}}`, `{"trc20":{"usdt":{"coin":"U"}}}`, `{"trc20":{"usdt":{"coin":7}}}`,
	`{"a_b":{"c":{"coin":"x"}}}`, `{"trc20":{"usdt":{"prices":[]}}}`, `{"status":"error"}`, `{"x":{"minimum_transaction":"9.5187e+24"}}`,
	`{"status":"err\u006fr","btc":{"coin":"B"}}`, `{"btc":{"coin":"B"},"status":"ERROR"}`, `{"status":{"coin":"S"}}`,
	`{"btc":{"coin":"B"},"btc":{"coin":"C"}}`, `{"btc":{"coin":"B"},"btc":"gone"}`, `{"BTC":{"coin":"B"},"btc":{"coin":"C"}}`,
	`{"btc":{"coin":"B"}} `, `{"btc":{"coin":"B"}}x`, `{"btc":{"coin":"B"}}{}`, ` {"btc" : {"coin":"B"}}`, `[]`, `"x"`, `{"btc":}`,
	`{"btc":{"coin":"B","prices":{"USD":67198.36,"EUR":"1e3"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":"1","USD":"2"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":"x","USD":"2"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":1e70,"USD":"2"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":"1"},"prices":{"EUR":"2"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":"1"},"prices":null}}`,
	`{"btc":{"coin":"B","prices":{"USD":"1"},"Prices":[ ]}}`,
	`{"btc":{"coin":"B","prices":{"USD":null,"EUR":"","GBP":" 2 "}}}`,
	`{"btc":{"coin":"B","prices":{"USD":"\u0031.5"}}}`,
	`{"btc":{"coin":"B","prices":{"USD":true}}}`,
	`{"btc":{"coin":"B","prices":[1]}}`,
	`{"btc":{"coin":"B","prices":5}}`,
	`{"btc":{"prices":{"USD":"60000"},"coin":"Bitcoin"}}`,
	`{"btc":{"x":1,"usdt":{"coin":"U"}}}`,
	`{"trc20":{"usdt":{"coin":"U","prices":{"USD":1}},"usdc":{"coin":"C"}}}`,
	`{"trc20":{"usdt":{"coin":"U"},"note":"tokens on Tron","empty":{},"none":null}}`,
	`{"trc20":{"usdt":{"coin":"U"},"bad token":{"coin":"X","minimum_fee":"x"}}}`,
	`{"trc20":{"usdt":{"coin":"U"},"empty":{"prices":5}}}`,
	`{"trc20":{"usdt":{"coin":"U","minimum_fee":"x"}}}`,
	`{"trc20":{"usdt":{"coin":"U"},"usdt":{"coin":"V"}}}`,
	`{"trc20":{"usdt":{"coin":"U"},"usdt":null}}`,
	`{"trc20":{"none":{"x":1}}}`,
	`{"trc20":{"usdt":{"coin":"U"}},"trc20":[]}`,
	`{"erc20":{"usdt":{}},"coin":"E"}`,
	`{"erc20":{"x":{"y":1},"coin":"E"}}`,
}

// TestCoinsDecodeRefusesAReplacedBadAmount: an amount that a later one
// of the same code replaces is still read, and the map refused.
func TestCoinsDecodeRefusesAReplacedBadAmount(t *testing.T) {
	var cs Coins
	assert.Error(t, json.Unmarshal([]byte(`{"btc":{"coin":"B","prices":{"USD":"x","USD":"2"}}}`), &cs))
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
