package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

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
	// create, when its options are set, is the query of a create call,
	// encoded by hand (createQuery.write) instead of from opts and query.
	create createQuery
}

type ctxKey int

// callKey holds, in a request's context, the *callState of the call.
const callKey ctxKey = 1

// callState is what the retry policy, the redirect policy and the attempt
// counter need to know about one call, carried in its context as one
// value.
type callState struct {
	retry    bool // safe to retry; false marks a call that moves money
	attempts int  // attempts made so far, set by onAttempt
}

// stateOf returns the call's state, or nil outside a call. A request
// without one is treated as a call that moves money: not retried, not
// redirected.
func stateOf(ctx context.Context) *callState {
	st, _ := ctx.Value(callKey).(*callState)
	return st
}

// requestURL returns the full URL of r. A create request, whose
// parameters have a hand-written encoder, is written in one buffer when
// its path needs no escaping; any other request goes through buildURL.
// Both give the same text (FuzzCreateQueryMatchesPlain).
func (c *Client) requestURL(r *request) (string, error) {
	if r.create.o == nil {
		u, err := c.buildURL(r)
		if err != nil {
			return "", err
		}
		return u.String(), nil
	}
	path := strings.TrimPrefix(r.path, "/")
	var b strings.Builder
	if !plainPath(path) {
		r.create.write(&b, c.apiKey)
		return c.joinURL(path, b.String()).String(), nil
	}
	// Room for the escaped callback URL (up to three bytes per byte) and
	// the other parameters, within the service's limit.
	b.Grow(min(len(c.prefix)+len(path)+3*len(r.create.callback)+len(r.create.address)+len(c.apiKey)+128, MaxCreateRequestLen+64))
	b.WriteString(c.prefix)
	b.WriteByte('/')
	b.WriteString(path)
	b.WriteByte('?')
	r.create.write(&b, c.apiKey)
	return b.String(), nil
}

// plainPath reports whether p is written the same escaped or not: only
// letters, digits, '-', '.', '_', '~' and '/'.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; !unreservedByte(c) && c != '/' {
			return false
		}
	}
	return true
}

// unreservedByte reports whether c is an unreserved character of RFC
// 3986, which url.QueryEscape and url.PathEscape leave as it is.
func unreservedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// writeQueryEscape writes url.QueryEscape(s) to b.
func writeQueryEscape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case unreservedByte(c):
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// queryWriter writes "key=value" pairs joined by '&', each escaped as
// url.Values.Encode escapes it.
type queryWriter struct {
	b     *strings.Builder
	first bool // nothing written yet
}

func (w *queryWriter) param(key, value string) {
	if !w.first {
		w.b.WriteByte('&')
	}
	w.first = false
	writeQueryEscape(w.b, key)
	w.b.WriteByte('=')
	writeQueryEscape(w.b, value)
}

// flag writes key=1 when on, as go-querystring encodes a bool with the
// int and omitempty options.
func (w *queryWriter) flag(key string, on bool) {
	if on {
		w.param(key, "1")
	}
}

// buildURL joins the base URL, the path and the encoded query, adding the
// API key. It is the one place request parameters are encoded with
// go-querystring; requestURL uses it for every request but the create
// call (whose create field it ignores).
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
	return c.joinURL(r.path, q.Encode()), nil
}

// joinURL returns the base URL with path below it and the encoded query.
func (c *Client) joinURL(path, rawQuery string) *url.URL {
	u := *c.base
	u.Path = c.base.Path + "/" + strings.TrimPrefix(path, "/")
	u.RawPath = ""
	u.RawQuery = rawQuery
	return &u
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
	full, err := c.requestURL(r)
	if err != nil {
		return err
	}
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
	caller := ctx // carries the call's state, set by do
	var guard *sendGuard
	if !r.retry {
		ctx, guard = withSendGuard(ctx)
		defer guard.cancel(nil)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, full, body)
	if err != nil {
		return fmt.Errorf("cryptapi: %s: building request: %w", r.op, c.scrub(err))
	}
	// One backing array for both header values, each slice capped at its
	// length (as http.Header.Clone does): two headers, one allocation.
	hv := make([]string, 2)
	hv[0], hv[1] = "application/json", c.userAgent
	req.Header["Accept"] = hv[0:1:1]
	if c.userAgent != "" {
		req.Header["User-Agent"] = hv[1:2:2]
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
	data, err := readLimited(resp.Body, resp.ContentLength, c.maxBody)
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

// maxPrealloc bounds the buffer readLimited sizes from a Content-Length
// before any byte arrives, so that a header alone cannot claim memory.
const maxPrealloc = 1 << 20

// readLimited returns what io.ReadAll(io.LimitReader(r, limit+1)) returns
// (FuzzReadLimitedMatchesReadAll): at most limit+1 bytes, so that a
// longer answer shows as longer than limit, and the data read before an
// error. It reads into a buffer sized from hint (the Content-Length, or
// -1) when the hint is plausible, so an answer of announced length is
// read without growing and copying the buffer. A limit of
// math.MaxInt64 is no limit.
func readLimited(r io.Reader, hint, limit int64) ([]byte, error) {
	size := int64(512)
	if hint >= 0 && hint < maxPrealloc {
		size = hint + 1 // room to see the end without growing
	}
	if limit < size {
		size = limit + 1
	}
	b := make([]byte, 0, size)
	for {
		room := int64(cap(b) - len(b))
		if rem := limit - int64(len(b)); rem < room-1 {
			if rem < 0 {
				return b, nil // limit+1 bytes read
			}
			room = rem + 1
		}
		if room == 0 {
			b = append(b, 0)[:len(b)]
			continue
		}
		n, err := r.Read(b[len(b) : len(b)+int(room)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
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
