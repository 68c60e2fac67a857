package invoice

import (
	"cmp"
	"container/heap"
	"context"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
)

// Store keeps invoices, and the changes not yet passed to onChange. It is
// the only place an invoice's state lives: a Desk reads it, computes the
// next state with one pure function, and stores it through Update.
// Implementations must be safe for concurrent use, and across processes
// where they are shared. This package has NewMemoryStore;
// github.com/forwardpay/cryptapi-go/invoice/pgstore keeps them in
// PostgreSQL. internal/invoicesuite runs every rule against both.
//
// A Store looks inside a Record only through its methods and its
// Invoice's OrderID, Status, Exception and CreatedAt, and never changes
// one. Three rules hold across every method:
//
//   - One open invoice per order: a record holds its OpenOrder() from
//     the Insert or Update that opens it (OpenOrder set, and not set
//     before) until the Update that closes it, and no two records hold
//     the same order. Insert and Update refuse to open an order another
//     record holds with ErrOrderOpen, storing nothing. (A record that
//     stays open keeps what it had: tables of v0.1.0 may hold several
//     open invoices of an order, of which one holds it.)
//   - A record of Version 2 or more is a change: Insert keeps its
//     Invoice for Notify, and so does an Update that raises the Version
//     (Version 0, a reservation, and 1, the invoice as created, are not
//     changes). An Update that keeps the Version (the Desk's
//     bookkeeping: the claim of a chosen coin's address, the progress of
//     a refund's payout) stores the record and its index entries but is
//     not a change.
//   - Each of a record's Keys() (its refunds' claim tokens, and the
//     service's payout requests its refunds use) finds it through
//     LoadByKey, from the Insert or Update that stores the key on, with
//     an index; a key stays with its record for good. No two records
//     hold the same key: Insert and Update refuse a key another record
//     holds with ErrDuplicate, storing nothing.
//   - An invoice is due when it has a change not yet passed on, or when
//     its TickAt() is set and not after the time asked: Due finds those
//     through an index, reading about as many records as are due.
type Store interface {
	// Callbacks returns the store that de-duplicates the invoices'
	// callbacks (callback.Process claims and completes keys in it).
	Callbacks() callback.Store
	// Insert stores a new record. It returns ErrDuplicate if the ID
	// exists or another record holds one of its Keys(), and ErrOrderOpen
	// if another record holds r's OpenOrder.
	Insert(ctx context.Context, r *Record) error
	// Load returns the record with this ID, or ErrNotFound.
	Load(ctx context.Context, id string) (*Record, error)
	// LoadByKey returns the record one of whose Keys() is key, or
	// ErrNotFound.
	LoadByKey(ctx context.Context, key string) (*Record, error)
	// Update changes one record under an exclusive lock (across every
	// process sharing the store): it loads the record, calls change with
	// a copy, and, if change returns a record, stores it (and its Invoice
	// as a change when its Version is higher, from 2 on). change runs
	// under the lock: it must
	// be quick and must not call the store. When key is not "", key (a
	// callback key claimed in Callbacks by this store) is marked done in
	// the same transaction where the store can do so (a store that cannot
	// leaves it to callback.Process). Update returns the record as it is
	// stored, changed or not; ErrNotFound if there is none; ErrOrderOpen
	// if the new record opens an order another holds; change's error as
	// it is. On any error nothing is stored.
	Update(ctx context.Context, id, key string, change func(*Record) (*Record, error)) (*Record, error)
	// Notify calls fn with every stored change of invoice id that fn has
	// not yet accepted, oldest first, one call at a time across every
	// process sharing the store; a change is marked passed when fn returns
	// nil. It stops at fn's first error and returns it; that change is
	// offered again by the next Notify, and the invoice stays due.
	Notify(ctx context.Context, id string, fn func(context.Context, *Invoice) error) error
	// Due yields the IDs of the invoices due at now (see above): those
	// with changes not passed on first, then by TickAt, earliest first.
	// It reads in pages inside the store and holds nothing between them,
	// so the caller may update what it yields; a record changed during
	// the iteration may be yielded or not.
	Due(ctx context.Context, now time.Time) iter.Seq2[string, error]
	// List yields the records that o selects, newest first (by the
	// Invoice's CreatedAt, then by the order the store received them),
	// reading in pages inside the store with a cursor, so that memory
	// stays bounded whatever their number. Every filter of o applies, to
	// the stored Status and Exception; reservations (an empty Status) are
	// yielded when o selects no status, and the Desk skips them. A
	// StartingAfter the store does not know is ErrNotFound.
	List(ctx context.Context, o *ListOptions) iter.Seq2[*Record, error]
}

// NewMemoryStore returns a Store in process memory, for one process. What
// it keeps is lost when the process ends.
func NewMemoryStore() Store {
	return &memoryStore{entries: map[string]*memEntry{}, open: map[string]string{}, keys: map[string]string{},
		callbacks: callback.NewMemoryStore()}
}

// memoryStore keeps everything under one lock: the records, the order
// index (entries sorted by creation), the open orders, and a heap of
// tick times. Update runs change under that lock (change is pure and
// quick); Notify runs fn without it, one call at a time per invoice.
type memoryStore struct {
	mu        sync.Mutex
	entries   map[string]*memEntry
	sorted    []*memEntry       // by (created, seq)
	open      map[string]string // order ID -> the record holding it open
	keys      map[string]string // unique key -> the record holding it
	due       dueHeap
	seq       int64
	callbacks *callback.MemoryStore
}

type memEntry struct {
	rec     *Record
	seq     int64
	changes []*Invoice // not yet accepted by Notify's fn, oldest first
	gen     int64      // of its current heap entry
	notify  sync.Mutex // held while Notify's fn runs
}

func (s *memoryStore) Callbacks() callback.Store { return s.callbacks }

// before orders entries by (created, seq).
func before(a, b *memEntry) int {
	if c := a.rec.Invoice.CreatedAt.Compare(b.rec.Invoice.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// holds reports whether order is held open by another record than id.
func (s *memoryStore) holds(order, id string) bool {
	if order == "" {
		return false
	}
	h, ok := s.open[order]
	return ok && h != id
}

// keysFree reports whether none of r's keys is held by another
// record.
func (s *memoryStore) keysFree(r *Record) bool {
	for _, t := range r.Keys() {
		if h, ok := s.keys[t]; ok && h != r.ID() {
			return false
		}
	}
	return true
}

// reindex records e's open order, keys and due time after its record or
// its changes changed.
func (s *memoryStore) reindex(e *memEntry, prev *Record) {
	for _, t := range e.rec.Keys() {
		s.keys[t] = e.rec.ID()
	}
	switch o := e.rec.OpenOrder(); {
	case o == "" && prev != nil && prev.OpenOrder() != "" && s.open[prev.OpenOrder()] == e.rec.ID():
		delete(s.open, prev.OpenOrder())
	case o != "" && (prev == nil || prev.OpenOrder() == ""):
		s.open[o] = e.rec.ID()
	}
	e.gen++
	switch at := e.rec.TickAt(); {
	case len(e.changes) > 0:
		heap.Push(&s.due, dueItem{id: e.rec.ID(), gen: e.gen}) // zero time: first
	case !at.IsZero():
		heap.Push(&s.due, dueItem{at: at, id: e.rec.ID(), gen: e.gen})
	}
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
	if s.holds(r.OpenOrder(), r.ID()) {
		return ErrOrderOpen
	}
	if !s.keysFree(r) {
		return ErrDuplicate
	}
	s.seq++
	e := &memEntry{rec: r.clone(), seq: s.seq}
	if r.Version() > 1 {
		e.changes = append(e.changes, r.Invoice.Clone())
	}
	s.entries[r.ID()] = e
	i, _ := slices.BinarySearchFunc(s.sorted, e, before)
	s.sorted = slices.Insert(s.sorted, i, e)
	s.reindex(e, nil)
	return nil
}

func (s *memoryStore) Load(ctx context.Context, id string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	if !ok {
		return nil, ErrNotFound
	}
	return e.rec.clone(), nil
}

func (s *memoryStore) LoadByKey(ctx context.Context, key string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.keys[key]
	if !ok {
		return nil, ErrNotFound
	}
	return s.entries[id].rec.clone(), nil
}

func (s *memoryStore) Update(ctx context.Context, id, _ string, change func(*Record) (*Record, error)) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	if !ok {
		return nil, ErrNotFound
	}
	next, err := change(e.rec.clone())
	if err != nil {
		return nil, err
	}
	if next != nil {
		if e.rec.OpenOrder() == "" && s.holds(next.OpenOrder(), id) {
			return nil, ErrOrderOpen
		}
		if !s.keysFree(next) {
			return nil, ErrDuplicate
		}
		prev := e.rec
		e.rec = next.clone()
		if next.Version() > 1 && next.Version() > prev.Version() {
			e.changes = append(e.changes, next.Invoice.Clone())
		}
		s.reindex(e, prev)
	}
	return e.rec.clone(), nil
}

func (s *memoryStore) Notify(ctx context.Context, id string, fn func(context.Context, *Invoice) error) error {
	s.mu.Lock()
	e, ok := s.entries[id]
	s.mu.Unlock()
	if !ok {
		return ErrNotFound
	}
	e.notify.Lock()
	defer e.notify.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		if len(e.changes) == 0 {
			s.mu.Unlock()
			return nil
		}
		c := e.changes[0].Clone()
		s.mu.Unlock()
		if err := fn(ctx, c); err != nil {
			return err
		}
		s.mu.Lock()
		e.changes = e.changes[1:]
		if len(e.changes) == 0 {
			s.reindex(e, e.rec)
		}
		s.mu.Unlock()
	}
}

func (s *memoryStore) Due(ctx context.Context, now time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := ctx.Err(); err != nil {
			yield("", err)
			return
		}
		s.mu.Lock()
		var ids []string
		var keep []dueItem
		for s.due.Len() > 0 && !s.due[0].at.After(now) {
			it := heap.Pop(&s.due).(dueItem)
			if e, ok := s.entries[it.id]; ok && e.gen == it.gen {
				ids = append(ids, it.id)
				keep = append(keep, it)
			}
		}
		for _, it := range keep {
			heap.Push(&s.due, it) // due until an Update or Notify says otherwise
		}
		s.mu.Unlock()
		for _, id := range ids {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// memPage is how many records List copies at a time.
const memPage = 100

func (s *memoryStore) List(ctx context.Context, o *ListOptions) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		f := o.filter()
		var last *memEntry // the cursor: the last entry yielded
		s.mu.Lock()
		if o != nil && o.StartingAfter != "" {
			e, ok := s.entries[o.StartingAfter]
			if !ok {
				s.mu.Unlock()
				yield(nil, ErrNotFound)
				return
			}
			last = e
		}
		s.mu.Unlock()
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			s.mu.Lock()
			i := len(s.sorted)
			if last != nil {
				i, _ = slices.BinarySearchFunc(s.sorted, last, before)
			}
			var page []*Record
			for i--; i >= 0 && len(page) < memPage; i-- {
				last = s.sorted[i]
				if f.match(last.rec) {
					page = append(page, last.rec.clone())
				}
			}
			s.mu.Unlock()
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
			}
			if i < 0 {
				return
			}
		}
	}
}

// dueItem is an invoice's due time in the memory store's heap; gen tells
// a current item from one a later change replaced.
type dueItem struct {
	at  time.Time
	id  string
	gen int64
}

type dueHeap []dueItem

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].id < h[j].id
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
