package callback

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// diffEnv runs the deliveries of FuzzProcessMemoryStore.
type diffEnv struct {
	clk   *fakeClock
	mem   *MemoryStore
	pr    *processor
	calls int
	// succeeded is when fn last succeeded for each payment key.
	succeeded map[string]time.Time
}

const (
	diffLease     = time.Minute
	diffRetention = 10 * diffLease
)

func newDiffEnv() *diffEnv {
	clk := newFakeClock()
	mem := NewMemoryStore(WithClock(clk), WithRetention(diffRetention))
	pr := newProcessor(mem, diffLease, clk)
	pr.backoff = 0
	return &diffEnv{clk: clk, mem: mem, pr: pr, succeeded: map[string]time.Time{}}
}

type diffResult struct {
	outcome Outcome
	err     string
	calls   int
}

var errDiffFn = errors.New("fn failed")

// step runs one delivery described by op: bits 0-1 the payment, bit 2
// pending, bits 3-5 what fn does, bits 6-7 how far the clock moves first.
func (e *diffEnv) step(op byte) diffResult {
	switch op >> 6 {
	case 1:
		e.clk.Advance(diffLease / 2)
	case 2:
		e.clk.Advance(2 * diffLease)
	case 3:
		e.clk.Advance(11 * diffLease) // past the retention of done keys
	}
	p := &Payment{UUID: fmt.Sprintf("u%d", op&3), AddressIn: "a", Pending: op&4 != 0}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	behaviour := (op >> 3) & 7
	if behaviour == 7 {
		cancel() // the service hung up before
	}
	fn := func(fctx context.Context, _ *Payment) (err error) {
		e.calls++
		defer func() {
			if err == nil {
				e.succeed(p)
			}
		}()
		switch behaviour {
		case 1:
			return errDiffFn
		case 2:
			e.clk.Advance(2 * diffLease) // fn outlasts its lease
			return nil
		case 3:
			e.clk.Advance(2 * diffLease)
			return errDiffFn
		case 4:
			e.clk.Advance(diffLease / 2) // a renewal falls due
			return nil
		case 5:
			cancel() // the service hangs up while fn runs
			return fctx.Err()
		case 6:
			cancel() // ... and fn succeeds after its lease
			e.clk.Advance(2 * diffLease)
			return nil
		}
		return nil
	}
	o, err := e.pr.process(ctx, fn, p)
	r := diffResult{outcome: o, calls: e.calls}
	if err != nil {
		r.err = err.Error()
	}
	return r
}

// failure is set by succeed when fn succeeds a second time for one
// payment key within the store's retention.
var errTwice = errors.New("fn succeeded twice for one payment key")

func (e *diffEnv) succeed(p *Payment) {
	k := PaymentKey(p)
	if last, ok := e.succeeded[k]; ok && e.clk.Now().Sub(last) < diffRetention {
		panic(fmt.Sprintf("%v: %s", errTwice, k))
	}
	e.succeeded[k] = e.clk.Now()
}

// FuzzProcessMemoryStore runs sequences of deliveries (new, duplicate,
// pending, failing, slower than the lease, cancelled) through Process on
// a MemoryStore: fn succeeds at most once per payment key while the store
// remembers it, and an acknowledged outcome is one whose key is done in
// the store.
func FuzzProcessMemoryStore(f *testing.F) {
	for _, seed := range [][]byte{
		{0x00, 0x00},                   // processed, then a duplicate
		{0x04, 0x00, 0x04},             // pending, confirmed, late pending
		{0x00, 0x04},                   // superseded pending
		{0x08, 0x00, 0x00},             // fn fails, then succeeds
		{0x10, 0x00, 0x18, 0x98},       // slower than the lease
		{0x20, 0x24, 0xe0, 0xc0},       // renewals, retention
		{0x28, 0x30, 0x38, 0x2c, 0x00}, // cancelled requests
		{0x01, 0x41, 0x81, 0xc1, 0x05, 0x45, 0x85, 0xc5},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		e := newDiffEnv()
		for i, op := range ops {
			r := e.step(op)
			if !r.outcome.Acknowledge() {
				continue
			}
			p := &Payment{UUID: fmt.Sprintf("u%d", op&3), Pending: op&4 != 0}
			e.mem.mu.Lock()
			entry, ok := e.mem.entries[PaymentKey(p)]
			e.mem.mu.Unlock()
			if !ok || !entry.done {
				t.Fatalf("delivery %d (%08b): %v acknowledged, but %s is not done in the store", i, op, r.outcome, PaymentKey(p))
			}
		}
	})
}
