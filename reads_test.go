package cryptapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConvertAny(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /convert/", serveJSON(`{"status":"success","value_coin":"0.00041666","exchange_rate":0.0000083333}`))
		cv, err := c.ConvertAny(context.Background(), "btc", &ConvertOptions{Value: mustDec("50"), From: "EUR"})
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, "btc", q.Get("to"))
		assert.Equal(t, "EUR", q.Get("from"))
		assert.Equal(t, "50", q.Get("value"))
		assertDec(t, "0.00041666", cv.ValueCoin)
		assertDec(t, "0.0000083333", cv.ExchangeRate)
		_, err = c.ConvertAny(context.Background(), "trc20_usdt", &ConvertOptions{Value: mustDec("0.01"), From: "btc"})
		require.NoError(t, err, "coin to coin")
		assert.Equal(t, "trc20_usdt", api.last().Query.Get("to"))
	})
	c, api := setup(t)
	for _, tc := range []struct {
		to   string
		o    *ConvertOptions
		want error
	}{
		{"", &ConvertOptions{Value: mustDec("1"), From: "USD"}, ErrInvalidOption},
		{"btc/../x", &ConvertOptions{Value: mustDec("1"), From: "USD"}, ErrInvalidOption},
		{"btc", nil, ErrInvalidValue},
		{"btc", &ConvertOptions{Value: mustDec("0"), From: "USD"}, ErrInvalidValue},
		{"btc", &ConvertOptions{Value: mustDec("1"), From: "US D"}, ErrInvalidOption},
	} {
		_, err := c.ConvertAny(context.Background(), tc.to, tc.o)
		assert.ErrorIs(t, err, tc.want, "%q %+v", tc.to, tc.o)
	}
	assert.Zero(t, api.count())
}

func TestInfoKeepsLogo(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
	api.handle("GET /info/", serveFixture(t, "info_all.json"))
	info, err := c.Info(context.Background(), "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "https://api.cryptapi.io/media/token_logos/btc.png", info.Logo)
	coins, err := c.Coins(context.Background(), nil)
	require.NoError(t, err)
	require.Contains(t, coins, "btc")
	assert.Equal(t, "https://api.cryptapi.io/media/token_logos/btc.png", coins["btc"].Logo)
}

func TestFeeTiers(t *testing.T) {
	for name, body := range map[string]string{
		"fixture":      "",
		"fee_percent":  `{"btc":{"coin":"Bitcoin"},"fee_tiers":[{"minimum":10000,"fee_percent":0.75},{"minimum":"0","fee_percent":"1.000"}]}`,
		"map of tiers": `{"fee_tiers":{"a":{"minimum":"10000","fee_percent":"0.75"},"b":{"minimum":0,"fee_percent":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setup(t)
			if body == "" {
				api.handle("GET /info/", serveFixture(t, "info_all.json"))
			} else {
				api.handle("GET /info/", serveJSON(body))
			}
			tiers, err := c.FeeTiers(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "0", api.last().Query.Get("prices"))
			require.Len(t, tiers, 2)
			assertDec(t, "0", tiers[0].Minimum)
			assertDec(t, "1", tiers[0].FeePercent)
			if body == "" {
				assertDec(t, "1000000", tiers[1].Minimum)
				assertDec(t, "0.5", tiers[1].FeePercent)
				return
			}
			assertDec(t, "10000", tiers[1].Minimum)
			assertDec(t, "0.75", tiers[1].FeePercent)
		})
	}
	c, api := setup(t)
	api.handle("GET /info/", serveJSON(`{"btc":{"coin":"Bitcoin"}}`))
	tiers, err := c.FeeTiers(context.Background())
	require.NoError(t, err)
	assert.Empty(t, tiers)
}
