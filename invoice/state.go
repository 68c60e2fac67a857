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
	// evClock: time passed (expiry).
	evClock eventKind = iota + 1
	// evPayment: a payment was seen (pending) or confirmed.
	evPayment
	// evQuote: a new rate for the unpaid remainder.
	evQuote
	// evInvalidate: the merchant cancelled the invoice.
	evInvalidate
)

// event is one thing that happens to an invoice. Every event carries the
// time it is applied at, and time is applied first: an invoice past its
// expiry expires before a payment is recorded.
type event struct {
	kind eventKind
	at   time.Time
	// evPayment
	uuid, txid, coin string
	amount           decimal.Decimal
	confirmed        bool
	// evQuote
	rate decimal.Decimal
}

// errBadEvent is returned by transition for an event it cannot apply.
var errBadEvent = errors.New("invoice: invalid event")

// transition computes the invoice that follows r after e. It is the only
// code that changes an invoice's state: pure (no I/O, no clock of its
// own, r is not modified), deterministic, and total over valid events.
// changed is false when e changes nothing (a duplicate payment, a quote
// that is not due); next is then equal to r.
func transition(r *Record, e event) (next *Record, changed bool, err error) {
	if r == nil {
		return nil, false, fmt.Errorf("%w: no invoice", errBadEvent)
	}
	if e.at.IsZero() {
		return nil, false, fmt.Errorf("%w: no time", errBadEvent)
	}
	n := r.clone()
	inv := &n.Invoice
	at := e.at.UTC()

	// The clock first.
	if inv.Status == StatusNew && !at.Before(inv.ExpiresAt) {
		inv.Status = StatusExpired
	}

	switch e.kind {
	case evClock:
	case evPayment:
		if err := applyPayment(inv, e, at); err != nil {
			return nil, false, err
		}
	case evQuote:
		if !e.rate.IsPositive() {
			return nil, false, fmt.Errorf("%w: rate must be positive", errBadEvent)
		}
		if quoteDue(inv, at) {
			inv.Rate = e.rate
			inv.QuoteExpiresAt = quoteEnd(at, inv.QuoteTTL.Duration, inv.ExpiresAt)
		}
	case evInvalidate:
		switch inv.Status {
		case StatusSettled:
			return nil, false, ErrSettled
		case StatusNew, StatusProcessing, StatusExpired:
			inv.Status = StatusInvalid
		}
	default:
		return nil, false, fmt.Errorf("%w: unknown kind %d", errBadEvent, e.kind)
	}

	settle(inv, n.uri)
	if expiryDue(inv, at) {
		// A confirmation for less than was seen can take a processing
		// invoice back to new; past its expiry it expires.
		inv.Status = StatusExpired
		settle(inv, n.uri)
	}
	if sameState(&r.Invoice, inv) {
		return r.clone(), false, nil
	}
	inv.Version = r.Invoice.Version + 1
	inv.UpdatedAt = at
	return n, true, nil
}

// applyPayment records a pending or confirmed payment: a new receipt the
// first time its uuid is seen, a confirmation the first time it is
// confirmed, nothing otherwise.
func applyPayment(inv *Invoice, e event, at time.Time) error {
	if e.uuid == "" {
		return fmt.Errorf("%w: payment without uuid", errBadEvent)
	}
	if !e.amount.IsPositive() {
		return fmt.Errorf("%w: payment amount must be positive", errBadEvent)
	}
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
			rc.FiatValue = e.amount.Mul(rc.Rate)
		}
		if rc.TxID == "" {
			rc.TxID = e.txid
		}
		return nil
	}
	rc := Receipt{
		UUID:      e.uuid,
		TxID:      e.txid,
		Coin:      e.coin,
		Amount:    e.amount,
		Confirmed: e.confirmed,
		Late:      inv.Status == StatusExpired || inv.Status == StatusInvalid,
		WrongCoin: !callbackurl.EqualFoldASCII(e.coin, inv.Ticker),
		SeenAt:    at,
		Rate:      decimal.Zero,
		FiatValue: decimal.Zero,
	}
	if e.confirmed {
		rc.ConfirmedAt = at
	}
	if !rc.WrongCoin {
		rc.Rate = inv.Rate
		rc.FiatValue = e.amount.Mul(inv.Rate)
	}
	inv.Payments = append(inv.Payments, rc)
	return nil
}

// quoteDue reports whether a new quote would be applied at at: the
// invoice is waiting for payment in a fiat price, its quote has lapsed,
// and no payment is in flight.
func quoteDue(inv *Invoice, at time.Time) bool {
	return inv.Status == StatusNew && inv.Currency != "" &&
		!at.Before(inv.QuoteExpiresAt) && at.Before(inv.ExpiresAt) &&
		inv.PaidPending.IsZero()
}

// expiryDue reports whether the clock alone would change the invoice at at.
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

// settle recomputes every derived field of inv from its payments, price,
// quote and status: the totals, the status a payment can reach, what is
// due and the exception.
func settle(inv *Invoice, uri uriTemplate) {
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
		if rc.Confirmed {
			paid = paid.Add(rc.Amount)
			paidFiat = paidFiat.Add(rc.FiatValue)
		} else {
			pending = pending.Add(rc.Amount)
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
	inv.PaymentURI = ""
	if inv.Due.IsPositive() {
		inv.PaymentURI = uri.render(inv.Due)
	}

	switch {
	case wrong:
		inv.Exception = ExceptionWrongCoin
	case late:
		inv.Exception = ExceptionPaidLate
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
		if rc.Amount.LessThanOrEqual(asked(inv.Price.Sub(others), rc.Rate, inv.Decimals, inv.Minimum)) {
			return false
		}
	}
	return true
}

// sameState reports whether two invoices are the same, amounts compared
// by value.
func sameState(a, b *Invoice) bool {
	if a.Status != b.Status || a.Exception != b.Exception || a.PaymentURI != b.PaymentURI ||
		!a.QuoteExpiresAt.Equal(b.QuoteExpiresAt) || len(a.Payments) != len(b.Payments) {
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
		if x.UUID != y.UUID || x.TxID != y.TxID || x.Coin != y.Coin || x.Confirmed != y.Confirmed ||
			x.Late != y.Late || x.WrongCoin != y.WrongCoin || !x.Amount.Equal(y.Amount) ||
			!x.Rate.Equal(y.Rate) || !x.FiatValue.Equal(y.FiatValue) ||
			!x.SeenAt.Equal(y.SeenAt) || !x.ConfirmedAt.Equal(y.ConfirmedAt) {
			return false
		}
	}
	return true
}
