// Package cryptapi is a typed client for a crypto payment forwarding service:
// the service gives a merchant a fresh payment address per order, forwards
// what the customer pays (minus a fee) to the merchant's own addresses, and
// calls the merchant back until the merchant answers "*ok*".
//
// The service comes in two forms. The keyless form (CryptAPIURL)
// needs no account: New() with no options talks to it. The API-key form
// (BlockBeeURL) takes a key on every call: New(WithAPIKey(key)).
// Checkout, deposit and payout operations need a key in both forms.
//
// Every amount is an exact decimal.Decimal. Inputs are validated before
// anything is sent, and the API key never appears in errors, logs or
// formatted output. Read operations and address creation (idempotent by
// callback URL) are retried on transport errors and 429/502/503/504.
// Operations that move money or create a payment page go out at most
// once: never retried, never redirected, over HTTP/1.1 on a connection of
// their own that net/http cannot send them on again; when their outcome
// is unknown the error matches ErrOutcomeUnknown.
//
// Receiving callbacks is the job of the callback subpackage; the
// cryptapitest subpackage is an in-process fake of the whole service for
// tests.
package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// Base URLs of the two public deployments.
const (
	// CryptAPIURL is the keyless deployment, the default without a key.
	CryptAPIURL = "https://api.cryptapi.io"
	// BlockBeeURL is the API-key deployment, the default with a key.
	BlockBeeURL = "https://api.blockbee.io"
)

// Version is the SDK version sent in the default User-Agent.
const Version = "0.1.0"

// Defaults used by New.
const (
	DefaultRetryMax         = 3
	DefaultRetryWaitMin     = 500 * time.Millisecond
	DefaultRetryWaitMax     = 10 * time.Second
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
)

const redacted = "REDACTED"

// Client calls the service. It is safe for concurrent use; create one and
// reuse it, so that connections are pooled.
type Client struct {
	base      *url.URL
	apiKey    string
	hc        *http.Client
	rc        *retryablehttp.Client // reads and idempotent calls
	once      *retryablehttp.Client // calls that move money: at most once (see transport.go)
	onceKnown bool                  // once's transport reports every connection before writing
	keyMatch  *keyMatcher           // every spelling of apiKey, for redaction
	userAgent string
	logger    *slog.Logger
	maxBody   int64
	retryMax  int
	waitMin   time.Duration
	waitMax   time.Duration
	now       func() time.Time
	infoTTL   time.Duration
	infoCache *infoCache
}

// Option configures a Client.
type Option func(*Client) error

// WithAPIKey makes the client use the API-key form: the key is sent
// as the apikey parameter on every call, and the default base URL becomes
// BlockBeeURL. An empty key is an error (ErrEmptyAPIKey), never a silently
// keyless client.
func WithAPIKey(key string) Option {
	return func(c *Client) error {
		if strings.TrimSpace(key) == "" {
			return ErrEmptyAPIKey
		}
		if !utf8.ValidString(key) || strings.IndexFunc(key, unicode.IsControl) >= 0 {
			return fmt.Errorf("%w: API key must be printable text", ErrInvalidOption)
		}
		c.apiKey = key
		return nil
	}
}

// WithBaseURL points the client at another deployment, a proxy or a test
// server (see cryptapitest). The URL may carry a path prefix. With an API
// key, a plain http URL is refused unless it points at this machine
// (localhost or a loopback address), so the key never travels unencrypted.
func WithBaseURL(u string) Option {
	return func(c *Client) error {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%w: base URL must be an absolute http(s) URL", ErrInvalidOption)
		}
		if p.User != nil || p.RawQuery != "" || p.Fragment != "" {
			return fmt.Errorf("%w: base URL must not carry credentials, a query or a fragment", ErrInvalidOption)
		}
		p.Path = strings.TrimSuffix(p.Path, "/")
		p.RawPath = ""
		c.base = p
		return nil
	}
}

// WithHTTPClient sets the HTTP client used for requests. Its transport
// should pool connections; its Timeout bounds each attempt. h is not
// modified: the client uses a copy whose CheckRedirect refuses redirects
// that would carry the API key elsewhere (see ErrRedirect) before calling
// h's own.
//
// Calls that move money or create a payment page (payouts, checkout,
// deposit) must go out at most once. With an *http.Transport they use a
// clone of it that speaks HTTP/1.1 only, never reuses a connection and
// dials at most one connection per call. With another RoundTripper (an
// instrumentation wrapper, say) they use it as it is, and a connection
// hook (net/http/httptrace GotConn) closes any second connection one call
// is given before the call is written to it; a RoundTripper that does not
// report its connections through httptrace must not send a request twice
// itself, and every failure of a money call through it is reported as
// ErrOutcomeUnknown.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error {
		if h == nil {
			return fmt.Errorf("%w: nil *http.Client", ErrInvalidOption)
		}
		c.hc = h
		return nil
	}
}

// WithRetry sets how many times a retryable call is retried and the bounds
// of the exponential backoff between attempts. A Retry-After header from
// the service is honoured, capped at waitMax.
func WithRetry(max int, waitMin, waitMax time.Duration) Option {
	return func(c *Client) error {
		if max < 0 || waitMin < 0 || waitMax < waitMin {
			return fmt.Errorf("%w: retry needs max >= 0 and 0 <= waitMin <= waitMax", ErrInvalidOption)
		}
		c.retryMax, c.waitMin, c.waitMax = max, waitMin, waitMax
		return nil
	}
}

// WithoutRetries disables retries: every call makes one attempt.
func WithoutRetries() Option {
	return func(c *Client) error {
		c.retryMax = 0
		return nil
	}
}

// WithLogger logs each attempt (method, URL with the API key replaced by
// REDACTED, status) at debug level. The default is no logging.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) error {
		c.logger = l
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(ua, "\r\n") {
			return fmt.Errorf("%w: user agent must be one line", ErrInvalidOption)
		}
		c.userAgent = ua
		return nil
	}
}

// WithMaxResponseBytes bounds the size of an answer the client will read;
// a larger one fails with ErrResponseTooLarge. The default is
// DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) Option {
	return func(c *Client) error {
		if n <= 0 {
			return fmt.Errorf("%w: response limit must be positive", ErrInvalidOption)
		}
		c.maxBody = n
		return nil
	}
}

// WithClock sets the clock used to check times such as a checkout expiry.
// It is meant for tests.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOption)
		}
		c.now = now
		return nil
	}
}

// New returns a client. Without options it is a keyless client for
// CryptAPIURL; with WithAPIKey it is an API-key client for BlockBeeURL unless
// WithBaseURL says otherwise. New does no I/O. Nil options are skipped.
func New(opts ...Option) (*Client, error) {
	c := &Client{
		userAgent: "cryptapi-go/" + Version,
		maxBody:   DefaultMaxResponseBytes,
		retryMax:  DefaultRetryMax,
		waitMin:   DefaultRetryWaitMin,
		waitMax:   DefaultRetryWaitMax,
		now:       time.Now,
		infoTTL:   DefaultInfoCacheTTL,
		infoCache: &infoCache{entries: map[string]infoEntry{}},
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.apiKey != "" && c.base != nil && c.base.Scheme == "http" && !isLoopback(c.base.Hostname()) {
		return nil, fmt.Errorf("%w: the API key would travel unencrypted: use an https base URL", ErrInvalidOption)
	}
	if c.base == nil {
		def := CryptAPIURL
		if c.apiKey != "" {
			def = BlockBeeURL
		}
		c.base, _ = url.Parse(def)
	}
	if c.hc == nil {
		c.hc = newHTTPClient()
	}
	c.hc = withRedirectPolicy(c.hc)
	c.keyMatch = newKeyMatcher(c.apiKey)
	c.rc = c.retryClient(c.hc, c.retryMax)
	once, known := atMostOnceClient(c.hc)
	c.once, c.onceKnown = c.retryClient(once, 0), known
	return c, nil
}

// retryClient builds the retryablehttp client as a struct literal, so that
// nothing of its defaults (a logger that prints full URLs, an error handler
// that formats them) is used.
func (c *Client) retryClient(hc *http.Client, max int) *retryablehttp.Client {
	rc := &retryablehttp.Client{
		HTTPClient:   hc,
		RetryWaitMin: c.waitMin,
		RetryWaitMax: c.waitMax,
		RetryMax:     max,
		CheckRetry:   checkRetry,
		Backoff:      backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		// Logger stays nil: retryablehttp's own logging prints full URLs.
		RequestLogHook: c.onAttempt,
	}
	if c.logger != nil {
		rc.ResponseLogHook = c.logResponse
	}
	return rc
}

// isLoopback reports whether host is this machine: plain http is
// acceptable there (tests, a local proxy), nowhere else with a key.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPClient is a pooled client with a timeout. Unlike
// http.DefaultClient it keeps enough idle connections per host for a busy
// shop and never hangs forever.
func newHTTPClient() *http.Client {
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: t, Timeout: DefaultTimeout}
}

// BaseURL returns the base URL the client calls.
func (c *Client) BaseURL() string { return c.base.String() }

// HasAPIKey reports whether the client sends an API key.
func (c *Client) HasAPIKey() bool { return c.apiKey != "" }

// String describes the client without its API key.
func (c *Client) String() string {
	key := "none"
	if c.apiKey != "" {
		key = redacted
	}
	return fmt.Sprintf("cryptapi.Client{BaseURL: %q, APIKey: %s}", c.base.String(), key)
}

// GoString implements fmt.GoStringer without the API key.
func (c *Client) GoString() string { return c.String() }

// Format implements fmt.Formatter so that every verb (%v, %+v, %#v, %s,
// %d, ...) prints the redacted description.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// ---- requests ----

// request describes one call for do.
type request struct {
	op         string     // operation name for errors, e.g. "create"
	method     string     // GET unless set
	path       string     // path below the base URL, escaped, with trailing slash
	opts       any        // options struct encoded with go-querystring (may be nil)
	query      url.Values // values set on top of opts
	body       []byte     // JSON body for POST
	retry      bool       // safe to retry (reads, idempotent creates); false, the zero value, marks a call that moves money: at most once, no redirect, ErrOutcomeUnknown
	maxURL     int        // if > 0, refuse a URL longer than this
	needKey    bool       // refuse on a keyless client
	contentTyp string     // body content type, default application/json
	// stream, when set, decodes a 2xx answer from the body as it arrives
	// instead of reading it whole; it enforces its own size limits.
	stream func(status int, body io.Reader) error
}

type ctxKey int

const retryKey ctxKey = 1

// buildURL joins the base URL, the path and the encoded query, adding the
// API key. It is the one place request parameters are encoded.
func (c *Client) buildURL(r *request) (*url.URL, error) {
	q := url.Values{}
	if r.opts != nil {
		v, err := query.Values(r.opts)
		if err != nil {
			return nil, fmt.Errorf("cryptapi: %s: encoding parameters: %w", r.op, err)
		}
		q = v
	}
	for k, vs := range r.query {
		q[k] = vs
	}
	if c.apiKey != "" {
		q.Set("apikey", c.apiKey)
	}
	u := *c.base
	u.Path = c.base.Path + "/" + strings.TrimPrefix(r.path, "/")
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return &u, nil
}

// send sends r, retrying where r allows, reads the answer through the size
// limit, maps failures to *APIError and decodes success into out.
func (c *Client) send(ctx context.Context, r *request, out any) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidOption)
	}
	if r.needKey && c.apiKey == "" {
		return ErrAPIKeyRequired
	}
	u, err := c.buildURL(r)
	if err != nil {
		return err
	}
	full := u.String()
	if r.maxURL > 0 && len(full) > r.maxURL {
		return fmt.Errorf("%w: %d characters", ErrRequestTooLong, len(full))
	}
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	var body any
	if r.body != nil {
		body = r.body
	}
	caller := ctx
	ctx = context.WithValue(ctx, retryKey, r.retry)
	var guard *sendGuard
	if !r.retry {
		ctx, guard = withSendGuard(ctx)
		defer guard.cancel(nil)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, full, body)
	if err != nil {
		return fmt.Errorf("cryptapi: %s: building request: %w", r.op, c.scrub(err))
	}
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if r.body != nil {
		ct := r.contentTyp
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}

	rc := c.rc
	if !r.retry {
		rc = c.once
	}
	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil {
			drainClose(resp.Body)
		}
		if guard != nil && (guard.connected() || !c.onceKnown) {
			if errors.Is(context.Cause(ctx), errSecondConnection) && caller.Err() == nil {
				err = errSecondConnection // the transport tried to send the call again
			}
			return &outcomeError{op: r.op, err: c.failure(caller, err)}
		}
		return fmt.Errorf("cryptapi: %s: %w", r.op, c.failure(caller, err))
	}
	if r.stream != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		defer drainClose(resp.Body)
		if err := r.stream(resp.StatusCode, resp.Body); err != nil {
			if cerr := caller.Err(); cerr != nil {
				return fmt.Errorf("cryptapi: %s: %w", r.op, cerr)
			}
			return err
		}
		return nil
	}
	data, err := c.readBody(resp)
	if err != nil {
		if guard != nil {
			return &outcomeError{op: r.op, err: c.failure(caller, err)}
		}
		return fmt.Errorf("cryptapi: %s: %w", r.op, c.failure(caller, err))
	}
	err = c.decode(r.op, resp.StatusCode, data, out)
	if err != nil && guard != nil && !serviceRefused(data) {
		return &outcomeError{op: r.op, err: err}
	}
	return err
}

// failure is what a call reports for a transport or read error: the
// context's error once it is done, the scrubbed error otherwise.
func (c *Client) failure(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return c.scrub(err)
}

// serviceRefused reports whether an answer is the service's own refusal,
// {"status":"error",...}: the outcome of a money call is known then.
func serviceRefused(data []byte) bool {
	var env statusEnvelope
	if json.Unmarshal(bytes.TrimSpace(data), &env) != nil {
		return false
	}
	st, _ := env.Status.(string)
	return strings.EqualFold(st, "error")
}

// readBody reads at most maxBody bytes and always drains and closes.
func (c *Client) readBody(resp *http.Response) ([]byte, error) {
	defer drainClose(resp.Body)
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.maxBody {
		return nil, &APIError{
			StatusCode: resp.StatusCode,
			Message:    ErrResponseTooLarge.Error(),
			Body:       c.excerpt(data),
		}
	}
	return data, nil
}

// Is lets errors.Is(err, ErrResponseTooLarge) match the APIError readBody
// returns for an oversized answer.
func (e *APIError) Is(target error) bool {
	return target == ErrResponseTooLarge && e.Message == ErrResponseTooLarge.Error()
}

// drainClose reads a bounded remainder so the connection can be reused,
// then closes.
func drainClose(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	_ = b.Close()
}

// statusEnvelope is what every answer may carry.
type statusEnvelope struct {
	Status  any `json:"status"`
	Error   any `json:"error"`
	Message any `json:"message"`
	Detail  any `json:"detail"`
}

// statusReporter is implemented by answers that carry the service's
// status field, so that decode can see {"status":"error"} in the typed
// result instead of decoding the body a second time.
type statusReporter interface{ apiStatus() string }

// decode maps an answer to out or to an error. A success answer is decoded
// once; only failures pay for the envelope pass that extracts the message.
func (c *Client) decode(op string, status int, data []byte, out any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		msg := "response is not JSON"
		if len(trimmed) == 0 {
			msg = "empty response"
		}
		return &APIError{StatusCode: status, Message: msg, Body: c.excerpt(data)}
	}
	if status < 200 || status > 299 || out == nil {
		return c.envelopeError(status, trimmed)
	}
	var err error
	if u, ok := out.(json.Unmarshaler); ok {
		// Every answer type's UnmarshalJSON starts with a json.Unmarshal of
		// the whole body, which validates it; calling it directly saves
		// json.Unmarshal's own validation and skip passes over the body.
		err = u.UnmarshalJSON(trimmed)
	} else {
		err = json.Unmarshal(trimmed, out)
	}
	if err != nil {
		if e := c.envelopeError(status, trimmed); e != nil {
			return e
		}
		return &DecodeError{Op: op, StatusCode: status, Body: c.excerpt(data), Err: err}
	}
	if sr, ok := out.(statusReporter); ok && strings.EqualFold(sr.apiStatus(), "error") {
		return c.envelopeError(status, trimmed)
	}
	return nil
}

// envelopeError returns the *APIError a body describes: any non-2xx
// status, or {"status":"error"} whatever the status. It returns nil for a
// 2xx body that does not say error.
func (c *Client) envelopeError(status int, body []byte) error {
	var env statusEnvelope
	valid := body[0] != '{' || json.Unmarshal(body, &env) == nil
	st, _ := env.Status.(string)
	isErr := strings.EqualFold(st, "error")
	if !isErr && status >= 200 && status <= 299 {
		return nil
	}
	msg := firstText(env.Error, env.Message, env.Detail)
	switch {
	case msg != "":
	case !valid:
		msg = "response is not valid JSON"
	case isErr:
		msg = "the service reported an error without a message"
	default:
		msg = http.StatusText(status)
	}
	return &APIError{StatusCode: status, Message: truncate(c.redactText(msg), 300), Body: c.excerpt(body)}
}

// firstText returns the first non-empty textual value, flattening an error
// object such as {"error":{"message":"..."}} if the service sends one.
func firstText(vs ...any) string {
	for _, v := range vs {
		switch t := v.(type) {
		case string:
			if t != "" {
				return t
			}
		case map[string]any:
			if s := firstText(t["message"], t["error"], t["detail"]); s != "" {
				return s
			}
		case nil:
		default:
			b, _ := json.Marshal(t)
			if len(b) > 0 {
				return string(b)
			}
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// excerpt is a bounded copy of an answer with the API key removed. The key
// is removed from a window longer than the excerpt by the longest spelling
// of the key, and the result is cut afterwards: a key that starts before
// the cut lies wholly inside the window, so no piece of it can remain.
func (c *Client) excerpt(data []byte) []byte {
	window := maxExcerpt + c.keyMatch.maxLen()
	if len(data) > window {
		data = data[:window]
	}
	out := []byte(c.redactText(string(data)))
	if len(out) > maxExcerpt {
		out = out[:maxExcerpt]
	}
	return out
}

// redactText removes every spelling of the API key from s (see
// keyMatcher).
func (c *Client) redactText(s string) string { return c.keyMatch.redact(s) }

// redactURL returns u as text with the apikey parameter replaced.
func (c *Client) redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	cp := *u
	q := cp.Query()
	if q.Has("apikey") {
		q.Set("apikey", redacted)
		cp.RawQuery = q.Encode()
	}
	cp.User = nil
	return c.redactText(cp.String())
}

// scrub rewrites errors that can carry the request URL (net/http's
// *url.Error) so that the API key cannot reach an error string, a log line
// or *url.Error.URL.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		clean := ue.URL
		if p, perr := url.Parse(ue.URL); perr == nil {
			clean = c.redactURL(p)
		}
		inner := ue.Err
		if inner != nil {
			if msg := inner.Error(); c.redactText(msg) != msg {
				inner = redactedError{msg: c.redactText(msg), err: inner}
			}
		}
		return &url.Error{Op: ue.Op, URL: c.redactText(clean), Err: inner}
	}
	if msg := err.Error(); c.redactText(msg) != msg {
		return redactedError{msg: c.redactText(msg), err: err}
	}
	return err
}

// redactedError carries a message with the key removed. It does not unwrap
// (the original text holds the key), but errors.Is still matches the
// original chain, so sentinels such as context.DeadlineExceeded are found.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }

func (e redactedError) Is(target error) bool {
	return e.err != nil && errors.Is(e.err, target)
}

// ---- retries ----

// checkRetry retries transport errors and 429/502/503/504, only for calls
// marked safe to retry, and never after the context is done.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if ok, _ := ctx.Value(retryKey).(bool); !ok {
		return false, nil
	}
	if err != nil {
		return retryableTransportError(err), nil
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, nil
	}
	return false, nil
}

// retryableTransportError excludes errors that will not go away: a bad
// certificate, a malformed URL or too many redirects.
func retryableTransportError(err error) bool {
	if errors.Is(err, ErrRedirect) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"certificate", "unsupported protocol scheme", "stopped after", "invalid header"} {
		if strings.Contains(msg, s) {
			return false
		}
	}
	return true
}

// backoff is exponential with jitter between min and max; a Retry-After
// header on 429/503 is honoured but never waits longer than max.
func backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			if d > max {
				d = max
			}
			if d < min {
				d = min
			}
			return d
		}
	}
	if max <= 0 {
		return 0
	}
	d := min
	for i := 0; i < attempt && d < max; i++ {
		if d == 0 {
			d = time.Millisecond
		}
		d *= 2
	}
	if d > max {
		d = max
	}
	// Full jitter over the upper half keeps replicas from retrying in step.
	if half := int64(d / 2); half > 0 {
		d = time.Duration(half + rand.Int64N(half+1))
	}
	if d < min {
		d = min
	}
	return d
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// ---- logging ----

func (c *Client) logRequest(_ retryablehttp.Logger, r *http.Request, attempt int) {
	c.logger.LogAttrs(r.Context(), slog.LevelDebug, "cryptapi request",
		slog.String("method", r.Method),
		slog.String("url", c.redactURL(r.URL)),
		slog.Int("attempt", attempt+1))
}

func (c *Client) logResponse(_ retryablehttp.Logger, resp *http.Response) {
	ctx := context.Background()
	u := ""
	if resp.Request != nil {
		ctx = resp.Request.Context()
		u = c.redactURL(resp.Request.URL)
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "cryptapi response",
		slog.Int("status", resp.StatusCode),
		slog.String("url", u))
}

// parseTicker validates a user's ticker before any request.
func parseTicker(s string) (ticker.Ticker, error) {
	t, err := ticker.Parse(s)
	if err != nil {
		return t, fmt.Errorf("%w: %q", ErrInvalidTicker, truncate(s, 40))
	}
	return t, nil
}

func (a *Address) apiStatus() string        { return a.Status }
func (l *Logs) apiStatus() string           { return l.Status }
func (ci *CoinInfo) apiStatus() string      { return ci.Status }
func (q *QRCode) apiStatus() string         { return q.Status }
func (cv *Conversion) apiStatus() string    { return cv.Status }
func (e *Estimate) apiStatus() string       { return e.Status }
func (c *Checkout) apiStatus() string       { return c.Status }
func (d *Deposit) apiStatus() string        { return d.Status }
func (l *CheckoutLogs) apiStatus() string   { return l.Status }
func (l *DepositLogs) apiStatus() string    { return l.Status }
func (p *PayoutRequests) apiStatus() string { return p.Status }
func (p *pubKeyAnswer) apiStatus() string   { return p.Status }
