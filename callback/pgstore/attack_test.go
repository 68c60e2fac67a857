package pgstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// A lease of the longest Duration (a common way to ask for "no expiry") is
// a lease that runs for centuries, not one that ran out before it began:
// a second Claim of the key must answer InProgress, and Renew with it must
// keep the claim.
func TestLongestLeaseIsNotExpiredAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	s := newStore(t, db, table)
	other, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(t, err)

	longest := time.Duration(math.MaxInt64)
	c, err := s.Claim(ctx, "forever", longest)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	c, err = other.Claim(ctx, "forever", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.InProgress, c, "a second caller took over a claim made with the longest lease")

	c, err = s.Claim(ctx, "renewed", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	require.NoError(t, s.Renew(ctx, "renewed", longest))
	c, err = other.Claim(ctx, "renewed", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.InProgress, c, "a second caller took over a claim renewed with the longest lease")
}
