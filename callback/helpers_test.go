package callback

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testPublicURL is the public base URL the tests' verifiers are given.
const testPublicURL = "https://shop.example"

var (
	keysOnce sync.Once
	keyA     *rsa.PrivateKey // the "service" key the tests sign with
	keyB     *rsa.PrivateKey // another key, never trusted unless said
	keysErr  error
)

// testKeys generates two real 1024-bit RSA keys once per test binary.
func testKeys(tb testing.TB) (*rsa.PrivateKey, *rsa.PrivateKey) {
	tb.Helper()
	keysOnce.Do(func() {
		keyA, keysErr = rsa.GenerateKey(rand.Reader, 1024)
		if keysErr == nil {
			keyB, keysErr = rsa.GenerateKey(rand.Reader, 1024)
		}
	})
	require.NoError(tb, keysErr)
	return keyA, keyB
}

// sign returns the x-ca-signature value for data.
func sign(tb testing.TB, key *rsa.PrivateKey, data []byte) string {
	tb.Helper()
	sum := sha256.Sum256(data)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	require.NoError(tb, err)
	return base64.StdEncoding.EncodeToString(sig)
}

func fixture(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(tb, err)
	return strings.TrimRight(string(b), "\n")
}

// newTestVerifier trusts keyA and knows testPublicURL.
func newTestVerifier(tb testing.TB, opts ...VerifierOption) *Verifier {
	tb.Helper()
	a, _ := testKeys(tb)
	all := append([]VerifierOption{WithPublicKey(&a.PublicKey), WithPublicURL(testPublicURL)}, opts...)
	v, err := NewVerifier(all...)
	require.NoError(tb, err)
	return v
}

// signedGET is a GET request for target signed by key over
// testPublicURL+target. A nil key leaves the signature out.
func signedGET(tb testing.TB, key *rsa.PrivateKey, target string) *http.Request {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if key != nil {
		r.Header.Set(SignatureHeader, sign(tb, key, []byte(testPublicURL+target)))
	}
	return r
}

// signedPOST is a POST request with body signed by key.
func signedPOST(tb testing.TB, key *rsa.PrivateKey, target, contentType, body string) *http.Request {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if key != nil {
		r.Header.Set(SignatureHeader, sign(tb, key, []byte(body)))
	}
	return r
}

const formType = "application/x-www-form-urlencoded"

// fakeClock is a settable clock for stores, verifiers and Process: its
// timers fire only when Advance moves it past them.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
	added  chan struct{} // closed and replaced whenever a timer is added
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time // After's channel, or nil
	f  func()         // AfterFunc's function, or nil
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC), added: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.t) {
			kept = append(kept, tm)
			continue
		}
		if tm.f != nil {
			go tm.f() // like time.AfterFunc, on its own goroutine
			continue
		}
		tm.ch <- c.t
	}
	c.timers = kept
}

// After implements clock.
func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{c: c, at: c.t.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		tm.ch <- c.t
		return tm.ch, func() bool { return false }
	}
	c.addLocked(tm)
	return tm.ch, tm.Stop
}

// AfterFunc implements clock.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{c: c, at: c.t.Add(d), f: f}
	if d <= 0 {
		go f()
		return tm
	}
	c.addLocked(tm)
	return tm
}

func (c *fakeClock) addLocked(tm *fakeTimer) {
	c.timers = append(c.timers, tm)
	close(c.added)
	c.added = make(chan struct{})
}

// Stop removes the timer if it has not fired, and reports whether it did.
func (tm *fakeTimer) Stop() bool {
	c := tm.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == tm {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// waitTimers blocks until at least n timers wait on the clock (failing
// tb if that takes more than a minute: a guard, not a measurement).
func (c *fakeClock) waitTimers(tb testing.TB, n int) {
	tb.Helper()
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return
		}
		added := c.added
		c.mu.Unlock()
		select {
		case <-added:
		case <-guard.C:
			tb.Fatalf("no %d timers on the fake clock", n)
		}
	}
}

// newTestHandler is NewHandler for tests whose subject is not the address
// check: it lets any address through unless opts give WithAddressCheck.
func newTestHandler(tb testing.TB, v *Verifier, fn func(context.Context, *Payment) error, opts ...HandlerOption) http.Handler {
	tb.Helper()
	h, err := NewHandler(v, fn, append([]HandlerOption{InsecureSkipAddressCheck()}, opts...)...)
	require.NoError(tb, err)
	return h
}

// minimalForm holds every field a payment callback requires but pending.
const minimalForm = "uuid=u&address_in=a&address_out=o&txid_in=t&coin=btc&price=1"
