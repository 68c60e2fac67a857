package pgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
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
	assert.Equal(t, callback.Busy, c, "a second caller took over a claim made with the longest lease")

	c, err = s.Claim(ctx, "renewed", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	require.NoError(t, s.Renew(ctx, "renewed", longest))
	c, err = other.Claim(ctx, "renewed", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Busy, c, "a second caller took over a claim renewed with the longest lease")
}

// Migrate on a table created by v0.1.0 (partial index on done_at, default
// fillfactor) that holds claims, in a schema of its own, beside a table of
// the same name in public: it drops that table's index only, keeps every
// row, and Claim and WithinTx answer from the rows as they were.
func TestMigrateKeepsTheRowsOfAnOldSchemaQualifiedTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, testDSN(t))
	bare := tableName(t, db)
	schema := bare + "_s"
	_, err := db.ExecContext(ctx, `CREATE SCHEMA "`+schema+`"`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := db.ExecContext(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`)
		assert.NoError(t, err)
	})
	for _, q := range []string{`"` + schema + `"."` + bare + `"`, `"` + bare + `"`} {
		_, err := db.ExecContext(ctx, `CREATE TABLE `+q+` (
	key         text COLLATE "C" NOT NULL PRIMARY KEY,
	token       text        NOT NULL,
	lease_until timestamptz NOT NULL,
	claimed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	done_at     timestamptz
)`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS "`+bare+`_done_at" ON `+q+` (done_at) WHERE done_at IS NOT NULL`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `INSERT INTO `+q+` (key, token, lease_until, done_at) VALUES
	('done', 'old', clock_timestamp() - interval '1 hour', clock_timestamp() - interval '1 hour'),
	('live', 'old', clock_timestamp() + interval '1 hour', NULL),
	('expired', 'old', clock_timestamp() - interval '1 second', NULL),
	('expired-tx', 'old', clock_timestamp() - interval '1 second', NULL)`)
		require.NoError(t, err)
	}
	indexes := func(schema string) []string {
		rows, err := db.QueryContext(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY 1`, schema, bare)
		require.NoError(t, err)
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
		return names
	}

	s := newStore(t, db, schema+"."+bare)
	assert.Equal(t, []string{bare + "_pkey"}, indexes(schema))
	assert.Equal(t, []string{bare + "_done_at", bare + "_pkey"}, indexes("public"), "the public table's index was dropped")
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+schema+`"."`+bare+`"`).Scan(&n))
	assert.Equal(t, 4, n)

	for key, want := range map[string]callback.Outcome{"done": callback.AlreadyDone, "live": callback.Busy, "expired": callback.Claimed, "new": callback.Claimed} {
		c, err := s.Claim(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, want, c, key)
	}
	ran := false
	c, err := s.WithinTx(ctx, "expired-tx", func(*sql.Tx) error { ran = true; return nil })
	require.NoError(t, err)
	assert.Equal(t, callback.Claimed, c)
	assert.True(t, ran)
	c, err = s.Claim(ctx, "expired-tx", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
	require.NoError(t, s.Complete(ctx, "expired"))
	c, err = s.Claim(ctx, "expired", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
}

// blockedBy waits until some session of db is blocked by backend pid.
func blockedBy(t *testing.T, db *sql.DB, pid int) {
	t.Helper()
	waitFor(t, 30*time.Second, "a session blocked by the transaction", func() bool {
		var n int
		require.NoError(t, db.QueryRowContext(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&n))
		return n > 0
	})
}

// A Claim of the key that WithinTx's fn is processing, made from inside
// fn through another pool, waits for fn's transaction, which waits for fn:
// the database cannot see that wait. It ends when the Claim's context
// ends, with the context's error and no answer, and leaves the key as the
// transaction leaves it: fn commits and the key is Done.
func TestClaimFromInsideWithinTxOfTheSameKeyEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	outer := newStore(t, openDB(t, dsn), table)
	inner := newStore(t, openDB(t, dsn), table)

	var innerErr error
	innerClaim := callback.Outcome(-1)
	c, err := outer.WithinTx(ctx, "k", func(tx *sql.Tx) error {
		var pid int
		if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			innerClaim, innerErr = inner.Claim(cctx, "k", time.Minute)
		}()
		blockedBy(t, db, pid)
		cancel()
		<-done
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, callback.Claimed, c)
	require.ErrorIs(t, innerErr, context.Canceled)
	assert.NotErrorIs(t, innerErr, pgstore.ErrUnavailable)
	assert.Equal(t, callback.Outcome(0), innerClaim)

	c, err = inner.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
}

// A context that ends while WithinTx's fn runs rolls the transaction back:
// WithinTx returns the context's error, nothing is recorded, and the key is
// free at once for the next caller.
func TestWithinTxCancelledMidFnLeavesTheKeyFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	effects := `"` + table + `_effects"`
	_, err := db.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL)`)
	require.NoError(t, err)
	s := newStore(t, openDB(t, dsn), table)
	other := newStore(t, openDB(t, dsn), table)

	for _, fnReturns := range []string{"nil", "ctx error"} {
		key := "k-" + fnReturns
		cctx, cancel := context.WithCancel(ctx)
		c, err := s.WithinTx(cctx, key, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(cctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, key); err != nil {
				return err
			}
			cancel()
			if fnReturns == "nil" {
				return nil
			}
			_, err := tx.ExecContext(cctx, `SELECT 1`)
			return err
		})
		require.ErrorIs(t, err, context.Canceled, fnReturns)
		assert.Equal(t, callback.Claimed, c, fnReturns)
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM `+effects+` WHERE key = $1`, key).Scan(&n))
		assert.Equal(t, 0, n, "%s: the effect was recorded", fnReturns)
		c, err = other.Claim(ctx, key, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, callback.Claimed, c, "%s: the key is not free", fnReturns)
	}
}

// WithinTx deliveries on a pool whose connections are killed at random
// (inside fn by the test, and at any moment by a killer), beside Claim and
// Complete deliveries of the same keys on a pool that is left alone: every
// delivery is repeated until it is answered, and each key's effect is then
// written exactly once, whoever wrote it.
func TestEffectsOnceWhenWithinTxConnectionsAreKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := testDSN(t)
	admin := openDB(t, base)
	table := tableName(t, admin)
	effects := `"` + table + `_effects"`
	_, err := admin.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL)`)
	require.NoError(t, err)
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	app := "victim_" + table
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	victim := openDB(t, u.String())
	safe := openDB(t, base)
	newStore(t, admin, table)

	const keys = 12
	var wg sync.WaitGroup
	var kills, unavailable atomic.Int32
	stop := make(chan struct{})
	killer := make(chan struct{})
	kill := make(chan struct{}, 1) // one kill at a random moment per WithinTx call
	go func() {
		defer close(killer)
		for {
			select {
			case <-stop:
				return
			case <-kill:
			}
			var n int
			if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE application_name = $1 AND state <> 'idle' ORDER BY random() LIMIT 1) k WHERE k.pg_terminate_backend`, app).Scan(&n); err != nil {
				t.Error(err)
				return
			}
			kills.Add(int32(n))
		}
	}()
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			s, err := pgstore.New(map[bool]*sql.DB{true: victim, false: safe}[w < 4], pgstore.WithTable(table))
			if err != nil {
				panic(err)
			}
			for _, k := range rng.Perm(keys) {
				key := fmt.Sprintf("k%02d", k)
				for {
					if w < 4 {
						select {
						case kill <- struct{}{}:
						default:
						}
						c, err := s.WithinTx(ctx, key, func(tx *sql.Tx) error {
							if _, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, key); err != nil {
								return err
							}
							if rng.IntN(3) == 0 {
								var pid int
								if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
									return err
								}
								if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
									return err
								}
								kills.Add(1)
							}
							return nil
						})
						if err != nil {
							unavailable.Add(1)
							continue
						}
						if c != callback.Busy {
							break
						}
						continue
					}
					c, err := s.Claim(ctx, key, time.Minute)
					if err != nil {
						t.Errorf("claim %s: %v", key, err)
						return
					}
					if c == callback.AlreadyDone {
						break
					}
					if c == callback.Claimed {
						_, err := safe.ExecContext(ctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, key)
						if err == nil {
							err = s.Complete(ctx, key)
						}
						if err != nil {
							t.Errorf("complete %s: %v", key, err)
							return
						}
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-killer
	rows, err := admin.QueryContext(ctx, `SELECT key, count(*) FROM `+effects+` GROUP BY key`)
	require.NoError(t, err)
	got := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		require.NoError(t, rows.Scan(&k, &n))
		got[k] = n
	}
	require.NoError(t, rows.Err())
	for k := range keys {
		assert.Equal(t, 1, got[fmt.Sprintf("k%02d", k)], "k%02d", k)
	}
	t.Logf("%d connections killed, %d WithinTx calls failed", kills.Load(), unavailable.Load())
}

// Replicas whose sessions run at SERIALIZABLE or REPEATABLE READ all run
// Migrate at once, on a new table and on a v0.1.0 table with its old index
// and a running claim: every Migrate succeeds, the index is gone and the
// claim is kept.
func TestConcurrentMigrateAtEveryIsolationLevel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := testDSN(t)
	admin := openDB(t, base)
	for _, level := range []string{"serializable", "repeatable read"} {
		dsn := withIsolation(t, base, level)
		for _, old := range []bool{false, true} {
			table := tableName(t, admin)
			if old {
				_, err := admin.ExecContext(ctx, `CREATE TABLE "`+table+`" (
	key         text COLLATE "C" NOT NULL PRIMARY KEY,
	token       text        NOT NULL,
	lease_until timestamptz NOT NULL,
	claimed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	done_at     timestamptz
)`)
				require.NoError(t, err)
				_, err = admin.ExecContext(ctx, `CREATE INDEX "`+table+`_done_at" ON "`+table+`" (done_at) WHERE done_at IS NOT NULL`)
				require.NoError(t, err)
				_, err = admin.ExecContext(ctx, `INSERT INTO "`+table+`" (key, token, lease_until) VALUES ('k', 'old', clock_timestamp() + interval '1 hour')`)
				require.NoError(t, err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 4)
			stores := make([]*pgstore.Store, len(errs))
			for i := range errs {
				s, err := pgstore.New(openDB(t, dsn), pgstore.WithTable(table))
				require.NoError(t, err)
				stores[i] = s
				wg.Go(func() { errs[i] = s.Migrate(ctx) })
			}
			wg.Wait()
			for i, err := range errs {
				assert.NoError(t, err, "%s, old table %v, replica %d", level, old, i)
			}
			var n int
			require.NoError(t, admin.QueryRowContext(ctx,
				`SELECT count(*) FROM pg_indexes WHERE tablename = $1 AND indexname = $2`, table, table+"_done_at").Scan(&n))
			assert.Zero(t, n, "%s: the old index is still there", level)
			c, err := stores[0].Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			want := map[bool]callback.Outcome{false: callback.Claimed, true: callback.Busy}[old]
			assert.Equal(t, want, c, "%s, old table %v", level, old)
		}
	}
}

// A fn that swallows the error of a failed statement and returns nil leaves
// the transaction aborted: its commit is a rollback. WithinTx must report
// that as a failure, not as Claimed with a nil error (which would have the
// caller acknowledge a callback that was not recorded), and the key must
// stay free.
func TestWithinTxWhoseFnSwallowsAFailedStatementIsNotRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, openDB(t, dsn), table)

	c, err := s.WithinTx(ctx, "k", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT 1/0`)
		require.Error(t, err)
		return nil
	})
	require.ErrorIs(t, err, pgstore.ErrUnavailable)
	assert.Equal(t, callback.Claimed, c)
	c, err = s.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.Claimed, c, "the key is not free")
}
