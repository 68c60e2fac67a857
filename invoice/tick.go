package invoice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Tick brings up to date, in one pass, every invoice whose time has come,
// with nobody watching: a new invoice past its deadline expires, a
// processing one past the end of monitoring too, and a lapsed quote is
// renewed (at the coin's current price, read once for all the invoices of
// the coin; while the price cannot be read, the quote waits for a later
// Tick). A refund whose claim link expired unused is cancelled, and the
// payout of a refund being sent is followed (every RefundCheckEvery) to
// its end, sent or failed, also when its SendRefund gave up or its
// process died. Every change not yet accepted by onChange (refused
// before, or stored by a process that died) is offered again. changed
// counts the invoices this pass changed.
//
// Tick reads about as many invoices as are due (the store indexes their
// due times), and is safe to run on every replica at once: each invoice
// is changed once, and each change passed to onChange once. Its error
// names the invoices it could not bring up to date (the store failed,
// onChange refused a change or took longer than the Desk's lease, see
// WithLease); they are due again at the next Tick.
func (d *Desk) Tick(ctx context.Context) (changed int, err error) {
	now := d.now()
	var errs []error
	failed := 0
	for id, err := range d.store.Due(ctx, now) {
		if err != nil {
			return changed, fmt.Errorf("invoice: tick: %w", err)
		}
		// One invoice's step (and its onChange) may take the Desk's
		// lease at most: an onChange that hangs does not stop the others.
		octx, cancel := context.WithTimeout(ctx, d.lease)
		c, err := d.tickOne(octx, id)
		cancel()
		if c {
			changed++
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return changed, fmt.Errorf("invoice: tick: %w", cerr)
			}
			failed++
			if len(errs) < 5 {
				errs = append(errs, fmt.Errorf("invoice %s: %w", id, err))
			}
		}
	}
	if failed > 0 {
		return changed, fmt.Errorf("invoice: tick: %d invoices not brought up to date: %w", failed, errors.Join(errs...))
	}
	return changed, nil
}

// tickOne applies the clock (or a due re-quote) to one invoice and passes
// its changes on.
func (d *Desk) tickOne(ctx context.Context, id string) (bool, error) {
	r, err := d.store.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if r.Invoice.Status == statusReserved {
		return false, nil
	}
	e := event{kind: evClock}
	if inv := &r.Invoice; quoteDue(inv, d.now()) {
		// A price that cannot be read is logged once per retry (see
		// coinInfo); the invoice stays due and a later Tick renews it.
		if rate, rates, err := d.quotes(ctx, inv, false); err == nil {
			e = event{kind: evQuote, rate: rate, rates: rates}
		}
	}
	n, changed, err := d.apply(ctx, id, "", e)
	if err != nil {
		return false, err
	}
	followed, ferr := d.followRefunds(ctx, n)
	if followed {
		if cur, err := d.store.Load(ctx, id); err == nil && cur.Version() > n.Version() {
			changed = true
		}
	}
	return changed, errors.Join(ferr, d.notify(ctx, id))
}

// Run calls Tick every interval, from now until ctx ends, and returns
// ctx's error. What Tick cannot do is logged (see WithLogger) and tried
// again at the next Tick. Run it on every replica: the store keeps them
// from doing anything twice.
func (d *Desk) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return invalid("every", "Run needs a positive interval")
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := d.Tick(ctx); err != nil && ctx.Err() == nil {
			d.logger().LogAttrs(ctx, slog.LevelError, "invoice tick failed", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
