package callback

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// beatWatch is a MemoryStore that checks, for every key, that no renewal
// starts or is under way once the key was completed or released, and
// whose Renew fails as told.
type beatWatch struct {
	*MemoryStore
	mu       sync.Mutex
	inflight map[string]int
	finished map[string]bool
	renewErr func() error // nil error: renew
	bad      []string
	renews   int
}

func (s *beatWatch) Renew(ctx context.Context, key string, lease time.Duration) error {
	s.mu.Lock()
	if s.finished[key] {
		s.bad = append(s.bad, "renew of "+key+" after it was completed or released")
	}
	s.inflight[key]++
	s.renews++
	fail := s.renewErr()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight[key]--
		s.mu.Unlock()
	}()
	if fail != nil {
		return fail
	}
	return s.MemoryStore.Renew(ctx, key, lease)
}

func (s *beatWatch) finish(key, op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[key] > 0 {
		s.bad = append(s.bad, op+" of "+key+" while a renewal is under way")
	}
	s.finished[key] = true
}

func (s *beatWatch) Complete(ctx context.Context, key string) error {
	s.finish(key, "complete")
	return s.MemoryStore.Complete(ctx, key)
}

func (s *beatWatch) Release(ctx context.Context, key string) error {
	s.finish(key, "release")
	return s.MemoryStore.Release(ctx, key)
}

// waitTimerOrDone waits until a timer waits on clk or ctx ends.
func waitTimerOrDone(tb testing.TB, clk *fakeClock, ctx context.Context) bool {
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for {
		clk.mu.Lock()
		n, added := len(clk.timers), clk.added
		clk.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-added:
		case <-ctx.Done():
			return false
		case <-guard.C:
			tb.Errorf("no timer on the fake clock and fn's context not ended")
			return false
		}
	}
}

// TestBeatsNeverRenewAfterFnAcrossLeaseThirds runs Process many times
// with fns whose duration falls around multiples of a third of the lease
// (one nanosecond before, at, after), with renewals that fail (a store
// error or ErrNotClaimed) at random, requests cancelled at random while fn
// runs, and fns that return just as a beat fires. It checks that no
// renewal starts or is under way once a key was completed or released,
// that Processed means the key is done in the store, that fn's context
// ended only when its claim was lost, and (TestMain) that no goroutine or
// timer is left.
func TestBeatsNeverRenewAfterFnAcrossLeaseThirds(t *testing.T) {
	const lease = 3 * time.Minute
	rng := rand.New(rand.NewPCG(3, 4))
	n := 1500
	if testing.Short() {
		n = 200
	}
	counts := map[Outcome]int{}
	renewCalls := 0
	for i := range n {
		clk := newFakeClock()
		failRate := []int{0, 0, 3, 10}[rng.IntN(4)]
		var fmu sync.Mutex
		frng := rand.New(rand.NewPCG(uint64(i), 9))
		store := &beatWatch{
			MemoryStore: NewMemoryStore(WithClock(clk)),
			inflight:    map[string]int{}, finished: map[string]bool{},
			renewErr: func() error {
				fmu.Lock()
				defer fmu.Unlock()
				if failRate == 0 || frng.IntN(failRate) != 0 {
					return nil
				}
				if frng.IntN(2) == 0 {
					return ErrNotClaimed
				}
				return errors.New("db down")
			},
		}
		renews := rng.IntN(4) != 0
		var st Store = store
		if !renews {
			st = noRenew{struct{ Store }{store}}
			failRate = 0
		}
		pr := newProcessor(st, lease, clk)
		if rng.IntN(2) == 0 {
			pr.backoff = 0
		}
		steps := rng.IntN(5)
		step := lease/3 + []time.Duration{-time.Nanosecond, 0, time.Nanosecond, lease / 6}[rng.IntN(4)]
		cancelAt := -1
		if rng.IntN(3) == 0 {
			cancelAt = rng.IntN(steps + 1)
		}
		pending := rng.IntN(2) == 0
		ctx, cancel := context.WithCancel(context.Background())
		var ctxEnded, lost bool
		start := clk.Now()
		var ranFor time.Duration
		o, err := pr.process(ctx, func(fctx context.Context, _ *Payment) error {
			for s := range steps {
				if s == cancelAt {
					cancel()
				}
				if !waitTimerOrDone(t, clk, fctx) {
					break
				}
				clk.Advance(step) // the beat may fire as fn returns
			}
			select {
			case <-fctx.Done():
				ctxEnded = true
				lost = ctx.Err() == nil
				ranFor = clk.Now().Sub(start)
				return fctx.Err()
			default:
			}
			return nil
		}, &Payment{UUID: fmt.Sprint("u", i), AddressIn: "a", Pending: pending})
		cancel()
		counts[o]++
		store.mu.Lock()
		require.Empty(t, store.bad, "run %d", i)
		renewCalls += store.renews
		store.mu.Unlock()
		if o == Processed {
			if err != nil {
				// Only a pending payment's confirmed key, given back
				// after the lease ran out, may fail.
				require.True(t, pending && errors.Is(err, ErrLeaseExpired), "run %d: %v", i, err)
			}
			require.False(t, ctxEnded && lost)
			key := PaymentKey(&Payment{UUID: fmt.Sprint("u", i), Pending: pending})
			c, err := store.MemoryStore.Claim(context.Background(), key, lease)
			require.NoError(t, err)
			require.Equal(t, AlreadyDone, c, "run %d: Processed but %s is not done", i, key)
		}
		if ctxEnded && lost {
			require.Equal(t, Failed, o)
			if !renews {
				require.GreaterOrEqual(t, ranFor, lease, "run %d: fn's context ended before the lease", i)
			} else {
				require.NotZero(t, failRate, "run %d: fn's context ended though every renewal succeeded", i)
			}
		}
		if !ctxEnded && !renews {
			// No beat ended it: only possible while the lease lasts.
			require.Less(t, time.Duration(steps)*step, lease+step, "run %d", i)
		}
		clk.mu.Lock()
		left := len(clk.timers)
		clk.mu.Unlock()
		require.Zero(t, left, "run %d: a timer is left on the clock", i)
	}
	t.Logf("%d runs, %d renewals, outcomes %v", n, renewCalls, counts)
}

// TestConcurrentRedeliveriesRunFnOncePerKey delivers the pending and the
// confirmed callback of many payments from several goroutines at once,
// each delivery repeated until it is acknowledged (its twin delivered
// before some of the tries), through the
// MemoryStore's fast path and through a wrapper that takes the plain one:
// fn succeeds at most once per key, never twice at once for a payment,
// a confirmed key always runs, and every claim ends completed or given
// back.
func TestConcurrentRedeliveriesRunFnOncePerKey(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprint("wrapped=", wrapped), func(t *testing.T) {
			mem := NewMemoryStore()
			var s Store = mem
			if wrapped {
				s = renewingStore{mem}
			}
			pr := newProcessor(s, DefaultLease, realClock{})
			pr.backoff = 0
			const payments, workers = 100, 6
			var mu sync.Mutex
			runs := map[string]int{}
			running := map[string]bool{}
			fn := func(_ context.Context, p *Payment) error {
				mu.Lock()
				if running[p.UUID] {
					t.Errorf("fn runs twice at once for %s", p.UUID)
				}
				running[p.UUID] = true
				mu.Unlock()
				runtime.Gosched() // let another delivery try
				mu.Lock()
				defer mu.Unlock()
				running[p.UUID] = false
				runs[PaymentKey(p)]++
				return nil
			}
			attempts := 0
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					for i := range payments * 2 {
						j := (i + w*7) % (payments * 2)
						p := &Payment{UUID: fmt.Sprint("c-", j/2), AddressIn: "a", Pending: j%2 == 0}
						for {
							if rng.IntN(2) == 0 {
								// Its twin first, whatever becomes of it.
								twin := *p
								twin.Pending = !p.Pending
								if o, err := pr.process(context.Background(), fn, &twin); o == Failed {
									t.Errorf("%s: %v", PaymentKey(&twin), err)
								}
							}
							o, err := pr.process(context.Background(), fn, p)
							mu.Lock()
							attempts++
							mu.Unlock()
							if o.Acknowledge() {
								break
							}
							if o != Busy {
								t.Errorf("%s: %v %v", PaymentKey(p), o, err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			for j := range payments {
				u := fmt.Sprint("c-", j)
				if n := runs[u+":confirmed"]; n != 1 {
					t.Errorf("%s:confirmed ran %d times", u, n)
				}
				if n := runs[u+":pending"]; n > 1 {
					t.Errorf("%s:pending ran %d times", u, n)
				}
				for _, k := range []string{u + ":confirmed", u + ":pending"} {
					c, err := mem.Claim(context.Background(), k, DefaultLease)
					require.NoError(t, err)
					require.Equal(t, AlreadyDone, c, "%s is not done", k)
				}
			}
			t.Logf("%d deliveries", attempts)
		})
	}
}

// renewingStore is a MemoryStore behind a wrapper, so that Process takes
// its plain path (a timeout per store call).
type renewingStore struct{ m *MemoryStore }

func (s renewingStore) Claim(ctx context.Context, key string, lease time.Duration) (Outcome, error) {
	return s.m.Claim(ctx, key, lease)
}
func (s renewingStore) Complete(ctx context.Context, key string) error { return s.m.Complete(ctx, key) }
func (s renewingStore) Release(ctx context.Context, key string) error  { return s.m.Release(ctx, key) }
func (s renewingStore) Renew(ctx context.Context, key string, lease time.Duration) error {
	return s.m.Renew(ctx, key, lease)
}
