package callback

import (
	"fmt"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// ClockOption sets the clock of a Verifier (used to rate-limit key
// fetches) or of a MemoryStore (leases and retention). Both NewVerifier and
// NewMemoryStore accept it.
type ClockOption interface {
	VerifierOption
	MemoryStoreOption
}

// WithClock sets the clock, for tests; the default is the system clock. A
// nil clock is an error (cryptapi.ErrInvalidOption) for NewVerifier and is ignored by
// NewMemoryStore, which keeps the system clock.
func WithClock(clock cryptapi.Clock) ClockOption { return clockOption{clock} }

type clockOption struct{ clock cryptapi.Clock }

func (o clockOption) valid() bool {
	f, ok := o.clock.(cryptapi.ClockFunc)
	return o.clock != nil && !(ok && f == nil)
}

func (o clockOption) applyVerifier(c *verifierConfig) error {
	if !o.valid() {
		return fmt.Errorf("%w: nil clock", cryptapi.ErrInvalidOption)
	}
	c.now = o.clock.Now
	return nil
}

func (o clockOption) applyMemoryStore(s *MemoryStore) error {
	if !o.valid() {
		return fmt.Errorf("%w: nil clock", cryptapi.ErrInvalidOption)
	}
	s.now = o.clock.Now
	return nil
}
