package cryptapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opSpec is one operation of the client, for tests that go over all of
// them.
type opSpec struct {
	name    string
	route   string // "METHOD /path/" below the base URL
	fixture string // a successful answer
	needKey bool   // needs an API key in both forms
	retried bool   // retried on transport errors and 429/502/503/504
	call    func(ctx context.Context, c *Client) (any, error)
}

func allOps() []opSpec {
	return []opSpec{
		{name: "create", route: "GET /btc/create/", fixture: "create_single.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAddress(ctx, "btc", &CreateOptions{
					Callback: "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2",
					Address:  "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP",
				})
			}},
		{name: "logs", route: "GET /btc/logs/", fixture: "logs.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Logs(ctx, "btc", "https://shop.example/cryptapi/callback?order_id=1042")
			}},
		{name: "info", route: "GET /btc/info/", fixture: "info_btc.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }},
		{name: "coins", route: "GET /info/", fixture: "info_all.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Coins(ctx, nil) }},
		{name: "qrcode", route: "GET /btc/qrcode/", fixture: "qrcode.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.QRCode(ctx, "btc", &QRCodeOptions{Address: "3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub"})
			}},
		{name: "convert", route: "GET /btc/convert/", fixture: "convert.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Convert(ctx, "btc", &ConvertOptions{Value: mustDec("1000"), From: "USD"})
			}},
		{name: "estimate", route: "GET /btc/estimate/", fixture: "estimate.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) { return c.Estimate(ctx, "btc", nil) }},
		{name: "pubkey", route: "GET /pubkey/", fixture: "pubkey.json", retried: true,
			call: func(ctx context.Context, c *Client) (any, error) { return c.PublicKey(ctx) }},
		{name: "checkout logs", route: "GET /checkout/logs/", fixture: "checkout_logs.json", needKey: true, retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CheckoutLogs(ctx, "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2")
			}},
		{name: "deposit logs", route: "GET /deposit/logs/", fixture: "checkout_logs.json", needKey: true, retried: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.DepositLogs(ctx, "Q2uN8x4mZsVb1cLk9eJr7TyW3pHd6fGa")
			}},
		{name: "checkout", route: "GET /checkout/request/", fixture: "checkout.json", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCheckout(ctx, &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("49.90")})
			}},
		{name: "deposit", route: "GET /deposit/request/", fixture: "deposit.json", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateDeposit(ctx, &DepositOptions{NotifyURL: "https://shop.example/ipn"})
			}},
		{name: "payout", route: "GET /btc/payout/request/create/", fixture: "payout.json", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePayout(ctx, "btc", &PayoutOptions{Address: "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP", Value: mustDec("0.01")})
			}},
		{name: "bulk payout", route: "POST /btc/payout/request/bulk/", fixture: "payout_bulk_strings.json", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{"1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP": mustDec("0.01")})
			}},
	}
}

// TestEveryOperationBothForms runs every operation in both forms, against
// a server mounted under a prefix and at the form's default base URL. The
// fake API fails the test if the apikey parameter is present on a keyless
// call or missing on a keyed one, or if the request leaves the base URL.
func TestEveryOperationBothForms(t *testing.T) {
	for _, op := range allOps() {
		t.Run(op.name, func(t *testing.T) {
			eachForm(t, func(t *testing.T, f form) {
				c, api := f.setup(t)
				api.handle(op.route, serveFixture(t, op.fixture))
				v, err := op.call(context.Background(), c)
				if op.needKey && !f.key {
					assert.ErrorIs(t, err, ErrAPIKeyRequired)
					assert.Zero(t, api.count(), "a keyless call of a key-only operation reached the server")
					return
				}
				require.NoError(t, err)
				assert.NotNil(t, v)
				assert.Equal(t, 1, api.count())
				req := api.last()
				assert.Equal(t, "cryptapi-go/"+Version, req.Header.Get("User-Agent"))
				assert.Equal(t, "application/json", req.Header.Get("Accept"))
			})
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	assert.Equal(t, CryptAPIURL, c.BaseURL())
	assert.False(t, c.HasAPIKey())

	c, err = New(WithAPIKey(testKey))
	require.NoError(t, err)
	assert.Equal(t, BlockBeeURL, c.BaseURL())
	assert.True(t, c.HasAPIKey())

	c, err = New(WithAPIKey(testKey), WithBaseURL("https://proxy.example/forward/"))
	require.NoError(t, err)
	assert.Equal(t, "https://proxy.example/forward", c.BaseURL(), "trailing slash trimmed")

	c, err = New(nil, WithRetry(0, 0, 0), nil)
	require.NoError(t, err, "nil options are skipped")
	assert.Equal(t, CryptAPIURL, c.BaseURL())
}

// TestNewDoesNoIO: constructing a client sends nothing.
func TestNewDoesNoIO(t *testing.T) {
	mt := httpmock.NewMockTransport()
	_, err := New(WithAPIKey(testKey), WithHTTPClient(&http.Client{Transport: mt}))
	require.NoError(t, err)
	_, err = New(WithHTTPClient(&http.Client{Transport: mt}))
	require.NoError(t, err)
	assert.Zero(t, mt.GetTotalCallCount())
}

func TestNewOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		opt  Option
		want error
	}{
		{"empty key", WithAPIKey(""), ErrEmptyAPIKey},
		{"blank key", WithAPIKey(" \t"), ErrEmptyAPIKey},
		{"relative base", WithBaseURL("api.cryptapi.io"), ErrInvalidOption},
		{"ftp base", WithBaseURL("ftp://api.cryptapi.io"), ErrInvalidOption},
		{"base with credentials", WithBaseURL("https://user:pw@api.cryptapi.io"), ErrInvalidOption},
		{"base with query", WithBaseURL("https://api.cryptapi.io/?apikey=x"), ErrInvalidOption},
		{"base with fragment", WithBaseURL("https://api.cryptapi.io/#x"), ErrInvalidOption},
		{"unparseable base", WithBaseURL("https://api.cryptapi.io/%zz"), ErrInvalidOption},
		{"nil http client", WithHTTPClient(nil), ErrInvalidOption},
		{"negative retries", WithRetry(-1, 0, 0), ErrInvalidOption},
		{"negative wait", WithRetry(1, -time.Second, 0), ErrInvalidOption},
		{"max below min", WithRetry(1, 2*time.Second, time.Second), ErrInvalidOption},
		{"two-line user agent", WithUserAgent("a\r\nX-Injected: 1"), ErrInvalidOption},
		{"zero response limit", WithMaxResponseBytes(0), ErrInvalidOption},
		{"nil clock", WithClock(nil), ErrInvalidOption},
		{"nil clock func", WithClock(ClockFunc(nil)), ErrInvalidOption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.opt)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, c)
		})
	}
}

// TestEmptyAPIKeyNeverSends: WithAPIKey("") gives no client at all, so
// nothing can reach the server, not even as a silently keyless call.
func TestEmptyAPIKeyNeverSends(t *testing.T) {
	api := newMockAPI(t, "https://api.test"+apiPrefix, false)
	c, err := New(WithBaseURL(api.base), WithAPIKey(""), WithHTTPClient(&http.Client{Transport: api.mt}))
	require.ErrorIs(t, err, ErrEmptyAPIKey)
	assert.Nil(t, c)
	assert.Zero(t, api.count())
}

func TestUserAgent(t *testing.T) {
	c, api := setup(t, WithUserAgent("shop/2.1 (+https://shop.example)"))
	api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
	_, err := c.Info(context.Background(), "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "shop/2.1 (+https://shop.example)", api.last().Header.Get("User-Agent"))
}

func TestBuildURLKeepsPrefixAndEncodesOnce(t *testing.T) {
	c, err := New(WithAPIKey("k+y/=&"), WithBaseURL("https://proxy.example/api%20v1"))
	require.NoError(t, err)
	u, err := c.buildURL(&request{
		path:  "trc20/usdt/create/",
		opts:  &CreateOptions{Pending: true, Confirmations: 3},
		query: url.Values{"callback": {"https://shop.example/cb?a=1&b=%2F"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "/api v1/trc20/usdt/create/", u.Path)
	assert.Equal(t, "https://proxy.example/api%20v1/trc20/usdt/create/", u.Scheme+"://"+u.Host+u.EscapedPath())
	q := u.Query()
	assert.Equal(t, "https://shop.example/cb?a=1&b=%2F", q.Get("callback"))
	assert.Equal(t, "1", q.Get("pending"))
	assert.Equal(t, "3", q.Get("confirmations"))
	assert.Equal(t, "k+y/=&", q.Get("apikey"))
	assert.False(t, q.Has("post"), "false flags are left out")
}

// TestClientFormatHidesKey: no formatting verb prints the API key.
func TestClientFormatHidesKey(t *testing.T) {
	c, err := New(WithAPIKey(testKey))
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%q", "%x", "%T %v"} {
		out := fmt.Sprintf(verb, c)
		assert.NotContains(t, out, testKey, verb)
	}
	assert.Contains(t, c.String(), redacted)
	assert.Contains(t, fmt.Sprintf("%#v", c), BlockBeeURL)
	assert.NotContains(t, fmt.Sprint(c), testKey)
	assert.NotContains(t, fmt.Sprintf("%v", []*Client{c}), testKey)

	keyless, err := New()
	require.NoError(t, err)
	assert.Contains(t, keyless.String(), "APIKey: none")
}

// ---- retries ----

// TestRetryStatusTable: which statuses are retried, per operation. Reads
// and address creation are retried on 429/502/503/504; payouts, checkout
// and deposit creation never are.
func TestRetryStatusTable(t *testing.T) {
	statuses := []struct {
		code  int
		retry bool
	}{
		{http.StatusTooManyRequests, true},
		{http.StatusBadGateway, true},
		{http.StatusServiceUnavailable, true},
		{http.StatusGatewayTimeout, true},
		{http.StatusInternalServerError, false},
		{http.StatusBadRequest, false},
		{http.StatusUnauthorized, false},
		{http.StatusNotFound, false},
	}
	const retryMax = 2
	for _, op := range allOps() {
		for _, st := range statuses {
			t.Run(fmt.Sprintf("%s/%d", op.name, st.code), func(t *testing.T) {
				c, api := setupKey(t, WithRetry(retryMax, 0, 0))
				api.handle(op.route, serveBody(st.code, "application/json", []byte(`{"status":"error","error":"try later"}`)))
				_, err := op.call(context.Background(), c)
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, st.code, ae.StatusCode)
				assert.Equal(t, "try later", ae.Message)
				want := 1
				if st.retry && op.retried {
					want = retryMax + 1
				}
				assert.Equal(t, want, api.count(), "attempts")
			})
		}
	}
}

// TestRetryTransportErrors: a server that closes connections without
// answering is retried on reads and creates, never on money-moving calls.
func TestRetryTransportErrors(t *testing.T) {
	const retryMax = 2
	for _, op := range allOps() {
		t.Run(op.name, func(t *testing.T) {
			c, api := setupKey(t, WithRetry(retryMax, 0, 0))
			api.handle(op.route, dropConnection)
			_, err := op.call(context.Background(), c)
			require.Error(t, err)
			var ue *url.Error
			assert.ErrorAs(t, err, &ue)
			want := 1
			if op.retried {
				want = retryMax + 1
			}
			assert.Equal(t, want, api.count(), "attempts")
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	c, api := setup(t, WithRetry(3, 0, 0))
	var n atomic.Int32
	ok := serveFixture(t, "info_btc.json")
	api.handle("GET /btc/info/", func(r *http.Request) (*http.Response, error) {
		switch n.Add(1) {
		case 1:
			return dropConnection(r)
		case 2:
			// Retry-After is capped at waitMax = 0.
			return serveBody(http.StatusTooManyRequests, "", nil).HeaderSet(http.Header{"Retry-After": {"3600"}})(r)
		case 3:
			return serveBody(http.StatusBadGateway, "text/html", fixture(t, "gateway_502.html"))(r)
		default:
			return ok(r)
		}
	})
	info, err := c.Info(context.Background(), "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "Bitcoin", info.Coin)
	assert.Equal(t, 4, api.count())
}

func TestWithoutRetries(t *testing.T) {
	c, api := setup(t, WithoutRetries())
	api.handle("GET /btc/info/", serveBody(http.StatusServiceUnavailable, "", nil))
	_, err := c.Info(context.Background(), "btc", nil)
	require.Error(t, err)
	assert.Equal(t, 1, api.count())
}

func retryResp(code int, retryAfter string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: code, Header: h}
}

func TestBackoffRetryAfterCapped(t *testing.T) {
	// An hour asked for, two seconds allowed.
	assert.Equal(t, 2*time.Second, backoff(0, 2*time.Second, 0, retryResp(http.StatusTooManyRequests, "3600")))
	assert.Equal(t, 2*time.Second, backoff(100*time.Millisecond, 2*time.Second, 5, retryResp(http.StatusServiceUnavailable, "3600")))
	// HTTP-date form, an hour ahead: capped too.
	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	assert.Equal(t, 2*time.Second, backoff(0, 2*time.Second, 0, retryResp(http.StatusServiceUnavailable, date)))
	// A shorter Retry-After is honoured as given.
	assert.Equal(t, time.Second, backoff(0, 2*time.Second, 0, retryResp(http.StatusTooManyRequests, "1")))
	// A date in the past means now, raised to the minimum wait.
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	assert.Equal(t, 300*time.Millisecond, backoff(300*time.Millisecond, 2*time.Second, 0, retryResp(http.StatusTooManyRequests, past)))
	// Zero waits stay zero whatever the server asks.
	assert.Zero(t, backoff(0, 0, 3, retryResp(http.StatusTooManyRequests, "3600")))
}

func TestBackoffExponentialWithinBounds(t *testing.T) {
	min, max := 100*time.Millisecond, 2*time.Second
	for attempt := 0; attempt < 12; attempt++ {
		for i := 0; i < 50; i++ {
			// Retry-After is read on 429/503 only; on 502 it is ignored.
			d := backoff(min, max, attempt, retryResp(http.StatusBadGateway, "3600"))
			require.GreaterOrEqual(t, d, min, "attempt %d", attempt)
			require.LessOrEqual(t, d, max, "attempt %d", attempt)
		}
	}
	// The upper bound grows with the attempt: by attempt 4 (1.6 s) the
	// wait is at least half of it.
	assert.GreaterOrEqual(t, backoff(min, max, 4, nil), 800*time.Millisecond)
	assert.Zero(t, backoff(0, 0, 4, nil))
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"99999999999", 24 * time.Hour, true},
		{"-5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		d, ok := parseRetryAfter(tc.in, now)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		assert.Equal(t, tc.want, d, "%q", tc.in)
	}
}

// cancelOnResponse is a slog handler that cancels a context when the
// client logs a response: after the retry decision, just before the
// client waits for the backoff.
type cancelOnResponse struct{ cancel context.CancelFunc }

func (h cancelOnResponse) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOnResponse) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "cryptapi response" {
		h.cancel()
	}
	return nil
}
func (h cancelOnResponse) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h cancelOnResponse) WithGroup(string) slog.Handler      { return h }

// TestCancelDuringBackoff: the backoff is an hour; cancelling the context
// while the client waits ends the call at once with context.Canceled. If
// the wait ignored the context the test would hang, not pass.
func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, api := setup(t, WithRetry(5, time.Hour, time.Hour), WithLogger(slog.New(cancelOnResponse{cancel})))
	api.handle("GET /btc/info/", serveBody(http.StatusServiceUnavailable, "", nil))
	_, err := c.Info(ctx, "btc", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, api.count(), "no attempt after the cancel")
}

// TestCancelInFlight: the server holds the request until the test cancels
// the context; the call returns context.Canceled and is not retried.
func TestCancelInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, api := setup(t, WithRetry(5, time.Hour, time.Hour))
	arrived := make(chan struct{}, 1)
	api.handle("GET /btc/info/", func(r *http.Request) (*http.Response, error) {
		arrived <- struct{}{}
		<-r.Context().Done() // until the client goes away
		return nil, r.Context().Err()
	})
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.Info(ctx, "btc", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, api.count())
}

func TestCancelledBeforeCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, api := setup(t, WithRetry(5, time.Hour, time.Hour))
	api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
	_, err := c.Info(ctx, "btc", nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestNilContext(t *testing.T) {
	c, api := setup(t)
	//lint:ignore SA1012 the test is of the guard against a nil context
	_, err := c.Info(nil, "btc", nil)
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.Zero(t, api.count())
}

// ---- connections and limits ----

// TestConnectionsReused: a thousand sequential calls, successes and error
// answers alike, share a handful of connections.
func TestConnectionsReused(t *testing.T) {
	var requests atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("GET "+apiPrefix+"/btc/info/", writeBody(http.StatusOK, "application/json", fixture(t, "info_btc.json")))
	mux.Handle("GET "+apiPrefix+"/btc/logs/", writeBody(http.StatusBadRequest, "application/json", []byte(`{"status":"error","error":"Invalid callback URL"}`)))
	var newConns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL+apiPrefix), WithRetry(0, 0, 0)) // the default pooled client
	require.NoError(t, err)
	defer c.hc.CloseIdleConnections()

	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		if i%10 == 9 {
			_, err := c.Logs(ctx, "btc", "https://shop.example/cb")
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			continue
		}
		_, err := c.Info(ctx, "btc", nil)
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1000), requests.Load())
	assert.LessOrEqual(t, newConns.Load(), int32(2), "connections opened for 1000 calls")
}

// TestResponseTooLarge: a 20 MiB answer against a 1 MiB limit fails with
// ErrResponseTooLarge without reading the whole body into memory.
func TestResponseTooLarge(t *testing.T) {
	const total = 20 << 20
	c, api := setup(t, WithMaxResponseBytes(1<<20), WithoutRetries())
	chunk := []byte(strings.Repeat(`{"a":"0123456789abcdef"},`, 1024))
	api.handle("GET /info/", func(*http.Request) (*http.Response, error) {
		body := io.MultiReader(strings.NewReader("["), io.LimitReader(repeatReader(chunk), total), strings.NewReader("{}]"))
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(body), ContentLength: -1}, nil
	})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Coins(context.Background(), nil)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrResponseTooLarge)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusOK, ae.StatusCode)
	assert.LessOrEqual(t, len(ae.Body), maxExcerpt)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(12<<20), "bytes allocated while refusing a 20 MiB answer")
}

// repeatReader reads b over and over, for ever.
type repeatReader []byte

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r)
	}
	return n, nil
}

func TestResponseLimitBoundary(t *testing.T) {
	body := fixture(t, "info_btc.json")
	c, api := setup(t, WithMaxResponseBytes(int64(len(body))))
	api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
	_, err := c.Info(context.Background(), "btc", nil)
	require.NoError(t, err, "an answer exactly at the limit is read")

	c, api = setup(t, WithMaxResponseBytes(int64(len(body)-1)))
	api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
	_, err = c.Info(context.Background(), "btc", nil)
	assert.ErrorIs(t, err, ErrResponseTooLarge)
	assert.NotErrorIs(t, &APIError{StatusCode: 500, Message: "boom"}, ErrResponseTooLarge)
}

// ---- secrets ----

// leakProbe lists every text a caller can get out of a call: the error
// in all verbs and its parts, the value, the client and the log.
func leakProbe(c *Client, val any, err error, logs string) map[string]string {
	out := map[string]string{"logs": logs}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%q"} {
		out["client "+verb] = fmt.Sprintf(verb, c)
		out["value "+verb] = fmt.Sprintf(verb, val)
		if err != nil {
			out["error "+verb] = fmt.Sprintf(verb, err)
		}
	}
	if err != nil {
		out["error"] = err.Error()
		for e := err; e != nil; e = errors.Unwrap(e) {
			out["chain "+fmt.Sprintf("%T", e)] += e.Error() + "\n"
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		out["url.Error.URL"] = ue.URL
		if ue.Err != nil {
			out["url.Error.Err"] = ue.Err.Error()
		}
	}
	var ae *APIError
	if errors.As(err, &ae) {
		out["APIError.Body"] = string(ae.Body)
		out["APIError.Message"] = ae.Message
	}
	var de *DecodeError
	if errors.As(err, &de) {
		out["DecodeError.Body"] = string(de.Body)
		out["DecodeError.Err"] = de.Err.Error()
	}
	return out
}

// assertNoKey fails if any text holds the key or a 12-character piece of
// it (a key cut in half by a truncation is still a leak).
func assertNoKey(t *testing.T, texts map[string]string) {
	t.Helper()
	for where, s := range texts {
		for i := 0; i+12 <= len(testKey); i++ {
			if strings.Contains(s, testKey[i:i+12]) {
				t.Errorf("%s holds (part of) the API key: %q", where, s)
				break
			}
		}
	}
}

// TestSecretsNeverLeak drives every failure path, and a success, with a
// keyed client logging at debug level, and searches everything the caller
// can see for the key.
func TestSecretsNeverLeak(t *testing.T) {
	echoURL := func(status int, wrap string) httpmock.Responder {
		return func(r *http.Request) (*http.Response, error) {
			return httpmock.NewStringResponse(status, fmt.Sprintf(wrap, r.URL.String())), nil
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, logger *slog.Logger) *Client
		call  func(ctx context.Context, c *Client) (any, error)
		check func(t *testing.T, err error)
	}{
		{
			name: "success",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", serveFixture(t, "info_btc.json"))
				return c
			},
			check: func(t *testing.T, err error) { require.NoError(t, err) },
		},
		{
			name: "refused connection",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				addr := ln.Addr().String()
				require.NoError(t, ln.Close())
				c, err := New(WithAPIKey(testKey), WithBaseURL("http://"+addr+apiPrefix), WithRetry(1, 0, 0),
					WithLogger(l), WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
				require.NoError(t, err)
				return c
			},
			check: func(t *testing.T, err error) {
				var ue *url.Error
				require.ErrorAs(t, err, &ue)
				assert.Contains(t, ue.URL, "apikey="+redacted)
				var oe *net.OpError
				assert.ErrorAs(t, err, &oe, "the network error stays inspectable")
			},
		},
		{
			name: "timeout",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				api := newMockAPI(t, "https://api.test"+apiPrefix, true)
				api.handle("GET /btc/info/", func(r *http.Request) (*http.Response, error) {
					<-r.Context().Done() // the client's timeout
					return nil, r.Context().Err()
				})
				c, err := New(WithAPIKey(testKey), WithBaseURL(api.base), WithRetry(1, 0, 0), WithLogger(l),
					WithHTTPClient(&http.Client{Transport: api.mt, Timeout: time.Millisecond}))
				require.NoError(t, err)
				return c
			},
			check: func(t *testing.T, err error) {
				var ue *url.Error
				require.ErrorAs(t, err, &ue)
				assert.True(t, ue.Timeout(), "a timeout stays recognisable: %v", err)
			},
		},
		{
			name: "5xx after retries, body echoing the URL",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", echoURL(http.StatusServiceUnavailable, "upstream failed for %s"))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, http.StatusServiceUnavailable, ae.StatusCode)
				assert.Contains(t, string(ae.Body), "apikey="+redacted)
			},
		},
		{
			name: "bad JSON echoing the key",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", serveJSON(`{"coin": "Bitcoin", "apikey": "`+testKey+`", `))
				return c
			},
			check: func(t *testing.T, err error) {
				var de *DecodeError
				require.ErrorAs(t, err, &de)
				var se *json.SyntaxError
				assert.ErrorAs(t, err, &se)
			},
		},
		{
			name: "bad JSON echoing the key, HTTP 500",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", serveBody(http.StatusInternalServerError, "application/json",
					[]byte(`{"status":"error","apikey":"`+testKey+`","error":`)))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, "response is not valid JSON", ae.Message)
			},
		},
		{
			name: "wrong-shape JSON echoing the key",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", serveJSON(`{"coin": {"apikey": "`+testKey+`"}, "ticker": "`+testKey+`"}`))
				return c
			},
			check: func(t *testing.T, err error) {
				var de *DecodeError
				require.ErrorAs(t, err, &de)
			},
		},
		{
			name: "error body echoing the key, HTTP 401",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", serveBody(http.StatusUnauthorized, "application/json",
					[]byte(`{"status":"error","error":"API key `+testKey+` is not valid"}`)))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, "API key "+redacted+" is not valid", ae.Message)
			},
		},
		{
			name: "error body echoing the key, HTTP 200",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/create/", echoURL(http.StatusOK, `{"status":"error","error":"bad request %s"}`))
				return c
			},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateAddress(ctx, "btc", &CreateOptions{Callback: "https://shop.example/cb"})
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, http.StatusOK, ae.StatusCode)
			},
		},
		{
			name: "non-JSON body echoing the key",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", echoURL(http.StatusBadGateway, "<html><body><h1>502</h1><p>%s</p></body></html>"))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, "response is not JSON", ae.Message)
			},
		},
		{
			name: "key cut by the body excerpt",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				body := strings.Repeat("x", maxExcerpt-20) + testKey + strings.Repeat("y", 100)
				api.handle("GET /btc/info/", serveBody(http.StatusBadRequest, "text/plain", []byte(body)))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.LessOrEqual(t, len(ae.Body), maxExcerpt)
			},
		},
		{
			name: "key cut by the message limit",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				msg := strings.Repeat("m", 300-20) + testKey
				api.handle("GET /btc/info/", serveJSON(`{"status":"error","error":"`+msg+`"}`))
				return c
			},
			check: func(t *testing.T, err error) {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
			},
		},
		{
			name: "payout hang-up, not retried",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/payout/request/create/", dropConnection)
				return c
			},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePayout(ctx, "btc", &PayoutOptions{Address: "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP", Value: mustDec("0.5")})
			},
			check: func(t *testing.T, err error) {
				var ue *url.Error
				require.ErrorAs(t, err, &ue)
			},
		},
		{
			name: "redirect loop",
			setup: func(t *testing.T, l *slog.Logger) *Client {
				c, api := setupKey(t, WithLogger(l))
				api.handle("GET /btc/info/", func(r *http.Request) (*http.Response, error) {
					return serveBody(http.StatusFound, "", nil).HeaderSet(http.Header{"Location": {r.URL.String()}})(r)
				})
				return c
			},
			check: func(t *testing.T, err error) {
				var ue *url.Error
				require.ErrorAs(t, err, &ue)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := debugLogger()
			c := tc.setup(t, logger)
			call := tc.call
			if call == nil {
				call = func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }
			}
			val, err := call(context.Background(), c)
			tc.check(t, err)
			assert.Contains(t, logs.String(), "apikey="+redacted, "the log shows the redacted URL")
			assertNoKey(t, leakProbe(c, val, err, logs.String()))
		})
	}
}

// TestLoggerLogsAttempts: each attempt is logged at debug level with
// method, redacted URL, attempt number and status.
func TestLoggerLogsAttempts(t *testing.T) {
	logger, logs := debugLogger()
	c, api := setupKey(t, WithLogger(logger), WithRetry(1, 0, 0))
	api.handle("GET /btc/info/", serveBody(http.StatusBadGateway, "", nil))
	_, err := c.Info(context.Background(), "btc", nil)
	require.Error(t, err)
	out := logs.String()
	assert.Equal(t, 2, strings.Count(out, `msg="cryptapi request"`))
	assert.Equal(t, 2, strings.Count(out, `msg="cryptapi response"`))
	assert.Contains(t, out, "level=DEBUG")
	assert.Contains(t, out, "method=GET")
	assert.Contains(t, out, "attempt=2")
	assert.Contains(t, out, "status=502")
	assert.Contains(t, out, apiPrefix+"/btc/info/")
	assert.NotContains(t, out, testKey)
}

// TestScrubRedactsWrappedErrors covers errors that carry the key outside
// a *url.Error and inside the *url.Error's inner error.
func TestScrubRedactsWrappedErrors(t *testing.T) {
	c, err := New(WithAPIKey(testKey))
	require.NoError(t, err)

	assert.Nil(t, c.scrub(nil))
	plain := errors.New("no secret here")
	assert.Same(t, plain, c.scrub(plain))

	inner := fmt.Errorf("dial for apikey=%s: %w", testKey, context.DeadlineExceeded)
	got := c.scrub(&url.Error{Op: "Get", URL: "https://api.blockbee.io/btc/info/?apikey=" + testKey, Err: inner})
	assert.NotContains(t, got.Error(), testKey)
	assert.ErrorIs(t, got, context.DeadlineExceeded, "sentinels still match after redaction")

	got = c.scrub(fmt.Errorf("wrapped %s: %w", testKey, io.ErrUnexpectedEOF))
	assert.NotContains(t, got.Error(), testKey)
	assert.ErrorIs(t, got, io.ErrUnexpectedEOF)

	// An unparseable URL is still redacted as text.
	got = c.scrub(&url.Error{Op: "parse", URL: "https://x/%zz?apikey=" + testKey, Err: errors.New("invalid")})
	assert.NotContains(t, got.Error(), testKey)
}

// TestAPIKeyNeverOverPlainHTTP: with a key, only https or this machine.
func TestAPIKeyNeverOverPlainHTTP(t *testing.T) {
	for _, u := range []string{"http://api.example.com", "http://10.0.0.5:8080", "http://[2001:db8::1]/"} {
		_, err := New(WithAPIKey("k"), WithBaseURL(u))
		assert.ErrorIs(t, err, ErrInvalidOption, u)
	}
	for _, u := range []string{"https://api.example.com", "http://127.0.0.1:8090", "http://localhost:1", "http://[::1]:2"} {
		_, err := New(WithAPIKey("k"), WithBaseURL(u))
		assert.NoError(t, err, u)
	}
	_, err := New(WithBaseURL("http://api.example.com")) // keyless: nothing secret to send
	assert.NoError(t, err)
}
