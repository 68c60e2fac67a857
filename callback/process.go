package callback

import (
	"context"
	"errors"
	"fmt"
	cryptapi "github.com/forwardpay/cryptapi-go"
	"math/rand/v2"
	"sync"
	"time"
)

// DefaultLease is how long a claim on a callback lasts before another
// delivery may take it over. While the merchant's function runs, Process
// renews the claim (with a Store that implements Renewer) every third of the
// lease; the function's context ends when the claim cannot be kept.
const DefaultLease = 5 * time.Minute

// storeTimeout bounds one store call. Calls that record or give up a claim
// run on a context that is not cancelled with the request (a result must be
// recorded even when the service hung up).
const storeTimeout = 30 * time.Second

// storeAttempts is how many times a store call that failed is tried in
// all, and retryBackoff the first wait between two tries (doubled after
// each, up to retryBackoffMax). Serialization failures, deadlocks and
// dropped connections usually pass within a few tries.
//
// Recording fn's success is tried for longer: until the claim's lease runs
// out, and at least storeAttempts times, at most recordAttempts times.
const (
	storeAttempts   = 6
	recordAttempts  = 100
	retryBackoff    = 20 * time.Millisecond
	retryBackoffMax = time.Second
)

// Process runs one verified payment through the store and fn with the same
// rules as the handler, so that payments received by other means (for
// example replayed from the service's logs) are de-duplicated with the ones
// received as callbacks.
//
// A confirmed payment claims its confirmed key: AlreadyDone gives AlreadyDone,
// Busy gives Busy, Claimed runs fn and then completes the key.
// A pending payment claims its pending key, then its confirmed key: if the
// confirmed key is done, the pending one is completed without running fn
// (Superseded: a late pending callback never undoes a confirmation); if it
// is in progress, the pending key is released (Busy); otherwise fn runs
// while both are held, and then the pending key is completed and the
// confirmed one released for the confirmed callback to come. A failed fn
// releases every key it held (Failed, with fn's error). A panic in fn
// releases the keys and panics again.
//
// Store calls that fail are tried again, each bounded by a quarter of the
// lease (at most 30 s), with a short jittered backoff: a claim or a release
// up to six times, the record of fn's success for as long as the claim's
// lease lasts (at least six times, at most a hundred). So a serialization
// failure, a deadlock or a dropped connection does not reach the caller.
//
// While fn runs, a Store that implements Renewer has the claims renewed
// every third of the lease, so a fn slower than the lease keeps its claim
// and a redelivery meanwhile is Busy. If the claims cannot be renewed
// before they run out (the store is unreachable, or another caller took the
// key over), fn's context is cancelled. Without Renewer, fn's context ends
// with the lease. lease <= 0 means DefaultLease.
//
// Processed is returned only once fn's success is recorded in the store; a
// holder that lost its claim records it only through a new claim. If the
// store does not record it before the lease runs out, Process returns
// Failed with an error wrapping ErrNotRecorded: the callback must not be
// acknowledged, and the key is neither completed nor released, so a
// redelivery is Busy until the lease runs out. A redelivery after that runs
// fn again.
//
// What is promised, then: fn succeeds at most once per PaymentKey, at any
// isolation level, as long as the store accepts the record within the lease
// after fn returned (or the process dies in between); a payment is never
// acknowledged unrecorded, so a confirmed payment is processed at least
// once. An effect that must never repeat, even when the store is down for
// longer than the lease or the process dies after fn, is written in the
// same transaction as the done mark (pgstore's CompleteTx); Process's own
// Complete then changes nothing.
//
// The error is non-nil for Failed. With another outcome it is non-nil only
// when the store could not give a key back or record a superseded pending
// key (the outcome still says what to answer), and it should be logged.
func Process(ctx context.Context, s Store, lease time.Duration, fn func(context.Context, *Payment) error, p *Payment) (Outcome, error) {
	return newProcessor(s, lease, realClock{}).process(ctx, fn, p)
}

// ErrLeaseExpired is reported by Process when the claim on a key was lost
// while fn ran (its lease ran out and the store no longer confirms it):
// another caller may hold the key, so it is neither completed nor released.
var ErrLeaseExpired = errors.New("callback: the claim's lease ran out before fn finished")

// ErrNotRecorded is reported by Process when fn succeeded but the store
// did not record it: the callback is not acknowledged, and the key stays
// claimed until its lease runs out.
var ErrNotRecorded = errors.New("callback: fn succeeded but the store did not record it")

// clock tells Process the time and wakes it up; tests inject a fake one.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a
	// function that stops it.
	After(d time.Duration) (<-chan time.Time, func() bool)
	// AfterFunc calls f in its own goroutine once d has passed, unless
	// the returned timer is stopped first.
	AfterFunc(d time.Duration, f func()) timer
}

// timer is a call scheduled by clock.AfterFunc.
type timer interface {
	// Stop prevents the call if it has not started yet, and reports
	// whether it did.
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func (realClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// processor holds what Process needs; it does not change once made, so
// one serves every callback of a handler.
type processor struct {
	s        Store
	renewer  Renewer // s, if it can renew claims
	lease    time.Duration
	clk      clock
	attempts int
	backoff  time.Duration // first wait between attempts; 0 for none
	attempt  time.Duration // bound of one store call; 0 for the default
}

func newProcessor(s Store, lease time.Duration, clk clock) *processor {
	if lease <= 0 {
		lease = DefaultLease
	}
	r, _ := s.(Renewer)
	return &processor{s: s, renewer: r, lease: lease, clk: clk, attempts: storeAttempts, backoff: retryBackoff}
}

// attemptTimeout bounds one store call: a quarter of the lease, at most
// storeTimeout.
func (pr *processor) attemptTimeout() time.Duration {
	if pr.attempt > 0 {
		return pr.attempt
	}
	return min(pr.lease/4, storeTimeout)
}

// callCtx is the context of one store call made on ctx: bounded by
// attemptTimeout.
func (pr *processor) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, pr.attemptTimeout())
}

// detach is ctx without its cancellation, for the calls that record or
// give up a claim: they must be made even when the service hung up.
func (pr *processor) detach(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

// wait waits before try number i (from 1) of a store call; false if ctx
// ended first.
func (pr *processor) wait(ctx context.Context, i int) bool {
	if pr.backoff <= 0 {
		return ctx.Err() == nil
	}
	d := pr.backoff << min(i-1, 16)
	if d > retryBackoffMax || d <= 0 {
		d = retryBackoffMax
	}
	// Up to half again as long, so that callers that failed together (a
	// serialization failure) do not try again together.
	d += rand.N(d/2 + 1)
	ch, stop := pr.clk.After(d)
	defer stop()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

func (pr *processor) process(ctx context.Context, fn func(context.Context, *Payment) error, p *Payment) (Outcome, error) {
	if pr.s == nil || fn == nil {
		return Failed, fmt.Errorf("%w: Process needs a store and a function", cryptapi.ErrInvalidOption)
	}
	if p == nil || p.UUID == "" {
		return Failed, ErrNoPaymentKey
	}
	if !p.Pending {
		return pr.processConfirmed(ctx, fn, p, PaymentKey(p))
	}
	kp, kc := paymentKeys(p)
	return pr.processPending(ctx, fn, p, kp, kc)
}

func (pr *processor) processConfirmed(ctx context.Context, fn func(context.Context, *Payment) error, p *Payment, kc string) (Outcome, error) {
	c, start, err := pr.claim(ctx, kc)
	if o, stop, err := afterClaim(c, err); stop {
		return o, err // a duplicate ends here, after one store call
	}
	h := pr.hold(kc, start)
	if err := h.run(ctx, fn, p); err != nil {
		return Failed, errors.Join(err, h.release(ctx, kc))
	}
	if err := h.record(ctx, kc); err != nil {
		return Failed, err
	}
	return Processed, nil
}

func (pr *processor) processPending(ctx context.Context, fn func(context.Context, *Payment) error, p *Payment, kp, kc string) (Outcome, error) {
	c, start, err := pr.claim(ctx, kp)
	if o, stop, err := afterClaim(c, err); stop {
		return o, err
	}
	h := pr.hold(kp, start)
	c, start, err = pr.claim(ctx, kc)
	if err != nil {
		return Failed, errors.Join(err, h.release(ctx, kp))
	}
	switch c {
	case AlreadyDone:
		// The confirmation was processed: this pending callback is late,
		// and stays so whether or not its own key is recorded.
		return Superseded, h.record(ctx, kp)
	case Busy:
		return Busy, h.release(ctx, kp)
	case Claimed:
		h.add(kc, start)
	default:
		return Failed, errors.Join(unknownClaim(c), h.release(ctx, kp))
	}
	if err := h.run(ctx, fn, p); err != nil {
		return Failed, errors.Join(err, h.release(ctx, kp), h.release(ctx, kc))
	}
	rerr := h.record(ctx, kp)
	relErr := h.release(ctx, kc)
	if rerr != nil {
		return Failed, errors.Join(rerr, relErr)
	}
	return Processed, relErr
}

// afterClaim maps the result of a first claim: stop is false only for
// Claimed.
func afterClaim(c Outcome, err error) (Outcome, bool, error) {
	if err != nil {
		return Failed, true, err
	}
	switch c {
	case Claimed:
		return 0, false, nil
	case AlreadyDone:
		return AlreadyDone, true, nil
	case Busy:
		return Busy, true, nil
	}
	return Failed, true, unknownClaim(c)
}

// claim claims key, trying again after a store error while ctx lasts.
// start is a time before the store made the claim, so the claim's lease
// ends no earlier than start plus the lease.
func (pr *processor) claim(ctx context.Context, key string) (c Outcome, start time.Time, err error) {
	for i := range pr.attempts {
		if i > 0 && !pr.wait(ctx, i) {
			break
		}
		start = pr.clk.Now()
		actx, cancel := pr.callCtx(ctx)
		c, err = pr.s.Claim(actx, key, pr.lease)
		cancel()
		if err == nil {
			return c, start, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return 0, time.Time{}, storeErr("claim", err)
}

// holder acts on the keys it claimed only while it still holds them: until
// the end of the lease of its first claim, pushed back by each renewal.
type holder struct {
	pr *processor

	mu       sync.Mutex
	keys     []string // claimed, in order; they do not change while fn runs
	keyBuf   [2]string
	deadline time.Time // the claims end no earlier than this
	lost     bool      // the store said a claim is no longer ours

	// The beats that keep the claims while fn runs (see run).
	ctx      context.Context    // the request's, whose values the renewals see
	endFn    context.CancelFunc // ends fn's context
	beatFn   func()             // h.beat, made once
	next     timer              // the next beat
	stopped  bool               // fn returned: no more beats
	beating  chan struct{}      // closed when the running beat ends; nil if none runs
	stopBeat context.CancelFunc // cancels the running beat's renewals
}

// hold starts holding key, claimed at start.
func (pr *processor) hold(key string, start time.Time) *holder {
	h := &holder{pr: pr, deadline: start.Add(pr.lease)}
	h.keyBuf[0] = key
	h.keys = h.keyBuf[:1]
	return h
}

// add holds key too, claimed at start: the claims end with the first of
// them to end.
func (h *holder) add(key string, start time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if end := start.Add(h.pr.lease); end.Before(h.deadline) {
		h.deadline = end
	}
	h.keys = append(h.keys, key)
}

func (h *holder) held() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.lost && h.pr.clk.Now().Before(h.deadline)
}

// extend moves the deadline to from+lease, from being a time before the
// store calls that renewed every claim.
func (h *holder) extend(from time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadline = from.Add(h.pr.lease)
}

func (h *holder) lose() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lost = true
}

// run calls fn while beats keep the claims: fn's context is cancelled
// when they cannot be kept. If fn panics, the held keys are released and
// the panic goes on.
func (h *holder) run(ctx context.Context, fn func(context.Context, *Payment) error, p *Payment) (err error) {
	fctx, cancel := context.WithCancel(ctx)
	h.startBeats(ctx, cancel)
	panicked := true
	defer func() {
		h.stopBeats()
		cancel()
		if panicked {
			for _, k := range h.keys {
				_ = h.release(ctx, k)
			}
		}
	}()
	err = fn(fctx, p)
	panicked = false
	return err
}

// startBeats schedules the first beat, a third of the lease from now (or
// at the end of the lease, when the store cannot renew). No goroutine
// waits for it: a fn quicker than that returns before it is due, and
// stopBeats cancels it.
func (h *holder) startBeats(ctx context.Context, endFn context.CancelFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ctx, h.endFn = ctx, endFn
	h.beatFn = h.beat
	h.next = h.pr.clk.AfterFunc(h.untilBeatLocked(), h.beatFn)
}

// untilBeatLocked is how long until the next beat: the end of the claims,
// or a third of the lease if that is sooner and the store can renew them.
func (h *holder) untilBeatLocked() time.Duration {
	wait := h.deadline.Sub(h.pr.clk.Now())
	if h.pr.renewer != nil {
		wait = min(wait, max(h.pr.lease/3, time.Nanosecond))
	}
	return wait
}

// beat runs on its own goroutine while fn runs: it ends fn's context
// once the claims are no longer held, and otherwise renews them (when
// the store can) and schedules the next beat.
func (h *holder) beat() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	done := make(chan struct{})
	// The renewals end when stopBeats is called, not with the request.
	rctx, cancel := context.WithCancel(context.WithoutCancel(h.ctx))
	h.beating, h.stopBeat = done, cancel
	h.mu.Unlock()

	keep := h.held() && (h.pr.renewer == nil || h.renew(rctx))
	cancel()

	h.mu.Lock()
	h.beating, h.stopBeat = nil, nil
	close(done)
	if keep && !h.stopped {
		h.next = h.pr.clk.AfterFunc(h.untilBeatLocked(), h.beatFn)
	}
	h.mu.Unlock()
	if !keep {
		h.endFn()
	}
}

// stopBeats is called once fn returned: no beat runs after it returns (a
// running one has its renewals cancelled and is waited for), so nothing
// renews a claim after it was completed or released.
func (h *holder) stopBeats() {
	h.mu.Lock()
	h.stopped = true
	h.next.Stop()
	done := h.beating
	if done != nil {
		h.stopBeat()
	}
	h.mu.Unlock()
	if done != nil {
		<-done
	}
}

// renew renews every held claim, trying again after a store error while
// they last. It returns false once a claim is known to be lost.
func (h *holder) renew(ctx context.Context) bool {
	pr := h.pr
	for i := range pr.attempts {
		if i > 0 && (!pr.wait(ctx, i) || !h.held()) {
			return true // the next beat decides
		}
		start := pr.clk.Now()
		var err error
		for _, k := range h.keys {
			actx, cancel := pr.callCtx(ctx)
			err = pr.renewer.Renew(actx, k, pr.lease)
			cancel()
			if err != nil {
				break
			}
		}
		switch {
		case err == nil:
			h.extend(start)
			return true
		case errors.Is(err, ErrNotClaimed):
			h.lose()
			return false
		case ctx.Err() != nil:
			return true
		}
	}
	return true
}

// record makes fn's success on key durable: Complete is tried again after
// a store error, while the claim lasts (at least storeAttempts times). When the claim is no longer known to be held (its lease
// ran out, or the store said it is not ours), a new claim finds out: AlreadyDone
// means another caller recorded the key, Claimed that nobody took it over
// (it is then completed), Busy that another caller holds it.
func (h *holder) record(ctx context.Context, key string) error {
	pr := h.pr
	sctx := pr.detach(ctx)
	h.mu.Lock()
	until := h.deadline
	if h.lost {
		until = time.Time{}
	}
	h.mu.Unlock()
	lastTry := until
	var err error
	for i := 0; i < recordAttempts && (i < pr.attempts || pr.clk.Now().Before(lastTry)); i++ {
		if i > 0 && !pr.wait(sctx, i) {
			break
		}
		if !pr.clk.Now().Before(until) || errors.Is(err, ErrNotClaimed) {
			start := pr.clk.Now()
			actx, cancel := pr.callCtx(sctx)
			var c Outcome
			c, err = pr.s.Claim(actx, key, pr.lease)
			cancel()
			if err != nil {
				continue
			}
			switch c {
			case AlreadyDone:
				return nil
			case Claimed:
				until = start.Add(pr.lease)
			default:
				return fmt.Errorf("%w: %w: another caller holds %s", ErrNotRecorded, ErrLeaseExpired, key)
			}
		}
		actx, cancel := pr.callCtx(sctx)
		err = pr.s.Complete(actx, key)
		cancel()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %w", ErrNotRecorded, storeErr("complete", err))
}

// release gives key up, trying again after a store error. It does nothing
// once the claim is no longer held: the key may be another caller's.
func (h *holder) release(ctx context.Context, key string) error {
	pr := h.pr
	sctx := pr.detach(ctx)
	var err error
	for i := range pr.attempts {
		if i > 0 && !pr.wait(sctx, i) {
			break
		}
		if !h.held() {
			return ErrLeaseExpired
		}
		actx, cancel := pr.callCtx(sctx)
		err = pr.s.Release(actx, key)
		cancel()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrNotClaimed) && i > 0:
			// An earlier try released it but its answer was lost.
			return nil
		case errors.Is(err, ErrNotClaimed):
			return storeErr("release", err)
		}
	}
	return storeErr("release", err)
}

func storeErr(op string, err error) error {
	return fmt.Errorf("callback: store %s: %w", op, err)
}

func unknownClaim(c Outcome) error {
	return fmt.Errorf("callback: store returned an unknown claim result %d", int(c))
}
