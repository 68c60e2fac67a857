package callback

import (
	"context"
	"errors"
	"time"
)

// Outcome is what happened to a callback's key: the answer of Store.Claim
// (Claimed, Busy or AlreadyDone) and the result of Process (Processed,
// AlreadyDone, Superseded, Busy or Failed).
type Outcome int

const (
	// Claimed means the caller now holds the key until its lease runs
	// out, and must call Complete or Release (Store.Claim only).
	Claimed Outcome = iota + 1
	// Processed means the function ran and succeeded. Acknowledge.
	Processed
	// AlreadyDone means the key was completed before: the callback was
	// processed, its effects must not be repeated, and the function was
	// not called. Acknowledge.
	AlreadyDone
	// Superseded means a pending callback arrived after its confirmed twin
	// was processed; it was recorded as done and not passed on.
	// Acknowledge.
	Superseded
	// Busy means another caller holds an unexpired lease on the key: the
	// payment is being processed elsewhere. Do not acknowledge; the
	// service retries.
	Busy
	// Failed means the function or the store failed. Do not acknowledge;
	// the service retries. When fn failed, its claims were given up; when
	// fn succeeded but its success could not be recorded (ErrNotRecorded),
	// its claim is kept until its lease runs out.
	Failed
)

// String returns the name of the outcome.
func (o Outcome) String() string {
	switch o {
	case Claimed:
		return "claimed"
	case Processed:
		return "processed"
	case AlreadyDone:
		return "already done"
	case Superseded:
		return "superseded"
	case Busy:
		return "busy"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Acknowledge reports whether the callback should be answered with
// "*ok*": true for Processed, AlreadyDone and Superseded.
func (o Outcome) Acknowledge() bool {
	return o == Processed || o == AlreadyDone || o == Superseded
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
	// Claim tries to take key for lease. It returns Claimed, Busy or
	// AlreadyDone; an error means the store could not answer, and the callback must
	// not be acknowledged.
	Claim(ctx context.Context, key string, lease time.Duration) (Outcome, error)
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
