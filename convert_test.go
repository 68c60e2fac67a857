package cryptapi

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConvert(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/convert/", serveFixture(t, "convert.json"))
		cv, err := c.Convert(context.Background(), "btc", &ConvertOptions{Value: mustDec("1000.00"), From: "USD"})
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, "1000", q.Get("value"))
		assert.Equal(t, "USD", q.Get("from"))
		assertDec(t, "0.01524", cv.ValueCoin)
		assertDec(t, "65616.60", cv.ExchangeRate)
		assert.Equal(t, "success", cv.Status)
	})
}

// TestConvertExactValue: amounts go out as exact decimal text, never
// through a float.
func TestConvertExactValue(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /erc20/usdt/convert/", serveJSON(`{"value_coin": 1.000000000000000001, "exchange_rate": "1", "status": "success"}`))
	cv, err := c.Convert(context.Background(), "erc20_usdt", &ConvertOptions{Value: mustDec("123456789.000000000000000001"), From: "eur"})
	require.NoError(t, err)
	assert.Equal(t, "123456789.000000000000000001", api.last().Query.Get("value"))
	assert.Equal(t, "eur", api.last().Query.Get("from"))
	assert.Equal(t, "1.000000000000000001", cv.ValueCoin.String())
}

func TestConvertValidationBeforeNetwork(t *testing.T) {
	cases := []struct {
		name string
		opts *ConvertOptions
		want error
	}{
		{"nil options", nil, ErrInvalidValue},
		{"zero value", &ConvertOptions{From: "USD"}, ErrInvalidValue},
		{"negative value", &ConvertOptions{Value: mustDec("-5"), From: "USD"}, ErrInvalidValue},
		{"no from", &ConvertOptions{Value: mustDec("5")}, ErrInvalidOption},
		{"from with space", &ConvertOptions{Value: mustDec("5"), From: "US D"}, ErrInvalidOption},
		{"from with query", &ConvertOptions{Value: mustDec("5"), From: "usd&apikey=x"}, ErrInvalidOption},
		{"from with slash", &ConvertOptions{Value: mustDec("5"), From: "../usd"}, ErrInvalidOption},
		{"from too long", &ConvertOptions{Value: mustDec("5"), From: strings.Repeat("u", 33)}, ErrInvalidOption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			api.handle("GET /btc/convert/", serveFixture(t, "convert.json"))
			cv, err := c.Convert(context.Background(), "btc", tc.opts)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, cv)
			assert.Zero(t, api.count())
		})
	}
}

func TestConvertFromTicker(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /trc20/usdt/convert/", serveFixture(t, "convert.json"))
	_, err := c.Convert(context.Background(), "trc20_usdt", &ConvertOptions{Value: decimal.NewFromInt(2), From: "polygon_usdc.e"})
	require.NoError(t, err)
	assert.Equal(t, "polygon_usdc.e", api.last().Query.Get("from"))
}
