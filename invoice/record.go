package invoice

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Record is what a Store keeps of one invoice: the Invoice, and what only
// the Desk may see (the callback URL with the invoice's nonce, how to
// write payment URIs, the request it was created for). Stores persist it
// with MarshalJSON and UnmarshalJSON, index it by what its methods say
// (ID, Version, TickAt, OpenOrder and the Invoice's OrderID, Status,
// Exception and CreatedAt), and never change it; it must never be shown
// to a customer.
//
// A record with Version 0 is a reservation: a Create holds its order
// while it asks the service for the address (Status is empty, and the
// Desk never returns it as an Invoice). Version 1 is the invoice as
// created; every later version is a change, to be passed to onChange.
type Record struct {
	// Invoice is the invoice as it stands.
	Invoice Invoice

	nonce       string
	callbackURL string
	uri         uriTemplate
	req         request      // what Create was asked, checked and with defaults
	marked      bool         // settled by hand (MarkSettled)
	claimUntil  time.Time    // a reservation: until when its Create holds it
	coins       []coinWork   // of an invoice with Coins: one per offered coin, in order
	refunds     []refundWork // of each refund: its claim token, its payout's progress
}

// ID returns the invoice's ID.
func (r *Record) ID() string { return r.Invoice.ID }

// Version returns the invoice's version: 0 for a reservation, 1 as
// created, one more per change.
func (r *Record) Version() int64 { return r.Invoice.Version }

// TickAt returns when Tick must next look at the invoice (stores index
// it): the deadline of a new invoice, or its quote's end when the quote
// lapses first and can be renewed (a fiat price with no payment in
// flight); the end of monitoring of a processing one; the end of an
// unclaimed refund's claim link; and, while a refund is sent, when its
// payout is looked at again (the end of its sender's claim, or a later
// check), whichever comes first. It is zero when time alone will never
// change the invoice (settled, expired or invalid with no refund waiting,
// a reservation).
func (r *Record) TickAt() time.Time {
	inv := &r.Invoice
	var t time.Time
	earliest := func(u time.Time) {
		if !u.IsZero() && (t.IsZero() || u.Before(t)) {
			t = u
		}
	}
	switch inv.Status {
	case StatusNew:
		earliest(inv.ExpiresAt)
		if inv.Currency != "" && inv.PaidPendingFiat.IsZero() {
			earliest(inv.QuoteExpiresAt)
		}
	case StatusProcessing:
		earliest(monitorEnd(inv))
	}
	for _, rf := range inv.Refunds {
		switch rf.Status {
		case RefundAwaitingAddress:
			earliest(rf.ClaimExpiresAt)
		case RefundSending:
			if w := r.workOf(rf.ID); w != nil {
				at := w.Until
				if w.CheckAt.After(at) {
					at = w.CheckAt
				}
				if at.IsZero() {
					at = rf.UpdatedAt
				}
				earliest(at)
			}
		}
	}
	return t
}

// PayoutRequestKey prefixes the keys of the payout requests a record's
// refunds use (Keys): "payout-request/" and "<ticker>/<id>".
const PayoutRequestKey = "payout-request/"

// Keys returns the record's unique keys, which stores index for
// LoadByKey: its refunds' claim tokens (130 random bits each, what a
// claim link names), and a key for each payout request of the service
// its refunds have used (PayoutRequestKey, the ticker and the request's
// ID), so that no two invoices ever use one payout request. A key stays
// with its record for good: a cancelled refund's token still finds the
// invoice (the claim page answers 404 for it).
func (r *Record) Keys() []string {
	out := make([]string, 0, len(r.refunds))
	for _, w := range r.refunds {
		out = append(out, w.Token)
	}
	for _, w := range r.refunds {
		for _, q := range w.Requests {
			out = append(out, PayoutRequestKey+q)
		}
	}
	return out
}

// OpenOrder returns the OrderID when the record holds its order open (a
// reservation, or a new or processing invoice), "" otherwise. A Store
// keeps at most one record per OpenOrder: an order has one open invoice.
func (r *Record) OpenOrder() string {
	switch r.Invoice.Status {
	case statusReserved, StatusNew, StatusProcessing:
		return r.Invoice.OrderID
	}
	return ""
}

func (r *Record) clone() *Record {
	c := *r
	c.Invoice = *r.Invoice.Clone()
	c.coins = append([]coinWork(nil), r.coins...)
	c.refunds = append([]refundWork(nil), r.refunds...)
	for i := range c.refunds {
		c.refunds[i].Requests = slices.Clone(c.refunds[i].Requests)
	}
	return &c
}

// recordJSON is the stored form of a Record.
type recordJSON struct {
	Invoice     Invoice      `json:"invoice"`
	Nonce       string       `json:"nonce"`
	CallbackURL string       `json:"callback_url,omitempty"`
	URI         uriTemplate  `json:"uri"`
	Request     *request     `json:"request,omitempty"`
	Marked      bool         `json:"marked,omitempty"`
	ClaimUntil  time.Time    `json:"claim_until,omitzero"`
	Coins       []coinWork   `json:"coins,omitempty"`
	Refunds     []refundWork `json:"refunds,omitempty"`
}

// MarshalJSON encodes the whole record, secrets included, for a Store.
func (r *Record) MarshalJSON() ([]byte, error) {
	q := r.req
	return json.Marshal(recordJSON{Invoice: r.Invoice, Nonce: r.nonce, CallbackURL: r.callbackURL, URI: r.uri,
		Request: &q, Marked: r.marked, ClaimUntil: r.claimUntil, Coins: r.coins, Refunds: r.refunds})
}

// UnmarshalJSON decodes what MarshalJSON encoded, and what v0.1.0 stored
// (without the request: it is rebuilt from the invoice, MonitorFor is
// DefaultMonitorFor).
func (r *Record) UnmarshalJSON(b []byte) error {
	var w recordJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Invoice.ID == "" || w.Nonce == "" {
		return errors.New("invoice: stored record without ID or nonce")
	}
	*r = Record{Invoice: w.Invoice, nonce: w.Nonce, callbackURL: w.CallbackURL, uri: w.URI, marked: w.Marked,
		claimUntil: w.ClaimUntil, coins: w.Coins, refunds: w.Refunds}
	if len(r.coins) != len(r.Invoice.Coins) {
		return errors.New("invoice: stored record whose coins do not match their bookkeeping")
	}
	if len(r.refunds) != len(r.Invoice.Refunds) {
		return errors.New("invoice: stored record whose refunds do not match their bookkeeping")
	}
	if w.Request != nil {
		r.req = *w.Request
	} else {
		r.req = legacyRequest(&r.Invoice, r.callbackURL)
	}
	if r.Invoice.MonitorFor.Duration == 0 {
		r.Invoice.MonitorFor.Duration = DefaultMonitorFor
	}
	return nil
}

// legacyRequest rebuilds what can be known of the request of an invoice
// stored by v0.1.0, which kept none. Its destination is unknown, so no
// new Create ever asks for the same thing.
func legacyRequest(inv *Invoice, callbackURL string) request {
	cb := callbackURL
	if i := strings.Index(cb, ParamInvoice+"="+inv.ID); i > 0 {
		cb = cb[:i-1]
	}
	return request{
		OrderID: inv.OrderID, Description: inv.Description, Ticker: inv.Ticker, Price: inv.Price,
		Currency: inv.Currency, Callback: cb, Address: "?", Tolerance: inv.Tolerance,
		QuoteTTL: inv.QuoteTTL, ExpiresIn: Duration{inv.ExpiresAt.Sub(inv.CreatedAt)},
		MonitorFor: Duration{DefaultMonitorFor}, MultiToken: inv.MultiToken,
	}
}

// uriTemplate writes the service's payment URI for another amount: the
// URI the service gave for one amount, split around that amount's query
// value. Known is false when the amount was not found in the URI.
type uriTemplate struct {
	Known    bool   `json:"known"`
	Prefix   string `json:"prefix"`
	Suffix   string `json:"suffix"`
	Smallest int32  `json:"smallest"` // decimal shift: 0 for coin units, the coin's decimals for smallest units
	// Given is the URI the service gave for GivenAmount, used for that
	// amount when the form is unknown.
	Given       string          `json:"given"`
	GivenAmount decimal.Decimal `json:"given_amount"`
}

// makeURITemplate finds amount among the query values of uri, in coin
// units or in smallest units (decimals places).
func makeURITemplate(uri string, amount decimal.Decimal, decimals int32) uriTemplate {
	t := findAmount(uri, amount, decimals)
	t.Given, t.GivenAmount = uri, amount
	return t
}

func findAmount(uri string, amount decimal.Decimal, decimals int32) uriTemplate {
	q := strings.IndexByte(uri, '?')
	if q < 0 {
		return uriTemplate{}
	}
	pos := q + 1
	for _, part := range strings.Split(uri[q+1:], "&") {
		_, v, ok := strings.Cut(part, "=")
		if ok && v != "" {
			start := pos + len(part) - len(v)
			if d, err := decimal.NewFromString(v); err == nil && !strings.ContainsAny(v, "eE") {
				switch {
				case d.Equal(amount):
					return uriTemplate{Known: true, Prefix: uri[:start], Suffix: uri[start+len(v):]}
				case decimals > 0 && d.Equal(amount.Shift(decimals)):
					return uriTemplate{Known: true, Prefix: uri[:start], Suffix: uri[start+len(v):], Smallest: decimals}
				}
			}
		}
		pos += len(part) + 1
	}
	return uriTemplate{}
}

// render writes the URI asking for amount, or "" when the form is unknown.
func (t uriTemplate) render(amount decimal.Decimal) string {
	if t.Given != "" && amount.Equal(t.GivenAmount) {
		return t.Given
	}
	if !t.Known {
		return ""
	}
	return t.Prefix + amount.Shift(t.Smallest).String() + t.Suffix
}
