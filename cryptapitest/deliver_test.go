package cryptapitest_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"github.com/forwardpay/cryptapi-go/callback"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestRetriesFollowTheScheduleOnAFakeClock(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := newServer(t, cryptapitest.WithClock(clock),
		cryptapitest.WithRetrySchedule([]time.Duration{time.Minute, 5 * time.Minute}))
	c := newClient(t, s)
	shop := newMerchant(t)
	shop.setAnswer(func(n int) (int, string) {
		switch n {
		case 0:
			return http.StatusInternalServerError, "boom"
		case 1:
			return http.StatusOK, "ok" // not *ok*
		}
		return http.StatusOK, "*ok*"
	})
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	require.Len(t, shop.received(), 1)

	logs, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	item := logs.Callbacks[0]
	assert.Equal(t, cryptapi.ResultSent, item.Result)
	assert.True(t, item.Confirmed(), "confirmed although not acknowledged")
	require.Len(t, item.Logs, 1)
	assert.Equal(t, "boom", item.Logs[0].Responses)
	assert.Equal(t, "500", item.Logs[0].ResponseStatus)
	assert.Equal(t, t0.Add(time.Minute), item.Logs[0].NextTry)

	// Not due yet: nothing happens.
	clock.Advance(59 * time.Second)
	require.NoError(t, s.Flush(ctx))
	require.Len(t, shop.received(), 1)

	clock.Advance(time.Second)
	require.NoError(t, s.Flush(ctx))
	require.Len(t, shop.received(), 2)
	logs, err = c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	item = logs.Callbacks[0]
	assert.Equal(t, cryptapi.ResultSent, item.Result)
	require.Len(t, item.Logs, 2)
	assert.Equal(t, "ok", item.Logs[1].Responses)
	assert.Equal(t, t0.Add(6*time.Minute), item.Logs[1].NextTry)

	clock.Advance(5 * time.Minute)
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 3)
	assert.Equal(t, got[0].URL, got[2].URL, "a retry is the same request")
	assert.Equal(t, got[0].Header.Get("x-ca-signature"), got[2].Header.Get("x-ca-signature"))
	logs, err = c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	assert.Equal(t, cryptapi.ResultDone, logs.Callbacks[0].Result)

	ds := s.Deliveries()
	require.Len(t, ds, 3)
	assert.False(t, ds[0].OK)
	assert.Equal(t, 500, ds[0].StatusCode)
	assert.True(t, ds[2].OK)
	assert.Equal(t, "callback", ds[2].Kind)
	assert.Equal(t, t0.Add(6*time.Minute), ds[2].At)
}

func TestDeliveryGivesUpAfterTheSchedule(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := newServer(t, cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule([]time.Duration{time.Minute}))
	c := newClient(t, s)
	shop := newMerchant(t)
	shop.setAnswer(func(int) (int, string) { return http.StatusNotFound, "no" })
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	for i := 0; i < 5; i++ {
		require.NoError(t, s.Flush(ctx))
		clock.Advance(time.Hour)
	}
	assert.Len(t, shop.received(), 2, "one attempt and one retry")
	logs, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	item := logs.Callbacks[0]
	assert.Equal(t, cryptapi.ResultSent, item.Result)
	require.Len(t, item.Logs, 2)
	assert.True(t, item.Logs[1].NextTry.IsZero(), "no next try")
}

func TestUnreachableMerchantIsRetried(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := newServer(t, cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule([]time.Duration{time.Minute}))
	c := newClient(t, s)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: gone.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	ds := s.Deliveries()
	require.Len(t, ds, 1)
	assert.NotEmpty(t, ds[0].Err)
	assert.Zero(t, ds[0].StatusCode)
	logs, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Minute), logs.Callbacks[0].Logs[0].NextTry)
	assert.Empty(t, logs.Callbacks[0].Logs[0].ResponseStatus)
}

func TestPendingIsNotRetriedOnceConfirmed(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := newServer(t, cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule([]time.Duration{time.Minute, time.Minute}))
	c := newClient(t, s)
	shop := newMerchant(t)
	shop.setAnswer(func(n int) (int, string) {
		if n == 0 {
			return http.StatusServiceUnavailable, "later"
		}
		return http.StatusOK, "*ok*"
	})
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest, Pending: true})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Flush(ctx))
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	clock.Advance(time.Hour)
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 2, "failed pending, then confirmed; the pending one is not retried")
	assert.Equal(t, "1", got[0].Query.Get("pending"))
	assert.Equal(t, "0", got[1].Query.Get("pending"))
}

func TestPendingGoesOutBeforeConfirmed(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest, Pending: true})
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
		require.NoError(t, err)
		require.NoError(t, s.Confirm(txid, 1)) // before the pending one was delivered
	}
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 10)
	seen := map[string]bool{}
	for _, r := range got {
		uuid := r.Query.Get("uuid")
		if r.Query.Get("pending") == "1" {
			assert.False(t, seen[uuid], "pending after confirmed for %s", uuid)
		}
		seen[uuid] = true
	}
}

func TestDeliveryTimeout(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithDeliveryTimeout(50*time.Millisecond), cryptapitest.WithRetrySchedule(nil))
	c := newClient(t, s)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: slow.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	ds := s.Deliveries()
	require.Len(t, ds, 1)
	assert.Contains(t, ds[0].Err, "deadline")
	assert.False(t, ds[0].OK)
}

func TestFlushHonoursContext(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	started := make(chan struct{})
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(release) })
	ctx := ctxT(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: stuck.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	<-started
	short, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, s.Flush(short), context.Canceled)
}

func TestCloseStopsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	s := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	c := newClient(t, s)
	started := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stuck.Close()
	defer close(release)

	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: stuck.URL + "/cb", Address: btcDest, Pending: true})
	require.NoError(t, err)
	_, err = s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	<-started // a delivery is in flight
	s.Close()
	s.Close() // idempotent
	assert.Empty(t, s.Deliveries(), "the abandoned attempt is not recorded")
	_, err = c.Info(ctx, "btc", nil)
	assert.Error(t, err, "the HTTP server is down")
}

func TestParallelUse(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	shop := newMerchant(t)
	const n = 40 // more deliveries than run at once
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := cryptapi.New(cryptapi.WithBaseURL(s.URL()), cryptapi.WithoutRetries())
			if err != nil {
				errs <- err
				return
			}
			addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
				Callback: shop.URL + "/cb?i=" + strconv.Itoa(i), Address: btcDest, Pending: i%2 == 0,
			})
			if err != nil {
				errs <- err
				return
			}
			txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
			if err == nil {
				err = s.Confirm(txid, 1)
			}
			if err == nil {
				err = s.Flush(ctx)
			}
			if err == nil {
				_, err = c.Logs(ctx, "btc", addr.CallbackURL)
			}
			_ = s.Deliveries()
			_ = s.Requests()
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(ctx))
	assert.Len(t, shop.received(), n+n/2)
	assert.Len(t, s.Payments(), n)
	for _, p := range s.Payments() {
		assert.Equal(t, "done", p.Result)
	}
}

func TestTLSMerchantAndOwnSigningKey(t *testing.T) {
	ctx := ctxT(t)
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	shop := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("*ok*"))
	}))
	t.Cleanup(shop.Close)
	s := newServer(t, cryptapitest.WithHTTPClient(shop.Client()), cryptapitest.WithSigningKey(key))
	assert.True(t, s.PublicKey().Equal(&key.PublicKey))
	c := newClient(t, s)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	ds := s.Deliveries()
	require.Len(t, ds, 1)
	assert.True(t, ds[0].OK, ds[0].Err)
	assert.True(t, strings.HasPrefix(ds[0].URL, "https://"))
	verify(t, &key.PublicKey, []byte(ds[0].URL), ds[0].Header.Get(callback.SignatureHeader))
}

func TestDeliveryHookReportsEachAttempt(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	var (
		s        *cryptapitest.Server
		mu       sync.Mutex
		got      []cryptapitest.Delivery
		recorded []int
	)
	s = newServer(t, cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule([]time.Duration{time.Minute}),
		cryptapitest.WithDeliveryHook(func(d cryptapitest.Delivery) {
			n := len(s.Deliveries()) // the lock is not held
			mu.Lock()
			defer mu.Unlock()
			got = append(got, d)
			recorded = append(recorded, n)
		}))
	hooked := func() []cryptapitest.Delivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]cryptapitest.Delivery(nil), got...)
	}
	c := newClient(t, s)
	shop := newMerchant(t)
	shop.setAnswer(func(n int) (int, string) {
		if n == 0 {
			return http.StatusBadGateway, "down"
		}
		return http.StatusOK, "*ok*"
	})
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/cb?order=5", Address: btcDest, Post: true, JSON: true,
	})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	require.Len(t, hooked(), 1, "Flush waits for the hook")
	assert.Equal(t, http.StatusBadGateway, hooked()[0].StatusCode)

	clock.Advance(time.Minute)
	require.NoError(t, s.Flush(ctx))
	hs := hooked()
	require.Len(t, hs, 2)
	assert.True(t, hs[1].OK)
	assert.Equal(t, s.Deliveries(), hs, "the hook sees what Deliveries records")
	mu.Lock()
	assert.Equal(t, []int{1, 2}, recorded, "each attempt is recorded before the hook runs")
	mu.Unlock()

	// The hook's copy is its own.
	require.NotEmpty(t, hs[0].Body)
	hs[0].Body[0] = 'X'
	hs[0].Header.Set(callback.SignatureHeader, "forged")
	ds := s.Deliveries()
	assert.Equal(t, byte('{'), ds[0].Body[0])
	assert.NotEqual(t, "forged", ds[0].Header.Get(callback.SignatureHeader))

	assert.Panics(t, func() { cryptapitest.NewServer(cryptapitest.WithDeliveryHook(nil)) })
}

func TestDeliveryHookSeesAPaymentsDeliveriesInOrder(t *testing.T) {
	ctx := ctxT(t)
	var (
		mu   sync.Mutex
		seen = map[string][]bool{} // pending flags by payment
	)
	s := newServer(t, cryptapitest.WithDeliveryHook(func(d cryptapitest.Delivery) {
		u, err := url.Parse(d.URL)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		uuid := u.Query().Get("uuid")
		seen[uuid] = append(seen[uuid], d.Pending)
	}))
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest, Pending: true})
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
		require.NoError(t, err)
		require.NoError(t, s.Confirm(txid, 1))
	}
	require.NoError(t, s.Flush(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 5)
	for uuid, flags := range seen {
		assert.Equal(t, []bool{true, false}, flags, "payment %s", uuid)
	}
}

func TestFlushAndCloseWaitForTheDeliveryHook(t *testing.T) {
	ctx := ctxT(t)
	entered := make(chan cryptapitest.Delivery, 4)
	release := make(chan struct{})
	var returned atomic.Bool
	s := newServer(t, cryptapitest.WithDeliveryHook(func(d cryptapitest.Delivery) {
		entered <- d
		<-release
		returned.Store(true)
	}))
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	d := <-entered
	assert.True(t, d.OK)
	require.Len(t, shop.received(), 1, "the merchant has answered")

	// The delivery is done, but its hook has not returned: Flush waits.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, s.Flush(cancelled), context.Canceled)

	// Close waits for the hook too.
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	close(release)
	<-closed
	assert.True(t, returned.Load(), "Close returned before the hook")
	assert.ErrorIs(t, s.Flush(ctx), cryptapitest.ErrClosed)
}

func TestDeliveriesReuseConnections(t *testing.T) {
	ctx := ctxT(t)
	var mu sync.Mutex
	conns := map[string]int{}
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr]++
		mu.Unlock()
		_, _ = w.Write([]byte("*ok*"))
	}))
	t.Cleanup(shop.Close)
	s := newServer(t)
	c := newClient(t, s)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	const n = 20
	for i := 0; i < n; i++ {
		txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
		require.NoError(t, err)
		require.NoError(t, s.Confirm(txid, 1))
		require.NoError(t, s.Flush(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, k := range conns {
		total += k
	}
	assert.Equal(t, n, total)
	assert.Len(t, conns, 1, "one after another, deliveries share one connection")
}

// TestDeliveryEngineInvariantsUnderRandomAnswers runs many payments
// through a shop that answers at random, with a hook, pending callbacks
// and retries on a fake clock, and checks what the queue must guarantee:
// the deliveries of one payment reach the hook in order (never a pending
// one after the confirmed one), no delivery is attempted more often than
// the schedule allows, every acknowledged confirmed callback makes the
// payment done, and once the schedule has run out nothing is left queued.
func TestDeliveryEngineInvariantsUnderRandomAnswers(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(t0)
	schedule := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}
	var mu sync.Mutex
	type seen struct {
		confirmed bool // a confirmed delivery reached the hook
		attempts  map[bool]int
	}
	byUUID := map[string]*seen{}
	var violations []string
	hook := func(d cryptapitest.Delivery) {
		u, err := url.Parse(d.URL)
		if err != nil {
			return
		}
		id := u.Query().Get("uuid")
		mu.Lock()
		defer mu.Unlock()
		s := byUUID[id]
		if s == nil {
			s = &seen{attempts: map[bool]int{}}
			byUUID[id] = s
		}
		if d.Pending && s.confirmed {
			violations = append(violations, "pending delivery after the confirmed one for "+id)
		}
		if !d.Pending {
			s.confirmed = true
		}
		s.attempts[d.Pending]++
		if s.attempts[d.Pending] > len(schedule)+1 {
			violations = append(violations, "too many attempts for "+id)
		}
	}
	s := newServer(t, cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule(schedule),
		cryptapitest.WithDeliveryHook(hook))
	c := newClient(t, s)
	var calls atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A fixed pseudo-random pattern: about one answer in three is *ok*.
		if n := calls.Add(1); (n*7919)%3 == 0 {
			_, _ = w.Write([]byte("*ok*"))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(shop.Close)

	const addrs, perAddr = 5, 15
	var txids []string
	early := map[string]bool{}
	for a := 0; a < addrs; a++ {
		addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
			Callback: shop.URL + "/cb?a=" + strconv.Itoa(a), Address: btcDest, Pending: true,
		})
		require.NoError(t, err)
		for i := 0; i < perAddr; i++ {
			txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
			require.NoError(t, err)
			txids = append(txids, txid)
			if i%3 == 0 {
				require.NoError(t, s.Confirm(txid, 1)) // confirmed while pending is queued
				early[txid] = true
			}
		}
	}
	require.NoError(t, s.Flush(ctx))
	for _, txid := range txids {
		if !early[txid] {
			require.NoError(t, s.Confirm(txid, 1))
		}
	}
	for step := 0; step < 8; step++ {
		require.NoError(t, s.Flush(ctx))
		clock.Advance(3 * time.Minute)
	}
	require.NoError(t, s.Flush(ctx))

	mu.Lock()
	assert.Empty(t, violations)
	mu.Unlock()
	sizes := s.Sizes()
	assert.Zero(t, sizes["queue"], "the schedule ran out: nothing queued")
	assert.Zero(t, sizes["groups"])
	for _, p := range s.Payments() {
		acked := false
		for _, d := range s.Deliveries() {
			if d.OK && !d.Pending && strings.Contains(d.URL, "uuid="+p.UUID+"&") {
				acked = true
			}
		}
		if acked {
			assert.Equal(t, "done", p.Result, p.UUID)
		} else {
			assert.Equal(t, "sent", p.Result, p.UUID)
		}
	}
}
