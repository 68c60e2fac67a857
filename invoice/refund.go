package invoice

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// RefundOf says what a refund gives back.
type RefundOf string

// What a refund gives back.
const (
	// RefundOverpaid is the confirmed excess over the price, in the coin
	// paid: what a payment brought beyond the price, at the quote it was
	// received at (with coins the customer chose, their payments pay the
	// price in the order they were seen, and the excess is in the coin of
	// the payments that brought it). A payment in another coin is all
	// excess. Earlier refunds in the coin count against the excess first.
	RefundOverpaid RefundOf = "overpaid"
	// RefundAll is everything confirmed in the coin that is not refunded
	// yet.
	RefundAll RefundOf = "all"
	// RefundCustom is RefundOptions.Amount, in the coin paid.
	RefundCustom RefundOf = "custom"
)

// RefundRate says how RefundAll and RefundOverpaid value what was
// received.
type RefundRate string

// Rates of a refund.
const (
	// RateThen gives back the coin amount received (the default).
	RateThen RefundRate = "then"
	// RateNow gives back the fiat value received in the coin (at the
	// quotes it was received at; for RefundOverpaid, the value of the
	// excess at the quotes of the payments that brought it) converted at
	// the coin's price today, never more coin than RateThen would give.
	// For a price in the coin it is RateThen; a coin that was not valued
	// (a wrong coin) refuses it, and what arrived in a valued coin at
	// another coin's address (a wrong coin there) was never valued: it
	// goes back whole, as with RateThen (earlier refunds in the coin
	// count against it first).
	RateNow RefundRate = "now"
)

// RefundStatus is where a refund stands.
type RefundStatus string

// Statuses of a refund. A refund starts awaiting the customer's address,
// is ready once it has one, and is sent by SendRefund (sending, then
// sent or failed) or by the merchant (MarkRefundSent: sent). Awaiting,
// ready and failed refunds can be cancelled.
const (
	RefundAwaitingAddress RefundStatus = "awaiting_address"
	RefundReady           RefundStatus = "ready"
	RefundSending         RefundStatus = "sending"
	RefundSent            RefundStatus = "sent"
	RefundFailed          RefundStatus = "failed"
	RefundCancelled       RefundStatus = "cancelled"
)

// counts reports whether a refund of this status counts against what was
// received: awaiting an address, ready, sending or sent (failed and
// cancelled ones do not).
func (s RefundStatus) counts() bool {
	return s == RefundAwaitingAddress || s == RefundReady || s == RefundSending || s == RefundSent
}

// Defaults and limits of RefundOptions.
const (
	// DefaultClaimFor is how long a claim link waits for the customer's
	// address unless RefundOptions.ClaimFor says otherwise.
	DefaultClaimFor = 30 * 24 * time.Hour
	// MaxClaimFor bounds RefundOptions.ClaimFor.
	MaxClaimFor = 365 * 24 * time.Hour
)

// PageClaimPath is the part of Desk.Page's paths where claim pages are:
// a refund's ClaimPath is PageClaimPath + "/" + its token.
const PageClaimPath = "claim"

// RefundOptions are the parameters of Desk.Refund.
type RefundOptions struct {
	// Of says what is given back: RefundOverpaid, RefundAll or
	// RefundCustom. Required.
	Of RefundOf
	// Amount is the amount of a RefundCustom, in the coin paid: positive,
	// with no more decimal places than the coin has. It must be zero for
	// the others.
	Amount decimal.Decimal
	// Rate values RefundAll and RefundOverpaid: RateThen (the default,
	// also for "") or RateNow. A RefundCustom takes none.
	Rate RefundRate
	// Reason is kept in the refund and in the invoice's Events (up to
	// MaxReasonLen bytes).
	Reason string
	// Ticker is the coin to refund, "" for the invoice's coin; a payment
	// in another coin (ExceptionWrongCoin), or in a coin the customer
	// chose before switching (Invoice.Coins), is refunded in that coin.
	// When every confirmed payment is in one other coin, "" means that
	// coin.
	Ticker string
	// ClaimFor is how long the claim link waits for the customer's
	// address (default DefaultClaimFor, at most MaxClaimFor). An unclaimed
	// refund is then cancelled (by Tick), and its link answers 404.
	ClaimFor time.Duration
	// Key makes Refund safe to retry (after a timeout, a second click): a
	// Refund of the invoice with the Key of an earlier one returns that
	// refund, whatever became of it, and makes no other; with another Of,
	// Rate, Ticker or custom Amount it fails with ErrInvalidOptions (a
	// Reason or ClaimFor given again is not compared). Up to 200 bytes; "" for
	// none (then every call makes a refund, while there is something to
	// refund).
	Key string
}

// Refund is money given back to the customer of an invoice, in the coin
// they paid, to an address they choose on the claim page.
type Refund struct {
	// ID is the invoice's ID, "-R" and the refund's number on the
	// invoice ("…-R1"). It names the refund in the Desk's methods, never a
	// page.
	ID        string `json:"id"`
	InvoiceID string `json:"invoice_id"`
	// Ticker is the coin refunded, in "trc20_usdt" form.
	Ticker string `json:"ticker"`
	// Address is where the refund goes, set from the claim page
	// (SetRefundAddress); "" until then.
	Address string `json:"address,omitempty"`
	// TxID is the transaction that sent the refund, once sent.
	TxID string `json:"txid,omitempty"`
	// Reason is the merchant's reason.
	Reason string `json:"reason,omitempty"`
	// Key is RefundOptions.Key.
	Key string `json:"key,omitempty"`
	// Amount is what is given back, in Ticker.
	Amount decimal.Decimal `json:"amount"`
	// Status is where the refund stands.
	Status RefundStatus `json:"status"`
	// ClaimPath is where the customer enters an address, relative to where
	// Desk.Page is mounted ("claim/<token>": with the page at /pay/, the
	// customer opens /pay/claim/<token>). The token is 130 random bits and
	// holds no invoice or order ID. Whoever has the link chooses where the
	// money goes: give it to the customer only.
	ClaimPath string `json:"claim_path"`
	// ClaimExpiresAt is when the link stops waiting for an address.
	ClaimExpiresAt time.Time `json:"claim_expires_at,omitzero"`
	CreatedAt      time.Time `json:"created_at,omitzero"`
	UpdatedAt      time.Time `json:"updated_at,omitzero"`
	// Of and Rate are how Amount was computed.
	Of   RefundOf   `json:"of"`
	Rate RefundRate `json:"rate,omitempty"`
	// Quote is the price of one coin in the invoice's Currency that a
	// RateNow refund was converted at, and FiatValue is Amount at that
	// price; both are zero otherwise.
	Quote     decimal.Decimal `json:"quote,omitzero"`
	FiatValue decimal.Decimal `json:"fiat_value,omitzero"`
	// PayoutID is the service's payout that sent the refund, or that
	// failed (SendRefund).
	PayoutID string `json:"payout_id,omitempty"`
	// Failure is the service's reason for the last failed payout.
	Failure string `json:"failure,omitempty"`
}

// Errors of refunds.
var (
	// ErrNotRefundable is returned by Refund (and by SendRefund for a
	// failed refund sent again) when the refund would give back more than
	// the invoice's confirmed payments in the coin, less the refunds that
	// count (awaiting an address, ready, sending or sent): nothing was
	// received, or not confirmed yet, or everything is refunded, or the
	// amount is larger than what is left. The error says how much is left.
	// Nothing was stored.
	ErrNotRefundable = errors.New("invoice: more than can be refunded")
	// ErrRefundNotFound is returned for a refund ID the store does not
	// know.
	ErrRefundNotFound = errors.New("invoice: refund not found")
)

// refundWork is what only the Desk knows of a refund: its claim token,
// and the progress of its payout while it is sent. It is bookkeeping:
// changing it is not a change of the invoice (the Version stays).
type refundWork struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	// Owner holds the send until Until (a SendRefund, or a Tick that took
	// it over); "" when nobody does.
	Owner string    `json:"owner,omitempty"`
	Until time.Time `json:"until,omitzero"`
	// CheckAt is when Tick looks at the payout again.
	CheckAt time.Time `json:"check_at,omitzero"`
	// Step is the money call whose outcome is not known yet: stepRequest
	// (CreatePayouts), stepPayout (CreatePayoutFromRequests) or
	// stepProcess (ProcessPayout), each recorded before the call and
	// cleared once its answer is recorded; stepProcessed once the payout
	// is queued. AskedAt is when it was asked.
	Step    string    `json:"step,omitempty"`
	AskedAt time.Time `json:"asked_at,omitzero"`
	// RequestID and PayoutID are the service's payout request and payout
	// of the current attempt.
	RequestID string `json:"request_id,omitempty"`
	PayoutID  string `json:"payout_id,omitempty"`
	// Attempt counts the sends.
	Attempt int `json:"attempt,omitempty"`
	// Requests are the payout requests the refund has used, each
	// "<ticker>/<id>", oldest first: keys of the record (no other refund
	// may use them).
	Requests []string `json:"requests,omitempty"`
}

// useRequest makes request id of ticker the send's payout request.
func (w *refundWork) useRequest(ticker, id string) {
	w.RequestID = id
	if k := ticker + "/" + id; !slices.Contains(w.Requests, k) {
		w.Requests = append(slices.Clip(w.Requests), k)
	}
}

// The steps of a send.
const (
	stepRequest   = "request"
	stepPayout    = "payout"
	stepProcess   = "process"
	stepProcessed = "processed"
)

// refundID is the ID of an invoice's n-th refund.
func refundID(invoiceID string, n int) string { return invoiceID + "-R" + strconv.Itoa(n) }

// parseRefundID returns the invoice ID of a refund ID, or
// ErrRefundNotFound.
func parseRefundID(id string) (string, error) {
	inv, n, ok := strings.Cut(id, "-R")
	if !ok || !validID(inv) || n == "" || len(n) > 6 || n[0] == '0' {
		return "", ErrRefundNotFound
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return "", ErrRefundNotFound
		}
	}
	return inv, nil
}

// refundIn returns the refund with this ID in the record's invoice, nil
// if none.
func (r *Record) refundIn(id string) *Refund {
	for i := range r.Invoice.Refunds {
		if r.Invoice.Refunds[i].ID == id {
			return &r.Invoice.Refunds[i]
		}
	}
	return nil
}

// workOf returns the bookkeeping of refund id, nil if none.
func (r *Record) workOf(id string) *refundWork {
	for i := range r.refunds {
		if r.refunds[i].ID == id {
			return &r.refunds[i]
		}
	}
	return nil
}

// Refundable returns what can still be refunded in ticker's coin ("" for
// the invoice's): the confirmed payments in that coin, late ones
// included, to whichever of the invoice's addresses (a coin the customer
// chose before switching counts on its own), less the refunds in it that
// count (awaiting an address, ready, sending or sent). Unconfirmed
// payments are not refundable yet.
func (inv *Invoice) Refundable(tk string) decimal.Decimal {
	coin := inv.Ticker
	if tk != "" {
		coin = normCoin(tk)
	}
	received, _ := inv.received(coin)
	return received.Sub(inv.refunded(coin, ""))
}

// received returns the confirmed and the unconfirmed payments in coin,
// whichever address they paid: the invoice's coin, a coin the customer
// chose before, or another coin (ExceptionWrongCoin).
func (inv *Invoice) received(coin string) (confirmed, pending decimal.Decimal) {
	for _, rc := range inv.Payments {
		if !callbackurl.EqualFoldASCII(rc.Coin, coin) {
			continue
		}
		if rc.Confirmed {
			confirmed = confirmed.Add(rc.Amount)
		} else {
			pending = pending.Add(rc.Amount)
		}
	}
	return confirmed, pending
}

// refunded returns the refunds in coin that count, except the refund
// except.
func (inv *Invoice) refunded(coin, except string) decimal.Decimal {
	sum := decimal.Zero
	for _, rf := range inv.Refunds {
		if rf.ID != except && rf.Status.counts() && rf.Ticker == coin {
			sum = sum.Add(rf.Amount)
		}
	}
	return sum
}

// valued reports whether payments in coin were valued toward the price:
// the invoice's coin, and each coin the customer chose.
func (inv *Invoice) valued(coin string) bool {
	if coin == inv.Ticker {
		return true
	}
	c := coinOf(inv, coin)
	return c != nil && c.AddressIn != ""
}

// hasRefunds reports whether the invoice has a refund that is not
// cancelled.
func (inv *Invoice) hasRefunds() bool {
	for _, rf := range inv.Refunds {
		if rf.Status != RefundCancelled {
			return true
		}
	}
	return false
}

// check validates the options without I/O and returns them with the
// defaults applied.
func (o *RefundOptions) check() (RefundOptions, error) {
	if o == nil {
		return RefundOptions{}, fmt.Errorf("%w: nil refund options", ErrInvalidOptions)
	}
	q := *o
	switch q.Of {
	case RefundOverpaid, RefundAll:
		if !q.Amount.IsZero() {
			return q, invalid("Amount", "is for RefundCustom; %s computes the amount", q.Of)
		}
	case RefundCustom:
		switch {
		case !q.Amount.IsPositive():
			return q, invalid("Amount", "must be positive")
		case q.Rate != "":
			return q, invalid("Rate", "a RefundCustom amount is in the coin; it takes no rate")
		}
		if err := checkDecimal("Amount", q.Amount); err != nil {
			return q, err
		}
	case "":
		return q, invalid("Of", "say what to refund: RefundOverpaid, RefundAll or RefundCustom")
	default:
		return q, invalid("Of", "unknown %q", q.Of)
	}
	switch q.Rate {
	case "":
		if q.Of != RefundCustom {
			q.Rate = RateThen
		}
	case RateThen, RateNow:
	default:
		return q, invalid("Rate", "unknown %q", q.Rate)
	}
	if err := checkText("Reason", q.Reason, MaxReasonLen); err != nil {
		return q, err
	}
	if err := checkText("Key", q.Key, 200); err != nil {
		return q, err
	}
	if q.Ticker != "" {
		t, err := ticker.Parse(strings.TrimSpace(q.Ticker))
		if err != nil {
			return q, fmt.Errorf("%w: Ticker: %w", ErrInvalidOptions, cryptapi.ErrInvalidTicker)
		}
		q.Ticker = t.Key()
	}
	switch {
	case q.ClaimFor == 0:
		q.ClaimFor = DefaultClaimFor
	case q.ClaimFor < MinDuration || q.ClaimFor > MaxClaimFor:
		return q, invalid("ClaimFor", "%s is outside [%s, %s]", q.ClaimFor, MinDuration, MaxClaimFor)
	}
	return q, nil
}

// refundCoin is the coin a refund of inv is in: the one asked, else the
// invoice's, else the one other coin every confirmed payment is in (one
// the customer chose before, or a wrong coin).
func refundCoin(inv *Invoice, asked string) string {
	if asked != "" {
		return asked
	}
	if c, _ := inv.received(inv.Ticker); c.IsPositive() {
		return inv.Ticker
	}
	other := ""
	for _, rc := range inv.Payments {
		if rc.Confirmed && !callbackurl.EqualFoldASCII(rc.Coin, inv.Ticker) {
			if other != "" && other != rc.Coin {
				return inv.Ticker
			}
			other = rc.Coin
		}
	}
	if other == "" {
		return inv.Ticker
	}
	return other
}

// Refund gives money back to the customer of an invoice: it computes
// the amount (o.Of, o.Rate) in the coin paid, stores the refund awaiting
// the customer's address, and returns it, with the ClaimPath to send the
// customer to. Every refund change is an invoice change (onChange hears
// it once, with the refund in Invoice.Refunds and an Event with its
// reason).
//
// The amount is decided under the store's lock, from the invoice as it
// stands: the refunds of an invoice that count (awaiting an address,
// ready, sending or sent) never add up to more than its confirmed
// payments in that coin. Refunds racing each other, on any number of
// replicas, cannot pass that: those that would are refused with
// ErrNotRefundable and store nothing. Unconfirmed payments cannot be
// refunded yet.
//
// Only a final invoice (settled, expired or invalid) is refunded: a new
// or processing one still waits for payment (Invalidate it first), and
// is refused with ErrWrongStatus, or with ErrNotRefundable while nothing
// confirmed has arrived (what can be refunded is decided first). Options that cannot be used (an
// unknown Of or Rate, a negative amount, more decimal places than the
// coin has, an amount for RefundOverpaid) are ErrInvalidOptions, before
// anything is read or stored. A refund in a coin of which nothing
// confirmed was received is ErrNotRefundable before the service is asked
// anything, and one in a coin whose address format the SDK does not know
// (see cryptapi.ValidateAddress) is cryptapi.ErrAddressFormatUnknown: no
// claim page could check the customer's address. RateNow reads the coin's price from the service (for an
// invoice with a fiat Currency), and a refund in another coin its
// precision.
//
// The refund is then sent: by SendRefund from the payout wallet (API-key
// form), or by the merchant from their own wallet, recorded with
// MarkRefundSent.
func (d *Desk) Refund(ctx context.Context, invoiceID string, o *RefundOptions) (*Refund, error) {
	q, err := o.check()
	if err != nil {
		return nil, err
	}
	r, err := d.load(ctx, invoiceID)
	if err != nil {
		return nil, err
	}
	inv := &r.Invoice
	coin := refundCoin(inv, q.Ticker)
	e := &refundEvent{of: q.Of, rate: q.Rate, amount: q.Amount, reason: q.Reason, ticker: coin, key: q.Key,
		token: rand.Text(), claimFor: q.ClaimFor, decimals: inv.Decimals}
	if rf := inv.refundByKey(q.Key); rf != nil {
		// Asked before: the same refund (checked again under the lock).
		if err := rf.sameAsked(e); err != nil {
			return nil, err
		}
		c := *rf
		return &c, nil
	}
	if received, pending := inv.received(coin); !received.IsPositive() {
		// Refused before the service is asked for the coin (and decided
		// again under the lock).
		return nil, notReceived(coin, pending)
	}
	if errors.Is(cryptapi.ValidateAddress(coin, ""), cryptapi.ErrAddressFormatUnknown) {
		// The claim page could check no address of the coin.
		return nil, fmt.Errorf("invoice: refund in %s: %w: no claim page can take the customer's address; send it from your own wallet", coin, cryptapi.ErrAddressFormatUnknown)
	}
	if q.Rate == RateNow && !inv.valued(coin) {
		return nil, invalid("Rate", "a payment in another coin (%s) was not valued: refund it with RateThen", coin)
	}
	if c := coinOf(inv, coin); c != nil && coin != inv.Ticker {
		// A coin the invoice offers has its precision.
		e.decimals = c.Decimals
	} else if coin != inv.Ticker {
		// Another coin's precision comes from the service.
		info, err := d.coinInfo(ctx, coin, true)
		if err != nil {
			return nil, fmt.Errorf("invoice: refund in %s: %w", coin, err)
		}
		places, ok := info.Decimals()
		if !ok {
			return nil, fmt.Errorf("%w (%s)", ErrPrecisionUnknown, coin)
		}
		e.decimals = places
	}
	if !q.Amount.Equal(q.Amount.Truncate(e.decimals)) {
		return nil, invalid("Amount", "%s has more decimal places than %s has (%d)", q.Amount, coin, e.decimals)
	}
	if q.Rate == RateNow && inv.Currency != "" {
		if e.price, err = d.rate(ctx, coin, inv.Currency, true); err != nil {
			return nil, err
		}
	}
	n, err := d.change(ctx, invoiceID, event{kind: evRefund, refund: e})
	if n == nil {
		return nil, err
	}
	if rf := n.refundByKey(q.Key); rf != nil {
		c := *rf
		return &c, err
	}
	rf := n.Refunds[len(n.Refunds)-1]
	return &rf, err
}

// refundByKey returns the refund made with key, nil if none (or key is
// "").
func (inv *Invoice) refundByKey(key string) *Refund {
	if key == "" {
		return nil
	}
	for i := range inv.Refunds {
		if inv.Refunds[i].Key == key {
			return &inv.Refunds[i]
		}
	}
	return nil
}

// sameAsked refuses a Refund with the Key of rf but other options.
func (rf *Refund) sameAsked(e *refundEvent) error {
	if rf.Of != e.of || rf.Rate != e.rate || rf.Ticker != e.ticker || (e.of == RefundCustom && !rf.Amount.Equal(e.amount)) {
		return invalid("Key", "refund %s was made with this key and other options", rf.ID)
	}
	return nil
}

// Refunds returns the invoice's refunds, oldest first, as stored (an
// unclaimed refund whose link expired shows as cancelled once Tick ran).
// It never writes.
func (d *Desk) Refunds(ctx context.Context, invoiceID string) ([]*Refund, error) {
	r, err := d.load(ctx, invoiceID)
	if err != nil {
		return nil, err
	}
	out := make([]*Refund, 0, len(r.Invoice.Refunds))
	for _, rf := range r.Invoice.Refunds {
		out = append(out, &rf)
	}
	return out, nil
}

// GetRefund returns the refund with this ID as stored (ErrRefundNotFound
// if there is none). It never writes.
func (d *Desk) GetRefund(ctx context.Context, refundID string) (*Refund, error) {
	invID, err := parseRefundID(refundID)
	if err != nil {
		return nil, err
	}
	r, err := d.loadRefund(ctx, invID, refundID)
	if err != nil {
		return nil, err
	}
	c := *r.refundIn(refundID)
	return &c, nil
}

// SetRefundAddress sets where a refund awaiting an address goes: the
// address must be one of the refund's coin's network (checksums
// included, see cryptapi.ValidateAddress; surrounding white space is
// trimmed), and a coin whose address format the SDK does not know is
// refused (cryptapi.ErrAddressFormatUnknown): nothing is sent to an
// address nobody checked. A refund that has an address already, or is
// no longer waiting for one (cancelled, its link expired), is refused
// with ErrWrongStatus. The claim page calls it; errors wrap
// ErrInvalidOptions for a bad address, before anything is stored.
func (d *Desk) SetRefundAddress(ctx context.Context, refundID, address string) (*Refund, error) {
	invID, err := parseRefundID(refundID)
	if err != nil {
		return nil, err
	}
	address = strings.TrimSpace(address)
	r, err := d.loadRefund(ctx, invID, refundID)
	if err != nil {
		return nil, err
	}
	if err := cryptapi.ValidateAddress(r.refundIn(refundID).Ticker, address); err != nil {
		return nil, fmt.Errorf("%w: Address: %w", ErrInvalidOptions, err)
	}
	return d.changeRefund(ctx, invID, refundID, event{kind: evRefundAddress, refund: &refundEvent{id: refundID, address: address}})
}

// MarkRefundSent records that the merchant sent a ready refund from their
// own wallet, in either form: the refund is sent, with the transaction
// txid (required). Only a ready refund can be marked (ErrWrongStatus):
// one being sent by SendRefund is followed by the Desk.
func (d *Desk) MarkRefundSent(ctx context.Context, refundID, txid string) (*Refund, error) {
	invID, err := parseRefundID(refundID)
	if err != nil {
		return nil, err
	}
	txid = strings.TrimSpace(txid)
	if txid == "" {
		return nil, invalid("TxID", "MarkRefundSent needs the transaction that sent the refund")
	}
	if err := checkText("TxID", txid, 200); err != nil {
		return nil, err
	}
	return d.changeRefund(ctx, invID, refundID, event{kind: evRefundMarkSent, refund: &refundEvent{id: refundID, txid: txid}})
}

// CancelRefund cancels a refund that is awaiting an address, ready or
// failed, with the reason in the invoice's Events: it no longer counts
// against what was received, and its claim link answers 404. A refund
// being sent or sent cannot be cancelled (ErrWrongStatus); cancelling a
// cancelled refund changes nothing.
func (d *Desk) CancelRefund(ctx context.Context, refundID, reason string) (*Refund, error) {
	invID, err := parseRefundID(refundID)
	if err != nil {
		return nil, err
	}
	if err := checkText("Reason", reason, MaxReasonLen); err != nil {
		return nil, err
	}
	return d.changeRefund(ctx, invID, refundID, event{kind: evRefundCancel, refund: &refundEvent{id: refundID, reason: reason}})
}

// loadRefund loads the invoice of a refund that exists.
func (d *Desk) loadRefund(ctx context.Context, invID, refundID string) (*Record, error) {
	r, err := d.load(ctx, invID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrRefundNotFound
	}
	if err != nil {
		return nil, err
	}
	if r.refundIn(refundID) == nil {
		return nil, ErrRefundNotFound
	}
	return r, nil
}

// changeRefund applies a refund event, passes the change on and returns
// the refund as stored.
func (d *Desk) changeRefund(ctx context.Context, invID, refundID string, e event) (*Refund, error) {
	inv, err := d.change(ctx, invID, e)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrRefundNotFound
	}
	if inv == nil {
		return nil, err
	}
	for _, rf := range inv.Refunds {
		if rf.ID == refundID {
			return &rf, err
		}
	}
	return nil, ErrRefundNotFound
}
