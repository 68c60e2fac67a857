package cryptapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// TestPayoutAmountsAreCheckedBeforeTheNetwork: a payout amount with more
// decimals than its coin has, or beyond any coin's supply, is refused
// with ErrInvalidValue before a payout request leaves the process.
func TestPayoutAmountsAreCheckedBeforeTheNetwork(t *testing.T) {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("k"))
	t.Cleanup(srv.Close)
	c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("k"))
	require.NoError(t, err)
	ctx := context.Background()
	const btcDest = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
	payoutCalls := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if strings.Contains(r.Path, "/payout/") {
				n++
			}
		}
		return n
	}
	for name, tc := range map[string]struct {
		ticker, value string
	}{
		"btc: nine decimals":  {"btc", "0.123456789"},
		"btc: one satoshi/10": {"btc", "0.000000001"},
		"trx: seven decimals": {"trx", "1.0000001"},
		"token: 19 decimals":  {"trc20_usdt", "1.0000000000000000001"},
		"absurdly large":      {"btc", "1e30"},
		"beyond any supply":   {"btc", "1000000000000000000"},
		"exponent far below":  {"btc", "1e-40"},
	} {
		t.Run(name, func(t *testing.T) {
			dest := btcDest
			if strings.HasPrefix(tc.ticker, "tr") {
				dest = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
			}
			v := decimal.RequireFromString(tc.value)
			before := payoutCalls()
			_, err := c.CreatePayouts(ctx, tc.ticker, map[string]decimal.Decimal{dest: v})
			assert.ErrorIs(t, err, cryptapi.ErrInvalidValue)
			err = c.SendPayouts(ctx, tc.ticker, map[string]decimal.Decimal{dest: v})
			assert.ErrorIs(t, err, cryptapi.ErrInvalidValue)
			_, err = c.CreatePayout(ctx, tc.ticker, &cryptapi.PayoutOptions{Address: dest, Value: v})
			assert.ErrorIs(t, err, cryptapi.ErrInvalidValue)
			assert.Equal(t, before, payoutCalls(), "no payout request reached the service")
		})
	}
	// The coin's own precision passes.
	_, err = c.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{btcDest: decimal.RequireFromString("0.00000001")})
	require.NoError(t, err)
	_, err = c.CreatePayouts(ctx, "trc20_usdt", map[string]decimal.Decimal{"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE": decimal.RequireFromString("12.345678")})
	require.NoError(t, err)
}
