package callback_test

import (
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/storetest"
)

// TestPromisesHoldWhenTheMemoryStoreFailsAtEveryStep makes each store call
// of a pending+confirmed delivery sequence (with redeliveries, and with the
// confirmation first) fail in turn: with an error, by hanging until its
// context ends, and by losing the answer of a write that landed.
func TestPromisesHoldWhenTheMemoryStoreFailsAtEveryStep(t *testing.T) {
	const lease = time.Minute
	storetest.Run(t, []storetest.Mode{storetest.Fail, storetest.Hang, storetest.Lost}, storetest.Scenarios(),
		func(t *testing.T) storetest.Env {
			clk := callback.NewFakeClock()
			return storetest.Env{
				Store:   callback.NewMemoryStore(callback.WithClock(clk)),
				Expire:  func() { clk.Advance(lease + time.Second) },
				Process: callback.ProcessOn(clk, lease, 10*time.Millisecond),
			}
		})
}
