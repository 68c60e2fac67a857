package invoice

import (
	"context"
	"sync"

	"github.com/forwardpay/cryptapi-go/callback"
)

// Store keeps invoices, and the changes not yet passed to onChange. It is
// the only place an invoice's state lives: a Desk reads it, computes the
// next state, and stores it through Update. Implementations must be safe
// for concurrent use, and across processes where they are shared. This
// package has NewMemoryStore; github.com/forwardpay/cryptapi-go/invoice/pgstore
// keeps them in PostgreSQL.
type Store interface {
	// Callbacks returns the store that de-duplicates the invoices'
	// callbacks (callback.Process claims and completes keys in it).
	Callbacks() callback.Store
	// Insert stores a new invoice. It returns ErrDuplicate if the ID
	// exists.
	Insert(ctx context.Context, r *Record) error
	// Load returns the invoice with this ID, or ErrNotFound.
	Load(ctx context.Context, id string) (*Record, error)
	// Update changes one invoice under an exclusive lock (across every
	// process sharing the store): it loads the record, calls change with a
	// copy, and, if change returns a record, stores it and keeps its
	// Invoice as a change for Notify, at once. When key is not "", key (a
	// callback key claimed in Callbacks by this store) is marked done in
	// the same transaction where the store can do so (a store that cannot
	// leaves it to callback.Process). Update returns the record as it is
	// stored, changed or not; ErrNotFound if there is none; change's error
	// as it is, nothing stored.
	Update(ctx context.Context, id, key string, change func(*Record) (*Record, error)) (*Record, error)
	// Notify calls fn with every stored change of invoice id that fn has
	// not yet accepted, oldest first, one call at a time across every
	// process sharing the store; a change is marked passed when fn returns
	// nil. It stops at fn's first error and returns it; that change is
	// offered again by the next Notify.
	Notify(ctx context.Context, id string, fn func(context.Context, *Invoice) error) error
}

// NewMemoryStore returns a Store in process memory, for one process. What
// it keeps is lost when the process ends.
func NewMemoryStore() Store {
	return &memoryStore{entries: map[string]*memEntry{}, callbacks: callback.NewMemoryStore()}
}

type memoryStore struct {
	mu        sync.Mutex
	entries   map[string]*memEntry
	callbacks *callback.MemoryStore
}

type memEntry struct {
	mu      sync.Mutex // guards rec and changes; held by Update while change runs
	rec     *Record
	changes []*Invoice
	notify  sync.Mutex // held while Notify's fn runs
}

func (s *memoryStore) Callbacks() callback.Store { return s.callbacks }

func (s *memoryStore) entry(id string) (*memEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	return e, ok
}

func (s *memoryStore) Insert(ctx context.Context, r *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[r.ID()]; ok {
		return ErrDuplicate
	}
	s.entries[r.ID()] = &memEntry{rec: r.clone()}
	return nil
}

func (s *memoryStore) Load(ctx context.Context, id string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, ok := s.entry(id)
	if !ok {
		return nil, ErrNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec.clone(), nil
}

func (s *memoryStore) Update(ctx context.Context, id, _ string, change func(*Record) (*Record, error)) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, ok := s.entry(id)
	if !ok {
		return nil, ErrNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	next, err := change(e.rec.clone())
	if err != nil {
		return nil, err
	}
	if next != nil {
		e.rec = next.clone()
		e.changes = append(e.changes, next.Invoice.Clone())
	}
	return e.rec.clone(), nil
}

func (s *memoryStore) Notify(ctx context.Context, id string, fn func(context.Context, *Invoice) error) error {
	e, ok := s.entry(id)
	if !ok {
		return ErrNotFound
	}
	e.notify.Lock()
	defer e.notify.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e.mu.Lock()
		if len(e.changes) == 0 {
			e.mu.Unlock()
			return nil
		}
		c := e.changes[0].Clone()
		e.mu.Unlock()
		if err := fn(ctx, c); err != nil {
			return err
		}
		e.mu.Lock()
		e.changes = e.changes[1:]
		e.mu.Unlock()
	}
}
