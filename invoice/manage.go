package invoice

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// MaxReasonLen bounds the reason of Invalidate, MarkSettled and Reopen,
// in bytes of UTF-8.
const MaxReasonLen = 500

// ReopenOptions are the parameters of Reopen.
type ReopenOptions struct {
	// ExpiresIn is how long the reopened invoice waits for the rest
	// (default: the invoice's own ExpiresIn; between MinDuration and
	// MaxDuration).
	ExpiresIn time.Duration
	// Reason is kept in the invoice's Events (up to MaxReasonLen bytes).
	Reason string
}

// Invalidate cancels an invoice that waits for payment (new) or has
// expired: its status becomes invalid, with the reason in Events.
// Payments that arrive or confirm later are still recorded, as
// ExceptionPaidLate. A settled invoice cannot be invalidated, nor a
// processing one (paid in full, waiting for confirmations: it settles or,
// unconfirmed after MonitorFor, expires): ErrWrongStatus. Invalidating an
// invalid invoice changes nothing.
//
// The change is passed to onChange; when onChange fails, Invalidate
// returns the stored invoice with an error wrapping ErrNotNotified, and
// Tick offers the change again.
func (d *Desk) Invalidate(ctx context.Context, id, reason string) (*Invoice, error) {
	if err := checkText("Reason", reason, MaxReasonLen); err != nil {
		return nil, err
	}
	return d.change(ctx, id, event{kind: evInvalidate, note: reason})
}

// MarkSettled settles a new, processing or expired invoice by hand (an
// underpayment, a late payment or a payment in another coin accepted as
// it is): StatusSettled with ExceptionMarked, and the reason, required,
// in Events. A settled or invalid invoice cannot be marked
// (ErrWrongStatus). Errors and onChange as for Invalidate.
func (d *Desk) MarkSettled(ctx context.Context, id, reason string) (*Invoice, error) {
	if reason == "" {
		return nil, invalid("Reason", "MarkSettled needs a reason, for the books")
	}
	if err := checkText("Reason", reason, MaxReasonLen); err != nil {
		return nil, err
	}
	return d.change(ctx, id, event{kind: evMark, note: reason})
}

// Reopen gives an expired invoice a new deadline: it asks for the unpaid
// part of the price (payments received, late ones included, keep their
// quotes) at a fresh quote, rounded up and raised to the coin's minimum as
// ever, to the same address. Only an expired invoice can be reopened
// (ErrWrongStatus); one whose order has another open invoice cannot
// (ErrOrderOpen). The price is read from the service when Currency is
// set. Errors and onChange as for Invalidate.
func (d *Desk) Reopen(ctx context.Context, id string, o *ReopenOptions) (*Invoice, error) {
	if o == nil {
		o = &ReopenOptions{}
	}
	if err := checkText("Reason", o.Reason, MaxReasonLen); err != nil {
		return nil, err
	}
	if _, err := checkDuration("ExpiresIn", o.ExpiresIn, 0); err != nil {
		return nil, err
	}
	r, err := d.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if st := r.Invoice.AsOf(d.now()).Status; st != StatusExpired {
		return nil, fmt.Errorf("%w: only an expired invoice can be reopened, not a %s one", ErrWrongStatus, st)
	}
	e := event{kind: evReopen, expiresIn: o.ExpiresIn, note: o.Reason, rate: decimal.NewFromInt(1)}
	if e.expiresIn == 0 {
		e.expiresIn = r.req.ExpiresIn.Duration
	}
	if r.Invoice.Currency != "" {
		if e.rate, e.rates, err = d.quotes(ctx, &r.Invoice, true); err != nil {
			return nil, err
		}
	}
	return d.change(ctx, id, e)
}

// change applies one of the merchant's events and passes it on.
func (d *Desk) change(ctx context.Context, id string, e event) (*Invoice, error) {
	r, _, err := d.apply(ctx, id, "", e)
	if err != nil {
		return nil, err
	}
	if err := d.notify(ctx, id); err != nil {
		return r.Invoice.Clone(), fmt.Errorf("%w: %w", ErrNotNotified, err)
	}
	return r.Invoice.Clone(), nil
}

// load returns the stored record of an invoice; a reservation is
// ErrNotFound.
func (d *Desk) load(ctx context.Context, id string) (*Record, error) {
	r, err := d.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Invoice.Status == statusReserved {
		return nil, ErrNotFound
	}
	return r, nil
}
