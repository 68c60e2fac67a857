package callback

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// DefaultMaxBodyBytes is the default limit on a callback body. Real
// callbacks are a few hundred bytes.
const DefaultMaxBodyBytes = 64 << 10

// DefaultKeyRefetchInterval is how often, at most, a Verifier with a key
// source asks the service for its key again: after a failed fetch, after a
// fetched key was refused by the key policy, or when a callback does not
// verify with the keys at hand (the key may have been rotated).
const DefaultKeyRefetchInterval = time.Minute

// VerifierOption configures a Verifier.
type VerifierOption interface {
	applyVerifier(*verifierConfig) error
}

type verifierFunc func(*verifierConfig) error

func (f verifierFunc) applyVerifier(c *verifierConfig) error { return f(c) }

type verifierConfig struct {
	publicURL    string
	keys         []*rsa.PublicKey
	pins         map[[32]byte]bool
	explicitPins bool
	trustFetched bool
	source       keySource
	official     keySource // WithBlockBeeKey
	refetch      time.Duration
	now          func() time.Time
	maxBody      int64
}

// pin adds a key to the pin set, replacing the default on first use.
func (c *verifierConfig) pinKey(pub *rsa.PublicKey) error {
	fp, ok := fingerprint(pub)
	if !ok {
		return fmt.Errorf("%w: nil or unusable public key", cryptapi.ErrInvalidOption)
	}
	c.clearDefault()
	if !c.pins[fp] {
		c.pins[fp] = true
		c.keys = append(c.keys, pub)
	}
	return nil
}

func (c *verifierConfig) clearDefault() {
	if !c.explicitPins {
		c.explicitPins = true
		c.keys = nil
		c.pins = map[[32]byte]bool{}
	}
}

// WithPublicKey makes the Verifier accept signatures by pub. The first key
// given with WithPublicKey, WithPinnedKeys or WithPinnedFingerprint replaces
// the default (the published key, PublishedKey); further ones add to the
// set. A key given this way is also pinned: a key fetched with
// WithKeySource that equals it is accepted.
func WithPublicKey(pub *rsa.PublicKey) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error { return c.pinKey(pub) })
}

// WithPinnedKeys is WithPublicKey for several keys, for example the
// published key and its announced successor during a rotation.
func WithPinnedKeys(pubs ...*rsa.PublicKey) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		if len(pubs) == 0 {
			return fmt.Errorf("%w: WithPinnedKeys needs at least one key", cryptapi.ErrInvalidOption)
		}
		for _, pub := range pubs {
			if err := c.pinKey(pub); err != nil {
				return err
			}
		}
		return nil
	})
}

// WithPinnedFingerprint pins a key by its fingerprint (hex SHA-256 of its
// DER form, see Fingerprint) without holding the key itself: a key fetched
// with WithKeySource is accepted when its fingerprint matches. It replaces
// the default pin like WithPublicKey, and needs WithKeySource.
func WithPinnedFingerprint(sha256Hex string) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		b, err := hex.DecodeString(strings.TrimSpace(sha256Hex))
		if err != nil || len(b) != 32 {
			return fmt.Errorf("%w: fingerprint must be 64 hex digits", cryptapi.ErrInvalidOption)
		}
		c.clearDefault()
		c.pins[[32]byte(b)] = true
		return nil
	})
}

// WithKeySource makes the Verifier fetch the service's key from the
// client's /pubkey/ operation (c.PublicKey), lazily: only when a callback
// does not verify with the keys already at hand. A fetched key is used only
// if it matches a pin (by default the published key) or WithTrustFetchedKey
// is given. It is cached: there is no network call per callback. A failed or
// refused fetch is tried again on a later callback at most once per
// refetch interval (WithKeyRefetchInterval), as is a new fetch when a
// callback fails to verify (the service may have rotated its key). Until a
// usable key is had, callbacks are refused, never acknowledged.
//
// The interval counts fetch attempts, not successes: at most one fetch
// starts per interval however callbacks behave. A fetch runs on its own,
// bounded by its own time-out; a callback whose client hangs up stops
// waiting for it but does not cancel it, and callbacks arriving meanwhile
// wait for the same fetch.
func WithKeySource(c *cryptapi.Client) VerifierOption {
	return verifierFunc(func(cfg *verifierConfig) error {
		if c == nil {
			return fmt.Errorf("%w: nil key source client", cryptapi.ErrInvalidOption)
		}
		cfg.source = c
		return nil
	})
}

// WithTrustFetchedKey accepts whatever key the key source (WithKeySource)
// serves, pinned or not. It trusts the TLS connection to the service and
// the client's base URL; use it when the service rotates keys and you
// prefer following the rotation to pinning.
func WithTrustFetchedKey() VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		c.trustFetched = true
		return nil
	})
}

// WithKeyRefetchInterval sets how often, at most, the key source is asked
// again (default DefaultKeyRefetchInterval).
func WithKeyRefetchInterval(d time.Duration) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: refetch interval must be positive", cryptapi.ErrInvalidOption)
		}
		c.refetch = d
		return nil
	})
}

// WithPublicURL sets the public base URL through which the service reaches
// this server, such as "https://shop.example" (or with a path prefix that a
// proxy strips, "https://shop.example/app"). The signed URL of a GET
// callback is this base followed by the raw request target
// (http.Request.RequestURI); it is never guessed from Host or
// X-Forwarded-* headers. Write it exactly as in the callback URL given at
// address creation. GET callbacks are refused (ErrPublicURLRequired)
// without it.
func WithPublicURL(base string) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: public URL must be an absolute http(s) URL", cryptapi.ErrInvalidOption)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(base, "?# \t\r\n") {
			return fmt.Errorf("%w: public URL must not carry credentials, a query or a fragment", cryptapi.ErrInvalidOption)
		}
		c.publicURL = strings.TrimSuffix(base, "/")
		return nil
	})
}

// WithMaxBodyBytes sets the largest POST body the Verifier reads (default
// DefaultMaxBodyBytes); a larger one fails with ErrBodyTooLarge, and a
// handler made by NewHandler with this Verifier answers it with 413.
func WithMaxBodyBytes(n int64) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		if n <= 0 {
			return fmt.Errorf("%w: body limit must be positive", cryptapi.ErrInvalidOption)
		}
		c.maxBody = n
		return nil
	})
}

// Verifier checks the signatures of callbacks and parses them. Create it
// with NewVerifier; it is safe for concurrent use.
//
// Key policy: the pinned keys (by default the published key) are always
// accepted. With WithKeySource, a key fetched from the service is accepted
// as well if it is pinned or WithTrustFetchedKey is given. There is no
// configuration in which a callback passes without a valid signature.
type Verifier struct {
	publicURL    string
	static       []*rsa.PublicKey
	pins         map[[32]byte]bool
	trustFetched bool
	maxBody      int64
	fetched      *keyCache // nil without WithKeySource
}

// NewVerifier returns a Verifier. Without options it accepts signatures by
// the published key and verifies POST callbacks only; add WithPublicURL for
// GET callbacks. Nil options are skipped.
func NewVerifier(opts ...VerifierOption) (*Verifier, error) {
	published := PublishedKey()
	fp, _ := fingerprint(published)
	c := &verifierConfig{
		keys:    []*rsa.PublicKey{published},
		pins:    map[[32]byte]bool{fp: true},
		refetch: DefaultKeyRefetchInterval,
		now:     time.Now,
		maxBody: DefaultMaxBodyBytes,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.applyVerifier(c); err != nil {
			return nil, err
		}
	}
	if c.official != nil {
		if c.source != nil || c.trustFetched {
			return nil, fmt.Errorf("%w: WithBlockBeeKey cannot be combined with WithKeySource or WithTrustFetchedKey", cryptapi.ErrInvalidOption)
		}
		// The official host's key is trusted as served: it comes over
		// verified TLS from that host alone.
		c.source, c.trustFetched = c.official, true
	}
	if len(c.keys) == 0 && c.source == nil {
		return nil, fmt.Errorf("%w: a pinned fingerprint without a key needs WithKeySource", cryptapi.ErrInvalidOption)
	}
	if c.trustFetched && c.source == nil {
		return nil, fmt.Errorf("%w: WithTrustFetchedKey needs WithKeySource", cryptapi.ErrInvalidOption)
	}
	v := &Verifier{
		publicURL:    c.publicURL,
		static:       c.keys,
		pins:         c.pins,
		trustFetched: c.trustFetched,
		maxBody:      c.maxBody,
	}
	if c.source != nil {
		v.fetched = &keyCache{
			source:   c.source,
			accept:   v.acceptFetched,
			interval: c.refetch,
			timeout:  keyFetchTimeout,
			now:      c.now,
		}
	}
	return v, nil
}

// PublicURL returns the public base URL given with WithPublicURL, without
// a trailing slash, or "" when there is none: then GET callbacks cannot be
// verified, and a handler that expects them can only refuse.
func (v *Verifier) PublicURL() string { return v.publicURL }

// acceptFetched is the key policy for fetched keys: pinned, or trusted by
// WithTrustFetchedKey.
func (v *Verifier) acceptFetched(pub *rsa.PublicKey) error {
	fp, ok := fingerprint(pub)
	if !ok {
		return errors.New("the key source returned an unusable key")
	}
	if v.trustFetched || v.pins[fp] {
		return nil
	}
	return ErrKeyNotTrusted
}

// Verify checks signatureB64 over signed with the keys the policy accepts,
// fetching the service's key first if WithKeySource asks for it and no key
// at hand verifies. It is the building block of the request methods, for
// callers that read the signed bytes themselves.
func (v *Verifier) Verify(ctx context.Context, signed []byte, signatureB64 string) error {
	if signatureB64 == "" {
		return ErrMissingSignature
	}
	before, keys := v.keys()
	err := verifyAny(keys, signed, signatureB64)
	if err == nil {
		return nil
	}
	var cause error
	if v.fetched != nil {
		// Fetch if due, or wait for the fetch under way; another caller
		// may also have fetched a key since the snapshot above.
		latest := v.fetched.refresh(ctx)
		if latest != nil && latest != before {
			e := verifyAny([]*rsa.PublicKey{latest}, signed, signatureB64)
			if e == nil {
				return nil
			}
			err = e
		}
		_, keys = v.keys()
		_, cause = v.fetched.current()
	}
	if len(keys) == 0 {
		if cause != nil {
			return fmt.Errorf("%w: %w", ErrNoPublicKey, cause)
		}
		return ErrNoPublicKey
	}
	if errors.Is(cause, ErrKeyNotTrusted) {
		return fmt.Errorf("%w (%w)", err, ErrKeyNotTrusted)
	}
	return err
}

// keys returns the accepted fetched key (or nil), and all keys to try:
// that key first, then the pinned keys.
func (v *Verifier) keys() (*rsa.PublicKey, []*rsa.PublicKey) {
	if v.fetched == nil {
		return nil, v.static
	}
	f, _ := v.fetched.current()
	if f == nil {
		return nil, v.static
	}
	keys := make([]*rsa.PublicKey, 0, len(v.static)+1)
	return f, append(append(keys, f), v.static...)
}

// message is what a callback request carries: the body (POST), the query
// string and the body's content type.
type message struct {
	get         bool
	body        []byte
	rawQuery    string
	contentType string
}

// requestTarget is the raw request target as received. Requests built with
// http.NewRequest (not received by a server) have no RequestURI; their
// URL's encoding stands in.
func requestTarget(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}

func queryOf(target string) string {
	_, q, _ := strings.Cut(target, "?")
	return q
}

// bodyReader says how a POST body is read: through limit and, when w is
// set, within timeout.
type bodyReader struct {
	w       http.ResponseWriter
	limit   int64
	timeout time.Duration
}

// read reads what a callback request carries, without verifying it. The
// body is read through br and put back on r, so a later reader sees it.
func read(r *http.Request, br bodyReader) (message, []byte, error) {
	switch r.Method {
	case http.MethodGet:
		target := requestTarget(r)
		return message{get: true, rawQuery: queryOf(target)}, nil, nil
	case http.MethodPost:
		body, err := readBody(r, br)
		if err != nil {
			return message{}, nil, err
		}
		m := message{body: body, rawQuery: queryOf(requestTarget(r)), contentType: r.Header.Get("Content-Type")}
		return m, body, nil
	}
	return message{}, nil, ErrMethod
}

func readBody(r *http.Request, br bodyReader) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	if r.ContentLength > br.limit {
		return nil, ErrBodyTooLarge
	}
	var body []byte
	var err error
	if br.w != nil && br.timeout > 0 {
		body, err = readWithin(br.w, r.Body, br.limit, bodyTimeout(r, br.timeout))
		if errors.Is(err, ErrBodyTimeout) {
			return nil, err // the body may still be in use: leave it
		}
	} else {
		body, err = readLimited(r.Body, br.limit)
	}
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// readLimited reads body whole, up to limit bytes.
func readLimited(body io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, io.NopCloser(body), limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, ErrBodyTooLarge
		}
		if isTimeout(err) {
			return nil, ErrBodyTimeout
		}
		return nil, fmt.Errorf("callback: reading the request body: %w", err)
	}
	return b, nil
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bodyTimeout returns timeout, or the ReadTimeout of the server that
// received r when that is shorter. The read deadline readWithin sets
// replaces the one the server set from its ReadTimeout, so the server's
// bound must be kept here or a slow body would be waited for longer than
// the server allows.
func bodyTimeout(r *http.Request, timeout time.Duration) time.Duration {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 && srv.ReadTimeout < timeout {
		return srv.ReadTimeout
	}
	return timeout
}

// readWithin reads body within timeout: with a read deadline on the
// connection where w supports one (cleared once the body is read), else
// by waiting for a reading goroutine no longer than timeout. In that case
// the goroutine is left reading after a time-out, until the server ends
// the read.
func readWithin(w http.ResponseWriter, body io.Reader, limit int64, timeout time.Duration) ([]byte, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
		b, err := readLimited(body, limit)
		_ = rc.SetReadDeadline(time.Time{})
		return b, err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := readLimited(body, limit)
		done <- result{b, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case res := <-done:
		return res.b, res.err
	case <-t.C:
		return nil, ErrBodyTimeout
	}
}

// verify reads r and checks its signature: for GET the public URL plus the
// raw request target, for POST the raw body.
func (v *Verifier) verify(r *http.Request, br bodyReader) (message, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return message{}, ErrMethod
	}
	if r.Method == http.MethodGet && v.publicURL == "" {
		return message{}, ErrPublicURLRequired
	}
	sig := r.Header.Get(SignatureHeader)
	if sig == "" {
		return message{}, ErrMissingSignature
	}
	m, signed, err := read(r, br)
	if err != nil {
		return message{}, err
	}
	if m.get {
		signed = []byte(v.publicURL + requestTarget(r))
	}
	if err := v.Verify(r.Context(), signed, sig); err != nil {
		return message{}, err
	}
	return m, nil
}

// Payment verifies a payment callback (pending or confirmed) and parses it.
// Nothing is parsed before the signature has been verified.
func (v *Verifier) Payment(r *http.Request) (*Payment, error) {
	return v.payment(r, bodyReader{limit: v.maxBody})
}

// ReadPayment is Payment for a handler of one's own: it also bounds the
// time the body of a POST callback may take to arrive. A body still
// arriving after timeout is refused with ErrBodyTimeout (StatusCode gives
// 408), so a client that trickles its body cannot hold the handler. It
// sets a read deadline on the connection through w where the server
// supports one; see WithReadTimeout for the fallback. timeout <= 0 means
// DefaultReadTimeout.
func (v *Verifier) ReadPayment(w http.ResponseWriter, r *http.Request, timeout time.Duration) (*Payment, error) {
	if timeout <= 0 {
		timeout = DefaultReadTimeout
	}
	return v.payment(r, bodyReader{w: w, limit: v.maxBody, timeout: timeout})
}

func (v *Verifier) payment(r *http.Request, br bodyReader) (*Payment, error) {
	return verifyThenParse(v, r, br, parsePayment)
}

// CheckoutIPN verifies a checkout payment notification and parses it.
func (v *Verifier) CheckoutIPN(r *http.Request) (*CheckoutIPN, error) {
	return verifyThenParse(v, r, bodyReader{limit: v.maxBody}, parseCheckoutIPN)
}

// DepositIPN verifies a checkout deposit notification and parses it.
func (v *Verifier) DepositIPN(r *http.Request) (*DepositIPN, error) {
	return verifyThenParse(v, r, bodyReader{limit: v.maxBody}, parseDepositIPN)
}

// verifyThenParse checks the request's signature and only then parses the
// signed fields (and the custom query) with parse.
func verifyThenParse[T any](v *Verifier, r *http.Request, br bodyReader, parse func(source) (*T, error)) (*T, error) {
	m, err := v.verify(r, br)
	if err != nil {
		return nil, err
	}
	src, err := m.source()
	if err != nil {
		return nil, err
	}
	return parse(src)
}

// ParseUnverified parses a payment callback WITHOUT checking its signature.
// Anyone can send such a request: use it only in tests and for debugging,
// never to decide that a payment was made. Use Verifier.Payment instead.
func ParseUnverified(r *http.Request) (*Payment, error) {
	m, _, err := read(r, bodyReader{limit: DefaultMaxBodyBytes})
	if err != nil {
		return nil, err
	}
	src, err := m.source()
	if err != nil {
		return nil, err
	}
	return parsePayment(src)
}
