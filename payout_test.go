package cryptapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreatePayout(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/payout/request/create/", serveFixture(t, "payout.json"))
		p, err := c.CreatePayout(context.Background(), "btc", &PayoutOptions{Address: btcOut1, Value: mustDec("0.01500000")})
		if !f.key {
			assert.ErrorIs(t, err, ErrAPIKeyRequired)
			assert.Nil(t, p)
			assert.Zero(t, api.count(), "payouts need a key in both forms")
			return
		}
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, btcOut1, q.Get("address"))
		assert.Equal(t, "0.015", q.Get("value"))
		assert.Equal(t, "success", p.Status)
		assert.Empty(t, p.RequestIDs)
	})
}

func TestCreatePayoutTokenPath(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /trc20/usdt/payout/request/create/", serveJSON(`{"status":"success","request_id":7781}`))
	p, err := c.CreatePayout(context.Background(), "trc20_usdt", &PayoutOptions{Address: "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", Value: mustDec("250")})
	require.NoError(t, err)
	assert.Equal(t, []string{"7781"}, p.RequestIDs)
}

func TestCreatePayouts(t *testing.T) {
	for name, fx := range map[string]struct {
		file string
		ids  []string
	}{
		"ids as strings":  {"payout_bulk_strings.json", []string{"5834", "5835", "5836"}},
		"ids as integers": {"payout_bulk_ints.json", []string{"5834", "5835", "18446744073709551617"}},
	} {
		t.Run(name, func(t *testing.T) {
			eachForm(t, func(t *testing.T, f form) {
				c, api := f.setup(t)
				api.handle("POST /btc/payout/request/bulk/", serveFixture(t, fx.file))
				p, err := c.CreatePayouts(context.Background(), "btc", map[string]decimal.Decimal{
					btcOut2: mustDec("1.25"),
					btcOut1: mustDec("0.00000001"),
					"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq": mustDec("123456789012345.12345678"),
				})
				if !f.key {
					assert.ErrorIs(t, err, ErrAPIKeyRequired)
					assert.Zero(t, api.count())
					return
				}
				require.NoError(t, err)
				req := api.last()
				assert.Equal(t, http.MethodPost, req.Method)
				assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
				assert.Equal(t, `{"outputs":{"`+btcOut1+`":0.00000001,"`+btcOut2+`":1.25,"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq":123456789012345.12345678}}`,
					string(req.Body), "exact amounts, sorted addresses")
				assert.Equal(t, "success", p.Status)
				assert.Equal(t, fx.ids, p.RequestIDs)
			})
		})
	}
}

func TestPayoutValidationBeforeNetwork(t *testing.T) {
	c, api := setupKey(t)
	ctx := context.Background()
	single := []struct {
		opts *PayoutOptions
		want error
	}{
		{nil, ErrAddressRequired},
		{&PayoutOptions{Value: mustDec("1")}, ErrAddressRequired},
		{&PayoutOptions{Address: " ", Value: mustDec("1")}, ErrAddressRequired},
		{&PayoutOptions{Address: "1H6Z ZpRm", Value: mustDec("1")}, ErrInvalidOption},
		{&PayoutOptions{Address: btcOut1}, ErrInvalidValue},
		{&PayoutOptions{Address: btcOut1, Value: mustDec("-0.1")}, ErrInvalidValue},
	}
	for _, tc := range single {
		p, err := c.CreatePayout(ctx, "btc", tc.opts)
		assert.ErrorIs(t, err, tc.want)
		assert.Nil(t, p)
	}
	bulk := []struct {
		outs map[string]decimal.Decimal
		want error
	}{
		{nil, ErrAddressRequired},
		{map[string]decimal.Decimal{}, ErrAddressRequired},
		{map[string]decimal.Decimal{"": mustDec("1")}, ErrInvalidOption},
		{map[string]decimal.Decimal{`a"b`: mustDec("1")}, ErrInvalidOption},
		{map[string]decimal.Decimal{btcOut1: decimal.Zero}, ErrInvalidValue},
		{map[string]decimal.Decimal{btcOut1: mustDec("1"), btcOut2: mustDec("-1")}, ErrInvalidValue},
	}
	for _, tc := range bulk {
		p, err := c.CreatePayouts(ctx, "btc", tc.outs)
		assert.ErrorIs(t, err, tc.want)
		assert.Nil(t, p)
	}
	assert.Zero(t, api.count())
}

// TestPayoutsNeverRetried: a payout may have reached the service even when
// the answer is lost, so no failure is retried, whatever the retry
// settings.
func TestPayoutsNeverRetried(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		c, api := setupKey(t, WithRetry(10, 0, 0))
		api.handle("GET /btc/payout/request/create/", serveBody(status, "", nil))
		api.handle("POST /btc/payout/request/bulk/", serveBody(status, "", nil))
		_, err := c.CreatePayout(context.Background(), "btc", &PayoutOptions{Address: btcOut1, Value: mustDec("1")})
		require.Error(t, err)
		_, err = c.CreatePayouts(context.Background(), "btc", map[string]decimal.Decimal{btcOut1: mustDec("1")})
		require.Error(t, err)
		assert.Equal(t, 2, api.count(), "HTTP %d: one attempt each", status)
	}
}
