package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// buildURL joins the base URL, the path and the encoded query, adding the
// API key. It is the one place request parameters are encoded, with
// go-querystring.
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
	limit := c.maxBody
	if limit < math.MaxInt64 {
		limit++ // one byte more shows an answer longer than maxBody
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
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
