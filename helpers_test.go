package cryptapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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

	"github.com/forwardpay/cryptapi-go/internal/address"
)

// apiPrefix is where the fake API is mounted on the test servers, so that
// a request built from an absolute path ("/btc/create/") instead of the
// base URL misses it and fails the test.
const apiPrefix = "/api/v1"

// testKey is the API key of keyed test clients. Tests search every output
// of a failing call for it.
const testKey = "bbK9fQ2xW7mZ4pL8rT3vY6nH1sD5gJ0cXeA2uI9oPq7Rw4Ez8Ty3Ui6Op1As5Df"

// mockAPI is the service for one test, mocked at the client's transport
// with httpmock: each route answers with the responder registered for it
// (handle), and every request is recorded and checked to carry the API
// key (or none, for a keyless client); a request to any other URL, below
// another host or outside the base path, fails the test.
type mockAPI struct {
	t       *testing.T
	mt      *httpmock.MockTransport
	base    string // the client's base URL: routes are below it
	wantKey bool

	mu   sync.Mutex
	reqs []recorded
}

// recorded is one request as the mock saw it.
type recorded struct {
	Method string
	Host   string
	Path   string // below the base URL's path
	Query  url.Values
	Body   []byte
	Header http.Header
}

func newMockAPI(t *testing.T, base string, wantKey bool) *mockAPI {
	a := &mockAPI{t: t, mt: httpmock.NewMockTransport(), base: base, wantKey: wantKey}
	a.mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		a.record(r)
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Redacted())
		return httpmock.NewStringResponse(http.StatusNotFound, `{"status":"error","error":"not found"}`), nil
	})
	return a
}

// handle answers "METHOD /path/" below the base URL with r.
func (a *mockAPI) handle(pattern string, r httpmock.Responder) {
	method, path, _ := strings.Cut(pattern, " ")
	a.mt.RegisterResponder(method, a.base+path, func(req *http.Request) (*http.Response, error) {
		a.record(req)
		return r(req)
	})
}

// record keeps req and checks its API key.
func (a *mockAPI) record(r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	u, _ := url.Parse(a.base)
	rec := recorded{Method: r.Method, Host: r.URL.Host, Path: strings.TrimPrefix(r.URL.Path, u.Path), Query: r.URL.Query(), Body: body, Header: r.Header.Clone()}
	if a.wantKey {
		if got := rec.Query.Get("apikey"); got != testKey {
			a.t.Errorf("%s %s: apikey = %q, want the test key", r.Method, rec.Path, got)
		}
	} else if rec.Query.Has("apikey") {
		a.t.Errorf("%s %s: keyless client sent an apikey parameter", r.Method, rec.Path)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, rec)
}

// count is the number of requests that reached the mock.
func (a *mockAPI) count() int { return a.mt.GetTotalCallCount() }

// last is the most recent request.
func (a *mockAPI) last() recorded {
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NotEmpty(a.t, a.reqs, "no request reached the mock API")
	return a.reqs[len(a.reqs)-1]
}

// setup returns a keyless client whose transport is a mock of the service
// mounted under apiPrefix. Retries wait zero time.
func setup(t *testing.T, opts ...Option) (*Client, *mockAPI) {
	t.Helper()
	return setupAt(t, "https://api.test"+apiPrefix, false, opts...)
}

// setupKey is setup with an API-key client.
func setupKey(t *testing.T, opts ...Option) (*Client, *mockAPI) {
	t.Helper()
	return setupAt(t, "https://api.test"+apiPrefix, true, opts...)
}

// setupAt returns a client of the mock at base; an empty base is the
// default base URL of the client's form, which it is not given.
func setupAt(t *testing.T, base string, withKey bool, opts ...Option) (*Client, *mockAPI) {
	t.Helper()
	var all []Option
	if base != "" {
		all = append(all, WithBaseURL(base))
	} else {
		base = CryptAPIURL
		if withKey {
			base = BlockBeeURL
		}
	}
	api := newMockAPI(t, base, withKey)
	all = append(all, WithHTTPClient(&http.Client{Transport: api.mt}), WithRetry(2, 0, 0))
	if withKey {
		all = append(all, WithAPIKey(testKey))
	}
	c, err := New(append(all, opts...)...)
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

func (f form) setup(t *testing.T, opts ...Option) (*Client, *mockAPI) {
	t.Helper()
	if f.defaultBase {
		return setupAt(t, "", f.key, opts...)
	}
	return setupAt(t, "https://api.test"+apiPrefix, f.key, opts...)
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
func serveFixture(t testing.TB, name string) httpmock.Responder {
	return serveBody(http.StatusOK, "application/json", fixture(t, name))
}

// serveBody answers with status, content type and body.
func serveBody(status int, contentType string, body []byte) httpmock.Responder {
	r := httpmock.NewBytesResponder(status, body)
	if contentType != "" {
		r = r.HeaderSet(http.Header{"Content-Type": {contentType}})
	}
	return r
}

// serveJSON answers 200 with s.
func serveJSON(s string) httpmock.Responder {
	return serveBody(http.StatusOK, "application/json", []byte(s))
}

// writeBody is serveBody for a real test server.
func writeBody(status int, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// writeJSON is serveJSON for a real test server.
func writeJSON(s string) http.HandlerFunc {
	return writeBody(http.StatusOK, "application/json", []byte(s))
}

// dropConnection fails the round trip as a connection closed without an
// answer does: a transport error.
var dropConnection = httpmock.NewErrorResponder(io.ErrUnexpectedEOF)

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
func serveCreate(t testing.TB, name string) httpmock.Responder {
	var answer map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, name), &answer))
	return func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		a := make(map[string]any, len(answer))
		for k, v := range answer {
			a[k] = v
		}
		a["callback_url"] = q.Get("callback")
		if addr := q.Get("address"); addr != "" && !strings.ContainsAny(addr, "@|") {
			a["address_out"] = addr
		}
		return httpmock.NewJsonResponse(http.StatusOK, a)
	}
}

// btcAddress returns a valid, distinct Bitcoin address for each n (a
// P2WPKH address of a hash of n; nobody holds its key).
func btcAddress(n int) string {
	h := sha256.Sum256([]byte(fmt.Sprint("cryptapi-go test address ", n)))
	return address.Segwit("bc", 0, h[:20])
}
