package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

//go:embed templates/*.html
var templates embed.FS

var pages = template.Must(template.ParseFS(templates, "templates/*.html"))

// product is one thing the shop sells, priced in USD.
type product struct {
	ID, Name string
	Price    decimal.Decimal
}

var products = []product{
	{"mug", "Coffee mug", decimal.RequireFromString("12.50")},
	{"tee", "T-shirt", decimal.RequireFromString("25.00")},
	{"hoodie", "Hoodie", decimal.RequireFromString("49.00")},
}

// options build a shop.
type options struct {
	client      *cryptapi.Client
	verifier    *callback.Verifier
	publicURL   string // where the service calls back: publicURL + "/callback"
	destination string
	ticker      string
	deskOptions []invoice.Option
	pageOptions []invoice.PageOption
	log         *slog.Logger // the merchant's log; nil: slog.Default()

	// On the fake service only: the fake and the clock it shares with
	// the desk. They enable the developer panel.
	fake  *cryptapitest.Server
	clock devClock
}

// shop is the demo shop's handler.
type shop struct {
	opts  options
	desk  *invoice.Desk
	mux   *http.ServeMux
	guard *panelGuard // the developer panel's; nil without it

	mu     sync.Mutex
	orders []string // invoice IDs, newest last (for the developer panel)
	next   int
}

func newShop(o options) (*shop, error) {
	// The demo keeps no orders of its own (the invoice is the order), so
	// it has nothing to do with a change.
	ignore := invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil })
	desk, err := invoice.New(o.client, invoice.NewMemoryStore(), append([]invoice.Option{ignore}, o.deskOptions...)...)
	if err != nil {
		return nil, err
	}
	callbacks, err := desk.Handler(o.verifier)
	if err != nil {
		return nil, err
	}
	s := &shop{opts: o, desk: desk, mux: http.NewServeMux()}
	page := desk.Page(append([]invoice.PageOption{
		invoice.WithReturnURL(func(*invoice.Invoice) string { return "/" }),
	}, o.pageOptions...)...)
	s.mux.Handle("GET /pay/", http.StripPrefix("/pay", page))
	s.mux.Handle("/callback", callbacks)
	s.mux.HandleFunc("GET /{$}", s.home)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("POST /checkout", s.checkout)
	if o.fake != nil {
		if s.guard, err = newPanelGuard(o.publicURL); err != nil {
			return nil, err
		}
		s.mux.HandleFunc("GET /dev/{$}", s.panel)
		s.mux.HandleFunc("POST /dev/act", s.act)
	}
	return s, nil
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// shopHeaders are the shop's own pages' headers: no script, no framing,
// no referrer to other sites. Within the shop the browser sends the
// referrer, and so the real Origin of the shop's own form posts (with
// no-referrer it sends "Origin: null", which the panel refuses).
func shopHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

func (s *shop) render(w http.ResponseWriter, name string, data any) {
	s.renderStatus(w, http.StatusOK, name, data)
}

func (s *shop) renderStatus(w http.ResponseWriter, status int, name string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		s.logger().Error("rendering a page", "page", name, "error", err)
		http.Error(w, "Sorry, this page could not be shown.", http.StatusInternalServerError)
		return
	}
	shopHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// problem tells the customer, in words, what went wrong and what to do.
func (s *shop) problem(w http.ResponseWriter, status int, title, message string) {
	s.renderStatus(w, status, "problem.html", struct{ Title, Message string }{title, message})
}

func (s *shop) logger() *slog.Logger {
	if s.opts.log != nil {
		return s.opts.log
	}
	return slog.Default()
}

func (s *shop) home(w http.ResponseWriter, _ *http.Request) {
	s.render(w, "home.html", struct {
		Products []product
		Coin     string
		Dev      bool
	}{products, coinName(s.opts.ticker), s.opts.fake != nil})
}

// checkout turns a product into an invoice and sends the customer to its
// payment page.
func (s *shop) checkout(w http.ResponseWriter, r *http.Request) {
	i := slices.IndexFunc(products, func(p product) bool { return p.ID == r.PostFormValue("product") })
	if i < 0 {
		s.problem(w, http.StatusNotFound, "This product is not for sale",
			"It may be sold out, or the link was wrong. Please choose one of the shop's products.")
		return
	}
	inv, err := s.create(r.Context(), products[i])
	if err != nil {
		s.checkoutFailed(w, r, products[i], err)
		return
	}
	http.Redirect(w, r, "/pay/"+inv.ID, http.StatusSeeOther)
}

// checkoutFailed tells the customer why there is no payment page, in
// words, and logs the reason for the merchant.
func (s *shop) checkoutFailed(w http.ResponseWriter, r *http.Request, p product, err error) {
	var below *cryptapi.BelowMinimumError
	if errors.As(err, &below) && below.Amount.IsPositive() {
		// What the smallest payment is worth, at this quote's rate.
		least := p.Price.Mul(below.Minimum).Div(below.Amount).RoundCeil(2)
		coin := coinName(below.Ticker)
		s.problem(w, http.StatusUnprocessableEntity, "This item cannot be paid in "+coin,
			fmt.Sprintf("The %s costs %s USD, but the smallest %s payment the network accepts is worth about %s USD. Please choose another item.",
				p.Name, p.Price.StringFixed(2), coin, least.StringFixed(2)))
		return
	}
	s.logger().ErrorContext(r.Context(), "checkout: no invoice", "product", p.ID, "error", err)
	s.problem(w, http.StatusServiceUnavailable, "Payments are not available right now",
		"We could not prepare your payment, and nothing was charged. Please try again in a moment.")
}

// coinName is how customers read a ticker: "eth" is ETH, "trc20_usdt"
// (or "trc20/usdt") is USDT (TRC20).
func coinName(ticker string) string {
	network, token, ok := strings.Cut(strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(ticker), "/", "_")), "_")
	if !ok {
		return network
	}
	return token + " (" + network + ")"
}

func (s *shop) create(ctx context.Context, p product) (*invoice.Invoice, error) {
	s.mu.Lock()
	s.next++
	orderID := fmt.Sprintf("order-%d", s.next)
	s.mu.Unlock()
	inv, err := s.desk.Create(ctx, &invoice.CreateOptions{
		OrderID:    orderID,
		Ticker:     s.opts.ticker,
		Price:      p.Price,
		Currency:   "USD",
		Callback:   s.opts.publicURL + "/callback",
		Address:    s.opts.destination,
		ExpiresIn:  30 * time.Minute,
		MultiToken: s.opts.fake != nil, // lets the panel pay in the wrong coin
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.orders = append(s.orders, inv.ID)
	s.mu.Unlock()
	return inv, nil
}

// panelRow is one invoice in the developer panel.
type panelRow struct {
	Inv     *invoice.Invoice
	Pending int
}

// panel lists the invoices with the actions that simulate the customer
// and the chain.
func (s *shop) panel(w http.ResponseWriter, r *http.Request) {
	if !s.guard.page(w, r) {
		return
	}
	s.mu.Lock()
	ids := slices.Clone(s.orders)
	s.mu.Unlock()
	slices.Reverse(ids)
	rows := make([]panelRow, 0, len(ids))
	for _, id := range ids {
		inv, err := s.desk.Get(r.Context(), id)
		if err != nil {
			continue
		}
		rows = append(rows, panelRow{Inv: inv, Pending: len(s.unconfirmed(inv.AddressIn))})
	}
	s.render(w, "panel.html", struct {
		Rows  []panelRow
		Now   string
		Token string
	}{rows, s.opts.clock.Now().UTC().Format(time.RFC3339), s.guard.token})
}

// payOtherCoin pays twice its minimum of the first other coin of the fake
// that the invoice's address takes: another token of its network, which
// the address accepts because the shop creates it with multi_token.
func (s *shop) payOtherCoin(inv *invoice.Invoice) error {
	coins := cryptapitest.DefaultCoins()
	for _, tk := range s.opts.fake.Tickers() {
		c, ok := coins[tk]
		if !ok || tk == inv.Ticker {
			continue
		}
		_, err := s.opts.fake.Pay(tk, inv.AddressIn, c.MinimumTransaction.Mul(decimal.NewFromInt(2)))
		if !errors.Is(err, cryptapitest.ErrUnknownAddress) {
			return err
		}
	}
	return fmt.Errorf("%w: the fake has no other coin on the network of %s", errAction, inv.Ticker)
}

// unconfirmed returns the fake's unconfirmed payments to address.
func (s *shop) unconfirmed(address string) []string {
	var out []string
	for _, p := range s.opts.fake.Payments() {
		if p.AddressIn == address && p.Result == "pending" {
			out = append(out, p.TxIDIn)
		}
	}
	return out
}

// Actions of the developer panel.
const (
	actFull      = "full"      // pay what is due
	actPartial   = "partial"   // pay half of it (at least the coin's minimum)
	actWrongCoin = "wrongcoin" // pay in another coin of the network
	actLate      = "late"      // let the invoice expire, then pay what was due
	actConfirm   = "confirm"   // confirm the pending payments
	actRequote   = "requote"   // move the clock past the quote
	actExpire    = "expire"    // move the clock past expiry
)

// errAction is a developer panel request that cannot be done.
var errAction = errors.New("action not possible")

// act runs one developer panel action, delivers the fake's callbacks, and
// goes back to the panel.
func (s *shop) act(w http.ResponseWriter, r *http.Request) {
	// The panel moves money on the fake: only its own form may.
	if !s.guard.action(w, r) {
		return
	}
	if err := s.do(r.Context(), r.PostForm.Get("invoice"), r.PostForm.Get("action")); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, "/dev/", http.StatusSeeOther)
}

// do runs one developer panel action on invoice id.
func (s *shop) do(ctx context.Context, id, action string) error {
	s.mu.Lock()
	known := slices.Contains(s.orders, id)
	s.mu.Unlock()
	if !known {
		return fmt.Errorf("%w: unknown invoice", errAction)
	}
	inv, err := s.desk.Get(ctx, id)
	if err != nil {
		return err
	}
	fake := s.opts.fake
	switch action {
	case actFull, actPartial:
		amount := inv.Due
		if action == actPartial {
			amount = inv.Due.Div(decimal.NewFromInt(2)).Truncate(inv.Decimals)
			amount = decimal.Max(amount, inv.Minimum)
		}
		if !amount.IsPositive() {
			return fmt.Errorf("%w: nothing is due", errAction)
		}
		if _, err := fake.Pay(inv.Ticker, inv.AddressIn, amount); err != nil {
			return err
		}
	case actWrongCoin:
		if err := s.payOtherCoin(inv); err != nil {
			return err
		}
	case actLate:
		amount := inv.Due
		if !amount.IsPositive() {
			return fmt.Errorf("%w: nothing is due", errAction)
		}
		s.opts.clock.Advance(inv.ExpiresAt.Sub(s.opts.clock.Now()) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // expires it
			return err
		}
		if _, err := fake.Pay(inv.Ticker, inv.AddressIn, amount); err != nil {
			return err
		}
	case actConfirm:
		for _, tx := range s.unconfirmed(inv.AddressIn) {
			if err := fake.Confirm(tx, 1); err != nil {
				return err
			}
		}
	case actRequote:
		if inv.QuoteExpiresAt.IsZero() {
			return fmt.Errorf("%w: no quote", errAction)
		}
		s.opts.clock.Advance(max(inv.QuoteExpiresAt.Sub(s.opts.clock.Now()), 0) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // re-quotes it
			return err
		}
	case actExpire:
		s.opts.clock.Advance(max(inv.ExpiresAt.Sub(s.opts.clock.Now()), 0) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // expires it
			return err
		}
	default:
		return fmt.Errorf("%w: unknown action %q", errAction, action)
	}
	return fake.Flush(ctx)
}
