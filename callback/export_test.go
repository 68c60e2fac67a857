package callback

import (
	"context"
	"time"
)

// FakeClock is the tests' fake clock, for the external test package.
type FakeClock = fakeClock

// NewFakeClock returns a fake clock.
func NewFakeClock() *FakeClock { return newFakeClock() }

// ProcessOn is Process on clk, with attempt as the bound of one store call
// and no waits between tries.
func ProcessOn(clk *FakeClock, lease, attempt time.Duration) func(context.Context, Store, func(context.Context, *Payment) error, *Payment) (Outcome, error) {
	return func(ctx context.Context, s Store, fn func(context.Context, *Payment) error, p *Payment) (Outcome, error) {
		pr := newProcessor(s, lease, clk)
		pr.backoff = 0
		pr.attempt = attempt
		return pr.process(ctx, fn, p)
	}
}
