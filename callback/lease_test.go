package callback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingStore counts the calls that act on a claim.
type recordingStore struct {
	Store
	mu        sync.Mutex
	completes int
	releases  int
}

func (r *recordingStore) Complete(ctx context.Context, key string) error {
	r.mu.Lock()
	r.completes++
	r.mu.Unlock()
	return r.Store.Complete(ctx, key)
}

func (r *recordingStore) Release(ctx context.Context, key string) error {
	r.mu.Lock()
	r.releases++
	r.mu.Unlock()
	return r.Store.Release(ctx, key)
}

// noRenew hides a store's Renew: fn's context then ends with the lease.
type noRenew struct{ Store }

// TestProcessReclaimsBeforeActingOnAKeyAfterItsLease: a holder whose lease
// ran out may no longer own its key (another delivery may have taken it
// over), so it must not release it, and records a success only through a
// new claim, or a third delivery could run fn while the second still does.
func TestProcessReclaimsBeforeActingOnAKeyAfterItsLease(t *testing.T) {
	// The holder and the store read one fake clock, so the lease ends for
	// both at the same instant: on real clocks the store's lease starts a
	// little after the holder's (the claim is under way in between), and a
	// new claim made right after the holder's lease ran out may still find
	// the old one live.
	const lease = time.Minute
	for _, tc := range []struct {
		name      string
		fnErr     bool
		outcome   Outcome
		completes int
	}{
		{"fn fails after the lease", true, Failed, 0},
		{"fn succeeds after the lease", false, Processed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			rs := &recordingStore{Store: NewMemoryStore(WithClock(clk))}
			p := &Payment{UUID: "u-lease", AddressIn: "a"}
			fn := func(ctx context.Context, _ *Payment) error {
				<-ctx.Done() // outlast the lease: the context ends with it
				if tc.fnErr {
					return ctx.Err()
				}
				return nil
			}
			type result struct {
				o   Outcome
				err error
			}
			done := make(chan result, 1)
			go func() {
				pr := newProcessor(rs, lease, clk)
				pr.backoff = 0
				o, err := pr.process(context.Background(), fn, p)
				done <- result{o, err}
			}()
			clk.waitTimers(t, 1) // fn runs until the lease's end
			clk.Advance(lease)
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Process did not return once the lease ran out")
			}
			assert.Equal(t, tc.outcome, r.o)
			if tc.fnErr {
				assert.ErrorIs(t, r.err, ErrLeaseExpired)
			} else {
				assert.NoError(t, r.err, "nobody took the key over: the new claim records it")
			}
			rs.mu.Lock()
			defer rs.mu.Unlock()
			assert.Equal(t, tc.completes, rs.completes)
			assert.Zero(t, rs.releases, "no Release after the lease")
		})
	}
}

// TestProcessTakeoverIsNotUndone: a holder that outlasted its lease and was
// taken over neither releases nor completes the new holder's claim.
func TestProcessTakeoverIsNotUndone(t *testing.T) {
	const lease = 30 * time.Millisecond
	mem := NewMemoryStore()
	store := noRenew{mem}
	p := &Payment{UUID: "u-takeover", AddressIn: "a"}
	key := PaymentKey(p)
	for _, succeed := range []bool{false, true} {
		aDone := make(chan error, 1)
		aRunning := make(chan struct{})
		bClaimed := make(chan struct{})
		p.UUID = fmt.Sprintf("u-takeover-%v", succeed)
		key = PaymentKey(p)
		go func() {
			_, err := Process(context.Background(), store, lease, func(ctx context.Context, _ *Payment) error {
				close(aRunning)
				<-ctx.Done() // A outlasts its lease...
				<-bClaimed   // ...and returns only after B took the key over
				if succeed {
					return nil
				}
				return ctx.Err()
			}, p)
			aDone <- err
		}()
		<-aRunning // A holds the key
		// B takes the key over once A's lease has run out.
		var c Outcome
		require.Eventually(t, func() bool {
			var err error
			c, err = mem.Claim(context.Background(), key, time.Hour)
			return err == nil && c == Claimed
		}, 5*time.Second, time.Millisecond)
		close(bClaimed)
		err := <-aDone
		assert.ErrorIs(t, err, ErrLeaseExpired)
		if succeed {
			assert.ErrorIs(t, err, ErrNotRecorded, "A's success is not recorded over B's claim")
		}
		// A did not release nor complete B's claim: a third delivery
		// still finds it busy.
		c, err = mem.Claim(context.Background(), key, time.Hour)
		require.NoError(t, err)
		assert.Equal(t, Busy, c)
	}
}

// renewCounter counts successful renewals and can make them fail.
type renewCounter struct {
	*MemoryStore
	mu      sync.Mutex
	renewed chan string
	fail    error
}

func (r *renewCounter) Renew(ctx context.Context, key string, lease time.Duration) error {
	r.mu.Lock()
	fail := r.fail
	r.mu.Unlock()
	err := fail
	if err == nil {
		err = r.MemoryStore.Renew(ctx, key, lease)
	}
	r.renewed <- key
	return err
}

func (r *renewCounter) failWith(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

// TestSlowFnKeepsItsClaimWhileARedeliveryArrives: fn runs for three leases
// on a fake clock while the heartbeat renews its claims; a redelivery in
// the meantime is busy, fn's context stays alive, and once fn returns the
// key is done, so fn ran once.
func TestSlowFnKeepsItsClaimWhileARedeliveryArrives(t *testing.T) {
	const lease = time.Minute
	for _, pending := range []bool{false, true} {
		t.Run(fmt.Sprintf("pending=%v", pending), func(t *testing.T) {
			clk := newFakeClock()
			store := &renewCounter{MemoryStore: NewMemoryStore(WithClock(clk)), renewed: make(chan string, 16)}
			p := &Payment{UUID: "u-slow", AddressIn: "a", Pending: pending}
			var calls atomic.Int32
			entered := make(chan struct{})
			finish := make(chan struct{})
			var fnCtxErr error
			fn := func(ctx context.Context, _ *Payment) error {
				if calls.Add(1) > 1 {
					return nil
				}
				close(entered)
				<-finish
				fnCtxErr = ctx.Err()
				return nil
			}
			process := func() (Outcome, error) {
				pr := newProcessor(store, lease, clk)
				pr.backoff = 0
				return pr.process(context.Background(), fn, p)
			}
			type result struct {
				o   Outcome
				err error
			}
			first := make(chan result, 1)
			go func() {
				o, err := process()
				first <- result{o, err}
			}()
			<-entered
			keys := 1
			if pending {
				keys = 2 // the pending key and its confirmed twin
			}
			for range 9 { // three leases
				clk.waitTimers(t, 1)
				clk.Advance(lease / 3)
				for range keys {
					<-store.renewed
				}
			}
			o, err := process() // the redelivery, three leases later
			assert.Equal(t, Busy, o)
			assert.NoError(t, err)
			close(finish)
			r := <-first
			assert.Equal(t, Processed, r.o)
			assert.NoError(t, r.err)
			assert.NoError(t, fnCtxErr, "fn's context lived while the claim was renewed")
			o, err = process()
			assert.Equal(t, AlreadyDone, o)
			assert.NoError(t, err)
			assert.Equal(t, int32(1), calls.Load(), "fn ran once")
		})
	}
}

// TestFnContextEndsWhenItsClaimCannotBeKept: when renewal says the claim is
// no longer ours, fn's context is cancelled at once; when renewal keeps
// failing, it is cancelled when the lease runs out. Either way the key is
// not released (it may be another caller's).
func TestFnContextEndsWhenItsClaimCannotBeKept(t *testing.T) {
	const lease = time.Minute
	for _, tc := range []struct {
		name     string
		err      error
		advances int // thirds of the lease until fn's context ends
	}{
		{"taken over", ErrNotClaimed, 1},
		{"store down", errors.New("db down"), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			store := &renewCounter{MemoryStore: NewMemoryStore(WithClock(clk)), renewed: make(chan string, 16)}
			rs := &recordingStore{Store: store}
			store.failWith(tc.err)
			p := &Payment{UUID: "u-lost", AddressIn: "a"}
			entered := make(chan struct{})
			ended := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				pr := newProcessor(renewing{rs, store}, lease, clk)
				pr.backoff = 0
				_, err := pr.process(context.Background(), func(ctx context.Context, _ *Payment) error {
					close(entered)
					<-ctx.Done()
					close(ended)
					return ctx.Err()
				}, p)
				done <- err
			}()
			<-entered
			for i := range tc.advances {
				select {
				case <-ended:
					t.Fatalf("fn's context ended after %d thirds of the lease, want %d", i, tc.advances)
				default:
				}
				clk.waitTimers(t, 1)
				clk.Advance(lease / 3)
				if i < 2 {
					<-store.renewed
				}
			}
			<-ended
			err := <-done
			assert.ErrorIs(t, err, context.Canceled)
			assert.ErrorIs(t, err, ErrLeaseExpired, "the key is not released")
			rs.mu.Lock()
			defer rs.mu.Unlock()
			assert.Zero(t, rs.releases)
			assert.Zero(t, rs.completes)
		})
	}
}

// renewing is a recordingStore that renews through r.
type renewing struct {
	*recordingStore
	r Renewer
}

func (s renewing) Renew(ctx context.Context, key string, lease time.Duration) error {
	return s.r.Renew(ctx, key, lease)
}

// hangingRenewer's Renew waits until its context ends; it logs that and
// each Complete, in order.
type hangingRenewer struct {
	*MemoryStore
	started chan struct{} // closed by the first Renew
	once    sync.Once
	mu      sync.Mutex
	log     []string
}

func (s *hangingRenewer) note(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, what)
}

func (s *hangingRenewer) Renew(ctx context.Context, _ string, _ time.Duration) error {
	s.once.Do(func() { close(s.started) })
	<-ctx.Done()
	s.note("renew ended")
	return ctx.Err()
}

func (s *hangingRenewer) Complete(ctx context.Context, key string) error {
	s.note("complete")
	return s.MemoryStore.Complete(ctx, key)
}

// TestNoRenewalOutlivesFn: a renewal still under way when fn returns is
// cancelled and waited for before the key is completed, and no renewal is
// scheduled after that, so nothing renews a claim after it was completed
// (or released, when it may already be another caller's).
func TestNoRenewalOutlivesFn(t *testing.T) {
	const lease = time.Minute
	clk := newFakeClock()
	store := &hangingRenewer{MemoryStore: NewMemoryStore(WithClock(clk)), started: make(chan struct{})}
	entered := make(chan struct{})
	type result struct {
		o   Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		pr := newProcessor(store, lease, clk)
		pr.backoff = 0
		o, err := pr.process(context.Background(), func(ctx context.Context, _ *Payment) error {
			close(entered)
			<-store.started // a renewal is under way
			return nil
		}, &Payment{UUID: "u-renewing", AddressIn: "a"})
		done <- result{o, err}
	}()
	<-entered
	clk.waitTimers(t, 1)
	clk.Advance(lease / 3) // the first beat: its renewal hangs
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Process did not return: the renewal under way was not cancelled")
	}
	assert.Equal(t, Processed, r.o)
	assert.NoError(t, r.err)
	store.mu.Lock()
	assert.Equal(t, []string{"renew ended", "complete"}, store.log)
	store.mu.Unlock()
	clk.mu.Lock()
	assert.Empty(t, clk.timers, "no beat is scheduled once Process returned")
	clk.mu.Unlock()
}
