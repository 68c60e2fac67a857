package callback

import (
	"bytes"
	"context"
	"errors"
	cryptapi "github.com/forwardpay/cryptapi-go"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sink records the payments passed to the merchant's function.
type sink struct {
	mu    sync.Mutex
	got   []*Payment
	fails atomic.Int32 // fail this many calls first
}

func (s *sink) fn(_ context.Context, p *Payment) error {
	if s.fails.Add(-1) >= 0 {
		return errors.New("order database unavailable")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, p)
	return nil
}

func (s *sink) payments() []*Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Payment(nil), s.got...)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func assertOK(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, OK, w.Body.String())
}

func assertNotOK(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	assert.Equal(t, status, w.Code)
	assert.NotContains(t, w.Body.String(), OK)
}

// TestHandlerEndToEnd sends each kind of callback through a real server.
func TestHandlerEndToEnd(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer srv.Close()
	v, err := NewVerifier(WithPublicKey(&a.PublicKey), WithPublicURL(srv.URL))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/callback", newTestHandler(t, v, s.fn))
	h = mux

	send := func(t *testing.T, method, target, ctype, body, sig string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+target, strings.NewReader(body))
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set(SignatureHeader, sig)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	getTarget := fixture(t, "get_pending.target")
	form := fixture(t, "post_form_confirmed.body")
	jsonBody := fixture(t, "post_json_confirmed.json")
	tests := []struct {
		name, method, target, ctype, body, signed string
		uuid                                      string
		pending                                   bool
	}{
		{"GET", http.MethodGet, getTarget, "", "", srv.URL + getTarget, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2", true},
		{"POST form", http.MethodPost, "/callback?order_id=9", formType, form, form, "0c6e8a2f-1d4b-4e8a-9b3c-5f7a9d1e2b4c", false},
		{"POST JSON", http.MethodPost, "/callback?order_id=9", "application/json", jsonBody, jsonBody, "7d2f9c1a-3b5e-4a8d-9c0f-1e2a3b4c5d6e", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := sign(t, a, []byte(tt.signed))
			status, body := send(t, tt.method, tt.target, tt.ctype, tt.body, sig)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, OK, body)
			got := s.payments()
			require.Len(t, got, i+1)
			assert.Equal(t, tt.uuid, got[i].UUID)
			assert.Equal(t, tt.pending, got[i].Pending)

			// Redelivered: acknowledged, not passed on again.
			status, body = send(t, tt.method, tt.target, tt.ctype, tt.body, sig)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, OK, body)
			assert.Len(t, s.payments(), i+1)

			// Tampered: refused.
			status, body = send(t, tt.method, tt.target+"&x=1", tt.ctype, tt.body+" ", sig)
			assert.Equal(t, http.StatusForbidden, status)
			assert.NotEqual(t, OK, body)
		})
	}
}

func TestHandlerStatuses(t *testing.T) {
	a, b := testKeys(t)
	form := fixture(t, "post_form_confirmed.body")
	target := fixture(t, "get_confirmed.target")
	known := func(_ context.Context, addr string) (bool, error) {
		return addr == "bc1q8rheqwtm3d3h576f2rf7vwffk7j4y7yrgw393y" || addr == "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7", nil
	}
	failing := func(context.Context, string) (bool, error) { return false, errors.New("lookup failed") }
	small := newTestVerifier(t, WithMaxBodyBytes(256))

	tests := []struct {
		name   string
		v      *Verifier
		opts   []HandlerOption
		req    func() *http.Request
		status int
	}{
		{"ok", nil, nil, func() *http.Request { return signedPOST(t, a, "/cb", formType, form) }, 200},
		{"ok GET with address check", nil, []HandlerOption{WithAddressCheck(known)}, func() *http.Request { return signedGET(t, a, target) }, 200},
		{"no signature", nil, nil, func() *http.Request { return signedPOST(t, nil, "/cb", formType, form) }, 401},
		{"wrong key", nil, nil, func() *http.Request { return signedPOST(t, b, "/cb", formType, form) }, 403},
		{"garbage signature", nil, nil, func() *http.Request {
			r := signedPOST(t, nil, "/cb", formType, form)
			r.Header.Set(SignatureHeader, "%%%")
			return r
		}, 403},
		{"malformed but signed", nil, nil, func() *http.Request {
			return signedPOST(t, a, "/cb", formType, strings.Replace(form, "pending=0", "pending=", 1))
		}, 400},
		{"unknown address", nil, []HandlerOption{WithAddressCheck(func(context.Context, string) (bool, error) { return false, nil })},
			func() *http.Request { return signedPOST(t, a, "/cb", formType, form) }, 403},
		{"address check fails", nil, []HandlerOption{WithAddressCheck(failing)}, func() *http.Request { return signedPOST(t, a, "/cb", formType, form) }, 500},
		{"method", nil, nil, func() *http.Request {
			r := signedPOST(t, a, "/cb", formType, form)
			r.Method = http.MethodPut
			return r
		}, 405},
		{"too large", small, nil, func() *http.Request { return signedPOST(t, a, "/cb", formType, form) }, 413},
		{"too large chunked", small, nil, func() *http.Request {
			r := signedPOST(t, a, "/cb", formType, form)
			r.ContentLength = -1
			return r
		}, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			if v == nil {
				v = newTestVerifier(t)
			}
			var s sink
			w := serve(newTestHandler(t, v, s.fn, tt.opts...), tt.req())
			if tt.status == 200 {
				assertOK(t, w)
				assert.Len(t, s.payments(), 1)
				return
			}
			assertNotOK(t, w, tt.status)
			assert.Empty(t, s.payments())
			if tt.status == 405 {
				assert.Equal(t, "GET, POST", w.Header().Get("Allow"))
			}
		})
	}
}

func TestHandlerConcurrentDeliveries(t *testing.T) {
	a, _ := testKeys(t)
	form := fixture(t, "post_form_confirmed.body")
	sig := sign(t, a, []byte(form))
	var calls atomic.Int32
	release := make(chan struct{})
	h := newTestHandler(t, newTestVerifier(t), func(context.Context, *Payment) error {
		calls.Add(1)
		<-release // hold the claim while the others arrive
		return nil
	})

	const n = 1000
	codes := make([]int, n)
	bodies := make([]string, n)
	var wg, started sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			r := signedPOST(t, nil, "/cb", formType, form)
			r.Header.Set(SignatureHeader, sig)
			started.Done()
			w := serve(h, r)
			codes[i], bodies[i] = w.Code, w.Body.String()
		}()
	}
	started.Wait()
	// Let fn finish once every delivery has been sent; the others got 503
	// (in progress) or, if they came after, *ok* (done).
	go func() {
		for calls.Load() == 0 {
			runtime.Gosched() // until the first claim runs fn
		}
		close(release)
	}()
	wg.Wait()
	assert.Equal(t, int32(1), calls.Load())
	oks := 0
	for i := range codes {
		switch codes[i] {
		case http.StatusOK:
			assert.Equal(t, OK, bodies[i])
			oks++
		case http.StatusServiceUnavailable:
			assert.NotEqual(t, OK, bodies[i])
		default:
			t.Fatalf("delivery %d: unexpected status %d", i, codes[i])
		}
	}
	assert.GreaterOrEqual(t, oks, 1)
	// The next delivery is acknowledged without calling fn.
	r := signedPOST(t, a, "/cb", formType, form)
	assertOK(t, serve(h, r))
	assert.Equal(t, int32(1), calls.Load())
}

func TestHandlerPendingThenConfirmed(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn)
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))))
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))))
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))))
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))))
	got := s.payments()
	require.Len(t, got, 2)
	assert.True(t, got[0].Pending)
	assert.False(t, got[1].Pending)
	assert.Equal(t, got[0].UUID, got[1].UUID)
}

func TestHandlerConfirmedThenPending(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn)
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))))
	// The late pending callback is acknowledged and not passed on, now
	// and on redelivery.
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))))
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))))
	got := s.payments()
	require.Len(t, got, 1)
	assert.False(t, got[0].Pending)
}

func TestHandlerFailingFnIsRetried(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	s.fails.Store(2)
	h := newTestHandler(t, newTestVerifier(t), s.fn)
	req := func() *http.Request { return signedGET(t, a, fixture(t, "get_confirmed.target")) }
	assertNotOK(t, serve(h, req()), http.StatusInternalServerError)
	assertNotOK(t, serve(h, req()), http.StatusInternalServerError)
	assertOK(t, serve(h, req()))
	assertOK(t, serve(h, req()))
	assert.Len(t, s.payments(), 1, "exactly one successful processing")
}

func TestHandlerFailedPendingDoesNotBlockConfirmed(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	s.fails.Store(1)
	h := newTestHandler(t, newTestVerifier(t), s.fn)
	assertNotOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))), http.StatusInternalServerError)
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))))
	// The pending retry now comes too late and is not passed on.
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))))
	got := s.payments()
	require.Len(t, got, 1)
	assert.False(t, got[0].Pending)
}

func TestHandlerBusyAndLeaseTakeover(t *testing.T) {
	a, _ := testKeys(t)
	ctx := context.Background()
	clock := newFakeClock()
	store := NewMemoryStore(WithClock(clock))
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn, WithStore(store), WithLease(time.Minute))
	key := "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2:confirmed"

	// Another server holds the confirmed key (and then crashes).
	c, err := store.Claim(ctx, key, time.Minute)
	require.NoError(t, err)
	require.Equal(t, Claimed, c)

	assertNotOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))), http.StatusServiceUnavailable)
	// A pending callback meanwhile is refused too, and gives its key back.
	assertNotOK(t, serve(h, signedGET(t, a, fixture(t, "get_pending.target"))), http.StatusServiceUnavailable)
	c, err = store.Claim(ctx, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2:pending", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Claimed, c)
	require.NoError(t, store.Release(ctx, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2:pending"))
	assert.Empty(t, s.payments())

	clock.Advance(time.Minute)
	assertOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))))
	assert.Len(t, s.payments(), 1)
}

func TestHandlerLogsWithoutSecrets(t *testing.T) {
	a, b := testKeys(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var s sink
	s.fails.Store(1)
	h := newTestHandler(t, newTestVerifier(t, WithMaxBodyBytes(1024)), s.fn, WithErrorLog(logger))

	target := fixture(t, "get_confirmed.target")
	form := fixture(t, "post_form_confirmed.body")
	badSig := sign(t, b, []byte(form))
	goodSig := sign(t, a, []byte(form))
	reqs := []*http.Request{
		signedGET(t, b, target),
		signedPOST(t, b, "/cb?nonce=7f3c9a21e0b84d56", formType, form),
		signedPOST(t, a, "/cb", formType, strings.Replace(form, "value_coin=0.00125", "value_coin=NOT-A-NUMBER", 1)),
		signedPOST(t, a, "/cb", formType, form+"&pad="+strings.Repeat("7f3c9a21e0b84d56", 100)),
		signedPOST(t, a, "/cb", formType, form), // fn fails
	}
	var answers strings.Builder
	for _, r := range reqs {
		w := serve(h, r)
		assert.NotEqual(t, http.StatusOK, w.Code)
		answers.WriteString(w.Body.String())
	}
	require.NotEmpty(t, logs.String())
	assert.Equal(t, len(reqs), strings.Count(logs.String(), "\n"))
	for _, secret := range secretsIn(badSig, goodSig) {
		if secret == "0c6e8a2f-1d4b" {
			continue // the uuid of the verified callback, logged on purpose below
		}
		assert.NotContains(t, logs.String(), secret)
		assert.NotContains(t, answers.String(), secret)
	}
	// A verified callback's log line names its key, for the operator.
	assert.Contains(t, logs.String(), "0c6e8a2f-1d4b-4e8a-9b3c-5f7a9d1e2b4c:confirmed")
	assert.Contains(t, logs.String(), "order database unavailable")
}

func TestNewHandlerRefusesMisuseWithErrors(t *testing.T) {
	v := newTestVerifier(t)
	fn := func(context.Context, *Payment) error { return nil }
	skip := InsecureSkipAddressCheck()
	for name, tc := range map[string]struct {
		v    *Verifier
		fn   func(context.Context, *Payment) error
		opts []HandlerOption
	}{
		"nil verifier":      {nil, fn, []HandlerOption{skip}},
		"nil function":      {v, nil, []HandlerOption{skip}},
		"nil store":         {v, fn, []HandlerOption{skip, WithStore(nil)}},
		"zero lease":        {v, fn, []HandlerOption{skip, WithLease(0)}},
		"zero read time":    {v, fn, []HandlerOption{skip, WithReadTimeout(0)}},
		"nil address check": {v, fn, []HandlerOption{WithAddressCheck(nil)}},
	} {
		h, err := NewHandler(tc.v, tc.fn, tc.opts...)
		assert.ErrorIs(t, err, cryptapi.ErrInvalidOption, name)
		assert.Nil(t, h, name)
	}
	h, err := NewHandler(v, fn, nil, skip)
	assert.NoError(t, err)
	assert.NotNil(t, h)
}

func TestWriteOK(t *testing.T) {
	w := httptest.NewRecorder()
	WriteOK(w)
	assertOK(t, w)
	assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"))
}

// completeFails makes Complete fail while broken is set.
type completeFails struct {
	Store
	broken atomic.Bool
}

func (c *completeFails) Complete(ctx context.Context, key string) error {
	if c.broken.Load() {
		return errors.New("serialization failure")
	}
	return c.Store.Complete(ctx, key)
}

// TestHandlerAnswersOKOnlyOnceTheSuccessIsRecorded: when fn succeeded but
// the store cannot record it, the handler does not answer "*ok*", and a
// redelivery during the lease is busy rather than running fn again.
func TestHandlerAnswersOKOnlyOnceTheSuccessIsRecorded(t *testing.T) {
	a, _ := testKeys(t)
	clock := newFakeClock()
	store := &completeFails{Store: NewMemoryStore(WithClock(clock))}
	store.broken.Store(true)
	var s sink
	h, err := NewHandler(newTestVerifier(t), s.fn, WithStore(store), WithLease(200*time.Millisecond), InsecureSkipAddressCheck())
	require.NoError(t, err)
	req := func() *http.Request { return signedGET(t, a, fixture(t, "get_confirmed.target")) }
	assertNotOK(t, serve(h, req()), http.StatusInternalServerError)
	assertNotOK(t, serve(h, req()), http.StatusServiceUnavailable)
	assert.Len(t, s.payments(), 1)
}

// TestNewHandlerThatCanOnlyRefuseFails: a handler whose Verifier has no
// public URL could verify no GET callback, so it fails at construction
// unless the merchant says that only POST callbacks come (PostOnly); then
// a GET is refused with 405, and POST callbacks are handled.
func TestNewHandlerThatCanOnlyRefuseFails(t *testing.T) {
	a, _ := testKeys(t)
	noURL, err := NewVerifier(WithPublicKey(&a.PublicKey))
	require.NoError(t, err)
	var s sink
	h, err := NewHandler(noURL, s.fn, InsecureSkipAddressCheck())
	assert.ErrorIs(t, err, ErrPublicURLRequired)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
	assert.Nil(t, h)

	h, err = NewHandler(noURL, s.fn, InsecureSkipAddressCheck(), PostOnly())
	require.NoError(t, err)
	w := serve(h, signedGET(t, a, fixture(t, "get_confirmed.target")))
	assertNotOK(t, w, http.StatusMethodNotAllowed)
	assert.Equal(t, "POST", w.Header().Get("Allow"))
	assert.Empty(t, s.payments())
	assertOK(t, serve(h, signedPOST(t, a, "/cb", formType, fixture(t, "post_form_confirmed.body"))))
	assert.Len(t, s.payments(), 1)

	// With a public URL, PostOnly still refuses GET: the merchant said so.
	h, err = NewHandler(newTestVerifier(t), s.fn, InsecureSkipAddressCheck(), PostOnly())
	require.NoError(t, err)
	assertNotOK(t, serve(h, signedGET(t, a, fixture(t, "get_confirmed.target"))), http.StatusMethodNotAllowed)
}

// TestHandlerLogsRefusalsByDefault: without WithErrorLog, refusals go to
// slog.Default(), so a misconfigured shop is not silent.
func TestHandlerLogsRefusalsByDefault(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	_, b := testKeys(t)
	var s sink
	h, err := NewHandler(newTestVerifier(t), s.fn, InsecureSkipAddressCheck())
	require.NoError(t, err)
	assertNotOK(t, serve(h, signedPOST(t, b, "/cb", formType, fixture(t, "post_form_confirmed.body"))), http.StatusForbidden)
	assert.Contains(t, buf.String(), "callback refused")
	assert.Contains(t, buf.String(), "status=403")

	_, err = NewHandler(newTestVerifier(t), s.fn, InsecureSkipAddressCheck(), WithErrorLog(nil))
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption, "no logger is not a way to silence refusals")
}
