package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

func TestNewValidatesTable(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	require.NoError(t, err)
	defer db.Close()

	for _, name := range []string{"cb", "_x1", "Callbacks", "public.cb", "s_1.t_2", strings.Repeat("a", 63)} {
		s, err := pgstore.New(db, pgstore.WithTable(name))
		if assert.NoError(t, err, name) {
			assert.Contains(t, s.Table(), `"`, name)
		}
	}
	for _, name := range []string{
		"", "1cb", "cb-x", `cb"x`, "cb;drop table x", "cb x", "a.b.c", ".cb", "cb.", "cb\x00",
		strings.Repeat("a", 64), "é",
	} {
		_, err := pgstore.New(db, pgstore.WithTable(name))
		assert.ErrorIs(t, err, pgstore.ErrInvalidTable, "%q", name)
	}

	s, err := pgstore.New(db, nil)
	require.NoError(t, err, "nil options are skipped")
	assert.Equal(t, `"`+pgstore.DefaultTable+`"`, s.Table())
	assert.Equal(t, `"public"."cb"`, must(pgstore.New(db, pgstore.WithTable("public.cb"))).Table())

	_, err = pgstore.New(nil)
	assert.Error(t, err)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Invalid arguments are refused before any I/O: the pool points at a port
// where nothing listens, and the errors are not ErrUnavailable.
func TestInvalidArgumentsNoIO(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	defer db.Close()
	s, err := pgstore.New(db)
	require.NoError(t, err)
	ctx := context.Background()

	for _, key := range []string{"", "a\x00b", "\xff\xfe", strings.Repeat("k", pgstore.MaxKeyLen+1)} {
		_, err := s.Claim(ctx, key, time.Second)
		assert.ErrorIs(t, err, pgstore.ErrInvalidKey, "%q", key)
	}
	_, err = s.Claim(ctx, "k", 0)
	assert.ErrorIs(t, err, pgstore.ErrInvalidLease)
	_, err = s.Claim(ctx, "k", -time.Second)
	assert.ErrorIs(t, err, pgstore.ErrInvalidLease)
	_, err = s.Purge(ctx, 0)
	assert.ErrorIs(t, err, pgstore.ErrInvalidAge)
	// Never claimed by this Store: answered without the database.
	assert.ErrorIs(t, s.Complete(ctx, "k"), callback.ErrNotClaimed)
	assert.ErrorIs(t, s.Release(ctx, "k"), callback.ErrNotClaimed)
}

func TestMigrateIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.New(openDB(t, dsn), pgstore.WithTable(table))
			if err == nil {
				err = s.Migrate(ctx)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	s := newStore(t, db, table)
	require.NoError(t, s.Migrate(ctx), "re-run")
	c, err := s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Claimed, c)
	require.NoError(t, s.Migrate(ctx), "re-run keeps data")
	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Busy, c)
}

func TestMigrateRejectsForeignTable(t *testing.T) {
	t.Parallel()
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `CREATE TABLE "`+table+`" (key text PRIMARY KEY, seen boolean)`)
	require.NoError(t, err)
	s, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(t, err)
	err = s.Migrate(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "columns")
}

func TestClaimCompleteRelease(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	a := newStore(t, db, table)
	b := newStore(t, openDB(t, dsn), table)
	ctx := context.Background()

	claim := func(s *pgstore.Store, key string) callback.Outcome {
		t.Helper()
		c, err := s.Claim(ctx, key, time.Minute)
		require.NoError(t, err)
		return c
	}

	assert.Equal(t, callback.Claimed, claim(a, "u1:pending"))
	assert.Equal(t, callback.Busy, claim(a, "u1:pending"), "same store, lease running")
	assert.Equal(t, callback.Busy, claim(b, "u1:pending"), "other replica, lease running")
	assert.Equal(t, callback.Claimed, claim(b, "u1:confirmed"), "keys are independent")

	assert.ErrorIs(t, b.Complete(ctx, "u1:pending"), callback.ErrNotClaimed, "not b's claim")
	assert.ErrorIs(t, b.Release(ctx, "u1:pending"), callback.ErrNotClaimed, "not b's claim")
	require.NoError(t, a.Complete(ctx, "u1:pending"))
	assert.Equal(t, callback.AlreadyDone, claim(a, "u1:pending"))
	assert.Equal(t, callback.AlreadyDone, claim(b, "u1:pending"))
	assert.ErrorIs(t, a.Complete(ctx, "u1:pending"), callback.ErrNotClaimed, "completed already")
	assert.ErrorIs(t, a.Release(ctx, "u1:pending"), callback.ErrNotClaimed, "a done key cannot be released")
	assert.Equal(t, callback.AlreadyDone, claim(b, "u1:pending"))

	// Release lets the next claim in at once, without waiting for the lease.
	require.NoError(t, b.Release(ctx, "u1:confirmed"))
	assert.ErrorIs(t, b.Release(ctx, "u1:confirmed"), callback.ErrNotClaimed)
	assert.Equal(t, callback.Claimed, claim(a, "u1:confirmed"))
	require.NoError(t, a.Complete(ctx, "u1:confirmed"))
	assert.Equal(t, callback.AlreadyDone, claim(b, "u1:confirmed"))

	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`" WHERE done_at IS NOT NULL`).Scan(&n))
	assert.Equal(t, 2, n)
}

// A lease that ran out is taken over by the next claim, no earlier than the
// lease by the database clock; the old holder can then neither complete nor
// release the key.
func TestLeaseTakeover(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	a := newStore(t, db, table)
	b := newStore(t, openDB(t, dsn), table)
	ctx := context.Background()
	const lease = 200 * time.Millisecond

	c, err := a.Claim(ctx, "k", lease)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	var claimedA, leaseUntil time.Time
	require.NoError(t, db.QueryRowContext(ctx, `SELECT claimed_at, lease_until FROM "`+table+`" WHERE key = 'k'`).Scan(&claimedA, &leaseUntil))
	assert.InDelta(t, lease, leaseUntil.Sub(claimedA), float64(5*time.Millisecond), "lease measured on the database clock")

	var got callback.Outcome
	var inProgress int
	waitFor(t, 10*time.Second, "b to take over the expired lease", func() bool {
		got, err = b.Claim(ctx, "k", time.Minute)
		require.NoError(t, err)
		if got == callback.Busy {
			inProgress++
		}
		return got != callback.Busy
	})
	assert.Equal(t, callback.Claimed, got)
	var claimedB time.Time
	require.NoError(t, db.QueryRowContext(ctx, `SELECT claimed_at FROM "`+table+`" WHERE key = 'k'`).Scan(&claimedB))
	assert.GreaterOrEqual(t, claimedB.Sub(claimedA), lease, "taken over only after the lease")

	assert.ErrorIs(t, a.Complete(ctx, "k"), callback.ErrNotClaimed)
	assert.ErrorIs(t, a.Release(ctx, "k"), callback.ErrNotClaimed)
	c, err = a.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Busy, c, "b's new lease is running")
	require.NoError(t, b.Complete(ctx, "k"))
	c, err = a.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
	t.Logf("b saw InProgress %d times before the takeover", inProgress)
}

// A Complete after the lease ran out still counts when nobody took over.
func TestCompleteAfterLeaseWithoutTakeover(t *testing.T) {
	t.Parallel()
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	s := newStore(t, db, table)
	ctx := context.Background()
	c, err := s.Claim(ctx, "k", time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	waitFor(t, 5*time.Second, "the lease to run out", func() bool {
		var expired bool
		require.NoError(t, db.QueryRowContext(ctx, `SELECT lease_until < clock_timestamp() FROM "`+table+`" WHERE key = 'k'`).Scan(&expired))
		return expired
	})
	require.NoError(t, s.Complete(ctx, "k"))
	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
}

func TestPurge(t *testing.T) {
	t.Parallel()
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	s := newStore(t, db, table)
	ctx := context.Background()
	for _, k := range []string{"old-done", "new-done", "old-abandoned", "running"} {
		c, err := s.Claim(ctx, k, time.Hour)
		require.NoError(t, err)
		require.Equal(t, callback.Claimed, c)
	}
	require.NoError(t, s.Complete(ctx, "old-done"))
	require.NoError(t, s.Complete(ctx, "new-done"))
	_, err := db.ExecContext(ctx, `UPDATE "`+table+`" SET done_at = now() - interval '40 days' WHERE key = 'old-done'`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `UPDATE "`+table+`" SET lease_until = now() - interval '40 days' WHERE key = 'old-abandoned'`)
	require.NoError(t, err)

	n, err := s.Purge(ctx, 30*24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	rows, err := db.QueryContext(ctx, `SELECT key FROM "`+table+`" ORDER BY key`)
	require.NoError(t, err)
	var left []string
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		left = append(left, k)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"new-done", "running"}, left)

	// A purged key is forgotten.
	c, err := s.Claim(ctx, "old-done", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Claimed, c)
}

func TestWithinTx(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, db, table)
	other := newStore(t, openDB(t, dsn), table)
	ctx := context.Background()
	effects := `"` + table + `_effects"`
	_, err := db.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL, note text)`)
	require.NoError(t, err)
	record := func(key, note string) func(*sql.Tx) error {
		return func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key, note) VALUES ($1, $2)`, key, note)
			return err
		}
	}
	count := func(key string) (effectsN int, done bool) {
		t.Helper()
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM `+effects+` WHERE key = $1`, key).Scan(&effectsN))
		err := db.QueryRowContext(ctx, `SELECT done_at IS NOT NULL FROM "`+table+`" WHERE key = $1`, key).Scan(&done)
		if errors.Is(err, sql.ErrNoRows) {
			return effectsN, false
		}
		require.NoError(t, err)
		return effectsN, done
	}

	t.Run("commits effect and done mark together", func(t *testing.T) {
		c, err := s.WithinTx(ctx, "ok", record("ok", "first"))
		require.NoError(t, err)
		assert.Equal(t, callback.Claimed, c)
		n, done := count("ok")
		assert.Equal(t, 1, n)
		assert.True(t, done)

		called := false
		c, err = other.WithinTx(ctx, "ok", func(*sql.Tx) error { called = true; return nil })
		require.NoError(t, err)
		assert.Equal(t, callback.AlreadyDone, c)
		assert.False(t, called, "fn must not run for a done key")
		assert.ErrorIs(t, s.Complete(ctx, "ok"), callback.ErrNotClaimed, "the claim is finished")
	})

	t.Run("failing fn rolls back both and frees the key", func(t *testing.T) {
		boom := errors.New("boom")
		c, err := s.WithinTx(ctx, "fail", func(tx *sql.Tx) error {
			if err := record("fail", "rolled back")(tx); err != nil {
				return err
			}
			return boom
		})
		assert.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, pgstore.ErrUnavailable)
		assert.Equal(t, callback.Claimed, c)
		n, done := count("fail")
		assert.Equal(t, 0, n, "effect rolled back")
		assert.False(t, done, "done mark rolled back")

		// Released, so another replica claims it at once despite the lease.
		c, err = other.WithinTx(ctx, "fail", record("fail", "second try"))
		require.NoError(t, err)
		assert.Equal(t, callback.Claimed, c)
		n, done = count("fail")
		assert.Equal(t, 1, n)
		assert.True(t, done)
	})

	t.Run("in progress elsewhere", func(t *testing.T) {
		c, err := other.Claim(ctx, "busy", time.Minute)
		require.NoError(t, err)
		require.Equal(t, callback.Claimed, c)
		called := false
		c, err = s.WithinTx(ctx, "busy", func(*sql.Tx) error { called = true; return nil })
		require.NoError(t, err)
		assert.Equal(t, callback.Busy, c)
		assert.False(t, called)
	})

	t.Run("a bad statement in fn rolls back", func(t *testing.T) {
		_, err := s.WithinTx(ctx, "badsql", func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
			return err
		})
		require.Error(t, err)
		n, done := count("badsql")
		assert.Equal(t, 0, n)
		assert.False(t, done)
		c, err := other.Claim(ctx, "badsql", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, callback.Claimed, c)
	})
}

// CompleteTx inside the caller's transaction: the done mark commits with the
// effect; a claim lost to a takeover cannot be completed, so the effect is
// rolled back.
func TestCompleteTx(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	a := newStore(t, db, table)
	b := newStore(t, openDB(t, dsn), table)
	ctx := context.Background()
	effects := `"` + table + `_effects"`
	_, err := db.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL)`)
	require.NoError(t, err)
	effect := func(tx *sql.Tx, key string) {
		_, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, key)
		require.NoError(t, err)
	}

	// Handler style: Claim, then fn does effect + CompleteTx + commit, then
	// the handler's Complete succeeds.
	c, err := a.Claim(ctx, "k1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	effect(tx, "k1")
	require.NoError(t, a.CompleteTx(ctx, tx, "k1"))
	var done bool
	require.NoError(t, db.QueryRowContext(ctx, `SELECT done_at IS NOT NULL FROM "`+table+`" WHERE key = 'k1'`).Scan(&done))
	assert.False(t, done, "not done until commit")
	require.NoError(t, tx.Commit())
	require.NoError(t, a.Complete(ctx, "k1"), "Complete after a committed CompleteTx")
	c, err = b.Claim(ctx, "k1", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)

	// Rolled back: still claimed by a, so a can release it.
	c, err = a.Claim(ctx, "k2", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	effect(tx, "k2")
	require.NoError(t, a.CompleteTx(ctx, tx, "k2"))
	require.NoError(t, tx.Rollback())
	require.NoError(t, a.Release(ctx, "k2"))

	// Lost to a takeover: CompleteTx refuses, the effect is rolled back.
	c, err = a.Claim(ctx, "k3", 100*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	waitFor(t, 10*time.Second, "b to take k3 over", func() bool {
		c, err := b.Claim(ctx, "k3", time.Minute)
		require.NoError(t, err)
		return c == callback.Claimed
	})
	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	effect(tx, "k3")
	assert.ErrorIs(t, a.CompleteTx(ctx, tx, "k3"), callback.ErrNotClaimed)
	require.NoError(t, tx.Rollback())
	assert.ErrorIs(t, b.CompleteTx(ctx, mustTx(t, db), "never-claimed"), callback.ErrNotClaimed)

	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM `+effects).Scan(&n))
	assert.Equal(t, 1, n, "only k1's effect committed")
}

func mustTx(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// With nothing listening, every call that needs the database fails with
// ErrUnavailable, so the handler does not acknowledge.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	db := openDB(t, closedPortDSN(t, testDSN(t)))
	s, err := pgstore.New(db)
	require.NoError(t, err)
	ctx := context.Background()

	c, err := s.Claim(ctx, "k", time.Minute)
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	assert.Zero(t, c)
	assert.ErrorIs(t, s.Migrate(ctx), pgstore.ErrUnavailable)
	_, err = s.Purge(ctx, time.Hour)
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	called := false
	c, err = s.WithinTx(ctx, "k", func(*sql.Tx) error { called = true; return nil })
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	assert.Zero(t, c)
	assert.False(t, called)
	assert.NotContains(t, err.Error(), "password")

	// A cancelled context is reported as such.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Claim(cctx, "k", time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
}
