package cryptapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headerLog records every request a server receives, for tests that
// search headers and URLs for the key.
type headerLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *headerLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r.Clone(context.Background()))
}

func (l *headerLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// assertNoKeyInHeaders checks every header of every request for the key.
func (l *headerLog) assertNoKeyInHeaders(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	texts := map[string]string{}
	for i, r := range l.reqs {
		for k, vs := range r.Header {
			texts[r.Method+" "+r.URL.Path+" header "+k+" #"+itoa(i)] = strings.Join(vs, "\n")
		}
	}
	assertNoKey(t, texts)
}

// redirectingAPI answers every request with a redirect to target(r),
// with the given status, and logs the requests.
func redirectingAPI(t *testing.T, status int, target func(r *http.Request) string) (*httptest.Server, *headerLog) {
	log := &headerLog{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		http.Redirect(w, r, target(r), status)
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// TestRedirectToAnotherHostIsNotFollowed: a base URL that redirects
// every call to another host (keeping the query, so the key too) gets an
// ErrRedirect from every operation, and the other host never receives a
// request: neither the key in the query nor in a Referer header leaves.
// Tried with each redirect status and with http.Client defaults.
func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	other := &headerLog{}
	otherSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r)
		http.Error(w, "elsewhere", http.StatusTeapot)
	}))
	t.Cleanup(otherSrv.Close)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		base, log := redirectingAPI(t, status, func(r *http.Request) string { return otherSrv.URL + r.URL.RequestURI() })
		for _, op := range allOps() {
			t.Run(http.StatusText(status)+" "+op.name, func(t *testing.T) {
				// Both servers use httptest's certificate, so one client trusts both.
				c, err := New(WithAPIKey(testKey), WithBaseURL(base.URL), WithHTTPClient(base.Client()), WithRetry(2, 0, 0))
				require.NoError(t, err)
				_, err = op.call(context.Background(), c)
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrRedirect)
				if !op.retried {
					assert.ErrorIs(t, err, ErrOutcomeUnknown, "a money call's redirect leaves its outcome unknown")
				}
				assertNoKey(t, leakProbe(c, nil, err, ""))
			})
		}
		assert.Equal(t, len(allOps()), log.count(), "one request per operation reached the base URL")
		log.assertNoKeyInHeaders(t)
	}
	assert.Zero(t, other.count(), "requests that reached the other host")
}

// TestRedirectFromHTTPSToHTTPIsNotFollowed: an https base URL that
// redirects to http (clear text) is not followed; the http server never
// sees a request.
func TestRedirectFromHTTPSToHTTPIsNotFollowed(t *testing.T) {
	clear := &headerLog{}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clear.add(r)
		_, _ = w.Write([]byte(`{"status":"success"}`))
	}))
	t.Cleanup(plain.Close)
	base, _ := redirectingAPI(t, http.StatusFound, func(r *http.Request) string { return plain.URL + r.URL.RequestURI() })
	c, err := New(WithAPIKey(testKey), WithBaseURL(base.URL), WithHTTPClient(base.Client()))
	require.NoError(t, err)
	_, err = c.Info(context.Background(), "btc", nil)
	assert.ErrorIs(t, err, ErrRedirect)
	assert.Zero(t, clear.count())
}

// TestSameOrigin: scheme, host and port decide; default ports count.
func TestSameOrigin(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"https://api.example/x", "https://api.example/y?z", true},
		{"https://api.example/x", "https://API.example:443/y", true},
		{"http://127.0.0.1/x", "http://127.0.0.1:80/y", true},
		{"https://api.example/x", "http://api.example/x", false},
		{"https://api.example/x", "https://api.example:8443/x", false},
		{"https://api.example/x", "https://api.example.evil/x", false},
		{"https://api.example/x", "https://evil.example/x", false},
		{"http://127.0.0.1:8080/x", "http://localhost:8080/x", false},
		{"https://api.blockbee.io/x", "https://api.bloc\u212Abee.io/x", false},
		{"https://api.blockbee.io/x", "https://API.BLOCKBEE.IO/x", true},
	}
	for _, tc := range cases {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		assert.Equal(t, tc.same, sameOrigin(a, b), "%s vs %s", tc.a, tc.b)
	}
}

// TestMoneyCallsFollowNoRedirect: a 307 or 308 asks the client to send
// the same request, body included, again; a 301/302/303 turns a POST into
// a GET. Neither is done for a call that moves money, even on the same
// host: the server sees one request, and the error says the outcome is
// unknown.
func TestMoneyCallsFollowNoRedirect(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, op := range moneyOps() {
			t.Run(http.StatusText(status)+" "+op.name, func(t *testing.T) {
				base, log := redirectingAPI(t, status, func(r *http.Request) string { return "/moved" + r.URL.RequestURI() })
				c, err := New(WithAPIKey(testKey), WithBaseURL(base.URL), WithHTTPClient(base.Client()), WithRetry(3, 0, 0))
				require.NoError(t, err)
				_, err = op.call(context.Background(), c)
				assert.ErrorIs(t, err, ErrRedirect)
				assert.ErrorIs(t, err, ErrOutcomeUnknown)
				assert.Equal(t, 1, log.count(), "requests that reached the service")
				assertNoKey(t, leakProbe(c, nil, err, ""))
			})
		}
	}
}

// TestReadsFollowRedirectsWithinTheOrigin: a read follows a redirect on
// the base URL's own scheme, host and port, without a Referer header
// (it would hold the key), and gives up with ErrRedirect after
// MaxRedirects.
func TestReadsFollowRedirectsWithinTheOrigin(t *testing.T) {
	log := &headerLog{}
	var hops atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		switch {
		case strings.HasPrefix(r.URL.Path, "/loop/"):
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/v2/"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(fixture(t, "info_btc.json"))
		default:
			hops.Add(1)
			http.Redirect(w, r, "/v2"+r.URL.RequestURI(), http.StatusMovedPermanently)
		}
	}))
	t.Cleanup(srv.Close)
	userCalls := 0
	hc := srv.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { userCalls++; return nil }
	c, err := New(WithAPIKey(testKey), WithBaseURL(srv.URL), WithHTTPClient(hc), WithRetry(0, 0, 0))
	require.NoError(t, err)
	info, err := c.Info(context.Background(), "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "Bitcoin", info.Coin)
	assert.Equal(t, int32(1), hops.Load())
	assert.Equal(t, 1, userCalls, "the caller's CheckRedirect still runs after the SDK's")

	// A caller's CheckRedirect that allows 50 redirects: the SDK's limit
	// still applies first.
	lenient := &http.Client{Transport: srv.Client().Transport, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if len(via) >= 50 {
			return errors.New("caller's limit")
		}
		return nil
	}}
	c2, err := New(WithAPIKey(testKey), WithBaseURL(srv.URL+"/loop"), WithHTTPClient(lenient), WithRetry(3, 0, 0))
	require.NoError(t, err)
	before := log.count()
	_, err = c2.PublicKey(context.Background())
	assert.ErrorIs(t, err, ErrRedirect)
	assert.Equal(t, MaxRedirects+1, log.count()-before, "requests of a redirect loop, not retried")
	log.assertNoKeyInHeaders(t)
	assertNoKey(t, leakProbe(c2, nil, err, ""))
}

// TestWithHTTPClientIsNotModified: the SDK installs its redirect policy
// on a copy.
func TestWithHTTPClientIsNotModified(t *testing.T) {
	hc := &http.Client{}
	c, err := New(WithHTTPClient(hc))
	require.NoError(t, err)
	assert.Nil(t, hc.CheckRedirect)
	assert.NotSame(t, hc, c.hc)
	assert.NotNil(t, c.hc.CheckRedirect)
}
