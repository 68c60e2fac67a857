package main

import (
	"context"
	"encoding/json"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimFund: "sim fund" adds to the payout wallet of the served
// simulator; a payout within the balance is sent, one beyond it fails.
func TestSimFund(t *testing.T) {
	sim := startSim(t, "-json", "-api-key", testKey)
	banner := sim.event()
	require.Equal(t, "listening", banner.Event)
	base := banner.BaseURL
	env := map[string]string{envAPIKey: testKey, envSimURL: base}

	r := cli(t, env, "sim", "fund", "-ticker", "btc", "-amount", "0.5", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct{ Address, Balance string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, "0.5", out.Balance)
	require.NotEmpty(t, out.Address)
	r = cli(t, env, "sim", "fund", "-ticker", "btc", "-amount", "0.25")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Balance +0\.75$`, r.stdout)
	assert.Contains(t, r.stdout, out.Address)

	c, err := cryptapi.New(cryptapi.WithBaseURL(base), cryptapi.WithAPIKey(testKey))
	require.NoError(t, err)
	ctx := context.Background()
	w, err := c.PayoutWallet(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, out.Address, w.Address)
	bal, err := c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.75", bal.String())
	require.NoError(t, c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{merchantAddress: decimal.RequireFromString("0.5")}))
	bal, err = c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.245", bal.String(), "0.5 and its 1% fee")

	for _, args := range [][]string{
		{"sim", "fund", "-ticker", "btc"},
		{"sim", "fund", "-amount", "1"},
		{"sim", "fund", "-ticker", "btc", "-amount", "-1"},
		{"sim", "fund", "-ticker", "nope", "-amount", "1"},
	} {
		r := cli(t, env, args...)
		assert.NotEqual(t, 0, r.code, "%v", args)
	}
	assert.Equal(t, 0, sim.stop())
}
