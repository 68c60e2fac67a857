package cryptapitest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/shopspring/decimal"
)

// ErrClosed is returned by the methods of a closed Server.
var ErrClosed = errors.New("cryptapitest: server closed")

// DefaultRetrySchedule returns how long the server waits before each retry
// of a delivery the merchant did not acknowledge with "*ok*": 1, 5, 15 and
// 30 minutes, then 1, 2, 6, 12 and 24 hours. After the last wait it gives
// up; the payment stays "sent".
func DefaultRetrySchedule() []time.Duration {
	return []time.Duration{
		time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	}
}

// DefaultDeliveryTimeout bounds one delivery attempt (connect, send, read
// the answer).
const DefaultDeliveryTimeout = 10 * time.Second

// maxAnswer bounds how much of a merchant's answer is read and recorded.
const maxAnswer = 64 << 10

// Server is an in-process fake of the forwarding service. Create it with
// NewServer, point a client at URL, and stop it with Close. All methods are
// safe for concurrent use.
type Server struct {
	ts       *httptest.Server
	key      *rsa.PrivateKey
	pubPEM   string
	apiKey   string
	clock    cryptapi.Clock
	schedule []time.Duration
	timeout  time.Duration
	coins    map[string]*Coin // by ticker key, "btc", "trc20_usdt"
	hc       *http.Client
	ownHC    bool
	seed     uint64
	currency string         // of checkout payments, lower case
	started  time.Time      // prices_updated
	hook     func(Delivery) // WithDeliveryHook, or nil

	priceMu sync.RWMutex // guards the Prices of coins (SetPrice)

	mu            sync.Mutex
	counter       uint64
	setups        map[string]*setup // ticker key + "\x00" + callback URL
	byAddress     map[string]*setup // ticker key + "\x00" + address_in
	dashboard     map[string]string // API-key form: default destination per ticker key
	txs           map[string]*payment
	ignored       map[string]bool // txids of payments below the minimum
	history       int             // WithHistoryLimit; 0 keeps everything
	setupOrder    []*setup        // addresses, oldest first
	ignoredOrder  []string        // keys of ignored, oldest first
	checkoutOrder []string        // keys of checkouts, oldest first
	checkouts     map[string]*checkout
	payments      []*payment
	payouts       []Payout
	po            *payoutBook // payout wallets and payouts (payouts.go)
	deliveries    []Delivery
	requests      []Request
	queue         jobQueue          // deliveries waiting for an attempt
	groups        map[string][]*job // unfinished deliveries by group, in order
	jobSeq        uint64
	inFlight      int           // attempts running
	changed       chan struct{} // closed and replaced on every state change
	closed        bool

	wake      chan struct{}
	stop      chan struct{}
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	unsub     func()
}

// config collects options before the server starts.
type config struct {
	apiKey   string
	coins    map[string]Coin
	clock    cryptapi.Clock
	schedule []time.Duration
	timeout  time.Duration
	key      *rsa.PrivateKey
	hc       *http.Client
	seed     uint64
	currency string
	hook     func(Delivery)
	history  int
	lns      []net.Listener
	errs     []error
}

// Option configures a Server.
type Option func(*config)

// WithAPIKey makes the server the API-key form of the service:
// every operation requires apikey=key, and a missing or different key is
// answered with HTTP 401. Without it the server is the keyless form,
// where checkout, deposit and payout operations fail.
func WithAPIKey(key string) Option {
	return func(c *config) {
		if key == "" {
			c.errs = append(c.errs, errors.New("WithAPIKey: empty key"))
			return
		}
		c.apiKey = key
	}
}

// WithCoin adds a coin or token, or replaces a default one. ticker is
// "btc", "trc20_usdt" or "trc20/usdt". Start from DefaultCoins to change
// one property of a default coin. Chain may be left empty for tokens on
// erc20, bep20, polygon and trc20 and for the default native coins;
// Decimals 0 means 8.
func WithCoin(ticker string, coin Coin) Option {
	return func(c *config) {
		t, err := parseTicker(ticker)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithCoin(%q): %w", ticker, err))
			return
		}
		c.coins[t.Key()] = coin
	}
}

// WithClock sets the clock used for timestamps and for retry times. Use a
// *FakeClock to make retries due in tests without waiting: advancing it
// wakes the delivery engine, and Flush then waits for the deliveries that
// became due.
func WithClock(clock cryptapi.Clock) Option {
	return func(c *config) {
		if clock == nil {
			c.errs = append(c.errs, errors.New("WithClock: nil clock"))
			return
		}
		c.clock = clock
	}
}

// WithRetrySchedule sets the waits before each retry of an unacknowledged
// delivery (see DefaultRetrySchedule). An empty schedule means one attempt
// per delivery. Negative waits are an error.
func WithRetrySchedule(waits []time.Duration) Option {
	return func(c *config) {
		for _, d := range waits {
			if d < 0 {
				c.errs = append(c.errs, errors.New("WithRetrySchedule: negative wait"))
				return
			}
		}
		c.schedule = append([]time.Duration{}, waits...)
	}
}

// WithDeliveryTimeout bounds each delivery attempt (default
// DefaultDeliveryTimeout). A merchant that does not answer in time counts
// as a failed attempt.
func WithDeliveryTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.errs = append(c.errs, errors.New("WithDeliveryTimeout: timeout must be positive"))
			return
		}
		c.timeout = d
	}
}

// WithSigningKey makes the server sign callbacks with key instead of a
// freshly generated 1024-bit key (useful to share one key across many
// servers, or to pin a key in a merchant's configuration).
func WithSigningKey(key *rsa.PrivateKey) Option {
	return func(c *config) {
		if key == nil {
			c.errs = append(c.errs, errors.New("WithSigningKey: nil key"))
			return
		}
		c.key = key
	}
}

// WithHTTPClient sets the client used to deliver callbacks and IPNs, for
// example an httptest TLS server's Client(). Its Timeout is left as it is;
// WithDeliveryTimeout still bounds each attempt.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) {
		if hc == nil {
			c.errs = append(c.errs, errors.New("WithHTTPClient: nil client"))
			return
		}
		c.hc = hc
	}
}

// WithSeed changes the seed of the generated addresses, transaction
// hashes and identifiers (default 1). Two servers with the same seed
// generate the same sequence.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// WithListener makes the server accept connections on l instead of a new
// listener on a random port of 127.0.0.1, for example one on a fixed
// address. The server speaks plain HTTP on it; URL is "http://" followed
// by l.Addr(). The server owns l from the call of NewServer on: Close
// closes it, and so does NewServer when it panics on an invalid option.
// Giving more than one listener is an error.
func WithListener(l net.Listener) Option {
	return func(c *config) {
		if l == nil {
			c.errs = append(c.errs, errors.New("WithListener: nil listener"))
			return
		}
		c.lns = append(c.lns, l)
		if len(c.lns) == 2 {
			c.errs = append(c.errs, errors.New("WithListener: more than one listener"))
		}
	}
}

// WithDeliveryHook makes the server call hook with each delivery attempt
// of a callback or IPN, once the attempt is recorded (Deliveries already
// includes it), to watch deliveries as they happen. hook gets its own
// copy of the Delivery. It runs on the goroutine that made the attempt,
// never while the server holds its lock, so it may call the server's
// other methods, except Flush and Close. Calls for different payments may
// run at the same time; the deliveries of one payment, or of one hosted
// page, are reported in order, because the next one is not attempted
// before hook returns.
//
// Flush waits for the hook calls of the deliveries it waits for, and Close
// for every call in progress, so hook must not block for long, and must
// not call Flush or Close: they would wait for the hook itself.
func WithDeliveryHook(hook func(Delivery)) Option {
	return func(c *config) {
		if hook == nil {
			c.errs = append(c.errs, errors.New("WithDeliveryHook: nil hook"))
			return
		}
		c.hook = hook
	}
}

// NewServer starts a fake service on 127.0.0.1 (or on the listener given
// with WithListener), like httptest.NewServer. It panics if an option is
// invalid or the server cannot start. Call Close when done.
func NewServer(opts ...Option) *Server {
	cfg := &config{
		coins:    DefaultCoins(),
		clock:    realClock{},
		schedule: DefaultRetrySchedule(),
		timeout:  DefaultDeliveryTimeout,
		seed:     1,
		currency: "usd",
	}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	coins := make(map[string]*Coin, len(cfg.coins))
	for k, c := range cfg.coins {
		c, err := normalizeCoin(k, c)
		if err != nil {
			cfg.errs = append(cfg.errs, err)
			continue
		}
		coins[k] = c
	}
	if len(cfg.errs) > 0 {
		for _, l := range cfg.lns {
			_ = l.Close()
		}
		panic("cryptapitest: " + errors.Join(cfg.errs...).Error())
	}
	key := cfg.key
	if key == nil {
		var err error
		// 1024 bits, as the real service. Go refuses only keys below 1024
		// bits (GODEBUG rsa1024min), so this needs no setting.
		key, err = rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			panic("cryptapitest: generating the signing key: " + err.Error())
		}
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		panic("cryptapitest: encoding the public key: " + err.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		key:       key,
		pubPEM:    string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		apiKey:    cfg.apiKey,
		clock:     cfg.clock,
		schedule:  cfg.schedule,
		timeout:   cfg.timeout,
		coins:     coins,
		hc:        cfg.hc,
		seed:      cfg.seed,
		currency:  cfg.currency,
		hook:      cfg.hook,
		history:   cfg.history,
		started:   cfg.clock.Now(),
		setups:    map[string]*setup{},
		byAddress: map[string]*setup{},
		dashboard: map[string]string{},
		txs:       map[string]*payment{},
		ignored:   map[string]bool{},
		checkouts: map[string]*checkout{},
		changed:   make(chan struct{}),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
	}
	if s.hc == nil {
		s.ownHC = true
		s.hc = &http.Client{
			Transport: &http.Transport{
				DialContext: (&net.Dialer{Timeout: cfg.timeout}).DialContext,
				// Deliveries reuse connections, as many as run at once.
				MaxIdleConns:        maxInFlight,
				MaxIdleConnsPerHost: maxInFlight,
				IdleConnTimeout:     90 * time.Second,
			},
			// The service calls the callback URL itself, not where it
			// redirects to.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if fc, ok := cfg.clock.(*FakeClock); ok {
		s.unsub = fc.subscribe(s.kick)
	}
	if len(cfg.lns) == 1 {
		// As NewUnstartedServer does, without its listener.
		s.ts = &httptest.Server{Listener: cfg.lns[0], Config: &http.Server{Handler: s.Handler()}}
	} else {
		s.ts = httptest.NewUnstartedServer(s.Handler())
	}
	s.ts.Start()
	s.wg.Add(1)
	go s.run()
	return s
}

// URL returns the base URL of the server, for cryptapi.WithBaseURL.
func (s *Server) URL() string { return s.ts.URL }

// Handler returns the handler that answers the service's operations, the
// one the server serves at URL. Serve it from an HTTP server of your own
// to put the fake on another address or next to other routes; the
// requests it answers are recorded in Requests like the others, and the
// payment_url of a hosted page points at the Host the request was sent
// to. After Close it answers every request with HTTP 503.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// PublicKey returns the key that verifies the server's x-ca-signature
// headers. The server also publishes it at /pubkey/.
func (s *Server) PublicKey() *rsa.PublicKey { return &s.key.PublicKey }

// PublicKeyPEM returns PublicKey as PKIX PEM text, as /pubkey/ serves it.
func (s *Server) PublicKeyPEM() string { return s.pubPEM }

// APIKey returns the key the server requires, or "" for a keyless server.
func (s *Server) APIKey() string { return s.apiKey }

// Now returns the server's current time (its clock's).
func (s *Server) Now() time.Time { return s.clock.Now() }

// Close stops the delivery engine, abandoning deliveries in flight, and
// shuts the HTTP server down, closing its listener. It waits for the
// calls of the delivery hook in progress (WithDeliveryHook). Every
// goroutine the server started has ended when Close returns. Close is
// idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.signalLocked()
		s.mu.Unlock()
		if s.unsub != nil {
			s.unsub()
		}
		close(s.stop)
		s.cancel()
		s.wg.Wait()
		s.ts.Close()
		if s.ownHC {
			s.hc.CloseIdleConnections()
		}
	})
}

// signalLocked wakes everyone waiting for a state change (Flush). s.mu
// must be held.
func (s *Server) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ---- inspection ----

// Request is one request the server answered.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path, for example "/btc/create/".
	Path string
	// Query is the parsed query string, apikey included.
	Query url.Values
	// Status is the HTTP status the server answered.
	Status int
}

// Requests returns the requests the server has answered, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Query = cloneValues(r.Query)
		out[i] = r
	}
	return out
}

// Delivery is one attempt to deliver a callback or an IPN to the merchant.
type Delivery struct {
	// Kind is "callback" for payment callbacks and "ipn" for checkout and
	// deposit notifications.
	Kind string
	// Pending is true for a pending (unconfirmed) payment callback.
	Pending bool
	// Method is GET or POST.
	Method string
	// URL is the full URL that was called, custom parameters included.
	URL string
	// Header holds the request headers sent, x-ca-signature included.
	Header http.Header
	// Body is the request body (empty for GET).
	Body []byte
	// StatusCode is the merchant's HTTP status; 0 when no answer came.
	StatusCode int
	// Response is the merchant's answer body (at most 64 KiB).
	Response string
	// Err describes a transport failure (refused, timed out); "" otherwise.
	Err string
	// OK tells whether the merchant acknowledged with "*ok*" and HTTP 200.
	OK bool
	// At is the server's time of the attempt.
	At time.Time
}

// Deliveries returns every delivery attempt so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.deliveries))
	for i, d := range s.deliveries {
		d.Header = d.Header.Clone()
		d.Body = append([]byte(nil), d.Body...)
		out[i] = d
	}
	return out
}

// Transfer is one output of a forwarding transaction.
type Transfer struct {
	// Address is the destination.
	Address string
	// Value is the amount sent to it, in coin units.
	Value decimal.Decimal
}

// Payment is a payment the server accepted (at or above the minimum), as
// the server sees it.
type Payment struct {
	// Ticker is the coin, "btc" or "trc20_usdt".
	Ticker string
	// UUID identifies the payment in callbacks and logs.
	UUID string
	// AddressIn is the address that was paid.
	AddressIn string
	// CallbackURL is the callback URL of the address.
	CallbackURL string
	// TxIDIn is the customer's transaction.
	TxIDIn string
	// TxIDOut is the forwarding transaction; "" until forwarded.
	TxIDOut string
	// Value is the amount received, in coin units.
	Value decimal.Decimal
	// Fee is the service fee deducted when forwarding.
	Fee decimal.Decimal
	// Forwarded is Value minus Fee once forwarded, else zero.
	Forwarded decimal.Decimal
	// Outputs are the forwarding transaction's outputs, split by share.
	Outputs []Transfer
	// Confirmations is the number of confirmations so far.
	Confirmations int
	// Result is "pending", "sent" or "done", as in the logs.
	Result string
}

// Payments returns the accepted payments, oldest first. Payments below the
// minimum are not among them.
func (s *Server) Payments() []Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Payment, len(s.payments))
	for i, p := range s.payments {
		out[i] = p.public()
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// ---- clocks ----

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// FakeClock is a cryptapi.Clock that only moves when told to. Advancing it makes
// retries due at once; Server.Flush then waits for them. It is safe for
// concurrent use and may be shared by several servers.
type FakeClock struct {
	mu   sync.Mutex
	now  time.Time
	subs map[int]func()
	next int
}

// NewFakeClock returns a clock standing at t.
func NewFakeClock(t time.Time) *FakeClock {
	return &FakeClock{now: t, subs: map[int]func(){}}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and wakes the servers using it.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	subs := make([]func(), 0, len(c.subs))
	for _, f := range c.subs {
		subs = append(subs, f)
	}
	c.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

// Set moves the clock to t and wakes the servers using it.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
	c.Advance(0)
}

func (c *FakeClock) subscribe(f func()) (unsubscribe func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		c.subs = map[int]func(){}
	}
	id := c.next
	c.next++
	c.subs[id] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs, id)
	}
}

// ---- helpers ----

// parseTicker accepts "btc", "trc20_usdt" and "trc20/usdt".
func parseTicker(s string) (ticker.Ticker, error) {
	return ticker.Parse(strings.TrimSpace(s))
}

// coinFor returns the coin for a ticker in either spelling.
func (s *Server) coinFor(tk string) (*Coin, error) {
	t, err := parseTicker(tk)
	if err != nil {
		return nil, fmt.Errorf("cryptapitest: %q is not a ticker", tk)
	}
	c, ok := s.coins[t.Key()]
	if !ok {
		return nil, fmt.Errorf("cryptapitest: unknown coin %q", t.Key())
	}
	return c, nil
}

// Tickers returns the tickers the server knows, in "trc20_usdt" form,
// sorted.
func (s *Server) Tickers() []string {
	out := make([]string, 0, len(s.coins))
	for k := range s.coins {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
