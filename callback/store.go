package callback

import (
	"context"
	"errors"
	"time"
)

// Claim is the outcome of Store.Claim.
type Claim int

const (
	// Claimed means the caller now holds the key until its lease runs out,
	// and must call Complete or Release.
	Claimed Claim = iota + 1
	// InProgress means another caller holds an unexpired lease on the key.
	InProgress
	// Done means the key was completed before; its effects must not be
	// repeated.
	Done
)

// String returns the name of the claim outcome.
func (c Claim) String() string {
	switch c {
	case Claimed:
		return "claimed"
	case InProgress:
		return "in progress"
	case Done:
		return "done"
	}
	return "unknown"
}

// ErrNotClaimed is returned by Complete and Release when the caller does not
// hold the key (never claimed, or the lease expired and another caller took
// it over).
var ErrNotClaimed = errors.New("callback: key is not claimed")

// Store records which callbacks have been processed, so that a callback
// delivered twice (the service delivers at least once) has its effects once.
//
// A key is claimed with a lease before the merchant's code runs. Complete
// marks it done for good; Release gives it up so that a redelivery can try
// again. A claim whose lease has run out (its holder crashed) is taken over
// by the next Claim. Implementations must be safe for concurrent use, and
// across processes where they are shared.
type Store interface {
	// Claim tries to take key for lease. It returns Claimed, InProgress or
	// Done; an error means the store could not answer, and the callback must
	// not be acknowledged.
	Claim(ctx context.Context, key string, lease time.Duration) (Claim, error)
	// Complete marks a claimed key done.
	Complete(ctx context.Context, key string) error
	// Release gives up a claimed key without marking it done.
	Release(ctx context.Context, key string) error
}

// Renewer is implemented by a Store that can extend a claim's lease. Process
// renews the claims it holds every third of the lease while fn runs, so a
// function slower than the lease keeps its claim, and a redelivery meanwhile
// finds the key in progress. Both stores of this module implement it.
type Renewer interface {
	// Renew extends the caller's claim on key to lease from now. It
	// returns ErrNotClaimed if the claim is no longer the caller's (its
	// lease ran out and another caller took the key over, or it was
	// released), and nil if the key was completed by this claim.
	Renew(ctx context.Context, key string, lease time.Duration) error
}
