// Command merchant is a small shop backend that takes crypto payments
// through the forwarding service, on invoices: each order is an
// invoice.Invoice with a price (in fiat or in the coin), its own payment
// address, and a status that the service's callbacks move along (partial
// payments, top-ups, re-quotes, expiry, late and over-payments are all
// handled by the invoice package). The callbacks arrive at /callback.
//
// One process, invoices in memory (lost when it stops):
//
//	go run ./examples/merchant -public-url https://shop.example \
//		-ticker trc20/usdt -address T...your...wallet
//
// Several replicas behind one public URL, invoices and callback records in
// PostgreSQL (the tables are created at start; each replica runs the same
// command):
//
//	go run ./examples/merchant -public-url https://shop.example \
//		-ticker trc20/usdt -address T...your...wallet \
//		-postgres 'postgres://shop@db.internal:5432/shop'
//
// -invoices-table names the invoices table (default cryptapi_invoices; the
// changes, claims and callbacks tables add "_changes", "_keys" and
// "_callbacks").
//
// Against the local simulator, one flag: -base-url. The callbacks are then
// verified with the key the simulator publishes, and -public-url defaults
// to http://ADDR, since the simulator runs on this machine:
//
//	cryptapi sim serve -api-key demo-key &
//	CRYPTAPI_API_KEY=demo-key go run ./examples/merchant -base-url http://127.0.0.1:8090
//
// (or, in the keyless form, "cryptapi sim serve" and -address with a
// wallet address of the coin).
//
// The program listens on 127.0.0.1:8080 unless -addr says otherwise (-addr
// :8080 for every interface). The service must reach -public-url from the
// internet (for a test, a tunnel to -addr). With CRYPTAPI_API_KEY set, the API-key deployment is
// used, and -address may be left out to use the addresses set in the
// dashboard; without it, the keyless one, which needs -address. The key is
// never printed. Then:
//
//	curl -X POST 'localhost:8080/orders?amount=25&currency=USD&order_id=1001' # 25 USD, paid in the coin
//	curl -X POST 'localhost:8080/orders?amount=30&order_id=1002'      # 30 in the coin itself
//	curl -X POST 'localhost:8080/orders?amount=25&currency=USD&order_id=1003&qr=1' # with a QR code (data URL)
//	curl localhost:8080/orders/<id>                                   # an invoice as the clock makes it now: "status":"settled" once paid
//	curl 'localhost:8080/orders?order_id=1001'                        # every invoice of the order, newest first
//	curl 'localhost:8080/orders?status=new'                           # the open invoices (status, exception, order_id)
//	curl -X POST localhost:8080/orders/<id>/reconcile                 # recover missed callbacks
//	curl -X POST 'localhost:8080/orders/<id>/mark?reason=fee+kept+by+the+exchange' # accept what was paid
//	curl -X POST 'localhost:8080/orders/<id>/reopen?minutes=30&reason=asked' # more time for an expired invoice
//	curl -X POST 'localhost:8080/orders/<id>/cancel?reason=out+of+stock'     # invalidate it
//
// An order without order_id gets an order number of the shop's making.
// An order answers with its invoice: what is due in the coin and in fiat,
// the minimum, the payment URI, the quote and invoice deadlines, and its
// history (events). Posting the same order again (a retry after a
// timeout) answers the same invoice and creates nothing; posting it with
// another amount while its invoice is open is refused with 409. An amount
// below the coin's minimum transaction is refused with 422 and a JSON body
// giving the amount and the minimum in the coin, and no address is
// created: the service would ignore such a payment and the customer's
// money would be lost. Every change of an invoice is logged once
// ("invoice changed"), however many replicas receive its callbacks; every
// replica runs the Desk's clock (Run, every -tick), which expires unpaid
// invoices and renews quotes with nobody watching, each once.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "merchant:", err)
		os.Exit(1)
	}
}

// config is what the program is told at start.
type config struct {
	addr          string
	baseURL       string // "" for the public deployment
	publicURL     string
	ticker        string
	destination   string
	apiKey        string // from CRYPTAPI_API_KEY; see String
	postgres      string // DSN; "" keeps everything in memory. It may hold a password: see String
	invoicesTable string
	tolerance     decimal.Decimal
	tick          time.Duration // how often the Desk's clock runs

	// Extra options for the service client and the callback verifier; the
	// program sets none. Tests point them at cryptapitest (its URL and the
	// key it signs callbacks with).
	clientOptions   []cryptapi.Option
	verifierOptions []callback.VerifierOption
	clock           invoice.Clock // nil: the system clock
}

// String describes the configuration without the API key or the database
// URL, so that printing a config cannot leak either.
func (c config) String() string {
	return fmt.Sprintf("config{addr: %q, base-url: %q, public-url: %q, ticker: %q, address: %q, api key: %t, postgres: %t, invoices-table: %q, tolerance: %s}",
		c.addr, c.baseURL, c.publicURL, c.ticker, c.destination, c.apiKey != "", c.postgres != "", c.invoicesTable, c.tolerance)
}

// GoString is String, for %#v.
func (c config) GoString() string { return c.String() }

// Format makes every verb print String, so that %+v cannot print the
// fields one by one.
func (c config) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// parseConfig reads the flags in args and CRYPTAPI_API_KEY from getenv.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("merchant", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on (:8080 for every interface)")
	fs.StringVar(&cfg.baseURL, "base-url", "", "service base URL, e.g. http://127.0.0.1:8090 for \"cryptapi sim serve\" (default: the public deployment)")
	fs.StringVar(&cfg.publicURL, "public-url", "", "public base URL the service calls, e.g. https://shop.example (required, except with a -base-url on this machine: http://ADDR)")
	fs.StringVar(&cfg.ticker, "ticker", "trc20/usdt", "coin or token to accept, e.g. btc or trc20/usdt")
	fs.StringVar(&cfg.destination, "address", "", "your wallet address that receives the forwarded funds (required without CRYPTAPI_API_KEY)")
	fs.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL URL: keep invoices and callback records there, shared by replicas (default: in memory)")
	fs.StringVar(&cfg.invoicesTable, "invoices-table", pgstore.DefaultTable, "with -postgres: table of the invoices")
	tolerance := fs.String("tolerance", "0", "fraction of the price that may be missing for an order to count as paid, e.g. 0.01")
	fs.DurationVar(&cfg.tick, "tick", 10*time.Second, "how often to expire unpaid invoices and renew quotes (on every replica)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	t, err := decimal.NewFromString(*tolerance)
	if err != nil || t.IsNegative() || t.GreaterThanOrEqual(decimal.NewFromInt(1)) {
		return config{}, errors.New("-tolerance must be a fraction in [0, 1)")
	}
	cfg.tolerance = t
	if cfg.tick <= 0 {
		return config{}, errors.New("-tick must be positive")
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.apiKey = getenv("CRYPTAPI_API_KEY")
	if cfg.publicURL == "" && isLocal(cfg.baseURL) {
		// A simulator on this machine calls the shop where it listens.
		host, port, err := net.SplitHostPort(cfg.addr)
		if err == nil {
			if host == "" {
				host = "127.0.0.1"
			}
			cfg.publicURL = "http://" + net.JoinHostPort(host, port)
		}
	}
	if err := cfg.check(); err != nil {
		return config{}, err
	}
	return cfg, nil
}

func (c config) check() error {
	u, err := url.Parse(c.publicURL)
	switch {
	case c.publicURL == "":
		return errors.New("-public-url is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		return errors.New("-public-url must be an http(s) URL without query or fragment")
	case c.apiKey == "" && c.destination == "":
		return errors.New("-address is required without CRYPTAPI_API_KEY")
	case !tableNameRE.MatchString(c.invoicesTable):
		return fmt.Errorf("-invoices-table %q is not a plain table name", c.invoicesTable)
	}
	return nil
}

// isLocal reports whether base is an http(s) URL of this machine.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// useService points the client at -base-url and, since a service other
// than the public one signs with its own key (the simulator generates
// one), verifies callbacks with the key that service publishes, fetched
// once at start. Without -base-url the published key stays pinned.
func (c *config) useService(ctx context.Context, log *slog.Logger) error {
	if c.baseURL == "" {
		return nil
	}
	opts := []cryptapi.Option{cryptapi.WithBaseURL(c.baseURL)}
	keyed := append([]cryptapi.Option{}, opts...)
	if c.apiKey != "" {
		keyed = append(keyed, cryptapi.WithAPIKey(c.apiKey))
	}
	client, err := cryptapi.New(keyed...)
	if err != nil {
		return fmt.Errorf("-base-url: %w", err)
	}
	key, err := client.PublicKey(ctx)
	if err != nil {
		return fmt.Errorf("fetching the callback signing key from -base-url: %w", err)
	}
	log.Info("service", "base_url", c.baseURL, "signing_key_sha256", callback.Fingerprint(key),
		"published_key", callback.Fingerprint(key) == callback.PublishedKeyFingerprint)
	c.clientOptions = append(opts, c.clientOptions...)
	c.verifierOptions = append([]callback.VerifierOption{callback.WithPublicKey(key)}, c.verifierOptions...)
	return nil
}

func run(ctx context.Context, args []string, getenv func(string) string) error {
	cfg, err := parseConfig(args, getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := cfg.useService(ctx, log); err != nil {
		return err
	}
	shop, closeStores, err := newServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeStores()

	srv := newHTTPServer(cfg.addr, shop)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	// The clock, with nobody watching: expiry, the end of monitoring, new
	// quotes, and changes onChange refused, offered again. Every replica
	// runs it; the store keeps them from doing anything twice.
	go func() { _ = shop.desk.Run(ctx, cfg.tick) }()
	invoices := "memory"
	if cfg.postgres != "" {
		invoices = "postgres"
	}
	log.Info("listening", "addr", cfg.addr, "callback", callbackURL(cfg.publicURL),
		"ticker", cfg.ticker, "invoices", invoices, "api_key", cfg.apiKey != "")

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// newHTTPServer returns the shop's server, with every time-out set: a
// client cannot hold a connection by sending its headers or body slowly,
// reading the answer slowly, or idling. The write time-out leaves room for
// a callback's lease (the handler answers once fn is done).
func newHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      callback.DefaultLease + time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

func callbackURL(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + "/callback"
}

// tableNameRE is what -invoices-table accepts.
var tableNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,52}$`)

// newServer builds the shop: the service client, the callback verifier,
// the invoice store (in memory, or in PostgreSQL), the Desk and the
// routes. closeStores releases the database pool, if any. It creates the
// tables in PostgreSQL mode; otherwise it does no I/O.
func newServer(ctx context.Context, cfg config, log *slog.Logger) (_ *shop, closeStores func(), err error) {
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	opts := []cryptapi.Option{}
	if cfg.apiKey != "" {
		opts = append(opts, cryptapi.WithAPIKey(cfg.apiKey))
	}
	client, err := cryptapi.New(append(opts, cfg.clientOptions...)...)
	if err != nil {
		return nil, nil, err
	}
	// Signatures are checked with the service's published key (pinned by
	// default). GET callbacks are verified against -public-url, never
	// against the Host header.
	verifier, err := callback.NewVerifier(append([]callback.VerifierOption{callback.WithPublicURL(cfg.publicURL)}, cfg.verifierOptions...)...)
	if err != nil {
		return nil, nil, err
	}

	store := invoice.NewMemoryStore()
	closeStores = func() {}
	if cfg.postgres != "" {
		db, err := sql.Open("pgx", cfg.postgres)
		if err != nil {
			return nil, nil, errors.New("-postgres: not a valid PostgreSQL URL")
		}
		closeStores = func() { _ = db.Close() }
		defer func() {
			if err != nil {
				closeStores()
			}
		}()
		// The URL may hold a password: it is never logged, and pgx
		// masks the password in its own error messages.
		if err := db.PingContext(ctx); err != nil {
			return nil, nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
		}
		// Invoices, their changes and the callbacks' de-duplication,
		// shared by the replicas: a callback delivered twice (or to two
		// replicas at once) is applied once, and each change is logged
		// once.
		pg, err := pgstore.New(db, pgstore.WithTable(cfg.invoicesTable))
		if err != nil {
			return nil, nil, err
		}
		if err := pg.Migrate(ctx); err != nil {
			return nil, nil, fmt.Errorf("creating the invoice tables: %w", err)
		}
		store = pg
	}
	s := &shop{
		client:      client,
		ticker:      cfg.ticker,
		destination: cfg.destination,
		tolerance:   cfg.tolerance,
		callbackURL: callbackURL(cfg.publicURL),
		log:         log,
	}
	s.clock = cfg.clock
	if s.clock == nil {
		s.clock = systemClock{}
	}
	s.desk, err = invoice.New(client, store, invoice.WithOnChange(s.changed), invoice.WithLogger(log), invoice.WithClock(s.clock))
	if err != nil {
		return nil, nil, err
	}
	callbacks, err := s.desk.Handler(verifier)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders", s.findOrders)
	mux.HandleFunc("GET /orders/{id}", s.showOrder)
	mux.HandleFunc("POST /orders/{id}/reconcile", s.reconcileOrder)
	mux.HandleFunc("POST /orders/{id}/mark", s.markOrder)
	mux.HandleFunc("POST /orders/{id}/reopen", s.reopenOrder)
	mux.HandleFunc("POST /orders/{id}/cancel", s.cancelOrder)
	mux.Handle("/callback", callbacks)
	s.mux = mux
	return s, closeStores, nil
}

type shop struct {
	client      *cryptapi.Client
	desk        *invoice.Desk
	clock       invoice.Clock // the Desk's
	mux         *http.ServeMux
	ticker      string
	destination string
	tolerance   decimal.Decimal
	callbackURL string
	log         *slog.Logger
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// changed is told of every change of an invoice, once, after it is
// stored. A real shop updates its order here (with PostgreSQL, through
// pgstore.Tx(ctx), so that the update commits with the mark that the
// change was passed on); an error makes the callback unacknowledged, and
// the change is offered again.
func (s *shop) changed(ctx context.Context, inv *invoice.Invoice) error {
	s.log.InfoContext(ctx, "invoice changed", "invoice", inv.ID, "order", inv.OrderID, "version", inv.Version,
		"status", inv.Status, "exception", inv.Exception, "paid", inv.Paid.String(), "due", inv.Due.String())
	return nil
}

// createdOrder is the answer to POST /orders: the invoice, and its QR code
// when asked for with qr=1 (not stored).
type createdOrder struct {
	*invoice.Invoice
	QRCode string `json:"qr_code,omitempty"` // data:image/png;base64,...
}

// belowMinimum is the 422 answer to an order below the minimum
// transaction. Amount and Minimum are in the coin.
type belowMinimum struct {
	Error    string          `json:"error"`
	Ticker   string          `json:"ticker"`
	Amount   decimal.Decimal `json:"amount"`
	Minimum  decimal.Decimal `json:"minimum"`
	Price    decimal.Decimal `json:"price"`              // as asked, in Currency
	Currency string          `json:"currency,omitempty"` // "" when Price is in the coin
}

// orderIDRE is what the shop takes as an order number.
var orderIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// newOrderID makes an order number for an order that came without one.
// A real shop uses its own (an order table's key); this one is random so
// that replicas never hand out the same number.
func newOrderID() string {
	return "ord_" + strings.ToLower(rand.Text()[:16])
}

// createOrder handles POST /orders?amount=25[&currency=USD][&order_id=..][&qr=1]:
// a new invoice with its own payment address, for amount in currency
// (default: the coin itself), for order order_id (default: a new number).
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	amount, err := decimal.NewFromString(q.Get("amount"))
	if err != nil || !amount.IsPositive() {
		writeError(w, http.StatusBadRequest, "amount must be a positive decimal number")
		return
	}
	orderID := q.Get("order_id")
	switch {
	case !q.Has("order_id"):
		orderID = newOrderID()
	case !orderIDRE.MatchString(orderID):
		writeError(w, http.StatusBadRequest, "order_id must be 1 to 64 letters, digits, '.', '-' or '_'")
		return
	}
	currency := strings.ToUpper(strings.TrimSpace(q.Get("currency")))
	// The Desk converts the price, checks it against the coin's minimum
	// transaction before any address exists, and creates the address
	// (its callback URL carries the invoice ID and a secret nonce).
	inv, err := s.desk.Create(r.Context(), &invoice.CreateOptions{
		OrderID:   orderID,
		Ticker:    s.ticker,
		Price:     amount,
		Currency:  currency,
		Callback:  s.callbackURL,
		Address:   s.destination,
		Tolerance: s.tolerance,
	})
	var below *cryptapi.BelowMinimumError
	switch {
	case errors.As(err, &below):
		writeJSON(w, http.StatusUnprocessableEntity, belowMinimum{
			Error:    fmt.Sprintf("amount %s %s is below the minimum transaction %s %s: the service would ignore the payment and the money would be lost", below.Amount, below.Ticker, below.Minimum, below.Ticker),
			Ticker:   below.Ticker,
			Amount:   below.Amount,
			Minimum:  below.Minimum,
			Price:    amount,
			Currency: currency,
		})
		return
	case errors.Is(err, invoice.ErrNoRate):
		writeError(w, http.StatusBadRequest, "currency must be a currency code the service prices, such as USD")
		return
	case errors.Is(err, invoice.ErrInvalidOptions):
		// Checked before an address exists; the error names the option
		// and carries no secret.
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, invoice.ErrOrderOpen):
		writeError(w, http.StatusConflict, "the order has an open invoice for another amount; cancel it first")
		return
	case err != nil:
		// The SDK's errors never carry the API key.
		s.log.Error("creating an invoice", "error", err)
		writeError(w, http.StatusBadGateway, "could not create the invoice")
		return
	}
	out := createdOrder{Invoice: inv}
	if q.Get("qr") == "1" {
		qr, err := s.client.QRCode(r.Context(), inv.Ticker, &cryptapi.QRCodeOptions{Address: inv.AddressIn, Value: inv.Due})
		if err == nil {
			var png []byte
			if png, err = qr.PNG(); err == nil {
				out.QRCode = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
			}
		}
		if err != nil {
			s.log.Warn("no QR code for the invoice", "invoice", inv.ID, "error", err)
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

// showOrder handles GET /orders/{id}: the invoice as the clock makes it
// now (a deadline that passed shows as expired before the Desk's clock
// stores it).
func (s *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	inv, err := s.desk.Get(r.Context(), r.PathValue("id"))
	if err == nil {
		inv = inv.AsOf(s.clock.Now())
	}
	s.answer(w, inv, err)
}

// findOrders handles GET /orders?order_id=1001 (every invoice of the
// order, newest first) and GET /orders?status=new&exception=paid_late
// (the invoices in those states, newest first, at most 100).
func (s *shop) findOrders(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if id := q.Get("order_id"); id != "" {
		invs, err := s.desk.ByOrderID(r.Context(), id)
		s.answerList(w, invs, err)
		return
	}
	o := &invoice.ListOptions{}
	for _, st := range q["status"] {
		o.Status = append(o.Status, invoice.Status(st))
	}
	for _, x := range q["exception"] {
		o.Exception = append(o.Exception, invoice.Exception(x))
	}
	invs := []*invoice.Invoice{}
	for inv, err := range s.desk.List(r.Context(), o) {
		if err != nil {
			s.answerList(w, nil, err)
			return
		}
		if invs = append(invs, inv); len(invs) == 100 {
			break
		}
	}
	s.answerList(w, invs, nil)
}

// markOrder handles POST /orders/{id}/mark?reason=...: the merchant
// accepts what was paid (an underpayment, a late payment).
func (s *shop) markOrder(w http.ResponseWriter, r *http.Request) {
	inv, err := s.desk.MarkSettled(r.Context(), r.PathValue("id"), r.URL.Query().Get("reason"))
	s.answerChange(w, inv, err)
}

// reopenOrder handles POST /orders/{id}/reopen?minutes=30&reason=...: an
// expired invoice asks for the rest again, at a fresh quote.
func (s *shop) reopenOrder(w http.ResponseWriter, r *http.Request) {
	o := &invoice.ReopenOptions{Reason: r.URL.Query().Get("reason")}
	if m := r.URL.Query().Get("minutes"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n <= 0 {
			writeError(w, http.StatusBadRequest, "minutes must be a positive whole number")
			return
		}
		o.ExpiresIn = time.Duration(n) * time.Minute
	}
	inv, err := s.desk.Reopen(r.Context(), r.PathValue("id"), o)
	s.answerChange(w, inv, err)
}

// cancelOrder handles POST /orders/{id}/cancel?reason=...
func (s *shop) cancelOrder(w http.ResponseWriter, r *http.Request) {
	inv, err := s.desk.Invalidate(r.Context(), r.PathValue("id"), r.URL.Query().Get("reason"))
	s.answerChange(w, inv, err)
}

// answerChange answers a merchant's decision: the invoice as stored, also
// when onChange has not accepted the change yet (the Desk's clock offers
// it again), or why it was refused.
func (s *shop) answerChange(w http.ResponseWriter, inv *invoice.Invoice, err error) {
	switch {
	case errors.Is(err, invoice.ErrNotNotified) && inv != nil:
		s.log.Error("invoice change stored, not yet passed on", "invoice", inv.ID, "error", err)
		writeJSON(w, http.StatusOK, inv)
	case errors.Is(err, invoice.ErrWrongStatus), errors.Is(err, invoice.ErrOrderOpen):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, invoice.ErrInvalidOptions):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		s.answer(w, inv, err)
	}
}

func (s *shop) answerList(w http.ResponseWriter, invs []*invoice.Invoice, err error) {
	switch {
	case errors.Is(err, invoice.ErrInvalidOptions):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		s.log.Error("listing invoices", "error", err)
		writeError(w, http.StatusInternalServerError, "could not list the invoices")
	default:
		writeJSON(w, http.StatusOK, invs)
	}
}

// reconcileOrder handles POST /orders/{id}/reconcile: callbacks that never
// arrived are recovered from the service's logs.
func (s *shop) reconcileOrder(w http.ResponseWriter, r *http.Request) {
	inv, err := s.desk.Reconcile(r.Context(), r.PathValue("id"))
	if err != nil && inv != nil {
		s.log.Error("reconciling an invoice", "invoice", inv.ID, "error", err)
		err = nil // the invoice as it stands; the failures are logged
	}
	s.answer(w, inv, err)
}

func (s *shop) answer(w http.ResponseWriter, inv *invoice.Invoice, err error) {
	switch {
	case errors.Is(err, invoice.ErrNotFound):
		writeError(w, http.StatusNotFound, "no such order")
	case err != nil:
		s.log.Error("reading an invoice", "error", err)
		writeError(w, http.StatusInternalServerError, "could not read the invoice")
	default:
		writeJSON(w, http.StatusOK, inv)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
