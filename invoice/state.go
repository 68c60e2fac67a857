package invoice

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

// eventKind is what happened to an invoice.
type eventKind int

const (
	// evCreate: the service gave the address; a reservation becomes an
	// invoice.
	evCreate eventKind = iota + 1
	// evClock: time passed (expiry, end of monitoring).
	evClock
	// evPayment: a payment was seen (pending) or confirmed.
	evPayment
	// evQuote: a new rate for the unpaid remainder.
	evQuote
	// evInvalidate: the merchant cancelled the invoice.
	evInvalidate
	// evMark: the merchant settled the invoice by hand.
	evMark
	// evReopen: the merchant asked for the rest of an expired invoice
	// again, at a new rate and with a new deadline.
	evReopen
	// evChoose: the customer chose one of the invoice's coins.
	evChoose
	// evRefund: the merchant refunds part of what was received.
	evRefund
	// evRefundAddress: the customer gave a refund's address.
	evRefundAddress
	// evRefundSend: a refund is claimed to be sent from the payout wallet.
	evRefundSend
	// evRefundResume: a send whose claim lapsed is taken over (quiet).
	evRefundResume
	// evRefundWork: the sender records the progress of its payout (quiet).
	evRefundWork
	// evRefundDone: the service reports a refund's payout done or failed.
	evRefundDone
	// evRefundMarkSent: the merchant sent a refund from their own wallet.
	evRefundMarkSent
	// evRefundCancel: the merchant cancelled a refund.
	evRefundCancel
)

// event is one thing that happens to an invoice. Every event carries the
// time it is applied at, and time is applied first: an invoice past its
// deadline expires before a payment is recorded.
type event struct {
	kind eventKind
	at   time.Time
	// evPayment
	uuid, txid, coin string
	amount           decimal.Decimal
	confirmed        bool
	txidOut          string
	fee, forwarded   decimal.Decimal
	// evQuote, evReopen, evCreate: the price of one coin in the invoice's
	// currency.
	rate decimal.Decimal
	// evReopen: how long the reopened invoice waits.
	expiresIn time.Duration
	// evInvalidate, evMark, evReopen: the merchant's reason.
	note string
	// evCreate
	created *created
	// evPayment: the address paid (the invoice's current one if "").
	address string
	// evChoose: the coin chosen (created holds its address when made
	// now). evChoose, evQuote and evReopen of an invoice with Coins: the
	// rate of every offered coin.
	ticker string
	rates  map[string]decimal.Decimal
	// evRefund...
	refund *refundEvent
}

// created is what the service's answers give a reserved invoice.
type created struct {
	nonce       string // the reservation's nonce the address was made for
	addressIn   string
	callbackURL string
	uri         uriTemplate
	minimum     decimal.Decimal
	decimals    int32
	coinName    string
	network     string
	coins       []CoinChoice // CreateOptions.Tickers: the coins offered, quoted
}

// errBadEvent is returned by transition for an event it cannot apply.
var errBadEvent = errors.New("invoice: invalid event")

// transition computes the invoice that follows r after e. It is the only
// code that changes an invoice's state: pure (no I/O, no clock of its
// own, r is not modified), deterministic, and total over valid events.
// It appends an Event for every change it makes. changed is false when e
// changes nothing (a duplicate payment, a quote that is not due); next is
// then equal to r. An event the invoice's status does not allow is
// ErrWrongStatus.
func transition(r *Record, e event) (next *Record, changed bool, err error) {
	if r == nil {
		return nil, false, fmt.Errorf("%w: no invoice", errBadEvent)
	}
	if e.at.IsZero() {
		return nil, false, fmt.Errorf("%w: no time", errBadEvent)
	}
	at := e.at.UTC()
	if r.Invoice.Status == statusReserved {
		return fillReservation(r, e, at)
	}
	if e.kind.quiet() {
		return bookkeep(r, e, at)
	}
	n := r.clone()
	inv := &n.Invoice

	// The clock first.
	clock(n, at)
	before := inv.Status
	if e.kind == evClock && inv.Status == r.Invoice.Status && sameRefunds(inv.Refunds, r.Invoice.Refunds) {
		// Nothing else can change with time alone: the invoice as it is,
		// whatever a record without its URI template would compute (AsOf
		// applies the clock to an Invoice alone).
		return r.clone(), false, nil
	}

	switch e.kind {
	case evClock:
	case evCreate:
		if e.created == nil || e.created.nonce != r.nonce {
			return nil, false, fmt.Errorf("%w: the reservation was taken over by another Create", ErrOrderOpen)
		}
		return r.clone(), false, nil // filled before: another Create of the same request finished first
	case evPayment:
		if err := applyPayment(inv, e, at); err != nil {
			return nil, false, err
		}
	case evQuote:
		if len(inv.Coins) == 0 && !e.rate.IsPositive() {
			return nil, false, fmt.Errorf("%w: rate must be positive", errBadEvent)
		}
		if quoteDue(inv, at) {
			note := fmt.Sprintf("rate %s → %s %s per %s", inv.Rate, e.rate, inv.Currency, inv.Ticker)
			inv.Rate, inv.QuotedAt = e.rate, at
			if len(inv.Coins) > 0 {
				if err := setRates(n, e.rates); err != nil {
					return nil, false, err
				}
				note = ratesNote(inv)
			}
			inv.QuoteExpiresAt = quoteEnd(at, inv.QuoteTTL.Duration, inv.ExpiresAt)
			if k := len(inv.Events) - 1; k >= 0 && inv.Events[k].Kind == EventRequoted {
				// Re-quotes with nothing else between them keep one event,
				// the latest: an invoice waiting for days would otherwise
				// carry one per QuoteTTL. Payments keep their own quotes.
				inv.Events = inv.Events[:k]
			}
			addEvent(inv, at, EventRequoted, note)
		}
	case evInvalidate:
		switch inv.Status {
		case StatusSettled, StatusProcessing:
			// A processing invoice is paid in full, waiting for
			// confirmation: cancelling it would hide money in flight.
			return nil, false, fmt.Errorf("%w: cannot invalidate a %s invoice", ErrWrongStatus, inv.Status)
		case StatusNew, StatusExpired:
			inv.Status = StatusInvalid
			addEvent(inv, at, EventInvalidated, reason(e.note, "invalidated by the merchant"))
		}
	case evMark:
		switch {
		case inv.Status == StatusSettled, inv.Status == StatusInvalid:
			return nil, false, fmt.Errorf("%w: cannot mark a %s invoice settled", ErrWrongStatus, inv.Status)
		case inv.hasRefunds():
			return nil, false, fmt.Errorf("%w: the invoice has refunds: cancel them before marking it settled", ErrWrongStatus)
		}
		inv.Status = StatusSettled
		n.marked = true
		addEvent(inv, at, EventMarked, e.note)
	case evReopen:
		if inv.Status != StatusExpired {
			return nil, false, fmt.Errorf("%w: only an expired invoice can be reopened, not a %s one", ErrWrongStatus, inv.Status)
		}
		if inv.hasRefunds() {
			return nil, false, fmt.Errorf("%w: the invoice has refunds: cancel them before reopening it", ErrWrongStatus)
		}
		if e.expiresIn <= 0 || (inv.Currency != "" && len(inv.Coins) == 0 && !e.rate.IsPositive()) {
			return nil, false, fmt.Errorf("%w: reopen needs a duration and a rate", errBadEvent)
		}
		inv.Status = StatusNew
		inv.ExpiresAt = at.Add(e.expiresIn)
		if inv.Currency != "" {
			inv.Rate, inv.QuotedAt = e.rate, at
			inv.QuoteExpiresAt = quoteEnd(at, inv.QuoteTTL.Duration, inv.ExpiresAt)
		}
		if len(inv.Coins) > 0 {
			if err := setRates(n, e.rates); err != nil {
				return nil, false, err
			}
		}
		// What arrived while it was expired counts toward the price again.
		for i := range inv.Payments {
			inv.Payments[i].Late = false
		}
		settle(n)
		note := fmt.Sprintf("%s; %s %s due by %s", reason(e.note, "reopened by the merchant"), inv.Due, inv.Ticker,
			inv.ExpiresAt.Format(time.RFC3339))
		if inv.Status != StatusNew {
			note = fmt.Sprintf("%s; now %s by what arrived meanwhile", reason(e.note, "reopened by the merchant"), inv.Status)
		}
		addEvent(inv, at, EventReopened, note)
	case evChoose:
		if err := applyChoice(n, e, at); err != nil {
			return nil, false, err
		}
	case evRefund, evRefundAddress, evRefundSend, evRefundDone, evRefundMarkSent, evRefundCancel:
		if err := applyRefund(n, e, at); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, fmt.Errorf("%w: unknown kind %d", errBadEvent, e.kind)
	}

	settle(n)
	if expiryDue(inv, at) {
		// A confirmation for less than was seen can take a processing
		// invoice back to new; past its deadline it expires.
		expire(n, at, "a confirmation for less than was seen, after the deadline")
		settle(n)
	}
	if inv.Status != before && e.kind == evPayment {
		last := &inv.Events[len(inv.Events)-1]
		last.Note += "; now " + string(inv.Status)
	}
	if sameState(r, n) {
		return r.clone(), false, nil
	}
	inv.Version = r.Invoice.Version + 1
	inv.UpdatedAt = at
	return n, true, nil
}

// fillReservation applies an event to a reserved record: only the service's answer
// (evCreate, for the reservation's own nonce) makes it an invoice.
func fillReservation(r *Record, e event, at time.Time) (*Record, bool, error) {
	switch {
	case e.kind == evClock:
		return r.clone(), false, nil
	case e.kind != evCreate || e.created == nil:
		return nil, false, ErrNotFound
	case e.created.nonce != r.nonce:
		return nil, false, fmt.Errorf("%w: the reservation was taken over by another Create", ErrOrderOpen)
	case e.created.addressIn == "" && (len(e.created.coins) == 0 || r.Invoice.Ticker != ""):
		return nil, false, fmt.Errorf("%w: no address", errBadEvent)
	case e.created.addressIn != "" && !e.rate.IsPositive():
		return nil, false, fmt.Errorf("%w: rate must be positive", errBadEvent)
	}
	c := e.created
	for _, cc := range c.coins {
		if !cc.Rate.IsPositive() {
			return nil, false, fmt.Errorf("%w: no positive rate of %s", errBadEvent, cc.Ticker)
		}
	}
	n := r.clone()
	inv := &n.Invoice
	q := &n.req
	n.callbackURL, n.uri = c.callbackURL, c.uri
	inv.AddressIn, inv.Minimum, inv.Decimals, inv.CoinName, inv.Network = c.addressIn, c.minimum, c.decimals, c.coinName, c.network
	if len(c.coins) > 0 {
		fillCoins(n, c, at)
	}
	inv.Status = StatusNew
	inv.Rate, inv.QuotedAt = e.rate, at
	inv.ExpiresAt = at.Add(q.ExpiresIn.Duration)
	inv.QuoteExpiresAt = time.Time{}
	if inv.Currency != "" {
		inv.QuoteExpiresAt = quoteEnd(at, inv.QuoteTTL.Duration, inv.ExpiresAt)
	} else {
		inv.QuotedAt = time.Time{}
	}
	settle(n)
	price := inv.Price.String() + " " + inv.Ticker
	if inv.Currency != "" {
		price = fmt.Sprintf("%s %s at %s %s per %s", inv.Price, inv.Currency, inv.Rate, inv.Currency, inv.Ticker)
	}
	note := fmt.Sprintf("%s: %s %s due by %s", price, inv.Due, inv.Ticker, inv.ExpiresAt.Format(time.RFC3339))
	if inv.Ticker == "" {
		note = fmt.Sprintf("%s %s in the coin the customer chooses (%s), by %s", inv.Price, inv.Currency, ratesNote(inv),
			inv.ExpiresAt.Format(time.RFC3339))
	}
	addEvent(inv, at, EventCreated, note)
	inv.Version = 1
	inv.UpdatedAt = at
	return n, true, nil
}

// clock applies what time alone does at at: a new invoice past its
// deadline expires, and so does a processing one whose payments were not
// confirmed by the end of monitoring.
func clock(n *Record, at time.Time) {
	inv := &n.Invoice
	expireClaims(n, at)
	switch {
	case expiryDue(inv, at):
		expire(n, inv.ExpiresAt, "not paid in full by the deadline")
	case inv.Status == StatusProcessing && !at.Before(monitorEnd(inv)):
		expire(n, monitorEnd(inv), fmt.Sprintf("%s %s seen was not confirmed within %s of the deadline",
			inv.PaidPending, inv.Ticker, inv.MonitorFor.Duration))
	}
}

// expire makes the invoice expired, as of deadline.
func expire(n *Record, deadline time.Time, why string) {
	inv := &n.Invoice
	inv.Status = StatusExpired
	settle(n)
	addEvent(inv, deadline, EventExpired, why)
}

// monitorEnd is when a processing invoice stops waiting for confirmations.
func monitorEnd(inv *Invoice) time.Time { return inv.ExpiresAt.Add(inv.MonitorFor.Duration) }

func addEvent(inv *Invoice, at time.Time, kind, note string) {
	inv.Events = append(inv.Events, Event{At: at, Kind: kind, Note: note})
}

func reason(note, def string) string {
	if note == "" {
		return def
	}
	return note
}

// applyPayment records a pending or confirmed payment: a new receipt the
// first time its uuid is seen, a confirmation the first time it is
// confirmed, nothing otherwise. A payment seen or confirmed while the
// invoice is expired or invalid is late.
func applyPayment(inv *Invoice, e event, at time.Time) error {
	if e.uuid == "" {
		return fmt.Errorf("%w: payment without uuid", errBadEvent)
	}
	if !e.amount.IsPositive() {
		return fmt.Errorf("%w: payment amount must be positive", errBadEvent)
	}
	ended := inv.Status == StatusExpired || inv.Status == StatusInvalid
	for i := range inv.Payments {
		rc := &inv.Payments[i]
		if rc.UUID != e.uuid {
			continue
		}
		if !e.confirmed || rc.Confirmed {
			return nil // seen before: a duplicate, or a pending callback after its confirmation
		}
		rc.Confirmed = true
		rc.ConfirmedAt = at
		if !rc.Amount.Equal(e.amount) {
			// The confirmed amount is the one forwarded; it keeps the
			// receipt's quote.
			rc.Amount = e.amount
			if !rc.WrongCoin {
				rc.FiatValue = e.amount.Mul(rc.Rate)
			}
		}
		if rc.TxID == "" {
			rc.TxID = e.txid
		}
		rc.TxIDOut, rc.Fee, rc.Forwarded = e.txidOut, e.fee, e.forwarded
		rc.Late = rc.Late || ended
		addEvent(inv, at, EventPaymentConfirmed, paymentNote(rc, "confirmed"))
		return nil
	}
	// The coin of the address paid, and its quote: the invoice's, or
	// that of a coin the customer chose before.
	coin, rate := inv.Ticker, inv.Rate
	if c := coinAt(inv, e.address); c != nil {
		coin, rate = c.Ticker, c.Rate
	}
	rc := Receipt{
		UUID:      e.uuid,
		TxID:      e.txid,
		Coin:      e.coin,
		Amount:    e.amount,
		Confirmed: e.confirmed,
		Late:      ended,
		WrongCoin: !callbackurl.EqualFoldASCII(e.coin, coin),
		SeenAt:    at,
		Rate:      decimal.Zero,
		FiatValue: decimal.Zero,
	}
	kind := EventPaymentSeen
	if e.confirmed {
		rc.ConfirmedAt = at
		rc.TxIDOut, rc.Fee, rc.Forwarded = e.txidOut, e.fee, e.forwarded
		kind = EventPaymentConfirmed
	}
	if !rc.WrongCoin {
		rc.Rate, rc.QuotedAt = rate, inv.QuotedAt
		rc.FiatValue = e.amount.Mul(rate)
	}
	inv.Payments = append(inv.Payments, rc)
	addEvent(inv, at, kind, paymentNote(&rc, map[bool]string{false: "seen", true: "seen confirmed"}[e.confirmed]))
	return nil
}

func paymentNote(rc *Receipt, what string) string {
	note := fmt.Sprintf("%s %s %s, txid %s", rc.Amount, rc.Coin, what, rc.TxID)
	switch {
	case rc.WrongCoin:
		note += " (another coin than the invoice's: not counted)"
	case rc.Late:
		note += " (after the invoice ended)"
	}
	return note
}

// quoteDue reports whether a new quote would be applied at at: the
// invoice is waiting for payment in a fiat price, its quote has lapsed,
// and no payment is in flight.
func quoteDue(inv *Invoice, at time.Time) bool {
	return inv.Status == StatusNew && inv.Currency != "" &&
		!at.Before(inv.QuoteExpiresAt) && at.Before(inv.ExpiresAt) &&
		inv.PaidPendingFiat.IsZero()
}

// expiryDue reports whether a new invoice's deadline has passed at at.
func expiryDue(inv *Invoice, at time.Time) bool {
	return inv.Status == StatusNew && !at.Before(inv.ExpiresAt)
}

// quoteEnd is when a quote made at at lapses: after ttl, but not after the
// invoice expires.
func quoteEnd(at time.Time, ttl time.Duration, expires time.Time) time.Time {
	end := at.Add(ttl)
	if end.After(expires) {
		end = expires
	}
	return end
}

// settle recomputes every derived field of the invoice from its payments,
// price, quote and status: the totals, the status a payment can reach,
// what is due and the exception.
func settle(n *Record) {
	inv := &n.Invoice
	zero := decimal.Zero
	paid, pending, paidFiat, pendingFiat := zero, zero, zero, zero
	var wrong, late bool
	for _, rc := range inv.Payments {
		if rc.WrongCoin {
			wrong = true
			continue
		}
		if rc.Late {
			late = true
		}
		// Amounts in the coin add up for the invoice's coin; a coin the
		// customer chose before counts in the fiat totals.
		inCoin := len(inv.Coins) == 0 || callbackurl.EqualFoldASCII(rc.Coin, inv.Ticker)
		if rc.Confirmed {
			if inCoin {
				paid = paid.Add(rc.Amount)
			}
			paidFiat = paidFiat.Add(rc.FiatValue)
		} else {
			if inCoin {
				pending = pending.Add(rc.Amount)
			}
			pendingFiat = pendingFiat.Add(rc.FiatValue)
		}
	}
	inv.Paid, inv.PaidPending, inv.PaidFiat, inv.PaidPendingFiat = paid, pending, paidFiat, pendingFiat
	seen := paidFiat.Add(pendingFiat)
	threshold := inv.Price.Sub(inv.Price.Mul(inv.Tolerance))
	full := seen.GreaterThanOrEqual(threshold)

	switch inv.Status {
	case StatusNew, StatusProcessing:
		switch {
		case paidFiat.GreaterThanOrEqual(threshold):
			inv.Status = StatusSettled
		case full:
			inv.Status = StatusProcessing
		default:
			inv.Status = StatusNew
		}
	}

	inv.Refunded = zero
	for _, rf := range inv.Refunds {
		if rf.Status == RefundSent && rf.Ticker == inv.Ticker {
			inv.Refunded = inv.Refunded.Add(rf.Amount)
		}
	}
	inv.Excess = zero
	if seen.GreaterThan(inv.Price) {
		inv.Excess = seen.Sub(inv.Price)
	}
	inv.Remaining = zero
	if !full {
		inv.Remaining = inv.Price.Sub(seen)
	}
	inv.Due = zero
	if inv.Status == StatusNew {
		inv.Due = asked(inv.Remaining, inv.Rate, inv.Decimals, inv.Minimum)
	}
	inv.DueFiat = inv.Due.Mul(inv.Rate)
	for i := range inv.Coins {
		c := &inv.Coins[i]
		c.Due = zero
		if inv.Status == StatusNew {
			c.Due = asked(inv.Remaining, c.Rate, c.Decimals, c.Minimum)
		}
	}
	inv.PaymentURI = ""
	if inv.Due.IsPositive() {
		inv.PaymentURI = n.uri.render(inv.Due)
	}

	ended := inv.Status == StatusExpired || inv.Status == StatusInvalid
	switch {
	case n.marked:
		inv.Exception = ExceptionMarked
	case wrong:
		inv.Exception = ExceptionWrongCoin
	case late:
		inv.Exception = ExceptionPaidLate
	case ended:
		// Part of the price confirmed, or on its way, on an invoice that
		// will not be paid: flagged. What was seen in full but never
		// confirmed within the monitoring window is no money; should it
		// confirm after all, it is late.
		inv.Exception = ExceptionNone
		if paidFiat.IsPositive() || seen.IsPositive() && !full {
			inv.Exception = ExceptionPaidPartial
		}
	case inv.Excess.IsPositive() && overpaid(inv, seen, threshold):
		inv.Exception = ExceptionPaidOver
	case seen.IsPositive() && !full:
		inv.Exception = ExceptionPaidPartial
	default:
		inv.Exception = ExceptionNone
	}
}

// asked is what the invoice asks for a fiat remainder at rate: the
// remainder in the coin rounded up to the coin's precision (a wallet sends
// whole smallest units), raised to the minimum (a smaller payment would be
// lost).
func asked(remaining, rate decimal.Decimal, places int32, minimum decimal.Decimal) decimal.Decimal {
	if !remaining.IsPositive() || !rate.IsPositive() {
		return decimal.Zero
	}
	due := ceilDiv(remaining, rate, places)
	if due.LessThan(minimum) {
		due = minimum
	}
	return due
}

// ceilDiv is a/b rounded up to places decimal places, exactly.
func ceilDiv(a, b decimal.Decimal, places int32) decimal.Decimal {
	q, r := a.QuoRem(b, places)
	if r.Sign() > 0 {
		q = q.Add(decimal.New(1, -places))
	}
	return q
}

// overpaid reports whether more was paid than was asked. It does not
// depend on the order in which payments were recorded: the invoice is not
// overpaid if some payment can be the last one, needed to reach the price
// and no larger than what the invoice would have asked after all the
// others (the remainder at its quote, rounded up, raised to the minimum).
// Paying exactly Due is therefore never an overpayment, even when Due was
// raised to the minimum.
func overpaid(inv *Invoice, seen, threshold decimal.Decimal) bool {
	for _, rc := range inv.Payments {
		if rc.WrongCoin || rc.Late {
			continue
		}
		others := seen.Sub(rc.FiatValue)
		if others.GreaterThanOrEqual(threshold) {
			continue // not needed: the others pay the invoice
		}
		places, minimum := inv.Decimals, inv.Minimum
		if c := coinOf(inv, rc.Coin); c != nil {
			places, minimum = c.Decimals, c.Minimum
		}
		if rc.Amount.LessThanOrEqual(asked(inv.Price.Sub(others), rc.Rate, places, minimum)) {
			return false
		}
	}
	return true
}

// sameState reports whether two records hold the same invoice, amounts
// compared by value (the events follow the state).
func sameState(ra, rb *Record) bool {
	a, b := &ra.Invoice, &rb.Invoice
	if a.Status != b.Status || a.Exception != b.Exception || a.PaymentURI != b.PaymentURI ||
		!a.QuoteExpiresAt.Equal(b.QuoteExpiresAt) || !a.ExpiresAt.Equal(b.ExpiresAt) ||
		!a.QuotedAt.Equal(b.QuotedAt) || len(a.Payments) != len(b.Payments) || ra.marked != rb.marked ||
		!sameCoins(a, b) || !sameRefunds(a.Refunds, b.Refunds) {
		return false
	}
	for _, p := range [][2]decimal.Decimal{
		{a.Due, b.Due}, {a.DueFiat, b.DueFiat}, {a.Remaining, b.Remaining}, {a.Rate, b.Rate},
		{a.Paid, b.Paid}, {a.PaidPending, b.PaidPending}, {a.PaidFiat, b.PaidFiat},
		{a.PaidPendingFiat, b.PaidPendingFiat}, {a.Excess, b.Excess},
	} {
		if !p[0].Equal(p[1]) {
			return false
		}
	}
	for i := range a.Payments {
		x, y := a.Payments[i], b.Payments[i]
		if x.UUID != y.UUID || x.TxID != y.TxID || x.TxIDOut != y.TxIDOut || x.Coin != y.Coin ||
			x.Confirmed != y.Confirmed || x.Late != y.Late || x.WrongCoin != y.WrongCoin ||
			!x.Amount.Equal(y.Amount) || !x.Rate.Equal(y.Rate) || !x.FiatValue.Equal(y.FiatValue) ||
			!x.Fee.Equal(y.Fee) || !x.Forwarded.Equal(y.Forwarded) ||
			!x.SeenAt.Equal(y.SeenAt) || !x.ConfirmedAt.Equal(y.ConfirmedAt) {
			return false
		}
	}
	return true
}

// AsOf returns a copy of the invoice as the clock makes it at t, without
// storing anything: past its deadline a new invoice shows as expired, and
// a processing one past the end of monitoring too, exactly as Tick will
// store it (the same transition). A lapsed quote stays as it is: a new
// quote needs a price, which Tick reads. What changes carries the
// Version, UpdatedAt and Events Tick will store (a page's ETag made of the
// Version stays the same across the Tick). The payment page shows
// invoices through AsOf, so that a passed deadline never asks for
// payment.
func (inv *Invoice) AsOf(t time.Time) *Invoice {
	if inv == nil {
		return nil
	}
	// What the record keeps beside the invoice and the clock may need:
	// whether it was settled by hand.
	r := &Record{Invoice: *inv.Clone(), marked: inv.Exception == ExceptionMarked}
	n, _, err := transition(r, event{kind: evClock, at: t})
	if err != nil {
		return inv.Clone()
	}
	return &n.Invoice
}
