package callback

import (
	"context"
	"fmt"
	"sync"
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
	const lease = 30 * time.Millisecond
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
			rs := &recordingStore{Store: NewMemoryStore()}
			p := &Payment{UUID: "u-lease", AddressIn: "a"}
			fn := func(ctx context.Context, _ *Payment) error {
				<-ctx.Done() // outlast the lease: the context ends with it
				if tc.fnErr {
					return ctx.Err()
				}
				return nil
			}
			out, err := Process(context.Background(), rs, lease, fn, p)
			assert.Equal(t, tc.outcome, out)
			if tc.fnErr {
				assert.ErrorIs(t, err, ErrLeaseExpired)
			} else {
				assert.NoError(t, err, "nobody took the key over: the new claim records it")
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
		var c Claim
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
		assert.Equal(t, InProgress, c)
	}
}
