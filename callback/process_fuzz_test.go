package callback

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// plainStore hides that its store is a *MemoryStore, so Process takes
// its plain path: each store call on its own bounded context, the calls
// that record or release on a detached one.
type plainStore struct{ *MemoryStore }

// diffEnv is one side of FuzzProcessMemoryStoreFastPath.
type diffEnv struct {
	clk   *fakeClock
	mem   *MemoryStore
	pr    *processor
	calls int
}

const diffLease = time.Minute

func newDiffEnv(t *testing.T, fast bool) *diffEnv {
	clk := newFakeClock()
	mem := NewMemoryStore(WithClock(clk), WithRetention(10*diffLease))
	var s Store = mem
	if !fast {
		s = plainStore{mem}
	}
	pr := newProcessor(s, diffLease, clk)
	pr.backoff = 0
	if pr.mem != fast {
		t.Fatalf("processor's fast path is %v, want %v", pr.mem, fast)
	}
	return &diffEnv{clk: clk, mem: mem, pr: pr}
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
	fn := func(fctx context.Context, _ *Payment) error {
		e.calls++
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

// FuzzProcessMemoryStoreFastPath runs one sequence of deliveries (new,
// duplicate, pending, failing, slower than the lease, cancelled) through
// Process twice: on a *MemoryStore, whose calls get the caller's context
// as it is (the fast path: see processor.callCtx), and on the same kind of
// store behind a wrapper, which takes the plain path. The outcomes, the
// errors, fn's calls and what the stores end up remembering must be the
// same.
func FuzzProcessMemoryStoreFastPath(f *testing.F) {
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
		fast, plain := newDiffEnv(t, true), newDiffEnv(t, false)
		for i, op := range ops {
			rf, rp := fast.step(op), plain.step(op)
			if rf != rp {
				t.Fatalf("delivery %d (%08b): fast path %+v, plain path %+v", i, op, rf, rp)
			}
		}
		fast.mem.mu.Lock()
		defer fast.mem.mu.Unlock()
		plain.mem.mu.Lock()
		defer plain.mem.mu.Unlock()
		if len(fast.mem.entries) != len(plain.mem.entries) {
			t.Fatalf("fast path's store has %d keys, plain path's %d", len(fast.mem.entries), len(plain.mem.entries))
		}
		for k, ef := range fast.mem.entries {
			ep, ok := plain.mem.entries[k]
			if !ok || ef.done != ep.done || !ef.until.Equal(ep.until) {
				t.Fatalf("key %s: fast path's store has %+v, plain path's %+v (found: %v)", k, ef, ep, ok)
			}
		}
	})
}
