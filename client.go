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
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

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
		infoCache: newInfoCache(),
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
