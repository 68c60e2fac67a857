package cryptapi

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

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

// checkRetry retries transport errors and 429/502/503/504, only for calls
// marked safe to retry, and never after the context is done.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if st := stateOf(ctx); st == nil || !st.retry {
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
