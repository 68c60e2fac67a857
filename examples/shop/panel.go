package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// The developer panel plays the customer and the chain on the fake
// service: it pays an invoice in full, in part, late or in another coin,
// confirms payments, moves the shared clock and runs the Desk's Tick.

// Actions of the developer panel on one invoice.
const (
	actFull      = "full"      // pay what is due
	actPartial   = "partial"   // pay half of it (at least the coin's minimum)
	actWrongCoin = "wrongcoin" // pay in another coin of the network
	actLate      = "late"      // let the invoice expire, then pay what was due
	actConfirm   = "confirm"   // confirm the pending payments
	actRequote   = "requote"   // move the clock past the quote
	actExpire    = "expire"    // move the clock past expiry
	actRefund    = "refund"    // refund all that is left (Desk.Refund)
)

// Actions of the developer panel on the clock.
const (
	actWait = "wait" // move the clock forward by the form's "by"
	actTick = "tick" // run the Desk's Tick now
)

// waits are the panel's steps of the clock.
var waits = map[string]time.Duration{"5m": 5 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour}

// panelDone says what an action did, after the redirect.
var panelDone = map[string]string{
	actFull:      "Paid in full on the fake chain.",
	actPartial:   "Paid half on the fake chain.",
	actWrongCoin: "Paid in another coin of the network.",
	actLate:      "The invoice expired, then the payment arrived.",
	actConfirm:   "The pending payments are confirmed.",
	actRequote:   "The clock passed the quote; the invoice has a new one.",
	actExpire:    "The clock passed the deadline; the invoice expired.",
	actRefund:    "The refund is made: open its claim page to play the customer, then send it from the admin.",
	actWait:      "The clock moved forward.",
}

// errAction is a developer panel request that cannot be done; its text
// is a sentence the panel shows.
type errAction string

func (e errAction) Error() string { return string(e) }

// panelRow is one invoice in the developer panel.
type panelRow struct {
	Inv     *invoice.Invoice
	Order   *order
	Pending int
	// Refundable: the invoice is final and something confirmed is left
	// to refund. Claims are its refunds awaiting the customer's address,
	// and TestAddress an address of the coin's network to enter there.
	Refundable  bool
	Claims      []*invoice.Refund
	TestAddress string
	Key         string // the refund button's RefundOptions.Key
}

// customerWallets are addresses of the customer's for the claim page,
// one per address family of the fake (not the shop's demoWallets).
var customerWallets = []string{
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	"ltc1q56mj3gna7kq0057de42ww2rjxwzeh9amj0zyvf",
	"bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy",
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
}

// testAddress returns a customer's address of ticker's network, or "".
func (s *shop) testAddress(ticker string) string {
	for _, w := range customerWallets {
		if s.opts.fake.ValidAddress(ticker, w) {
			return w
		}
	}
	return ""
}

// panelView is what the panel shows.
type panelView struct {
	Rows    []panelRow
	Now     time.Time
	Token   string
	Done    string
	Problem string
}

// panelRows is how many invoices the panel lists, newest first.
const panelRows = 20

// panel lists the newest invoices with the actions that simulate the
// customer and the chain.
func (s *shop) panel(w http.ResponseWriter, r *http.Request) {
	if no := s.guard.page(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	done := panelDone[r.URL.Query().Get("done")]
	if r.URL.Query().Get("done") == actTick {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		done = fmt.Sprintf("Tick brought %d invoice(s) up to date.", max(n, 0))
	}
	s.showPanel(w, r, http.StatusOK, panelView{Done: done})
}

func (s *shop) showPanel(w http.ResponseWriter, r *http.Request, status int, v panelView) {
	v.Now, v.Token = s.now(), s.guard.token
	for inv, err := range s.desk.List(r.Context(), nil) {
		if err != nil {
			s.unavailable(w, r, "developer panel", err)
			return
		}
		row := panelRow{Inv: inv.AsOf(v.Now), Order: s.orders.byNumber(inv.OrderID),
			Pending: len(s.unconfirmed(inv)), Key: rand.Text()}
		row.Refundable = !row.Inv.Paying() && row.Inv.Status != invoice.StatusProcessing && refundable(row.Inv)
		for i := range row.Inv.Refunds {
			if rf := &row.Inv.Refunds[i]; rf.Status == invoice.RefundAwaitingAddress {
				row.Claims = append(row.Claims, rf)
				row.TestAddress = s.testAddress(rf.Ticker)
			}
		}
		v.Rows = append(v.Rows, row)
		if len(v.Rows) == panelRows {
			break
		}
	}
	s.render(w, r, status, "panel.html", "Developer panel", v)
}

// act runs one developer panel action, delivers the fake's callbacks, and
// goes back to the panel.
func (s *shop) act(w http.ResponseWriter, r *http.Request) {
	// The panel moves money on the fake: only its own form may.
	if no := s.guard.page(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	if no := s.guard.form(w, r); no != nil {
		s.refuse(w, r, no)
		return
	}
	action := r.PostForm.Get("action")
	var err error
	n := 0
	switch action {
	case actWait:
		d, ok := waits[r.PostForm.Get("by")]
		if !ok {
			err = errAction("The clock moves by 5 minutes, an hour or a day.")
			break
		}
		s.opts.clock.Advance(d)
	case actTick:
		n, err = s.desk.Tick(r.Context())
		if err == nil {
			err = s.opts.fake.Flush(r.Context())
		}
	case actRefund:
		err = s.panelRefund(r)
	default:
		err = s.do(r.Context(), r.PostForm.Get("invoice"), action)
	}
	if err != nil {
		var said errAction
		msg := "The fake service could not do this; the shop's log says why."
		if errors.As(err, &said) {
			msg = said.Error()
		} else {
			s.logger().ErrorContext(r.Context(), "developer panel", "action", action, "error", err)
		}
		s.showPanel(w, r, http.StatusBadRequest, panelView{Problem: msg})
		return
	}
	q := url.Values{"done": {action}}
	if action == actTick {
		q.Set("n", strconv.Itoa(n))
	}
	http.Redirect(w, r, "/dev/?"+q.Encode(), http.StatusSeeOther)
}

// do runs one developer panel action on invoice id.
func (s *shop) do(ctx context.Context, id, action string) error {
	stored, err := s.desk.Get(ctx, id)
	if errors.Is(err, invoice.ErrNotFound) {
		return errAction("There is no such invoice: reload the panel.")
	}
	if err != nil {
		return err
	}
	inv := stored.AsOf(s.now())
	fake := s.opts.fake
	if inv.AddressIn == "" && (action == actFull || action == actPartial || action == actWrongCoin || action == actLate) {
		return errAction("The customer has not chosen a coin yet: choose one on the payment page first.")
	}
	switch action {
	case actFull, actPartial:
		amount := inv.Due
		if action == actPartial {
			amount = inv.Due.Div(decimal.NewFromInt(2)).Truncate(inv.Decimals)
			amount = decimal.Max(amount, inv.Minimum)
		}
		if !amount.IsPositive() {
			return errAction("Nothing is due on this invoice.")
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
			return errAction("Nothing is due on this invoice.")
		}
		s.opts.clock.Advance(inv.ExpiresAt.Sub(s.opts.clock.Now()) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // expires it
			return err
		}
		if _, err := fake.Pay(inv.Ticker, inv.AddressIn, amount); err != nil {
			return err
		}
	case actConfirm:
		pending := s.unconfirmed(inv)
		if len(pending) == 0 {
			return errAction("This invoice has no payment waiting for confirmation.")
		}
		for _, tx := range pending {
			if err := fake.Confirm(tx, 1); err != nil {
				return err
			}
		}
	case actRequote:
		if inv.QuoteExpiresAt.IsZero() || !inv.Paying() {
			return errAction("This invoice has no quote to renew.")
		}
		s.opts.clock.Advance(max(inv.QuoteExpiresAt.Sub(s.opts.clock.Now()), 0) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // re-quotes it
			return err
		}
	case actExpire:
		if !inv.Paying() {
			return errAction("Only an invoice that waits for payment can expire.")
		}
		s.opts.clock.Advance(max(inv.ExpiresAt.Sub(s.opts.clock.Now()), 0) + time.Second)
		if _, err := s.desk.Tick(ctx); err != nil { // expires it
			return err
		}
	default:
		return errAction("The panel has no such button.")
	}
	return fake.Flush(ctx)
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
	return errAction(fmt.Sprintf("The fake service has no other coin on the network of %s to pay with.", coinName(inv.Ticker)))
}

// unconfirmed returns the fake's unconfirmed payments to inv's
// addresses: its coin's, and those of the coins chosen before.
func (s *shop) unconfirmed(inv *invoice.Invoice) []string {
	addrs := []string{inv.AddressIn}
	for _, c := range inv.Coins {
		addrs = append(addrs, c.AddressIn)
	}
	var out []string
	for _, p := range s.opts.fake.Payments() {
		if p.AddressIn != "" && slices.Contains(addrs, p.AddressIn) && p.Result == "pending" {
			out = append(out, p.TxIDIn)
		}
	}
	return out
}

// refundable reports whether something confirmed is left to refund in
// any coin inv was paid in.
func refundable(inv *invoice.Invoice) bool {
	for _, tk := range paidCoins(inv) {
		if inv.Refundable(tk).IsPositive() {
			return true
		}
	}
	return false
}

// panelRefund refunds all that is left of the form's invoice, in the
// coin it was paid in (the one paid in when it was another), keyed by the
// form so that a double press makes one refund.
func (s *shop) panelRefund(r *http.Request) error {
	id, key := r.PostForm.Get("invoice"), r.PostForm.Get("key")
	if key == "" || len(key) > 64 {
		return errAction("This button's form has expired: reload the panel.")
	}
	inv, err := s.desk.Get(r.Context(), id)
	if errors.Is(err, invoice.ErrNotFound) {
		return errAction("There is no such invoice: reload the panel.")
	}
	if err != nil {
		return err
	}
	o := &invoice.RefundOptions{Of: invoice.RefundAll, Reason: "refunded from the developer panel", Key: "panel-" + key}
	for _, tk := range paidCoins(inv) {
		if inv.Refundable(tk).IsPositive() {
			o.Ticker = tk
			break
		}
	}
	_, err = s.desk.Refund(r.Context(), id, o)
	switch {
	case err == nil, errors.Is(err, invoice.ErrNotNotified):
		return nil
	case errors.Is(err, invoice.ErrNotRefundable):
		return errAction("Nothing confirmed is left to refund on this invoice.")
	case errors.Is(err, invoice.ErrWrongStatus):
		return errAction("This invoice still waits for payment: only a final one can be refunded.")
	}
	return err
}
