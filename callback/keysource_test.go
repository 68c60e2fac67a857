package callback

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyServer is a fake service serving /pubkey/ under a path prefix.
type keyServer struct {
	srv      *httptest.Server
	requests atomic.Int32
	mu       sync.Mutex
	pub      *rsa.PublicKey
	failing  bool
	// gate, when set, holds each request until it is closed or the
	// client hangs up; arrived is told of each request.
	gate    chan struct{}
	arrived chan struct{}
}

func newKeyServer(t *testing.T, pub *rsa.PublicKey) *keyServer {
	t.Helper()
	ks := &keyServer{pub: pub}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/pubkey/", func(w http.ResponseWriter, r *http.Request) {
		ks.requests.Add(1)
		ks.mu.Lock()
		pub, failing, gate, arrived := ks.pub, ks.failing, ks.gate, ks.arrived
		ks.mu.Unlock()
		if arrived != nil {
			arrived <- struct{}{}
		}
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if failing {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"status":"error","error":"try later"}`))
			return
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if !assert.NoError(t, err) {
			return
		}
		pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "pubkey": pemText})
	})
	ks.srv = httptest.NewServer(mux)
	t.Cleanup(ks.srv.Close)
	return ks
}

func (ks *keyServer) set(pub *rsa.PublicKey, failing bool) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.pub, ks.failing = pub, failing
}

// hold makes the server hold requests until the returned gate is closed,
// and report each on arrived.
func (ks *keyServer) hold() (gate, arrived chan struct{}) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.gate, ks.arrived = make(chan struct{}), make(chan struct{}, 1000)
	return ks.gate, ks.arrived
}

func (ks *keyServer) client(t *testing.T) *cryptapi.Client {
	t.Helper()
	c, err := cryptapi.New(cryptapi.WithBaseURL(ks.srv.URL+"/api"), cryptapi.WithHTTPClient(ks.srv.Client()), cryptapi.WithoutRetries())
	require.NoError(t, err)
	return c
}

func TestKeySourcePinnedMismatchRefused(t *testing.T) {
	a, _ := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey) // serves a key that is not the published one
	clock := newFakeClock()
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPublicURL(testPublicURL), WithClock(clock))
	require.NoError(t, err)

	var s sink
	h := newTestHandler(t, v, s.fn)
	for i := 0; i < 5; i++ {
		w := serve(h, signedGET(t, a, fixture(t, "get_confirmed.target")))
		assertNotOK(t, w, http.StatusForbidden)
	}
	_, err = v.Payment(signedGET(t, a, fixture(t, "get_confirmed.target")))
	assert.ErrorIs(t, err, ErrBadSignature)
	assert.ErrorIs(t, err, ErrKeyNotTrusted)
	assert.Empty(t, s.payments())
	assert.Equal(t, int32(1), ks.requests.Load(), "a refused key is not fetched again at once")

	clock.Advance(DefaultKeyRefetchInterval)
	_, err = v.Payment(signedGET(t, a, fixture(t, "get_confirmed.target")))
	assert.ErrorIs(t, err, ErrKeyNotTrusted)
	assert.Equal(t, int32(2), ks.requests.Load())
}

func TestKeySourceOptInAcceptedOneFetch(t *testing.T) {
	a, _ := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithTrustFetchedKey(), WithPublicURL(testPublicURL))
	require.NoError(t, err)

	var s sink
	h := newTestHandler(t, v, s.fn)
	target := fixture(t, "get_confirmed.target")
	sig := sign(t, a, []byte(testPublicURL+target))
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest(http.MethodGet, target, nil)
			r.Header.Set(SignatureHeader, sig)
			w := serve(h, r)
			assert.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, w.Code)
		}()
	}
	wg.Wait()
	for i := 0; i < 100; i++ {
		assertOK(t, serve(h, signedGET(t, a, target)))
	}
	assert.Len(t, s.payments(), 1)
	assert.Equal(t, int32(1), ks.requests.Load(), "one fetch for many callbacks")
}

func TestKeySourcePinnedFingerprint(t *testing.T) {
	a, b := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPinnedFingerprint(Fingerprint(&a.PublicKey)), WithPublicURL(testPublicURL))
	require.NoError(t, err)
	_, err = v.Payment(signedGET(t, a, fixture(t, "get_confirmed.target")))
	require.NoError(t, err)
	_, err = v.Payment(signedGET(t, a, fixture(t, "get_pending.target")))
	require.NoError(t, err)
	assert.Equal(t, int32(1), ks.requests.Load())

	// Signed by another key: refused, and not a reason to fetch again
	// before the interval.
	_, err = v.Payment(signedGET(t, b, fixture(t, "get_pending.target")))
	assert.ErrorIs(t, err, ErrBadSignature)
	assert.Equal(t, int32(1), ks.requests.Load())
}

func TestKeySourcePinnedKeyNeedsNoFetch(t *testing.T) {
	a, _ := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPublicKey(&a.PublicKey), WithPublicURL(testPublicURL))
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		_, err = v.Payment(signedGET(t, a, fixture(t, "get_confirmed.target")))
		require.NoError(t, err)
	}
	assert.Equal(t, int32(0), ks.requests.Load())
}

func TestKeySourceFailureRefusesAndRetriesLater(t *testing.T) {
	a, _ := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	ks.set(&a.PublicKey, true)
	clock := newFakeClock()
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPinnedFingerprint(Fingerprint(&a.PublicKey)),
		WithPublicURL(testPublicURL), WithClock(clock), WithKeyRefetchInterval(time.Minute))
	require.NoError(t, err)
	var s sink
	h := newTestHandler(t, v, s.fn)
	req := func() *http.Request { return signedGET(t, a, fixture(t, "get_confirmed.target")) }

	// No key: refused with 503, never acknowledged.
	assertNotOK(t, serve(h, req()), http.StatusServiceUnavailable)
	assertNotOK(t, serve(h, req()), http.StatusServiceUnavailable)
	_, err = v.Payment(req())
	assert.ErrorIs(t, err, ErrNoPublicKey)
	assert.Equal(t, int32(1), ks.requests.Load(), "rate-limited")

	// The service recovers; nothing is fetched before the interval.
	ks.set(&a.PublicKey, false)
	clock.Advance(59 * time.Second)
	assertNotOK(t, serve(h, req()), http.StatusServiceUnavailable)
	assert.Equal(t, int32(1), ks.requests.Load())
	clock.Advance(time.Second)
	assertOK(t, serve(h, req()))
	assert.Equal(t, int32(2), ks.requests.Load())
	assert.Len(t, s.payments(), 1)
}

func TestKeySourceFollowsRotationWhenTrusted(t *testing.T) {
	a, b := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	clock := newFakeClock()
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithTrustFetchedKey(), WithPublicURL(testPublicURL), WithClock(clock))
	require.NoError(t, err)
	_, err = v.Payment(signedGET(t, a, fixture(t, "get_pending.target")))
	require.NoError(t, err)

	ks.set(&b.PublicKey, false)
	_, err = v.Payment(signedGET(t, b, fixture(t, "get_pending.target")))
	assert.ErrorIs(t, err, ErrBadSignature, "not refetched before the interval")
	clock.Advance(DefaultKeyRefetchInterval)
	_, err = v.Payment(signedGET(t, b, fixture(t, "get_pending.target")))
	assert.NoError(t, err)
	assert.Equal(t, int32(2), ks.requests.Load())
}

// hangUpServer serves h and reports on handled each time a request's
// handling ends, so a test can tell when a callback whose client hung up
// has left the handler.
func hangUpServer(t *testing.T, h http.Handler) (*httptest.Server, chan struct{}) {
	t.Helper()
	handled := make(chan struct{}, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { handled <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, handled
}

// TestKeyFetchAbandonedByItsCallerStillCounts: a callback with a bad
// signature starts a key fetch and its client hangs up while the fetch is
// under way. The fetch goes on (it is not tied to that caller) and counts
// against the refetch interval, so the next bad callbacks, 30 of them
// hanging up at random points, fetch nothing more until the interval has
// passed.
func TestKeyFetchAbandonedByItsCallerStillCounts(t *testing.T) {
	a, b := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	clock := newFakeClock()
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPinnedFingerprint(Fingerprint(&a.PublicKey)),
		WithPublicURL(testPublicURL), WithClock(clock))
	require.NoError(t, err)
	var s sink
	shop, handled := hangUpServer(t, newTestHandler(t, v, s.fn))
	target := fixture(t, "get_confirmed.target")
	badSig := sign(t, b, []byte(testPublicURL+target))
	send := func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, shop.URL+target, nil)
		require.NoError(t, err)
		req.Header.Set(SignatureHeader, badSig)
		resp, err := shop.Client().Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}

	gate, arrived := ks.hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := send(ctx); done <- err }()
	<-arrived // the fetch is at the service
	cancel()  // and the callback's client hangs up
	assert.ErrorIs(t, <-done, context.Canceled)
	<-handled // the handler has given up on it

	// 30 more bad callbacks hang up at random points while the fetch is
	// still under way.
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = send(ctx)
		}()
		go func() {
			for n := rand.IntN(200); n > 0; n-- {
				runtime.Gosched()
			}
			cancel()
		}()
	}
	wg.Wait()
	close(gate)

	// The next bad callback waits for that fetch or finds it counted.
	status, err := send(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, int32(1), ks.requests.Load(), "one fetch however the callers behaved")
	assert.Empty(t, s.payments())

	// The fetched key works for real callbacks, with no new fetch.
	good, err := send(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, good)
	_, err = v.Payment(signedGET(t, a, target))
	assert.NoError(t, err)
	assert.Equal(t, int32(1), ks.requests.Load())

	// After the interval, one more.
	clock.Advance(DefaultKeyRefetchInterval)
	status, err = send(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, int32(2), ks.requests.Load())
}

// TestKeyFetchesAtMostOncePerIntervalUnderCancellingCallers runs rounds of
// concurrent Verify calls with bad signatures whose contexts end at random
// points (some before the call, some during the fetch, some never) while
// the service holds the fetch, and counts the fetches the service sees:
// one per refetch interval, never more.
func TestKeyFetchesAtMostOncePerIntervalUnderCancellingCallers(t *testing.T) {
	a, b := testKeys(t)
	ks := newKeyServer(t, &a.PublicKey)
	clock := newFakeClock()
	const interval = time.Minute
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPinnedFingerprint(Fingerprint(&a.PublicKey)),
		WithClock(clock), WithKeyRefetchInterval(interval))
	require.NoError(t, err)
	signed := []byte(fixture(t, "post_form_confirmed.body"))
	badSig := sign(t, b, signed)

	const rounds, callers = 5, 100
	for round := 1; round <= rounds; round++ {
		gate, _ := ks.hold()
		var wg, cancelled sync.WaitGroup
		var later []context.CancelFunc
		for i := 0; i < callers; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			later = append(later, cancel)
			mode := rand.IntN(3)
			if mode == 0 {
				cancel() // hung up before the call
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := v.Verify(ctx, signed, badSig)
				assert.Error(t, err)
			}()
			if mode == 1 {
				cancelled.Add(1)
				go func() {
					defer cancelled.Done()
					for n := rand.IntN(500); n > 0; n-- {
						runtime.Gosched()
					}
					cancel()
				}()
			}
			// mode 2: never cancelled during the round.
		}
		// Half an interval passes during the round: no second fetch.
		clock.Advance(interval / 2)
		cancelled.Wait()
		close(gate)
		wg.Wait()
		for _, cancel := range later {
			cancel()
		}
		assert.Error(t, v.Verify(context.Background(), signed, badSig))
		assert.Equal(t, int32(round), ks.requests.Load(), "round %d", round)
		clock.Advance(interval)
	}
}
