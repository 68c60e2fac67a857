// Package storetest checks the promises of callback.Process against a
// callback.Store that fails at every step: each call of a delivery
// sequence in turn returns an error, hangs until its context ends, or
// succeeds but reports a failure (the write landed, the answer was lost).
package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
)

// Mode is how the faulty call fails.
type Mode int

const (
	// Fail returns an error without calling the store.
	Fail Mode = iota + 1
	// Hang waits until the call's context ends, without calling the store.
	Hang
	// Lost calls the store and then returns an error: the write landed
	// but the caller does not know it.
	Lost
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Fail:
		return "error"
	case Hang:
		return "hang"
	case Lost:
		return "lost answer"
	}
	return "none"
}

// ErrInjected is the error a faulty call returns.
var ErrInjected = errors.New("storetest: injected store failure")

// Faulty wraps a store (a callback.Renewer too) and makes call number At
// (from 1; 0 for none) fail in Mode. It is safe for concurrent use.
type Faulty struct {
	Store callback.Store
	Mode  Mode
	At    int

	mu    sync.Mutex
	calls []string
}

// Calls returns the calls made so far, as "op key".
func (f *Faulty) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// fault reports whether this call is the faulty one.
func (f *Faulty) fault(op, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+key)
	return len(f.calls) == f.At
}

// do runs call unless this call is the faulty one.
func (f *Faulty) do(ctx context.Context, op, key string, call func() error) error {
	if !f.fault(op, key) {
		return call()
	}
	switch f.Mode {
	case Hang:
		<-ctx.Done()
		return ctx.Err()
	case Lost:
		if err := call(); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %s: %w", op, key, ErrInjected)
}

// Claim implements callback.Store.
func (f *Faulty) Claim(ctx context.Context, key string, lease time.Duration) (callback.Outcome, error) {
	var c callback.Outcome
	err := f.do(ctx, "claim", key, func() error {
		var err error
		c, err = f.Store.Claim(ctx, key, lease)
		return err
	})
	if err != nil {
		return 0, err
	}
	return c, nil
}

// Complete implements callback.Store.
func (f *Faulty) Complete(ctx context.Context, key string) error {
	return f.do(ctx, "complete", key, func() error { return f.Store.Complete(ctx, key) })
}

// Release implements callback.Store.
func (f *Faulty) Release(ctx context.Context, key string) error {
	return f.do(ctx, "release", key, func() error { return f.Store.Release(ctx, key) })
}

// Renew implements callback.Renewer if the wrapped store does.
func (f *Faulty) Renew(ctx context.Context, key string, lease time.Duration) error {
	r, ok := f.Store.(callback.Renewer)
	if !ok {
		return errors.New("storetest: the wrapped store cannot renew")
	}
	return f.do(ctx, "renew", key, func() error { return r.Renew(ctx, key, lease) })
}

// Env is one store under test.
type Env struct {
	// Store is an empty store, or one that has not seen the uuids the
	// run uses.
	Store callback.Store
	// Expire makes every running lease of Store run out, as if the lease
	// had passed.
	Expire func()
	// Process runs a payment as callback.Process does, on the store's
	// clock.
	Process func(ctx context.Context, s callback.Store, fn func(context.Context, *callback.Payment) error, p *callback.Payment) (callback.Outcome, error)
}

// Scenario is an order in which the service delivers one payment's
// callbacks: true for pending, false for confirmed. Callbacks not
// acknowledged are delivered again afterwards, after the leases ran out.
type Scenario struct {
	Name       string
	Deliveries []bool
}

// Scenarios returns the delivery orders every store is tried with.
func Scenarios() []Scenario {
	return []Scenario{
		{"pending then confirmed, redelivered", []bool{true, false, true, false}},
		{"confirmed before pending, redelivered", []bool{false, true, false, true}},
		{"pending twice then confirmed twice", []bool{true, true, false, false}},
	}
}

// Run enumerates, for every scenario and mode, every step k of the
// delivery sequence (and a few beyond, for the calls that retries add),
// makes call k fail, and checks the promises: fn succeeds at most once per
// payment key; the confirmed payment is processed (once the store works
// again); a pending callback never reaches fn after its confirmation; a
// callback is acknowledged only once its success is recorded.
func Run(t *testing.T, modes []Mode, scenarios []Scenario, newEnv func(t *testing.T) Env) {
	for _, sc := range scenarios {
		for _, mode := range modes {
			// A run without faults counts the steps.
			env := newEnv(t)
			steps := len(runOnce(t, env, sc, mode, 0, "base").Calls())
			if steps == 0 {
				t.Fatalf("%s: no store calls", sc.Name)
			}
			for k := 1; k <= steps+3; k++ {
				t.Run(fmt.Sprintf("%s/%s/step %d", sc.Name, mode, k), func(t *testing.T) {
					runOnce(t, newEnv(t), sc, mode, k, fmt.Sprintf("%d", k))
				})
			}
		}
	}
}

// runOnce delivers one payment's callbacks as sc says, with call k
// failing, then delivers again whatever was not acknowledged.
func runOnce(t *testing.T, env Env, sc Scenario, mode Mode, k int, tag string) *Faulty {
	t.Helper()
	f := &Faulty{Store: env.Store, Mode: mode, At: k}
	uuid := "st-" + rand.Text() + "-" + tag
	var (
		mu        sync.Mutex
		successes = map[bool]int{}
		late      int
	)
	fn := func(_ context.Context, p *callback.Payment) error {
		mu.Lock()
		defer mu.Unlock()
		if p.Pending && successes[false] > 0 {
			late++
		}
		successes[p.Pending]++
		return nil
	}
	acked := map[bool]bool{}
	deliver := func(pending bool) {
		p := &callback.Payment{UUID: uuid, AddressIn: "addr", Pending: pending}
		o, err := env.Process(context.Background(), f, fn, p)
		if !o.Acknowledge() {
			return
		}
		acked[pending] = true
		// Acknowledged: the result must be in the store (asked directly,
		// not through the faulty wrapper). A done key stays as it is.
		key := callback.PaymentKey(p)
		if o == callback.Superseded {
			key = callback.PaymentKey(&callback.Payment{UUID: uuid})
		}
		c, cerr := env.Store.Claim(context.Background(), key, time.Minute)
		if cerr != nil || c != callback.AlreadyDone {
			t.Errorf("%v acknowledged (err %v), but the store has %s as %v (err %v); calls %v",
				o, err, key, c, cerr, f.Calls())
		}
		if o == callback.Processed && err != nil {
			t.Errorf("processed with an error: %v", err)
		}
	}
	for _, pending := range sc.Deliveries {
		deliver(pending)
	}
	for round := 0; round < 5 && !(acked[true] && acked[false]); round++ {
		env.Expire()
		for _, pending := range []bool{true, false} {
			if !acked[pending] {
				deliver(pending)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if successes[true] > 1 || successes[false] > 1 {
		t.Errorf("fn succeeded %d times for the pending and %d times for the confirmed callback; calls %v",
			successes[true], successes[false], f.Calls())
	}
	if successes[false] != 1 {
		t.Errorf("the confirmed payment was processed %d times, want 1; calls %v", successes[false], f.Calls())
	}
	if late > 0 {
		t.Errorf("a pending callback reached fn after its confirmation; calls %v", f.Calls())
	}
	if !acked[true] || !acked[false] {
		t.Errorf("not acknowledged in the end: pending %v, confirmed %v; calls %v", acked[true], acked[false], f.Calls())
	}
	return f
}
