package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
	"github.com/forwardpay/cryptapi-go/internal/storetest"
	"github.com/stretchr/testify/require"
)

// TestPromisesHoldWhenPostgresFailsAtEveryStep makes each store call of a
// pending+confirmed delivery sequence (with redeliveries, and with the
// confirmation first) fail in turn: with an error, by hanging until its
// context ends, and by losing the answer of a write that landed.
func TestPromisesHoldWhenPostgresFailsAtEveryStep(t *testing.T) {
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	newStore(t, db, table)
	expire := func() { expireLeases(t, db, table) }
	env := func(lease time.Duration) func(t *testing.T) storetest.Env {
		return func(t *testing.T) storetest.Env {
			s, err := pgstore.New(db, pgstore.WithTable(table))
			require.NoError(t, err)
			return storetest.Env{
				Store:  s,
				Expire: expire,
				Process: func(ctx context.Context, s callback.Store, fn func(context.Context, *callback.Payment) error, p *callback.Payment) (callback.Outcome, error) {
					return callback.Process(ctx, s, lease, fn, p)
				},
			}
		}
	}
	storetest.Run(t, []storetest.Mode{storetest.Fail, storetest.Lost}, storetest.Scenarios(), env(time.Minute))
	// A hung call is abandoned after a quarter of the lease: keep it short.
	storetest.Run(t, []storetest.Mode{storetest.Hang}, storetest.Scenarios(), env(2*time.Second))
}
