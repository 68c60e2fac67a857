package callback

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
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
}

func newKeyServer(t *testing.T, pub *rsa.PublicKey) *keyServer {
	t.Helper()
	ks := &keyServer{pub: pub}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/pubkey/", func(w http.ResponseWriter, r *http.Request) {
		ks.requests.Add(1)
		ks.mu.Lock()
		pub, failing := ks.pub, ks.failing
		ks.mu.Unlock()
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
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithPublicURL(testPublicURL), WithVerifierClock(clock.Now))
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
		WithPublicURL(testPublicURL), WithVerifierClock(clock.Now), WithKeyRefetchInterval(time.Minute))
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
	v, err := NewVerifier(WithKeySource(ks.client(t)), WithTrustFetchedKey(), WithPublicURL(testPublicURL), WithVerifierClock(clock.Now))
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
