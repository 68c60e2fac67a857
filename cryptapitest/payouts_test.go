package cryptapitest_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/collect"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPayoutLifecycle: requests, a payout made of them (created), sent
// (processing, balance debited), done with a transaction hash once
// settled; and a payout the wallet cannot pay ends in error.
func TestPayoutLifecycle(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := newServer(t, cryptapitest.WithAPIKey("k"), cryptapitest.WithClock(clock))
	c := newClient(t, s, cryptapi.WithAPIKey("k"))

	w, err := c.PayoutWallet(ctx, "btc")
	require.NoError(t, err)
	assert.True(t, s.ValidAddress("btc", w.Address))
	bal, err := c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.True(t, bal.IsZero())

	// Funded two ways: the test hook and a payment to the wallet's address.
	require.NoError(t, s.FundPayoutWallet("btc", dec("0.2")))
	_, err = s.Pay("btc", w.Address, dec("0.1"))
	require.NoError(t, err)
	bal, err = c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.3", bal.String())

	reqs, err := c.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{btcDest: dec("0.1"), btcDest2: dec("0.05")})
	require.NoError(t, err)
	require.Len(t, reqs.RequestIDs, 2)
	pending, err := collect.All(c.ListPayoutRequests(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "pending"}))
	require.NoError(t, err)
	assert.Len(t, pending, 2)

	p, err := c.CreatePayoutFromRequests(ctx, reqs.RequestIDs)
	require.NoError(t, err)
	assert.Equal(t, cryptapi.PayoutCreated, p.Status)
	assert.Equal(t, "0.15", p.TotalRequested.String())
	assert.Equal(t, "0.1515", p.TotalWithFee.String())
	assert.Empty(t, p.From)
	assert.Empty(t, p.TxID)
	assert.Equal(t, "0.1", p.Requests[btcDest].String())
	_, err = c.CreatePayoutFromRequests(ctx, reqs.RequestIDs)
	apiError(t, err, http.StatusBadRequest) // already in a payout

	require.NoError(t, c.ProcessPayout(ctx, p.ID))
	assert.Error(t, c.ProcessPayout(ctx, p.ID), "a payout is sent once")
	st, err := c.PayoutStatus(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, cryptapi.PayoutProcessing, st.Status)
	assert.Equal(t, w.Address, st.From)
	assert.Empty(t, st.TxID)
	bal, err = c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.1485", bal.String(), "debited with the fee")

	clock.Advance(cryptapitest.PayoutSettleTime)
	st, err = c.PayoutStatus(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, cryptapi.PayoutDone, st.Status)
	assert.Regexp(t, `^[0-9a-f]{64}$`, st.TxID)
	done, err := collect.All(c.ListPayoutRequests(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "done"}))
	require.NoError(t, err)
	assert.Len(t, done, 2)
	assert.Equal(t, p.ID, done[0].PayoutID)

	// Short balance: the payout ends in error and the money stays.
	require.NoError(t, c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{btcDest3: dec("1")}))
	l, err := collect.All(c.ListPayouts(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "error"}))
	require.NoError(t, err)
	require.Len(t, l, 1)
	assert.Equal(t, cryptapi.PayoutError, l[0].Status)
	bal, err = c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.1485", bal.String())
	rejected, err := collect.All(c.ListPayoutRequests(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "rejected"}))
	require.NoError(t, err)
	assert.Len(t, rejected, 1)

	// SendPayouts within the balance goes straight to processing.
	require.NoError(t, c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{btcDest3: dec("0.01")}))
	l, err = collect.All(c.ListPayouts(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "processing"}))
	require.NoError(t, err)
	assert.Len(t, l, 1)
	all, err := collect.All(c.ListPayouts(ctx, "btc", nil))
	require.NoError(t, err)
	assert.Len(t, all, 3)
	batches := s.PayoutBatches()
	require.Len(t, batches, 3)
	assert.Equal(t, "Done", batches[0].Status)
	assert.Equal(t, reqs.RequestIDs, batches[0].RequestIDs)

	_, err = c.PayoutStatus(ctx, "999")
	apiError(t, err, http.StatusNotFound)
	eth, err := c.PayoutBalance(ctx, "eth")
	require.NoError(t, err)
	assert.True(t, eth.IsZero(), "one wallet per coin")
}

func TestPayoutListsArePaginatedBy50(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithAPIKey("k"))
	c := newClient(t, s, cryptapi.WithAPIKey("k"))
	var ids []string
	for len(ids) < 120 {
		r, err := c.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{btcDest: dec("0.001"), btcDest2: dec("0.002"), btcDest3: dec("0.003")})
		require.NoError(t, err)
		ids = append(ids, r.RequestIDs...)
	}
	total := len(ids)
	pages := (total + 49) / 50
	seen := map[string]bool{}
	before := len(s.Requests())
	for r, err := range c.ListPayoutRequests(ctx, "btc", nil) {
		require.NoError(t, err)
		assert.False(t, seen[r.ID], "request %s on two pages", r.ID)
		seen[r.ID] = true
	}
	assert.Len(t, seen, total)
	var read []string
	for _, r := range s.Requests()[before:] {
		read = append(read, r.Query.Get("p"))
	}
	want := []string{}
	for p := 1; p <= pages; p++ {
		want = append(want, fmt.Sprint(p))
	}
	assert.Equal(t, want, read, "one request per page of 50")
	beyond, err := collect.All(c.ListPayoutRequests(ctx, "btc", &cryptapi.ListPayoutsOptions{Page: pages + 1}))
	require.NoError(t, err)
	assert.Empty(t, beyond)
	status, _ := rawGet(t, s, "/btc/payout/request/list/?apikey=k&p=0")
	assert.Equal(t, http.StatusBadRequest, status)
	status, _ = rawGet(t, s, "/btc/payout/list/?apikey=k&status=bogus")
	assert.Equal(t, http.StatusBadRequest, status)
}

func TestPayoutWalletNeedsTheAPIKeyForm(t *testing.T) {
	s := newServer(t)
	assert.ErrorIs(t, s.FundPayoutWallet("btc", dec("1")), cryptapitest.ErrNoPayoutWallet)
	_, _, err := s.PayoutWallet("btc")
	assert.ErrorIs(t, err, cryptapitest.ErrNoPayoutWallet)
	k := newServer(t, cryptapitest.WithAPIKey("k"))
	assert.Error(t, k.FundPayoutWallet("btc", dec("0")))
	assert.Error(t, k.FundPayoutWallet("btc", dec("0.000000001")), "more decimals than the coin has")
	assert.Error(t, k.FundPayoutWallet("nope", dec("1")))
	require.NoError(t, k.FundPayoutWallet("trc20/usdt", dec("5")))
	_, b, err := k.PayoutWallet("trc20_usdt")
	require.NoError(t, err)
	assert.Equal(t, "5", b.String())
}

// TestPayoutWalletNeverOverspends: many payouts sent at once against a
// wallet that covers only some of them: the ones sent never exceed the
// balance, the others end in error, and nothing is debited twice.
func TestPayoutWalletNeverOverspends(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithAPIKey("k"))
	c := newClient(t, s, cryptapi.WithAPIKey("k"))
	require.NoError(t, s.FundPayoutWallet("btc", dec("1")))
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{btcDest: dec("0.1")}) // 0.101 with the fee
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	sent, failed := 0, 0
	for _, b := range s.PayoutBatches() {
		switch b.Status {
		case "Processing", "Done":
			sent++
		case "Error":
			failed++
		}
	}
	assert.Equal(t, 9, sent, "1 / 0.101 = 9 payouts fit")
	assert.Equal(t, n-9, failed)
	bal, err := c.PayoutBalance(ctx, "btc")
	require.NoError(t, err)
	assert.Equal(t, "0.091", bal.String())
}
