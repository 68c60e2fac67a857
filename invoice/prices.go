package invoice

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// How the Desk reads coins' prices. A coin's info (its price in every
// currency) is read at most once per priceMaxAge for every invoice of
// that coin, one read at a time; after a failed read, none is made before
// a wait that doubles from priceRetryMin to priceRetryMax, however many
// invoices need the price.
const (
	priceMaxAge   = time.Minute
	priceRetryMin = 10 * time.Second
	priceRetryMax = 5 * time.Minute
)

// priceBook keeps the coins' info a Desk read last.
type priceBook struct {
	mu    sync.Mutex
	coins map[string]*coinPrice
}

type coinPrice struct {
	info     *cryptapi.CoinInfo
	readAt   time.Time
	err      error // the last failure, until retryAt
	failures int
	retryAt  time.Time
	busy     chan struct{} // closed when the read in flight ends
}

// coinInfo returns the info of coin tk read at most priceMaxAge ago.
// While a read is in flight, others wait for it. After a failure, no read
// is made before retryAt and the failure is returned, unless force (a
// person is waiting: Create, Reopen), which reads at once.
func (d *Desk) coinInfo(ctx context.Context, tk string, force bool) (*cryptapi.CoinInfo, error) {
	b := &d.prices
	for {
		b.mu.Lock()
		if b.coins == nil {
			b.coins = map[string]*coinPrice{}
		}
		c := b.coins[tk]
		if c == nil {
			c = &coinPrice{}
			b.coins[tk] = c
		}
		now := d.now()
		switch {
		case c.info != nil && now.Sub(c.readAt) < priceMaxAge:
			info := c.info
			b.mu.Unlock()
			return info, nil
		case c.busy != nil:
			busy := c.busy
			b.mu.Unlock()
			select {
			case <-busy:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case c.err != nil && now.Before(c.retryAt) && !force:
			err := fmt.Errorf("invoice: the price of %s is not read again before %s: %w", tk, c.retryAt.Format(time.RFC3339), c.err)
			b.mu.Unlock()
			return nil, err
		}
		busy := make(chan struct{})
		c.busy = busy
		b.mu.Unlock()

		info, err := d.c.Info(ctx, tk, nil)

		b.mu.Lock()
		c.busy = nil
		close(busy)
		now = d.now()
		if err == nil {
			c.info, c.readAt, c.err, c.failures = info, now, nil, 0
		} else if ctx.Err() == nil {
			c.failures++
			wait := min(priceRetryMin<<min(c.failures-1, 16), priceRetryMax)
			c.err, c.retryAt = err, now.Add(wait)
			d.logger().LogAttrs(ctx, slog.LevelWarn, "invoice price not read", slog.String("ticker", tk),
				slog.String("error", err.Error()), slog.Duration("next_try_in", wait))
		}
		b.mu.Unlock()
		return info, err
	}
}

// rate returns the coin's price in currency (see coinInfo).
func (d *Desk) rate(ctx context.Context, tk, currency string, force bool) (decimal.Decimal, error) {
	info, err := d.coinInfo(ctx, tk, force)
	if err != nil {
		return decimal.Zero, err
	}
	return priceIn(info, currency)
}

// priceIn is the coin's price in currency from its info.
func priceIn(info *cryptapi.CoinInfo, currency string) (decimal.Decimal, error) {
	for k, v := range info.Prices {
		if strings.EqualFold(k, currency) && v.IsPositive() {
			return v, nil
		}
	}
	return decimal.Zero, fmt.Errorf("%w (%s)", ErrNoRate, currency)
}
