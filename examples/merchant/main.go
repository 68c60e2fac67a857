// Command merchant is a small shop backend that takes crypto payments
// through the forwarding service: it creates one payment address per
// order, receives the service's callbacks at /callback, and marks orders
// paid once a confirmed, signed callback for the order's own address and
// nonce arrives.
//
//	go run ./examples/merchant -public-url https://shop.example \
//		-ticker trc20/usdt -address T...your...wallet
//
// The service must reach -public-url from the internet (for a test, a
// tunnel to -addr). With CRYPTAPI_API_KEY set, the API-key deployment is
// used; without it, the keyless one. Then:
//
//	curl -X POST 'localhost:8080/orders?amount=25'   # create an order
//	curl localhost:8080/orders/<id>                  # see its state
package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/shopspring/decimal"
)

// Order is one order and what the callbacks said about it.
type Order struct {
	ID        string          `json:"id"`
	Amount    decimal.Decimal `json:"amount"`            // price in coin units
	AddressIn string          `json:"address_in"`        // where the customer pays
	Minimum   decimal.Decimal `json:"minimum"`           // smaller payments are lost
	State     string          `json:"state"`             // new, seen, paid, underpaid
	Received  decimal.Decimal `json:"received"`          // confirmed amount so far
	TxIDs     []string        `json:"txids,omitempty"`   // confirmed transactions
	PaidAt    *time.Time      `json:"paid_at,omitempty"` // when State became paid
	nonce     string          // secret, in the callback URL only
}

// Orders is the order table, in memory for the example; a real shop keeps
// it in its database.
type Orders struct {
	mu        sync.Mutex
	byID      map[string]*Order
	byAddress map[string]*Order
}

func newOrders() *Orders {
	return &Orders{byID: map[string]*Order{}, byAddress: map[string]*Order{}}
}

func (o *Orders) add(ord *Order) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byID[ord.ID] = ord
	o.byAddress[ord.AddressIn] = ord
}

func (o *Orders) get(id string) (Order, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ord, ok := o.byID[id]
	if !ok {
		return Order{}, false
	}
	cp := *ord
	cp.TxIDs = append([]string(nil), ord.TxIDs...)
	return cp, true
}

// KnowsAddress is the handler's address check: callbacks for an address
// this shop did not create are refused before they reach Record.
func (o *Orders) KnowsAddress(_ context.Context, addressIn string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.byAddress[addressIn]
	return ok, nil
}

var errMismatch = errors.New("callback parameters do not match the order of its address")

// Record applies one verified callback. The order is found by the signed
// address_in; the order id and nonce from the callback URL must match it
// (for POST callbacks they are not covered by the signature). The callback
// package calls Record once per payment and callback type, so adding up
// amounts here is safe.
func (o *Orders) Record(_ context.Context, p *callback.Payment) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	ord, ok := o.byAddress[p.AddressIn]
	if !ok {
		return errMismatch
	}
	nonceOK := subtle.ConstantTimeCompare([]byte(p.Custom.Get("nonce")), []byte(ord.nonce)) == 1
	if p.Custom.Get("order_id") != ord.ID || !nonceOK {
		return errMismatch
	}
	if p.Pending {
		if ord.State == "new" {
			ord.State = "seen"
		}
		return nil
	}
	ord.Received = ord.Received.Add(p.ValueCoin)
	ord.TxIDs = append(ord.TxIDs, p.TxIDIn)
	if ord.Received.GreaterThanOrEqual(ord.Amount) {
		if ord.State != "paid" {
			now := time.Now().UTC()
			ord.PaidAt = &now
		}
		ord.State = "paid"
	} else {
		ord.State = "underpaid"
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

type shop struct {
	client      *cryptapi.Client
	orders      *Orders
	ticker      string
	destination string
	callbackURL string
	log         *slog.Logger
}

// createOrder handles POST /orders?amount=25: a new order with its own
// payment address.
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	amount, err := decimal.NewFromString(r.URL.Query().Get("amount"))
	if err != nil || !amount.IsPositive() {
		http.Error(w, "amount must be a positive decimal", http.StatusBadRequest)
		return
	}
	ord := &Order{ID: randomHex(8), Amount: amount, State: "new", nonce: randomHex(16)}
	addr, err := s.client.CreateAddress(r.Context(), s.ticker, &cryptapi.CreateOptions{
		Callback: s.callbackURL,
		Address:  s.destination,
		Params:   url.Values{"order_id": {ord.ID}, "nonce": {ord.nonce}},
		Pending:  true,
	})
	if err != nil {
		s.log.Error("creating a payment address", "error", err)
		http.Error(w, "could not create a payment address", http.StatusBadGateway)
		return
	}
	ord.AddressIn = addr.AddressIn
	ord.Minimum = addr.MinimumTransactionCoin
	s.orders.add(ord)
	if ord.Minimum.IsPositive() && amount.LessThan(ord.Minimum) {
		s.log.Warn("order amount is below the minimum transaction and would be lost", "order", ord.ID)
	}
	writeJSON(w, http.StatusCreated, ord)
}

// showOrder handles GET /orders/{id}.
func (s *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	ord, ok := s.orders.get(r.PathValue("id"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, ord)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "merchant:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", ":8080", "address to listen on")
	publicURL := flag.String("public-url", "", "public base URL the service calls, e.g. https://shop.example (required)")
	ticker := flag.String("ticker", "trc20/usdt", "coin or token to accept, e.g. btc or trc20/usdt")
	destination := flag.String("address", "", "your wallet address that receives the forwarded funds")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *publicURL == "" {
		return errors.New("-public-url is required")
	}

	var opts []cryptapi.Option
	if key := os.Getenv("CRYPTAPI_API_KEY"); key != "" {
		opts = append(opts, cryptapi.WithAPIKey(key))
	} else if *destination == "" {
		return errors.New("-address is required without CRYPTAPI_API_KEY")
	}
	client, err := cryptapi.New(opts...)
	if err != nil {
		return err
	}

	// Signatures are checked with the service's published key (pinned by
	// default). GET callbacks are verified against -public-url, never
	// against the Host header.
	verifier, err := callback.NewVerifier(callback.WithPublicURL(*publicURL))
	if err != nil {
		return err
	}
	orders := newOrders()
	s := &shop{
		client:      client,
		orders:      orders,
		ticker:      *ticker,
		destination: *destination,
		callbackURL: strings.TrimSuffix(*publicURL, "/") + "/callback",
		log:         log,
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{id}", s.showOrder)
	mux.Handle("/callback", callback.NewHandler(verifier, orders.Record,
		callback.WithAddressCheck(orders.KnowsAddress),
		callback.WithErrorLog(log),
	))

	srv := &http.Server{
		Addr:              *addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("listening", "addr", *addr, "callback", s.callbackURL, "service", client.BaseURL(), "api_key", client.HasAPIKey())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
