package cryptapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

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
