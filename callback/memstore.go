package callback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// DefaultRetention is how long a MemoryStore remembers a completed key:
// long enough for late redeliveries and for a pending callback that
// arrives after its confirmed twin.
const DefaultRetention = 7 * 24 * time.Hour

// MemoryStore is a Store in process memory, for a single server. It is safe
// for concurrent use and starts no goroutines: expired leases and completed
// keys past their retention are dropped lazily when touched and by an
// occasional sweep during Claim. What it remembers is lost on restart, so
// a redelivery after a restart is processed again; use a shared, durable
// Store where that matters.
type MemoryStore struct {
	mu        sync.Mutex
	entries   map[string]memEntry
	retention time.Duration
	now       func() time.Time
	sinceScan int // claims since the last sweep
	scanAfter int // claims between sweeps: max(1024, entries after the last sweep)
}

type memEntry struct {
	done  bool
	until time.Time // lease end, or end of retention when done
}

// MemoryStoreOption configures a MemoryStore.
type MemoryStoreOption interface {
	applyMemoryStore(*MemoryStore) error
}

type memoryStoreFunc func(*MemoryStore) error

func (f memoryStoreFunc) applyMemoryStore(s *MemoryStore) error { return f(s) }

// WithRetention sets how long completed keys are remembered (default
// DefaultRetention). A non-positive d keeps the default.
func WithRetention(d time.Duration) MemoryStoreOption {
	return memoryStoreFunc(func(s *MemoryStore) error {
		if d <= 0 {
			return fmt.Errorf("%w: retention must be positive", cryptapi.ErrInvalidOption)
		}
		s.retention = d
		return nil
	})
}

// NewMemoryStore returns an empty MemoryStore. An option given an
// unusable value (a nil clock, a retention that is not positive) is
// skipped, and the default kept.
func NewMemoryStore(opts ...MemoryStoreOption) *MemoryStore {
	s := &MemoryStore{
		entries:   map[string]memEntry{},
		retention: DefaultRetention,
		now:       time.Now,
	}
	for _, o := range opts {
		if o != nil {
			_ = o.applyMemoryStore(s) // an unusable option keeps the default
		}
	}
	return s
}

var errBadLease = errors.New("callback: lease must be positive")

// Claim implements Store. A key whose lease has run out is taken over; a
// completed key past its retention is forgotten and can be claimed again.
func (s *MemoryStore) Claim(ctx context.Context, key string, lease time.Duration) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if lease <= 0 {
		return 0, errBadLease
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.maybeSweep(now)
	if e, ok := s.entries[key]; ok && now.Before(e.until) {
		if e.done {
			return AlreadyDone, nil
		}
		return Busy, nil
	}
	s.entries[key] = memEntry{until: now.Add(lease)}
	return Claimed, nil
}

// Complete implements Store. Completing a key that is already done is not
// an error.
func (s *MemoryStore) Complete(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok {
		return ErrNotClaimed
	}
	now := s.now()
	if e.done {
		if now.Before(e.until) {
			return nil
		}
		return ErrNotClaimed
	}
	// A lease that ran out without being taken over still belongs to its
	// holder: nobody else has acted on the key. (Process calls Complete
	// after its lease ran out only on a claim it has just made again.)
	s.entries[key] = memEntry{done: true, until: now.Add(s.retention)}
	return nil
}

// Renew implements Renewer: it extends an unexpired claim on key to lease
// from now. A claim whose lease ran out is not renewed (ErrNotClaimed): the
// store cannot tell whether it was taken over. A completed key is left as
// it is.
func (s *MemoryStore) Renew(ctx context.Context, key string, lease time.Duration) error {
	if lease <= 0 {
		return errBadLease
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	now := s.now()
	switch {
	case !ok || !now.Before(e.until):
		return ErrNotClaimed
	case e.done:
		return nil
	}
	s.entries[key] = memEntry{until: now.Add(lease)}
	return nil
}

// Release implements Store. A completed key stays completed.
func (s *MemoryStore) Release(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok || e.done {
		return ErrNotClaimed
	}
	delete(s.entries, key)
	return nil
}

// Len returns the number of keys held or remembered as done, expired ones
// excluded.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := 0
	for _, e := range s.entries {
		if now.Before(e.until) {
			n++
		}
	}
	return n
}

// maybeSweep drops expired entries after as many claims as there were
// entries after the last sweep (at least 1024). A sweep visits at most
// twice that many entries, so the amortised cost per claim is constant.
func (s *MemoryStore) maybeSweep(now time.Time) {
	s.sinceScan++
	if s.sinceScan < max(1024, s.scanAfter) {
		return
	}
	s.sinceScan = 0
	for k, e := range s.entries {
		if !now.Before(e.until) {
			delete(s.entries, k)
		}
	}
	s.scanAfter = len(s.entries)
}
