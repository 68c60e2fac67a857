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

// parseTicker validates a user's ticker before any request.
func parseTicker(s string) (ticker.Ticker, error) {
	t, err := ticker.Parse(s)
	if err != nil {
		return t, fmt.Errorf("%w: %q", ErrInvalidTicker, truncate(s, 40))
	}
	return t, nil
}
