package callback

import (
	"context"
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

// TestProcessNeverActsOnAKeyAfterItsLease: a holder whose lease ran out may
// no longer own its key (another delivery may have taken it over), so it
// must neither release nor complete it, or a third delivery could run fn
// while the second still does.
func TestProcessNeverActsOnAKeyAfterItsLease(t *testing.T) {
	const lease = 30 * time.Millisecond
	for _, tc := range []struct {
		name    string
		fnErr   bool
		outcome Outcome
	}{
		{"fn fails after the lease", true, Failed},
		{"fn succeeds after the lease", false, Processed},
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
			assert.ErrorIs(t, err, ErrLeaseExpired)
			rs.mu.Lock()
			defer rs.mu.Unlock()
			assert.Zero(t, rs.completes, "no Complete after the lease")
			assert.Zero(t, rs.releases, "no Release after the lease")
		})
	}
}

func TestProcessTakeoverIsNotUndone(t *testing.T) {
	const lease = 30 * time.Millisecond
	store := NewMemoryStore()
	p := &Payment{UUID: "u-takeover", AddressIn: "a"}
	key := PaymentKey(p)
	aDone := make(chan error, 1)
	aRunning := make(chan struct{})
	bClaimed := make(chan struct{})
	go func() {
		_, err := Process(context.Background(), store, lease, func(ctx context.Context, _ *Payment) error {
			close(aRunning)
			<-ctx.Done() // A outlasts its lease...
			<-bClaimed   // ...and returns only after B took the key over
			return ctx.Err()
		}, p)
		aDone <- err
	}()
	<-aRunning // A holds the key
	// B takes the key over once A's lease has run out.
	var c Claim
	require.Eventually(t, func() bool {
		var err error
		c, err = store.Claim(context.Background(), key, time.Hour)
		return err == nil && c == Claimed
	}, 5*time.Second, time.Millisecond)
	close(bClaimed)
	assert.ErrorIs(t, <-aDone, ErrLeaseExpired)
	// A did not release B's claim: a third delivery still finds it busy.
	c, err := store.Claim(context.Background(), key, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, InProgress, c)
}
