package callback_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// reconcileShop is a merchant whose callback endpoint can be taken down:
// while down it answers 503 without reaching the handler, as a crashed or
// unreachable server would.
type reconcileShop struct {
	srv     *httptest.Server
	down    atomic.Bool
	store   *callback.MemoryStore
	handler http.Handler
	mu      sync.Mutex
	got     []*callback.Payment
	block   chan struct{} // when non-nil, fn waits on it once
	entered chan struct{}
}

func (s *reconcileShop) fn(ctx context.Context, p *callback.Payment) error {
	s.mu.Lock()
	s.got = append(s.got, p)
	block, entered := s.block, s.entered
	s.block = nil
	s.mu.Unlock()
	if block != nil {
		close(entered)
		<-block
	}
	return nil
}

func (s *reconcileShop) calls() []*callback.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*callback.Payment(nil), s.got...)
}

type reconcileEnv struct {
	fake   *cryptapitest.Server
	clock  *cryptapitest.FakeClock
	client *cryptapi.Client
	shop   *reconcileShop
}

func newReconcileEnv(t *testing.T) *reconcileEnv {
	t.Helper()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	fake := cryptapitest.NewServer(cryptapitest.WithClock(clock),
		cryptapitest.WithRetrySchedule([]time.Duration{time.Minute, time.Minute, time.Minute}))
	t.Cleanup(fake.Close)
	client, err := cryptapi.New(cryptapi.WithBaseURL(fake.URL()), cryptapi.WithRetry(0, 0, 0))
	require.NoError(t, err)

	shop := &reconcileShop{store: callback.NewMemoryStore()}
	shop.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shop.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		shop.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(shop.srv.Close)
	v, err := callback.NewVerifier(callback.WithPublicKey(fake.PublicKey()), callback.WithPublicURL(shop.srv.URL))
	require.NoError(t, err)
	shop.handler, err = callback.NewHandler(v, shop.fn, callback.WithStore(shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	return &reconcileEnv{fake: fake, clock: clock, client: client, shop: shop}
}

// pay creates an address, pays it and confirms it while the shop is down,
// so the confirmed callback fails; it returns the stored callback URL.
func (e *reconcileEnv) payWhileDown(t *testing.T, pending bool) (*cryptapi.Address, string) {
	t.Helper()
	ctx := context.Background()
	addr, err := e.client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: e.shop.srv.URL + "/cb",
		Params:   url.Values{"order_id": {"77"}},
		Address:  "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",
		Pending:  pending,
	})
	require.NoError(t, err)
	e.shop.down.Store(true)
	txid, err := e.fake.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
	require.NoError(t, err)
	require.NoError(t, e.fake.Flush(ctx))
	return addr, txid
}

func TestReconcileProcessesMissedCallbackOnce(t *testing.T) {
	e := newReconcileEnv(t)
	ctx := context.Background()
	addr, txid := e.payWhileDown(t, false)
	require.NoError(t, e.fake.Confirm(txid, 1))
	require.NoError(t, e.fake.Flush(ctx))
	// Every retry fails too, until the service gives up.
	for i := 0; i < 4; i++ {
		e.clock.Advance(time.Minute)
		require.NoError(t, e.fake.Flush(ctx))
	}
	require.Empty(t, e.shop.calls(), "the shop never saw the payment")
	logs, err := e.client.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	require.Len(t, logs.Callbacks, 1)
	require.Equal(t, cryptapi.ResultSent, logs.Callbacks[0].Result)
	require.True(t, logs.Callbacks[0].Confirmed())

	rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Seen)
	assert.Equal(t, 1, rep.Processed)
	calls := e.shop.calls()
	require.Len(t, calls, 1)
	p := calls[0]
	assert.False(t, p.Pending)
	assert.Equal(t, addr.AddressIn, p.AddressIn)
	assert.Equal(t, "btc", p.Coin)
	assert.Equal(t, "77", p.Custom.Get("order_id"), "custom parameters come back")
	assert.True(t, p.ValueCoin.Equal(decimal.RequireFromString("0.01")))
	assert.True(t, p.ValueForwardedCoin.IsPositive())
	assert.Equal(t, logs.Callbacks[0].UUID, p.UUID)
	assert.NotEmpty(t, p.TxIDOut)

	// A second run finds it done and processes nothing.
	rep, err = callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Processed)
	assert.Equal(t, 1, rep.AlreadyDone)
	assert.Len(t, e.shop.calls(), 1)
}

func TestReconcileAndLiveCallbackTogether(t *testing.T) {
	e := newReconcileEnv(t)
	ctx := context.Background()
	addr, txid := e.payWhileDown(t, false)
	require.NoError(t, e.fake.Confirm(txid, 1))
	require.NoError(t, e.fake.Flush(ctx))

	// Reconcile starts, and its fn is still working when the shop comes
	// back and the service's retry arrives.
	block := make(chan struct{})
	entered := make(chan struct{})
	e.shop.mu.Lock()
	e.shop.block, e.shop.entered = block, entered
	e.shop.mu.Unlock()
	type result struct {
		rep callback.ReconcileReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
		done <- result{rep, err}
	}()
	<-entered
	e.shop.down.Store(false)
	e.clock.Advance(time.Minute)
	require.NoError(t, e.fake.Flush(ctx))
	ds := e.fake.Deliveries()
	require.NotEmpty(t, ds)
	assert.Equal(t, http.StatusServiceUnavailable, ds[len(ds)-1].StatusCode, "the live callback finds the payment busy and is not acknowledged")

	close(block)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, 1, r.rep.Processed)

	// The next retry is acknowledged without running fn again.
	e.clock.Advance(time.Minute)
	require.NoError(t, e.fake.Flush(ctx))
	ds = e.fake.Deliveries()
	assert.True(t, ds[len(ds)-1].OK, "the redelivery is acknowledged")
	assert.Len(t, e.shop.calls(), 1, "processed exactly once")
	logs, err := e.client.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	assert.Equal(t, cryptapi.ResultDone, logs.Callbacks[0].Result)

	// Once acknowledged, Reconcile leaves it alone.
	rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Acknowledged)
	assert.Len(t, e.shop.calls(), 1)
}

func TestReconcilePendingThenConfirmed(t *testing.T) {
	e := newReconcileEnv(t)
	ctx := context.Background()
	addr, txid := e.payWhileDown(t, true)

	rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Processed, rep.String())
	require.Len(t, e.shop.calls(), 1)
	assert.True(t, e.shop.calls()[0].Pending)
	assert.Empty(t, e.shop.calls()[0].TxIDOut)

	require.NoError(t, e.fake.Confirm(txid, 1))
	require.NoError(t, e.fake.Flush(ctx))
	rep, err = callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), callback.InsecureSkipAddressCheck())
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Processed, rep.String())
	calls := e.shop.calls()
	require.Len(t, calls, 2)
	assert.False(t, calls[1].Pending)

	// The pending callback, delivered late, is acknowledged and not passed on.
	e.shop.down.Store(false)
	for i := 0; i < 3; i++ {
		e.clock.Advance(time.Minute)
		require.NoError(t, e.fake.Flush(ctx))
	}
	assert.Len(t, e.shop.calls(), 2)
}

func TestReconcileNeedsStore(t *testing.T) {
	c, err := cryptapi.New(cryptapi.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	_, err = callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb", func(context.Context, *callback.Payment) error { return nil }, callback.InsecureSkipAddressCheck())
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
	_, err = callback.Reconcile(context.Background(), c, "../btc", "https://shop.example/cb", func(context.Context, *callback.Payment) error { return nil }, callback.WithStore(callback.NewMemoryStore()), callback.InsecureSkipAddressCheck())
	assert.ErrorIs(t, err, cryptapi.ErrInvalidTicker)
}

// logsServer answers the logs operation with body.
func logsServer(t *testing.T, body string) *cryptapi.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL), cryptapi.WithoutRetries())
	require.NoError(t, err)
	return c
}

const loggedPayment = `{"status":"success","address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs","address_out":"bc1q5wg5duprkhryy5ks5yas5zd69d00ky2duhkmx4","callback_url":"https://shop.example/cb?order_id=5",
 "notify_pending":false,"notify_confirmations":1,"priority":"default","callbacks":[{
  %s"txid_in":"tx1","txid_out":"tx2","value_coin":"0.01","value_forwarded_coin":"0.0099","fee_coin":"0.0001","confirmations":1,
  "last_update":"22/11/2026 12:00:00","result":%q,"logs":[
   {"request_url":"https://shop.example/cb?order_id=5&uuid=u1","responses":%q,"response_status":"200","next_try":null,"pending":false,"confirmed":true}]}]}`

func TestReconcileRefusesPaymentsWithoutUUID(t *testing.T) {
	c := logsServer(t, fmt.Sprintf(loggedPayment, "", "sent", "error"))
	var calls atomic.Int32
	fn := func(context.Context, *callback.Payment) error { calls.Add(1); return nil }
	rep, err := callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb?order_id=5", fn, callback.WithStore(callback.NewMemoryStore()), callback.InsecureSkipAddressCheck())
	require.Error(t, err)
	assert.ErrorIs(t, err, callback.ErrNoUUID)
	assert.Equal(t, 1, rep.Failed)
	assert.Zero(t, calls.Load(), "a payment that cannot be matched to live callbacks is not processed")
}

func TestReconcileTrustsDoneOnlyWithAnOKDelivery(t *testing.T) {
	for _, tc := range []struct {
		response      string
		wantProcessed int
	}{
		{"*ok*", 0},  // done and acknowledged: left alone
		{"error", 1}, // "done" without an acknowledged confirmed delivery: the store decides
	} {
		c := logsServer(t, fmt.Sprintf(loggedPayment, `"uuid":"u1",`, "done", tc.response))
		var calls atomic.Int32
		fn := func(context.Context, *callback.Payment) error { calls.Add(1); return nil }
		rep, err := callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb?order_id=5", fn, callback.WithStore(callback.NewMemoryStore()), callback.InsecureSkipAddressCheck())
		require.NoError(t, err)
		assert.Equal(t, tc.wantProcessed, rep.Processed, tc.response)
		assert.Equal(t, int32(tc.wantProcessed), calls.Load(), tc.response)
	}
}

// TestReconcileWithoutPaymentsIsZero: logs without payments, whether the
// service answers "callbacks": [] or that nothing was found, reconcile to
// zero payments without an error.
func TestReconcileWithoutPaymentsIsZero(t *testing.T) {
	for name, body := range map[string]string{
		"callbacks []":  `{"status":"success","callback_url":"https://shop.example/cb","address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs","callbacks":[]}`,
		"nothing found": `{"status":"error","error":"No request or no payment callbacks found"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL))
			require.NoError(t, err)
			called := false
			rep, err := callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb",
				func(context.Context, *callback.Payment) error { called = true; return nil },
				callback.WithStore(callback.NewMemoryStore()),
				callback.WithAddressCheck(func(context.Context, string) (bool, error) { return true, nil }))
			require.NoError(t, err)
			assert.Equal(t, callback.ReconcileReport{}, rep)
			assert.False(t, called)
			assert.Equal(t, int32(1), hits.Load())
		})
	}
}

// TestReconcileChecksTheLoggedAddress: the logs of a callback URL whose
// address is not one the merchant created, or that name no address, are
// refused before fn.
func TestReconcileChecksTheLoggedAddress(t *testing.T) {
	known := func(_ context.Context, a string) (bool, error) {
		return a == "bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs", nil
	}
	for name, tc := range map[string]struct {
		body string
		ok   bool
	}{
		"own address":     {fmt.Sprintf(loggedPayment, `"uuid":"u1",`, "sent", "error"), true},
		"another address": {strings.Replace(fmt.Sprintf(loggedPayment, `"uuid":"u1",`, "sent", "error"), `"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs"`, `"bc1qvkk04v2ftzu0rr56x0rcfdvaff9leh2guf8j7h"`, 1), false},
		"no address":      {strings.Replace(fmt.Sprintf(loggedPayment, `"uuid":"u1",`, "sent", "error"), `"address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs",`, "", 1), false},
		// No payments: nothing can reach fn, so nothing to refuse.
		"nothing found": {`{"status":"error","error":"No request or no payment callbacks found"}`, true},
	} {
		c := logsServer(t, tc.body)
		var calls atomic.Int32
		fn := func(context.Context, *callback.Payment) error { calls.Add(1); return nil }
		_, err := callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb?order_id=5", fn,
			callback.WithStore(callback.NewMemoryStore()), callback.WithAddressCheck(known))
		if tc.ok {
			assert.NoError(t, err, name)
			if name != "nothing found" {
				assert.Equal(t, int32(1), calls.Load(), name)
			}
			continue
		}
		assert.ErrorIs(t, err, callback.ErrUnknownAddress, name)
		assert.Zero(t, calls.Load(), name)
	}
}

// failingComplete makes the first n Completes fail; with lost, the write
// lands first and only the answer is lost.
type failingComplete struct {
	callback.Store
	mu   sync.Mutex
	n    int
	lost bool
}

func (f *failingComplete) Complete(ctx context.Context, key string) error {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if !fail {
		return f.Store.Complete(ctx, key)
	}
	if f.lost {
		if err := f.Store.Complete(ctx, key); err != nil {
			return err
		}
	}
	return errors.New("complete failed")
}

// TestReconcileRecordsItsSuccessDespiteAFailedComplete: Reconcile goes
// through Process, so a Complete that fails once is tried again, and a
// later run (after the lease) finds the payment done instead of running fn
// again. A Complete that keeps failing is reported as a failure, with the
// claim kept.
func TestReconcileRecordsItsSuccessDespiteAFailedComplete(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			e := newReconcileEnv(t)
			ctx := context.Background()
			addr, txid := e.payWhileDown(t, false)
			require.NoError(t, e.fake.Confirm(txid, 1))
			require.NoError(t, e.fake.Flush(ctx))
			clk := callback.NewFakeClock()
			mem := callback.NewMemoryStore(callback.WithClock(clk))
			store := &failingComplete{Store: mem, n: 1, lost: lost}

			rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(store), callback.InsecureSkipAddressCheck())
			require.NoError(t, err)
			assert.Equal(t, 1, rep.Processed)
			assert.Empty(t, rep.Errors)

			clk.Advance(time.Hour) // long after the lease
			rep, err = callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(store), callback.InsecureSkipAddressCheck())
			require.NoError(t, err)
			assert.Equal(t, 1, rep.AlreadyDone)
			assert.Len(t, e.shop.calls(), 1, "fn ran once")
		})
	}
	t.Run("complete keeps failing", func(t *testing.T) {
		e := newReconcileEnv(t)
		ctx := context.Background()
		addr, txid := e.payWhileDown(t, false)
		require.NoError(t, e.fake.Confirm(txid, 1))
		require.NoError(t, e.fake.Flush(ctx))
		clk := callback.NewFakeClock()
		mem := callback.NewMemoryStore(callback.WithClock(clk))
		store := &failingComplete{Store: mem, n: 1 << 30}
		opts := []callback.HandlerOption{callback.WithStore(store), callback.WithLease(100 * time.Millisecond), callback.InsecureSkipAddressCheck()}

		rep, err := callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, opts...)
		require.Error(t, err)
		assert.ErrorIs(t, err, callback.ErrNotRecorded)
		assert.Equal(t, 1, rep.Failed)
		assert.Zero(t, rep.Processed)
		// The claim is kept: a run within the lease does not run fn again.
		rep, err = callback.Reconcile(ctx, e.client, "btc", addr.CallbackURL, e.shop.fn, opts...)
		require.NoError(t, err)
		assert.Equal(t, 1, rep.Busy)
		assert.Len(t, e.shop.calls(), 1)
	})
}

func TestReconcileBusyAddressBeyondTheWholeAnswerLimit(t *testing.T) {
	e := newReconcileEnv(t)
	ctx := context.Background()
	addr, first := e.payWhileDown(t, false)
	const n = 120
	txids := []string{first}
	for i := 1; i < n; i++ {
		txid, err := e.fake.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
		require.NoError(t, err)
		txids = append(txids, txid)
	}
	for _, txid := range txids {
		require.NoError(t, e.fake.Confirm(txid, 1))
	}
	require.NoError(t, e.fake.Flush(ctx))
	require.Empty(t, e.shop.calls())

	// The logs answer is far larger than the client's limit; each payment
	// is well within it.
	small, err := cryptapi.New(cryptapi.WithBaseURL(e.fake.URL()), cryptapi.WithRetry(0, 0, 0),
		cryptapi.WithMaxResponseBytes(8<<10))
	require.NoError(t, err)
	var checks atomic.Int32
	own := callback.WithAddressCheck(func(_ context.Context, a string) (bool, error) {
		checks.Add(1)
		return a == addr.AddressIn, nil
	})
	rep, err := callback.Reconcile(ctx, small, "btc", addr.CallbackURL, e.shop.fn, callback.WithStore(e.shop.store), own)
	require.NoError(t, err)
	assert.Equal(t, int32(1), checks.Load(), "the address is checked once")
	assert.Equal(t, n, rep.Seen)
	assert.Equal(t, n, rep.Processed)
	seen := map[string]bool{}
	for _, p := range e.shop.calls() {
		seen[p.TxIDIn] = true
		assert.Equal(t, "77", p.Custom.Get("order_id"))
	}
	assert.Len(t, seen, n)
}

// TestReconcileFailsWhenTheLogsCannotBeRead: only the service's own
// "nothing found" answer means zero payments. An error answered with HTTP
// 200 (a bad key, a rate limit, a message that merely mentions "found"),
// or a 200 page that is not JSON (a CDN challenge), is an error: the
// payments may be there, unread.
func TestReconcileFailsWhenTheLogsCannotBeRead(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"bad key":             {200, `{"status":"error","error":"No API key found for this request"}`},
		"payment settings":    {200, `{"status":"error","error":"Payment settings not found"}`},
		"rate limit":          {200, `{"status":"error","error":"Rate limit reached, try again later"}`},
		"no message":          {200, `{"status":"error"}`},
		"CDN challenge":       {200, `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>`},
		"404 not found other": {404, `{"status":"error","error":"Callback not found"}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL), cryptapi.WithoutRetries())
			require.NoError(t, err)
			_, err = callback.Reconcile(context.Background(), c, "btc", "https://shop.example/cb",
				func(context.Context, *callback.Payment) error { return nil },
				callback.WithStore(callback.NewMemoryStore()), callback.InsecureSkipAddressCheck())
			var ae *cryptapi.APIError
			require.ErrorAs(t, err, &ae, "an answer that is not the logs is an error")
		})
	}
}
