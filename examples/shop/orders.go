package main

import (
	"context"
	"crypto/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// order is what a customer bought. The shop numbers it (ID, what the
// customer and the staff quote: "1001") and gives it a random Token,
// which names its page: an order number is easy to guess, the page of
// someone's order must not be. The invoices of an order are the Desk's
// (ByOrderID); the order itself never changes.
type order struct {
	ID      string
	Token   string
	Lines   cart
	Total   decimal.Decimal
	Created time.Time
}

// Path is the order's page.
func (o *order) Path() string { return "/orders/" + o.Token }

// orderBook keeps the shop's orders in memory; a real shop keeps them in
// its database, beside the invoices (invoice/pgstore).
type orderBook struct {
	mu      sync.Mutex
	next    int
	byID    map[string]*order
	byToken map[string]*order
	byForm  map[string]*order // the drafts, by the checkout form that made them
}

func newOrderBook() *orderBook {
	return &orderBook{next: 1000, byID: map[string]*order{}, byToken: map[string]*order{}, byForm: map[string]*order{}}
}

// draft numbers a new order for lines, made by the checkout form form.
// The same form posted again (a double click, a reload, a retry after a
// timeout) gets the same order, for which the Desk returns the same
// invoice: one order, one invoice, however often the button is pressed.
// keep stores the order once its invoice exists.
func (b *orderBook) draft(form string, lines cart, now time.Time) *order {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.byForm[form]; ok && form != "" {
		return o
	}
	b.next++
	o := &order{ID: strconv.Itoa(b.next), Token: rand.Text(), Lines: lines, Total: lines.Total(), Created: now}
	if form != "" {
		b.byForm[form] = o
	}
	return o
}

// drafted returns the order form made, nil if none.
func (b *orderBook) drafted(form string) *order {
	if form == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byForm[form]
}

func (b *orderBook) keep(o *order) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.byID[o.ID] = o
	b.byToken[o.Token] = o
}

// byNumber returns the order with this ID, nil if none.
func (b *orderBook) byNumber(id string) *order {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byID[id]
}

// byPageToken returns the order whose page this token names, nil if none.
func (b *orderBook) byPageToken(token string) *order {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byToken[token]
}

// The browser remembers its orders' tokens in a cookie, so that the
// customer finds them again under "Orders".
const (
	ordersCookie = "orders"
	maxOrders    = 20
)

// ordersOf returns the tokens of the request's orders, newest first.
func ordersOf(r *http.Request) []string {
	ck, err := r.Cookie(ordersCookie)
	if err != nil || ck.Value == "" || len(ck.Value) > 1024 {
		return nil
	}
	tokens := strings.Split(ck.Value, "|")
	return tokens[:min(len(tokens), maxOrders)]
}

// rememberOrder adds the order's token in front of the browser's list.
func rememberOrder(w http.ResponseWriter, r *http.Request, o *order) {
	tokens := slices.DeleteFunc(ordersOf(r), func(t string) bool { return t == o.Token })
	tokens = append([]string{o.Token}, tokens[:min(len(tokens), maxOrders-1)]...)
	http.SetCookie(w, &http.Cookie{Name: ordersCookie, Value: strings.Join(tokens, "|"), Path: "/",
		MaxAge: 90 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// orderState is what the customer reads about an order: a title, a
// sentence, a tone for the colour (ok, warn, bad or "" for waiting) and
// what they can do.
type orderState struct {
	Title, Message, Tone string
	Pay                  string // the payment page to continue on
	PayLabel             string
	Retry                bool // the order may be paid again (its invoice ended with nothing received)
}

// stateOf says where an order stands from its newest invoice, as the
// clock makes it now.
func stateOf(o *order, inv *invoice.Invoice) orderState {
	if inv == nil {
		return orderState{Title: "Being prepared", Message: "We are preparing your payment. Please check again in a moment."}
	}
	received := inv.Paid.IsPositive() || inv.PaidPending.IsPositive() || len(inv.Payments) > 0
	switch inv.Status {
	case invoice.StatusNew:
		switch inv.Exception {
		case invoice.ExceptionPaidPartial:
			return orderState{Title: "Partly paid", Tone: "warn", Pay: "/pay/" + inv.ID, PayLabel: "Pay the rest",
				Message: "We received part of your payment. Please send the rest before " + shortTime(inv.ExpiresAt) + "."}
		case invoice.ExceptionWrongCoin:
			return orderState{Title: "Paid in another coin", Tone: "warn", Pay: "/pay/" + inv.ID, PayLabel: "Pay now",
				Message: "We received a payment in another coin than the one asked. It is on record: please write to us quoting order " +
					o.ID + ", or pay the order in " + coinName(inv.Ticker) + " before " + shortTime(inv.ExpiresAt) + "."}
		}
		if inv.Ticker == "" {
			return orderState{Title: "Awaiting payment", Pay: "/pay/" + inv.ID, PayLabel: "Choose a coin and pay",
				Message: "Your order is reserved until " + shortTime(inv.ExpiresAt) + ". Choose the coin you pay with on the payment page."}
		}
		return orderState{Title: "Awaiting payment", Pay: "/pay/" + inv.ID, PayLabel: "Pay now",
			Message: "Your order is reserved until " + shortTime(inv.ExpiresAt) + "."}
	case invoice.StatusProcessing:
		return orderState{Title: "Payment received", Tone: "ok",
			Message: "We see your payment on the network and wait for it to be confirmed. There is nothing more to do."}
	case invoice.StatusSettled:
		msg := "Thank you! Your payment is confirmed and we are packing your order."
		if inv.Exception == invoice.ExceptionPaidOver {
			msg = "Thank you! Your payment is confirmed and we are packing your order. You sent more than the price: we will be in touch about the difference."
		}
		return orderState{Title: "Paid", Tone: "ok", Message: msg}
	case invoice.StatusExpired:
		if !received {
			return orderState{Title: "Payment time ran out", Tone: "bad", Retry: true,
				Message: "Nothing was charged. You can pay again, at today's price."}
		}
		return orderState{Title: "Payment incomplete", Tone: "warn",
			Message: "Your payment arrived late, in part, or in another coin. It is on record: please write to us quoting order " + o.ID + ", and we will sort it out."}
	default: // invalid
		if !received {
			return orderState{Title: "Cancelled", Tone: "bad", Message: "This order was cancelled. Nothing was charged."}
		}
		return orderState{Title: "Cancelled", Tone: "bad",
			Message: "This order was cancelled. A payment for it is on record: we will be in touch, or write to us quoting order " + o.ID + "."}
	}
}

// orderView is what the order page shows.
type orderView struct {
	Order    *order
	State    orderState
	Invoices []*invoice.Invoice // newest first
}

// view reads the order's invoices and says where it stands.
func (s *shop) orderView(ctx context.Context, o *order) (orderView, error) {
	invs, err := s.desk.ByOrderID(ctx, o.ID)
	if err != nil {
		return orderView{}, err
	}
	now := s.now()
	for i, inv := range invs {
		invs[i] = inv.AsOf(now)
	}
	v := orderView{Order: o, Invoices: invs}
	var newest *invoice.Invoice
	if len(invs) > 0 {
		newest = invs[0]
	}
	v.State = stateOf(o, newest)
	return v, nil
}

// showOrder is the customer's order page.
func (s *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	o := s.orders.byPageToken(r.PathValue("token"))
	if o == nil {
		s.noSuchOrder(w, r)
		return
	}
	v, err := s.orderView(r.Context(), o)
	if err != nil {
		s.unavailable(w, r, "order page", err)
		return
	}
	s.page(w, r, "order.html", "Order "+o.ID, v)
}

// payOrder sends the customer to the order's open payment page, or, when
// its last invoice ended with nothing received, to a new one at today's
// price.
func (s *shop) payOrder(w http.ResponseWriter, r *http.Request) {
	o := s.orders.byPageToken(r.PathValue("token"))
	if o == nil {
		s.noSuchOrder(w, r)
		return
	}
	v, err := s.orderView(r.Context(), o)
	if err != nil {
		s.unavailable(w, r, "order page", err)
		return
	}
	switch {
	case v.State.Pay != "":
		http.Redirect(w, r, v.State.Pay, http.StatusSeeOther)
	case v.State.Retry:
		inv, err := s.create(r.Context(), o, "")
		if err != nil {
			s.checkoutFailed(w, r, o, err)
			return
		}
		http.Redirect(w, r, "/pay/"+inv.ID, http.StatusSeeOther)
	default:
		http.Redirect(w, r, o.Path(), http.StatusSeeOther)
	}
}

// listOrders shows the orders this browser placed.
func (s *shop) listOrders(w http.ResponseWriter, r *http.Request) {
	type row struct {
		Order *order
		State orderState
	}
	var rows []row
	for _, token := range ordersOf(r) {
		o := s.orders.byPageToken(token)
		if o == nil {
			continue // from an earlier run of the shop
		}
		v, err := s.orderView(r.Context(), o)
		if err != nil {
			s.unavailable(w, r, "orders", err)
			return
		}
		rows = append(rows, row{o, v.State})
	}
	s.page(w, r, "orders.html", "Your orders", rows)
}

func (s *shop) noSuchOrder(w http.ResponseWriter, r *http.Request) {
	s.problem(w, r, http.StatusNotFound, "We could not find this order",
		"The link may be incomplete, or the order is from an earlier run of the demo. Your orders are listed under Orders.")
}

// shortTime writes a time as the customer reads it: "12:30 UTC, 23 Nov".
func shortTime(t time.Time) string {
	return t.UTC().Format("15:04 UTC, 2 Jan")
}
