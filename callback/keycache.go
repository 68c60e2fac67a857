package callback

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"sync"
	"time"
)

// keySource is what WithKeySource needs of a client.
type keySource interface {
	PublicKey(ctx context.Context) (*rsa.PublicKey, error)
}

// keyFetchTimeout bounds one fetch of the key. A fetch runs on its own,
// detached from the callback that started it, so this is what ends it.
const keyFetchTimeout = 30 * time.Second

// keyCache fetches a verification key from a source on behalf of any
// number of callers, and keeps the last key that accept let through.
//
// At most one fetch runs at a time, and a fetch starts at most once per
// interval, counted from the start of the previous one: every attempt
// counts, whatever its outcome and whatever its callers do. A fetch is not
// tied to the caller that started it: it runs in its own goroutine with
// the caller's context values, no cancellation and keyFetchTimeout, and
// the callers wait for it until their own context ends.
type keyCache struct {
	source   keySource
	accept   func(*rsa.PublicKey) error // nil: use the key
	interval time.Duration
	timeout  time.Duration
	now      func() time.Time

	mu        sync.Mutex
	key       *rsa.PublicKey // last accepted key
	attempted bool           // a fetch has started
	lastTry   time.Time      // when the last fetch started
	lastErr   error          // why the last finished fetch gave no usable key
	inflight  chan struct{}  // closed when the running fetch ends
}

// current returns the accepted key (nil if none) and why the last fetch
// gave no usable key (nil if it did, or none has finished).
func (c *keyCache) current() (*rsa.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key, c.lastErr
}

// refresh starts a fetch unless one is running or the last one started
// less than interval ago, waits for the running fetch or for ctx to end,
// and returns the accepted key then (nil if none).
func (c *keyCache) refresh(ctx context.Context) *rsa.PublicKey {
	c.mu.Lock()
	ch := c.inflight
	if ch == nil {
		if c.attempted && c.now().Sub(c.lastTry) < c.interval {
			defer c.mu.Unlock()
			return c.key
		}
		ch = make(chan struct{})
		c.inflight = ch
		c.attempted = true
		c.lastTry = c.now()
		go c.fetch(context.WithoutCancel(ctx), ch)
	}
	c.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key
}

// fetch asks the source for its key once and records the outcome.
func (c *keyCache) fetch(parent context.Context, done chan struct{}) {
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	pub, err := c.source.PublicKey(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(done)
	c.inflight = nil
	switch {
	case err != nil:
		c.lastErr = fmt.Errorf("fetching the key: %w", err)
	case pub == nil || pub.N == nil:
		c.lastErr = errors.New("the key source returned no key")
	default:
		if c.accept != nil {
			if err := c.accept(pub); err != nil {
				c.lastErr = err
				return
			}
		}
		c.key = pub
		c.lastErr = nil
	}
}
