package cryptapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultInfoCacheTTL is how long a client keeps what the service says
// about coins before reading it again: the info of a coin that
// RequestPayment checks the minimum against, and the list that Coins
// returns.
const DefaultInfoCacheTTL = 5 * time.Minute

// WithInfoCacheTTL sets how long the client keeps the coin list of Coins
// (one list with prices, one without) and, per ticker, the info
// RequestPayment reads its minimum from. 0 reads them on every call. Info
// itself is never cached.
func WithInfoCacheTTL(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("%w: negative cache TTL", ErrInvalidOption)
		}
		c.infoTTL = d
		return nil
	}
}

// infoCache keeps answers about coins for the client's info cache TTL.
// It belongs to one client, so its answers are those of that client's
// base URL and API key. A caller that finds no fresh answer while
// another caller is reading the same one waits for that request instead
// of sending its own.
type infoCache struct {
	mu       sync.Mutex
	entries  map[string]infoEntry
	inflight map[string]*infoRead
}

type infoEntry struct {
	val     any
	fetched time.Time // when the request that read it started
}

// infoRead is a request under way; done is closed when it has ended.
type infoRead struct {
	done chan struct{}
	val  any
	err  error
}

func newInfoCache() *infoCache {
	return &infoCache{entries: map[string]infoEntry{}, inflight: map[string]*infoRead{}}
}

// cachedRead returns the answer kept under key while it is younger than
// the TTL, or reads it with read and keeps it. Concurrent callers share
// one read; a caller stops waiting when its ctx ends. When the caller
// that sent the request gave up (its context ended), a waiter whose
// context has not ended sends one of its own.
func cachedRead[T any](ctx context.Context, c *Client, op, key string, read func(context.Context) (T, error)) (T, error) {
	var zero T
	if c.infoTTL <= 0 || ctx == nil {
		return read(ctx)
	}
	ic := c.infoCache
	for {
		now := c.now()
		ic.mu.Lock()
		if e, ok := ic.entries[key]; ok && now.Sub(e.fetched) < c.infoTTL {
			ic.mu.Unlock()
			return e.val.(T), nil
		}
		if r := ic.inflight[key]; r != nil {
			ic.mu.Unlock()
			select {
			case <-r.done:
			case <-ctx.Done():
				return zero, fmt.Errorf("cryptapi: %s: %w", op, ctx.Err())
			}
			if r.err == nil {
				return r.val.(T), nil
			}
			if errors.Is(r.err, context.Canceled) || errors.Is(r.err, context.DeadlineExceeded) {
				if err := ctx.Err(); err != nil {
					return zero, fmt.Errorf("cryptapi: %s: %w", op, err)
				}
				continue // the sender gave up, this caller has not: it sends its own
			}
			return zero, r.err
		}
		r := &infoRead{done: make(chan struct{})}
		ic.inflight[key] = r
		ic.mu.Unlock()
		return leadRead(ctx, ic, key, now, r, read)
	}
}

// leadRead reads for the callers of r, and keeps the answer under key as
// read at start. If read panics, the waiters get an error and the panic
// goes on.
func leadRead[T any](ctx context.Context, ic *infoCache, key string, start time.Time, r *infoRead, read func(context.Context) (T, error)) (val T, err error) {
	finished := false
	defer func() {
		ic.mu.Lock()
		delete(ic.inflight, key)
		switch {
		case !finished:
			r.err = errors.New("cryptapi: reading coin info panicked")
		case err == nil:
			r.val = val
			ic.entries[key] = infoEntry{val: val, fetched: start}
		default:
			r.err = err
		}
		ic.mu.Unlock()
		close(r.done)
	}()
	val, err = read(ctx)
	finished = true
	return val, err
}
