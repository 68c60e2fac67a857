// Command merchant is a small shop backend that takes crypto payments
// through the forwarding service. For each order it asks for a payment
// request (the price converted to the coin, checked against the coin's
// minimum transaction, and a payment address of its own), receives the
// service's callbacks at /callback, and marks the order paid once signed,
// confirmed callbacks for the order's own address and nonce add up to its
// amount.
//
// One process, orders in memory (lost when it stops):
//
//	go run ./examples/merchant -public-url https://shop.example \
//		-ticker trc20/usdt -address T...your...wallet
//
// Several replicas behind one public URL, orders and callback records in
// PostgreSQL (the tables are created at start; each replica runs the same
// command):
//
//	go run ./examples/merchant -public-url https://shop.example \
//		-ticker trc20/usdt -address T...your...wallet \
//		-postgres 'postgres://shop@db.internal:5432/shop'
//
// -orders-table and -callbacks-table name the two tables (defaults
// merchant_orders and cryptapi_callbacks).
//
// The service must reach -public-url from the internet (for a test, a
// tunnel to -addr). With CRYPTAPI_API_KEY set, the API-key deployment is
// used, and -address may be left out to use the addresses set in the
// dashboard; without it, the keyless one, which needs -address. The key is
// never printed. Then:
//
//	curl -X POST 'localhost:8080/orders?amount=25&currency=USD'      # 25 USD, paid in the coin
//	curl -X POST 'localhost:8080/orders?amount=30'                   # 30 in the coin itself
//	curl -X POST 'localhost:8080/orders?amount=25&currency=USD&qr=1' # with a QR code (data URL)
//	curl localhost:8080/orders/<id>                                  # see its state
//
// An order gets the exact coin amount to pay and a payment URI for
// wallets. An amount below the coin's minimum transaction is refused with
// 422 and a JSON body giving the amount and the minimum in the coin, and
// no address is created: the service would ignore such a payment and the
// customer's money would be lost.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
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
	addr           string
	publicURL      string
	ticker         string
	destination    string
	apiKey         string // from CRYPTAPI_API_KEY; see String
	postgres       string // DSN; "" keeps everything in memory. It may hold a password: see String
	ordersTable    string
	callbacksTable string

	// Extra options for the service client and the callback verifier; the
	// program sets none. Tests point them at cryptapitest (its URL and the
	// key it signs callbacks with).
	clientOptions   []cryptapi.Option
	verifierOptions []callback.VerifierOption
}

// String describes the configuration without the API key or the database
// URL, so that printing a config cannot leak either.
func (c config) String() string {
	return fmt.Sprintf("config{addr: %q, public-url: %q, ticker: %q, address: %q, api key: %t, postgres: %t, orders-table: %q, callbacks-table: %q}",
		c.addr, c.publicURL, c.ticker, c.destination, c.apiKey != "", c.postgres != "", c.ordersTable, c.callbacksTable)
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
	fs.StringVar(&cfg.addr, "addr", ":8080", "address to listen on")
	fs.StringVar(&cfg.publicURL, "public-url", "", "public base URL the service calls, e.g. https://shop.example (required)")
	fs.StringVar(&cfg.ticker, "ticker", "trc20/usdt", "coin or token to accept, e.g. btc or trc20/usdt")
	fs.StringVar(&cfg.destination, "address", "", "your wallet address that receives the forwarded funds (required without CRYPTAPI_API_KEY)")
	fs.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL URL: keep orders and callback records there, shared by replicas (default: in memory)")
	fs.StringVar(&cfg.ordersTable, "orders-table", defaultOrdersTable, "with -postgres: table of the orders")
	fs.StringVar(&cfg.callbacksTable, "callbacks-table", pgstore.DefaultTable, "with -postgres: table of the callback records")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.apiKey = getenv("CRYPTAPI_API_KEY")
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
	case !tableNameRE.MatchString(c.ordersTable):
		return fmt.Errorf("-orders-table %q is not a plain table name", c.ordersTable)
	}
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
	handler, closeStores, err := newServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeStores()

	srv := newHTTPServer(cfg.addr, handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	orders := "memory"
	if cfg.postgres != "" {
		orders = "postgres"
	}
	log.Info("listening", "addr", cfg.addr, "callback", callbackURL(cfg.publicURL),
		"ticker", cfg.ticker, "orders", orders, "api_key", cfg.apiKey != "")

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

// newServer builds the shop: the service client, the callback verifier,
// the order store and the callback handler's store (in memory, or both in
// PostgreSQL), and the routes. closeStores releases the database pool, if
// any. It creates the tables in PostgreSQL mode; otherwise it does no I/O.
func newServer(ctx context.Context, cfg config, log *slog.Logger) (_ http.Handler, closeStores func(), err error) {
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

	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	var (
		orders      orderStore
		handlerOpts = []callback.HandlerOption{callback.WithErrorLog(log)}
	)
	closeStores = func() {}
	if cfg.postgres == "" {
		// One process: orders and the handler's default de-duplication
		// store both live in memory.
		orders = newMemOrders(now)
	} else {
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
		// The handler's store: claims and done marks for every callback,
		// shared by the replicas, so that a callback delivered twice (or
		// to two replicas at once) is processed once.
		store, err := pgstore.New(db, pgstore.WithTable(cfg.callbacksTable))
		if err != nil {
			return nil, nil, err
		}
		if err := store.Migrate(ctx); err != nil {
			return nil, nil, err
		}
		pg, err := newPGOrders(db, store, cfg.ordersTable, now)
		if err != nil {
			return nil, nil, err
		}
		if err := pg.migrate(ctx); err != nil {
			return nil, nil, fmt.Errorf("creating the orders table: %w", err)
		}
		orders = pg
		handlerOpts = append(handlerOpts, callback.WithStore(store))
	}

	s := &shop{
		client:      client,
		orders:      orders,
		ticker:      cfg.ticker,
		destination: cfg.destination,
		callbackURL: callbackURL(cfg.publicURL),
		now:         now,
		log:         log,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{id}", s.showOrder)
	cb, err := callback.NewHandler(verifier, orders.Record,
		append(handlerOpts, callback.WithAddressCheck(orders.KnowsAddress))...)
	if err != nil {
		return nil, nil, err
	}
	mux.Handle("/callback", cb)
	return mux, closeStores, nil
}

type shop struct {
	client      *cryptapi.Client
	orders      orderStore
	ticker      string
	destination string
	callbackURL string
	now         func() time.Time
	log         *slog.Logger
}

// createdOrder is the answer to POST /orders: the order, and its QR code
// when asked for with qr=1 (not stored).
type createdOrder struct {
	*Order
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

// createOrder handles POST /orders?amount=25[&currency=USD][&qr=1]: a new
// order with its own payment address, for amount in currency (default: the
// coin itself).
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	amount, err := decimal.NewFromString(q.Get("amount"))
	if err != nil || !amount.IsPositive() {
		writeError(w, http.StatusBadRequest, "amount must be a positive decimal number")
		return
	}
	currency := strings.ToUpper(strings.TrimSpace(q.Get("currency")))
	wantQR := q.Get("qr") == "1"

	ord := &Order{ID: randomHex(8), nonce: randomHex(16), State: stateNew, CreatedAt: s.now()}
	// RequestPayment converts the price, checks it against the coin's
	// minimum transaction before any address exists, creates the address
	// (its callback URL carries the order id and the secret nonce) and
	// gets the payment URI for the exact amount.
	pr, err := s.client.RequestPayment(r.Context(), s.ticker, &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback: s.callbackURL,
			Address:  s.destination,
			Params:   url.Values{"order_id": {ord.ID}, "nonce": {ord.nonce}},
			Pending:  true,
		},
		Amount:   amount,
		Currency: currency,
		QRCode:   wantQR,
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
	case errors.Is(err, cryptapi.ErrInvalidOption):
		// Checked before anything is sent; the only option taken from the
		// request is the currency.
		writeError(w, http.StatusBadRequest, "currency must be a currency code such as USD")
		return
	case err != nil:
		// The SDK's errors never carry the API key.
		s.log.Error("requesting a payment", "error", err)
		writeError(w, http.StatusBadGateway, "could not create a payment request")
		return
	}
	ord.Ticker = pr.Ticker
	ord.Amount = pr.AmountCoin
	ord.Price = pr.Amount
	ord.Currency = pr.Currency
	ord.AddressIn = pr.Address.AddressIn
	ord.Minimum = pr.Minimum
	ord.PaymentURI = pr.PaymentURI
	if err := s.orders.Add(r.Context(), ord); err != nil {
		s.log.Error("storing an order", "order", ord.ID, "error", err)
		writeError(w, http.StatusInternalServerError, "could not store the order")
		return
	}
	out := createdOrder{Order: ord}
	if pr.QRCode != nil {
		if png, err := pr.QRCode.PNG(); err == nil {
			out.QRCode = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
		} else {
			s.log.Warn("the service's QR code is not a PNG image", "order", ord.ID, "error", err)
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

// showOrder handles GET /orders/{id}.
func (s *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	ord, err := s.orders.Get(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, errNotFound):
		writeError(w, http.StatusNotFound, "no such order")
	case err != nil:
		s.log.Error("reading an order", "error", err)
		writeError(w, http.StatusInternalServerError, "could not read the order")
	default:
		writeJSON(w, http.StatusOK, ord)
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

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
