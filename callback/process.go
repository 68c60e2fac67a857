package callback

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultLease is how long a claim on a callback lasts while the merchant's
// function runs. The function's context ends with the lease, so that a
// claim is not taken over while its holder is still working.
const DefaultLease = 5 * time.Minute

// storeTimeout bounds Complete and Release, which run on a context that is
// not cancelled with the request (a key must be given up even when the
// service hung up).
const storeTimeout = 30 * time.Second

// Outcome is what Process did with a payment.
type Outcome int

const (
	// Processed means the function ran and succeeded. Acknowledge.
	Processed Outcome = iota + 1
	// AlreadyDone means the callback was processed before; the function
	// was not called. Acknowledge.
	AlreadyDone
	// Superseded means a pending callback arrived after its confirmed twin
	// was processed; it was recorded as done and not passed on.
	// Acknowledge.
	Superseded
	// Busy means the payment is being processed elsewhere (another
	// delivery holds its lease). Do not acknowledge; the service retries.
	Busy
	// Failed means the function or the store failed, and the claims were
	// given up. Do not acknowledge; the service retries.
	Failed
)

// String returns the name of the outcome.
func (o Outcome) String() string {
	switch o {
	case Processed:
		return "processed"
	case AlreadyDone:
		return "already done"
	case Superseded:
		return "superseded"
	case Busy:
		return "busy"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Acknowledge reports whether the callback should be answered with
// "*ok*": true for Processed, AlreadyDone and Superseded.
func (o Outcome) Acknowledge() bool {
	return o == Processed || o == AlreadyDone || o == Superseded
}

// Process runs one verified payment through the store and fn with the same
// rules as the handler, so that payments received by other means (for
// example replayed from the service's logs) are de-duplicated with the ones
// received as callbacks. fn succeeds at most once per PaymentKey, provided
// it finishes within the lease; a failed call is retried by a later
// delivery.
//
// A confirmed payment claims its confirmed key: Done gives AlreadyDone,
// InProgress gives Busy, Claimed runs fn and then completes the key.
// A pending payment claims its pending key, then its confirmed key: if the
// confirmed key is done, the pending one is completed without running fn
// (Superseded: a late pending callback never undoes a confirmation); if it
// is in progress, the pending key is released (Busy); otherwise fn runs
// while both are held, and then the pending key is completed and the
// confirmed one released for the confirmed callback to come. A failed fn
// releases every key it held (Failed, with fn's error). A panic in fn
// releases the keys and panics again.
//
// The error is non-nil for Failed. With another outcome it is non-nil only
// when the store could not record a result or give a key back; the outcome
// still says what to answer (after Processed, fn has run: acknowledge), and
// the error should be logged.
// fn's context has a deadline at the end of the lease; lease <= 0 means
// DefaultLease. If fn returns after the lease ran out, the keys may already
// belong to another caller: Process then neither completes nor releases
// them, and returns ErrLeaseExpired with the outcome (Processed if fn
// succeeded). Keep fn well within the lease.
func Process(ctx context.Context, s Store, lease time.Duration, fn func(context.Context, *Payment) error, p *Payment) (Outcome, error) {
	if s == nil || fn == nil {
		return Failed, fmt.Errorf("%w: Process needs a store and a function", ErrInvalidOption)
	}
	kp, kc := paymentKeys(p)
	if kc == "" {
		return Failed, ErrNoPaymentKey
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	// The lease is counted from before the claim, so this process stops
	// acting on the keys no later than the store would let another take
	// them: Complete and Release are called only while it still holds them.
	h := &holder{s: s, deadline: time.Now().Add(lease)}
	if !p.Pending {
		return processConfirmed(ctx, h, lease, fn, p, kc)
	}
	return processPending(ctx, h, lease, fn, p, kp, kc)
}

// ErrLeaseExpired is reported by Process when fn outlasted the lease: the
// keys may belong to another caller by then, so they are neither completed
// nor released (the store's lease expiry gives them up).
var ErrLeaseExpired = errors.New("callback: the claim's lease ran out before fn finished")

// holder acts on claimed keys only while its lease lasts.
type holder struct {
	s        Store
	deadline time.Time
}

func (h *holder) held() bool { return time.Now().Before(h.deadline) }

func processConfirmed(ctx context.Context, h *holder, lease time.Duration, fn func(context.Context, *Payment) error, p *Payment, kc string) (Outcome, error) {
	c, err := h.s.Claim(ctx, kc, lease)
	if o, stop, err := afterClaim(c, err); stop {
		return o, err
	}
	if err := run(ctx, h, fn, p, kc); err != nil {
		return Failed, errors.Join(err, h.release(ctx, kc))
	}
	if err := h.complete(ctx, kc); err != nil {
		return Processed, err
	}
	return Processed, nil
}

func processPending(ctx context.Context, h *holder, lease time.Duration, fn func(context.Context, *Payment) error, p *Payment, kp, kc string) (Outcome, error) {
	c, err := h.s.Claim(ctx, kp, lease)
	if o, stop, err := afterClaim(c, err); stop {
		return o, err
	}
	c, err = h.s.Claim(ctx, kc, lease)
	if err != nil {
		return Failed, errors.Join(storeErr("claim", err), h.release(ctx, kp))
	}
	switch c {
	case Done:
		// The confirmation was processed: this pending callback is late.
		return Superseded, h.complete(ctx, kp)
	case InProgress:
		return Busy, h.release(ctx, kp)
	case Claimed:
	default:
		return Failed, errors.Join(unknownClaim(c), h.release(ctx, kp))
	}
	if err := run(ctx, h, fn, p, kp, kc); err != nil {
		return Failed, errors.Join(err, h.release(ctx, kp), h.release(ctx, kc))
	}
	return Processed, errors.Join(h.complete(ctx, kp), h.release(ctx, kc))
}

// afterClaim maps the result of a first claim: stop is false only for
// Claimed.
func afterClaim(c Claim, err error) (Outcome, bool, error) {
	if err != nil {
		return Failed, true, storeErr("claim", err)
	}
	switch c {
	case Claimed:
		return 0, false, nil
	case Done:
		return AlreadyDone, true, nil
	case InProgress:
		return Busy, true, nil
	}
	return Failed, true, unknownClaim(c)
}

// run calls fn with a context that ends with the lease. If fn panics, the
// held keys are released and the panic goes on.
func run(ctx context.Context, h *holder, fn func(context.Context, *Payment) error, p *Payment, held ...string) (err error) {
	fctx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	panicked := true
	defer func() {
		if panicked {
			for _, k := range held {
				_ = h.release(ctx, k)
			}
		}
	}()
	err = fn(fctx, p)
	panicked = false
	return err
}

func storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
}

func (h *holder) release(ctx context.Context, key string) error {
	if !h.held() {
		return ErrLeaseExpired
	}
	c, cancel := storeCtx(ctx)
	defer cancel()
	if err := h.s.Release(c, key); err != nil {
		return storeErr("release", err)
	}
	return nil
}

func (h *holder) complete(ctx context.Context, key string) error {
	if !h.held() {
		return ErrLeaseExpired
	}
	c, cancel := storeCtx(ctx)
	defer cancel()
	if err := h.s.Complete(c, key); err != nil {
		return storeErr("complete", err)
	}
	return nil
}

func storeErr(op string, err error) error {
	return fmt.Errorf("callback: store %s: %w", op, err)
}

func unknownClaim(c Claim) error {
	return fmt.Errorf("callback: store returned an unknown claim result %d", int(c))
}
