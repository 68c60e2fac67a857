package invoice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
)

// Defaults of CreateOptions.
const (
	// DefaultQuoteTTL is how long a quote lasts unless QuoteTTL says
	// otherwise.
	DefaultQuoteTTL = 15 * time.Minute
	// DefaultExpiresIn is how long an invoice waits for full payment
	// unless ExpiresIn says otherwise.
	DefaultExpiresIn = time.Hour
	// DefaultMonitorFor is how long after its deadline a processing
	// invoice waits for confirmations unless MonitorFor says otherwise.
	DefaultMonitorFor = 24 * time.Hour
)

// Names of the query parameters the Desk adds to the shop's callback URL.
const (
	// ParamInvoice carries the invoice's ID.
	ParamInvoice = "invoice"
	// ParamNonce carries the invoice's nonce: random, known only to the
	// invoice's record, never shown to the customer.
	ParamNonce = "nonce"
)

// Errors. Match them with errors.Is; the returned error may wrap them with
// detail.
var (
	// ErrNotFound is returned for an invoice ID the store does not know.
	ErrNotFound = errors.New("invoice: not found")
	// ErrDuplicate is returned by Store.Insert for an ID that exists, and
	// by Store.Insert and Store.Update for a key (Record.Keys) another
	// record holds.
	ErrDuplicate = errors.New("invoice: duplicate ID or key")
	// ErrInvalidOptions is returned for unusable options or arguments
	// (by New, Create, List, MarkSettled, Reopen, Invalidate, Run),
	// before anything is sent or stored; the wrapping error names the
	// option.
	ErrInvalidOptions = errors.New("invoice: invalid options")
	// ErrNoRate is returned when the service's info gives no price of the
	// coin in the invoice's currency.
	ErrNoRate = errors.New("invoice: the service gave no price in this currency")
	// ErrPrecisionUnknown is returned when the coin's precision cannot be
	// derived from the service's info (exact amounts need it).
	ErrPrecisionUnknown = errors.New("invoice: the coin's precision is unknown")
	// ErrUnknownInvoice is the reason a callback is refused (HTTP 403): it
	// names no invoice, or another invoice's nonce, or an address that is
	// not the invoice's. No invoice was touched.
	ErrUnknownInvoice = errors.New("invoice: callback for no invoice of this desk")
	// ErrWrongStatus is returned by Invalidate, MarkSettled and Reopen
	// for an invoice whose status does not allow them; the error says
	// which. Nothing was stored.
	ErrWrongStatus = errors.New("invoice: not possible in the invoice's status")
	// ErrOrderOpen is returned by Create when the order (OrderID) has an
	// open invoice (new or processing, deadline not passed) made with
	// other options, or is being created with other options by another
	// call, and by Reopen when the order has another open invoice.
	ErrOrderOpen = errors.New("invoice: the order has an open invoice")
	// ErrNotNotified is wrapped by the error of Invalidate, MarkSettled
	// and Reopen when the change is stored but onChange has not accepted
	// it (onChange failed, or the store could not pass it on): they return
	// the stored invoice with that error, and Tick offers the change again.
	ErrNotNotified = errors.New("invoice: change stored, not yet accepted by onChange")
	// ErrCoinUnknown is reported by Reconcile for a logged payment to a
	// MultiToken address whose coin the logs do not tell; it is not
	// recorded (a live callback will record it).
	ErrCoinUnknown = errors.New("invoice: logged payment's coin is unknown")
)

// Clock tells a Desk the time; it is cryptapi.Clock, and
// *cryptapitest.FakeClock is one.
type Clock = cryptapi.Clock

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Option configures a Desk.
type Option func(*Desk) error

// WithClock sets the Desk's clock (default: the system clock).
func WithClock(c Clock) Option {
	return func(d *Desk) error {
		if c == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOptions)
		}
		d.clock = c
		return nil
	}
}

// WithLease sets how long a claim lasts while its work is done (default
// callback.DefaultLease): a callback's while it is applied, a Create's
// on its order while it asks the service for the address (another Create
// of the order waits for it that long at most, should its process die),
// and a refund's send while it makes a payout call (each call is given
// half the lease). Give every replica the same lease.
func WithLease(lease time.Duration) Option {
	return func(d *Desk) error {
		if lease <= 0 {
			return fmt.Errorf("%w: lease must be positive", ErrInvalidOptions)
		}
		d.lease = lease
		return nil
	}
}

// WithReadTimeout sets how long Handler waits for the body of a POST
// callback (default callback.DefaultReadTimeout); a body still arriving
// then is refused with 408, so a client that trickles its body cannot
// hold the handler. Set http.Server.ReadTimeout as well.
func WithReadTimeout(d time.Duration) Option {
	return func(desk *Desk) error {
		if d <= 0 {
			return fmt.Errorf("%w: read timeout must be positive", ErrInvalidOptions)
		}
		desk.readTimeout = d
		return nil
	}
}

// WithOnChange sets the function told of every change of an invoice,
// once per change, in order, after the change is stored (see Handler and
// Tick). It is required: New fails without it. Every change is kept in
// the Store until a function accepted it (returned nil), so a Desk
// without one would either drop changes or keep them for ever; a shop
// that wants no calls says so with a function that returns nil. An error
// from fn leaves the change to be offered again: by the service's next
// delivery of the callback, and by Tick.
func WithOnChange(fn func(context.Context, *Invoice) error) Option {
	return func(d *Desk) error {
		if fn == nil {
			return fmt.Errorf("%w: WithOnChange needs a function", ErrInvalidOptions)
		}
		d.onChange = fn
		return nil
	}
}

// WithLogger sets where the Desk logs what it cannot return to a caller:
// refused and failed callbacks, a change onChange refused, a price it
// could not read. The default is slog.Default() at the time of logging;
// give slog.New(slog.DiscardHandler) for none. Lines carry the invoice's
// ID and the error, never a nonce, a signature or a callback's payload.
func WithLogger(l *slog.Logger) Option {
	return func(d *Desk) error {
		if l == nil {
			return fmt.Errorf("%w: WithLogger needs a logger", ErrInvalidOptions)
		}
		d.log = l
		return nil
	}
}

// Desk creates invoices and keeps them up to date: from callbacks
// (Handler), from the service's logs (Reconcile), from the clock (Tick,
// Run) and from the merchant (MarkSettled, Reopen, Invalidate). Every
// change is computed by one pure function of the stored invoice and one
// event, stored, and then passed to onChange. Reads (Get, List,
// ByOrderID, the payment page) never write.
type Desk struct {
	c     *cryptapi.Client
	store Store
	clock Clock
	lease time.Duration
	log   *slog.Logger

	readTimeout time.Duration

	onChange func(context.Context, *Invoice) error
	prices   priceBook
}

// New returns a Desk that creates addresses with c, keeps invoices in
// store and tells onChange (WithOnChange, required) of every change. It
// does no I/O.
func New(c *cryptapi.Client, store Store, opts ...Option) (*Desk, error) {
	if c == nil || store == nil {
		return nil, fmt.Errorf("%w: New needs a client and a store", ErrInvalidOptions)
	}
	d := &Desk{c: c, store: store, clock: systemClock{}, lease: callback.DefaultLease, readTimeout: callback.DefaultReadTimeout}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(d); err != nil {
			return nil, err
		}
	}
	if d.onChange == nil {
		return nil, fmt.Errorf("%w: New needs WithOnChange: every change is kept until a function accepts it", ErrInvalidOptions)
	}
	return d, nil
}

func (d *Desk) now() time.Time { return d.clock.Now().UTC() }

// apply runs e through the transition under the store's lock, at the
// Desk's time when the lock is held, and stores the result if it changed.
// It returns the record as stored and whether e changed it.
func (d *Desk) apply(ctx context.Context, id, key string, e event) (*Record, bool, error) {
	changed := false
	r, err := d.store.Update(ctx, id, key, func(cur *Record) (*Record, error) {
		e.at = d.now()
		next, ok, err := transition(cur, e)
		if err != nil || !ok {
			return nil, err
		}
		changed = true
		return next, nil
	})
	return r, changed, err
}

// notifyingKey marks the context of an onChange call with the invoice it
// is about.
type notifyingKey struct{}

// notify passes the invoice's stored changes to onChange. Called from
// within onChange for the same invoice (onChange calling Get or
// Invalidate), it returns at once: the Notify in progress passes the new
// changes on when onChange returns, and waiting for it would never end.
func (d *Desk) notify(ctx context.Context, id string) error {
	if v, _ := ctx.Value(notifyingKey{}).(string); v == id {
		return nil
	}
	return d.store.Notify(ctx, id, func(ctx context.Context, inv *Invoice) error {
		return d.onChange(context.WithValue(ctx, notifyingKey{}, id), inv)
	})
}

// logger is where the Desk logs: WithLogger's, or slog.Default().
func (d *Desk) logger() *slog.Logger {
	if d.log != nil {
		return d.log
	}
	return slog.Default()
}

func (d *Desk) logError(ctx context.Context, msg, id string, err error) {
	d.logger().LogAttrs(ctx, slog.LevelError, msg, slog.String("invoice", id), slog.String("error", err.Error()))
}
