package invoice

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"
)

// ListOptions select invoices for List and ExportCSV. Every field that is
// set applies; the zero value selects every invoice.
type ListOptions struct {
	// Status and Exception keep the invoices whose status (exception) is
	// one of these, as stored: an invoice whose deadline passed shows as
	// expired once Tick has run (see Invoice.AsOf). ExceptionNone selects
	// invoices without an exception.
	Status    []Status
	Exception []Exception
	// CreatedAfter and CreatedBefore keep the invoices created at or after
	// CreatedAfter and before CreatedBefore (so that consecutive periods
	// split the invoices exactly); a zero time does not bound.
	CreatedAfter, CreatedBefore time.Time
	// OrderID keeps the invoices of one order.
	OrderID string
	// StartingAfter continues a listing after the invoice with this ID
	// (the last one of the previous page), as Stripe's starting_after.
	StartingAfter string
}

// check refuses options that select nothing by mistake.
func (o *ListOptions) check() error {
	if o == nil {
		return nil
	}
	for _, s := range o.Status {
		if !slices.Contains([]Status{StatusNew, StatusProcessing, StatusSettled, StatusExpired, StatusInvalid}, s) {
			return invalid("Status", "unknown status %q", s)
		}
	}
	for _, x := range o.Exception {
		if !slices.Contains([]Exception{ExceptionNone, ExceptionMarked, ExceptionWrongCoin, ExceptionPaidLate,
			ExceptionPaidOver, ExceptionPaidPartial}, x) {
			return invalid("Exception", "unknown exception %q", x)
		}
	}
	if !o.CreatedAfter.IsZero() && !o.CreatedBefore.IsZero() && !o.CreatedAfter.Before(o.CreatedBefore) {
		return invalid("CreatedAfter", "not before CreatedBefore")
	}
	if err := checkText("OrderID", o.OrderID, MaxOrderIDLen); err != nil {
		return err
	}
	return checkText("StartingAfter", o.StartingAfter, 64)
}

// listFilter is ListOptions as a test of one record (the memory store's;
// invoice/pgstore writes the same test in SQL).
type listFilter struct{ o ListOptions }

func (o *ListOptions) filter() listFilter {
	if o == nil {
		return listFilter{}
	}
	return listFilter{*o}
}

func (f listFilter) match(r *Record) bool {
	inv := &r.Invoice
	o := &f.o
	switch {
	case len(o.Status) > 0 && !slices.Contains(o.Status, inv.Status),
		len(o.Exception) > 0 && !slices.Contains(o.Exception, inv.Exception),
		!o.CreatedAfter.IsZero() && inv.CreatedAt.Before(o.CreatedAfter),
		!o.CreatedBefore.IsZero() && !inv.CreatedAt.Before(o.CreatedBefore),
		o.OrderID != "" && inv.OrderID != o.OrderID:
		return false
	}
	return true
}

// List yields the invoices o selects (nil: all), newest first (by
// CreatedAt, then by creation order), as stored; it never writes. The
// store reads them in pages, so that memory stays bounded whatever their
// number; stop ranging to stop reading. Options that cannot select
// anything sensible (an unknown status) are an ErrInvalidOptions error,
// yielded first.
//
//	for inv, err := range desk.List(ctx, &invoice.ListOptions{Status: []invoice.Status{invoice.StatusNew}}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(inv.ID, inv.OrderID, inv.Due)
//	}
func (d *Desk) List(ctx context.Context, o *ListOptions) iter.Seq2[*Invoice, error] {
	return func(yield func(*Invoice, error) bool) {
		if err := o.check(); err != nil {
			yield(nil, err)
			return
		}
		for r, err := range d.store.List(ctx, o) {
			if err != nil {
				yield(nil, fmt.Errorf("invoice: list: %w", err))
				return
			}
			if r.Invoice.Status == statusReserved {
				continue
			}
			if !yield(r.Invoice.Clone(), nil) {
				return
			}
		}
	}
}

// ByOrderID returns every invoice of the order, newest first (by
// CreatedAt, then by creation order), as stored: at most one is open
// (new or processing), the others are final. It never writes.
func (d *Desk) ByOrderID(ctx context.Context, orderID string) ([]*Invoice, error) {
	if orderID == "" {
		return nil, invalid("OrderID", "empty")
	}
	var out []*Invoice
	for inv, err := range d.List(ctx, &ListOptions{OrderID: orderID}) {
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// Get returns the invoice with this ID as stored (ErrNotFound if there is
// none). It never writes and never calls onChange: what time changes
// (expiry, the end of monitoring, a new quote) is stored by Tick. To show
// an invoice as the clock makes it now, use Invoice.AsOf.
func (d *Desk) Get(ctx context.Context, id string) (*Invoice, error) {
	r, err := d.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.Invoice.Clone(), nil
}
