package cryptapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiPrefix is where the fake API is mounted on the test servers, so that
// a request built from an absolute path ("/btc/create/") instead of the
// base URL misses it and fails the test.
const apiPrefix = "/api/v1"

// testKey is the API key of keyed test clients. Tests search every output
// of a failing call for it.
const testKey = "bbK9fQ2xW7mZ4pL8rT3vY6nH1sD5gJ0cXeA2uI9oPq7Rw4Ez8Ty3Ui6Op1As5Df"

// fakeAPI is a fake of the service for one test: an http.Handler that
// records every request, checks that it arrived under the base URL with
// (or without) the API key, and dispatches it by method and path.
type fakeAPI struct {
	t       *testing.T
	prefix  string // path prefix of the base URL
	host    string // expected host, "" for any
	wantKey bool   // expect apikey=testKey on every request

	mu     sync.Mutex
	routes map[string]http.HandlerFunc // "GET /btc/create/"
	reqs   []recorded
}

// recorded is one request as the fake saw it.
type recorded struct {
	Method string
	Host   string
	Path   string // below the prefix
	Query  url.Values
	Body   []byte
	Header http.Header
}

func newFakeAPI(t *testing.T, prefix, host string, wantKey bool) *fakeAPI {
	return &fakeAPI{t: t, prefix: prefix, host: host, wantKey: wantKey, routes: map[string]http.HandlerFunc{}}
}

// handle registers h for "METHOD /path/" below the prefix.
func (f *fakeAPI) handle(pattern string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[pattern] = h
}

// count is the number of requests that reached the fake.
func (f *fakeAPI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// last is the most recent request.
func (f *fakeAPI) last() recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(f.t, f.reqs, "no request reached the fake API")
	return f.reqs[len(f.reqs)-1]
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host // a client-side request, from the mock transport
	}
	path, ok := strings.CutPrefix(r.URL.Path, f.prefix)
	rec := recorded{Method: r.Method, Host: host, Path: path, Query: r.URL.Query(), Body: body, Header: r.Header.Clone()}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	h := f.routes[r.Method+" "+path]
	f.mu.Unlock()

	if !ok {
		f.t.Errorf("request %s %s is outside the base URL prefix %q", r.Method, r.URL.Path, f.prefix)
		http.NotFound(w, r)
		return
	}
	if f.host != "" && host != f.host {
		f.t.Errorf("request went to host %q, want %q", host, f.host)
	}
	if f.wantKey {
		if got := rec.Query.Get("apikey"); got != testKey {
			f.t.Errorf("%s %s: apikey = %q, want the test key", r.Method, path, got)
		}
	} else if rec.Query.Has("apikey") {
		f.t.Errorf("%s %s: keyless client sent an apikey parameter", r.Method, path)
	}
	if h == nil {
		f.t.Errorf("unexpected request %s %s", r.Method, path)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"status":"error","error":"not found"}`)
		return
	}
	h(w, r)
}

// setup starts an httptest server with the fake API mounted under
// apiPrefix and returns a keyless client for it. Retries wait zero time.
func setup(t *testing.T, opts ...Option) (*Client, *fakeAPI) {
	t.Helper()
	return setupServer(t, false, opts...)
}

// setupKey is setup with an API-key client.
func setupKey(t *testing.T, opts ...Option) (*Client, *fakeAPI) {
	t.Helper()
	return setupServer(t, true, opts...)
}

func setupServer(t *testing.T, withKey bool, opts ...Option) (*Client, *fakeAPI) {
	t.Helper()
	api := newFakeAPI(t, apiPrefix, "", withKey)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	base := []Option{WithBaseURL(srv.URL + apiPrefix), WithHTTPClient(srv.Client()), WithRetry(2, 0, 0)}
	if withKey {
		base = append(base, WithAPIKey(testKey))
	}
	c, err := New(append(base, opts...)...)
	require.NoError(t, err)
	return c, api
}

// setupDefaultBase returns a client without WithBaseURL whose transport is
// a per-test httpmock.MockTransport serving the fake API, so that the
// default base URL of each form is what the requests go to.
func setupDefaultBase(t *testing.T, withKey bool, opts ...Option) (*Client, *fakeAPI) {
	t.Helper()
	host := "api.cryptapi.io"
	if withKey {
		host = "api.blockbee.io"
	}
	api := newFakeAPI(t, "", host, withKey)
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme != "https" {
			t.Errorf("scheme %q, want https", r.URL.Scheme)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		resp := rec.Result()
		resp.Request = r
		return resp, nil
	})
	base := []Option{WithHTTPClient(&http.Client{Transport: mt}), WithRetry(2, 0, 0)}
	if withKey {
		base = append(base, WithAPIKey(testKey))
	}
	c, err := New(append(base, opts...)...)
	require.NoError(t, err)
	return c, api
}

// form is one way of reaching the service: keyless or with an
// API key, against a test server mounted under a prefix or at
// the form's default base URL.
type form struct {
	name        string
	key         bool
	defaultBase bool
}

var forms = []form{
	{name: "keyless", key: false},
	{name: "apikey", key: true},
	{name: "keyless-default-base", key: false, defaultBase: true},
	{name: "apikey-default-base", key: true, defaultBase: true},
}

func (f form) setup(t *testing.T, opts ...Option) (*Client, *fakeAPI) {
	t.Helper()
	if f.defaultBase {
		return setupDefaultBase(t, f.key, opts...)
	}
	return setupServer(t, f.key, opts...)
}

// eachForm runs fn once per form, as a subtest.
func eachForm(t *testing.T, fn func(t *testing.T, f form)) {
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) { fn(t, f) })
	}
}

// fixture returns the bytes of testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// serveFixture answers with testdata/name as JSON.
func serveFixture(t testing.TB, name string) http.HandlerFunc {
	body := fixture(t, name)
	return serveBody(http.StatusOK, "application/json", body)
}

// serveBody answers with status, content type and body.
func serveBody(status int, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// serveJSON answers 200 with s.
func serveJSON(s string) http.HandlerFunc {
	return serveBody(http.StatusOK, "application/json", []byte(s))
}

// hangUp closes the connection without answering: a transport error.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("hangUp needs a real server, not a recorder")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// syncBuffer is a bytes.Buffer safe for use by a logger and a test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// debugLogger logs at debug level into a buffer.
func debugLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// mustDec parses a decimal or panics.
func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// assertDec checks a decimal against its text, by value.
func assertDec(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	if !mustDec(want).Equal(got) {
		assert.Fail(t, fmt.Sprintf("decimal: want %s, got %s", want, got.String()), msgAndArgs...)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// serveCreate answers a create request with the fixture, as the service
// answers a first create: bound to the callback URL and the single
// destination of the request (the fixture's address_out is kept for
// several destinations and for none).
func serveCreate(t testing.TB, name string) http.HandlerFunc {
	var answer map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, name), &answer))
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a := make(map[string]any, len(answer))
		for k, v := range answer {
			a[k] = v
		}
		a["callback_url"] = q.Get("callback")
		if addr := q.Get("address"); addr != "" && !strings.ContainsAny(addr, "@|") {
			a["address_out"] = addr
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	}
}
