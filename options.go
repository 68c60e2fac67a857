package cryptapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Defaults used by New.
const (
	DefaultRetryMax         = 3
	DefaultRetryWaitMin     = 500 * time.Millisecond
	DefaultRetryWaitMax     = 10 * time.Second
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
)

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

// Clock tells the time. Every WithClock option of this module (here, in
// callback, invoice and cryptapitest) takes a Clock, so one clock, such as a
// *cryptapitest.FakeClock, can drive them all.
type Clock interface {
	Now() time.Time
}

// ClockFunc turns a function into a Clock:
// WithClock(ClockFunc(func() time.Time { return t })).
type ClockFunc func() time.Time

// Now returns f().
func (f ClockFunc) Now() time.Time { return f() }

// WithClock sets the clock used to check times such as a checkout expiry.
// It is meant for tests. A nil clock is an error (ErrInvalidOption).
func WithClock(clock Clock) Option {
	return func(c *Client) error {
		if f, ok := clock.(ClockFunc); clock == nil || ok && f == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOption)
		}
		c.now = clock.Now
		return nil
	}
}
