package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

func TestReconcileListsMissedPayments(t *testing.T) {
	fake := cryptapitest.NewServer(cryptapitest.WithRetrySchedule(nil))
	defer fake.Close()
	// A merchant that never answers *ok*: every callback is missed.
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer shop.Close()
	ctx := context.Background()
	c, err := cryptapi.New(cryptapi.WithBaseURL(fake.URL()))
	require.NoError(t, err)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/cb",
		Params:   url.Values{"order_id": {"9"}},
		Address:  "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",
	})
	require.NoError(t, err)
	txid, err := fake.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.02"))
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(ctx))

	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"reconcile", "-ticker", "btc", "-callback", addr.CallbackURL, "-address-in", addr.AddressIn, "-base-url", fake.URL(), "-json"}, &stdout, &stderr, nil)
	require.Equal(t, 0, code, stderr.String())
	var out struct {
		Report reconcileReportJSON `json:"report"`
		Missed []reconciledJSON    `json:"missed"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	assert.Equal(t, 1, out.Report.Seen)
	assert.Equal(t, 1, out.Report.Processed)
	require.Len(t, out.Missed, 1)
	assert.False(t, out.Missed[0].Pending)
	assert.Equal(t, "0.02", out.Missed[0].ValueCoin)
	assert.Equal(t, "9", out.Missed[0].Custom.Get("order_id"))
	assert.Equal(t, txid, out.Missed[0].TxIDIn)

	stdout.Reset()
	code = run(ctx, []string{"reconcile", "-ticker", "btc", "-callback", addr.CallbackURL, "-address-in", addr.AddressIn, "-base-url", fake.URL()}, &stdout, &stderr, nil)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "order_id=9")
	assert.True(t, strings.Contains(stdout.String(), "missed") && strings.Contains(stdout.String(), "confirmed"), stdout.String())
}

// TestReconcileRefusesLogsOfAnotherAddress: the logs of a callback URL
// whose address is not the one the merchant's records hold (someone else
// created it first, forwarding to them) are refused, not listed as missed
// payments; without -address-in the command does not run.
func TestReconcileRefusesLogsOfAnotherAddress(t *testing.T) {
	fake := cryptapitest.NewServer(cryptapitest.WithRetrySchedule(nil))
	defer fake.Close()
	ctx := context.Background()
	c, err := cryptapi.New(cryptapi.WithBaseURL(fake.URL()))
	require.NoError(t, err)
	theirs, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: "http://127.0.0.1:1/cb", Params: url.Values{"order_id": {"9"}},
		Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})
	require.NoError(t, err)
	txid, err := fake.Pay("btc", theirs.AddressIn, decimal.RequireFromString("0.02"))
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(ctx))

	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"reconcile", "-ticker", "btc", "-callback", theirs.CallbackURL, "-address-in", "bc1q34dtzwvw6ese7gh40m4a6tdrkqurer9pqvzyef", "-base-url", fake.URL(), "-json"}, &stdout, &stderr, nil)
	assert.NotEqual(t, 0, code)
	// Under -json the error is the JSON object on stdout.
	assert.Contains(t, stdout.String(), `"error"`)
	assert.Contains(t, stdout.String(), "unknown payment address")
	assert.NotContains(t, stdout.String(), txid)

	stdout.Reset()
	stderr.Reset()
	code = run(ctx, []string{"reconcile", "-ticker", "btc", "-callback", theirs.CallbackURL, "-base-url", fake.URL()}, &stdout, &stderr, nil)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr.String(), "address-in")
}
