package callback

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(WithClock(clock), WithRetention(time.Hour))

	c, err := s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Claimed, c)
	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Busy, c)

	require.NoError(t, s.Release(ctx, "k"))
	assert.ErrorIs(t, s.Release(ctx, "k"), ErrNotClaimed)
	assert.ErrorIs(t, s.Complete(ctx, "k"), ErrNotClaimed)

	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, Claimed, c)
	require.NoError(t, s.Complete(ctx, "k"))
	assert.NoError(t, s.Complete(ctx, "k"), "completing twice is harmless")
	assert.ErrorIs(t, s.Release(ctx, "k"), ErrNotClaimed, "a done key stays done")
	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, AlreadyDone, c)
	assert.Equal(t, 1, s.Len())

	// Retention: forgotten after an hour.
	clock.Advance(time.Hour - time.Nanosecond)
	c, _ = s.Claim(ctx, "k", time.Minute)
	assert.Equal(t, AlreadyDone, c)
	clock.Advance(time.Nanosecond)
	assert.Equal(t, 0, s.Len())
	assert.ErrorIs(t, s.Complete(ctx, "k"), ErrNotClaimed)
	c, _ = s.Claim(ctx, "k", time.Minute)
	assert.Equal(t, Claimed, c)
}

func TestMemoryStoreLeaseTakeover(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(WithClock(clock))

	c, _ := s.Claim(ctx, "k", time.Minute)
	require.Equal(t, Claimed, c)
	clock.Advance(59 * time.Second)
	c, _ = s.Claim(ctx, "k", time.Minute)
	assert.Equal(t, Busy, c)
	clock.Advance(time.Second)
	// The holder crashed: the lease ran out, the next claim takes over.
	c, _ = s.Claim(ctx, "k", time.Minute)
	assert.Equal(t, Claimed, c)

	// A holder whose lease ran out, not taken over, may still complete.
	c, _ = s.Claim(ctx, "k2", time.Minute)
	require.Equal(t, Claimed, c)
	clock.Advance(2 * time.Minute)
	assert.NoError(t, s.Complete(ctx, "k2"))
	c, _ = s.Claim(ctx, "k2", time.Minute)
	assert.Equal(t, AlreadyDone, c)
}

func TestMemoryStoreBadInput(t *testing.T) {
	s := NewMemoryStore(nil, WithClock(nil), WithRetention(-1))
	_, err := s.Claim(context.Background(), "k", 0)
	assert.Error(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Claim(ctx, "k", time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, DefaultRetention, s.retention)
}

func TestMemoryStoreSweeps(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(WithClock(clock), WithRetention(time.Minute))
	for i := 0; i < 3000; i++ {
		k := fmt.Sprint(i)
		_, err := s.Claim(ctx, k, time.Minute)
		require.NoError(t, err)
		require.NoError(t, s.Complete(ctx, k))
	}
	clock.Advance(time.Minute)
	assert.Equal(t, 0, s.Len())
	// New claims sweep the expired entries without a goroutine.
	for i := 0; i < 3000; i++ {
		_, err := s.Claim(ctx, fmt.Sprint("new", i), time.Minute)
		require.NoError(t, err)
	}
	s.mu.Lock()
	n := len(s.entries)
	s.mu.Unlock()
	assert.Less(t, n, 6000)
	assert.GreaterOrEqual(t, n, 3000)
}

func TestMemoryStoreConcurrentClaims(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	var claimed, done, busy atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.Claim(ctx, "k", time.Minute)
			assert.NoError(t, err)
			switch c {
			case Claimed:
				claimed.Add(1)
				assert.NoError(t, s.Complete(ctx, "k"))
			case AlreadyDone:
				done.Add(1)
			case Busy:
				busy.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), claimed.Load())
	assert.Equal(t, int32(199), done.Load()+busy.Load())
}

func TestOutcomeString(t *testing.T) {
	assert.Equal(t, "claimed", Claimed.String())
	assert.Equal(t, "busy", Busy.String())
	assert.Equal(t, "already done", AlreadyDone.String())
	assert.Equal(t, "unknown", Outcome(0).String())
}
