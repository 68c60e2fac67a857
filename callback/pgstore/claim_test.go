package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// A duplicate delivery of a done key, or of one whose lease is running, is
// answered from a read: the row is not locked or rewritten (its xmin and
// xmax stay as they were), so the claim's commit has nothing to flush.
func TestDuplicateClaimWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, testDSN(t))
	table := tableName(t, db)
	s := newStore(t, db, table)

	version := func(key string) (xmin, xmax string) {
		t.Helper()
		require.NoError(t, db.QueryRowContext(ctx,
			`SELECT xmin::text, xmax::text FROM "`+table+`" WHERE key = $1`, key).Scan(&xmin, &xmax))
		return xmin, xmax
	}

	c, err := s.Claim(ctx, "done", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	require.NoError(t, s.Complete(ctx, "done"))
	c, err = s.Claim(ctx, "busy", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)

	for key, want := range map[string]callback.Outcome{"done": callback.AlreadyDone, "busy": callback.Busy} {
		xmin, xmax := version(key)
		assert.Equal(t, "0", xmax, "%s: no lock before", key)
		other, err := pgstore.New(db, pgstore.WithTable(table))
		require.NoError(t, err)
		for range 3 {
			c, err := other.Claim(ctx, key, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, want, c, key)
		}
		gotMin, gotMax := version(key)
		assert.Equal(t, xmin, gotMin, "%s: the row was rewritten", key)
		assert.Equal(t, xmax, gotMax, "%s: the row was locked", key)
	}
}

// A claim whose read does not see the row (its inserter had not committed
// yet) but whose insert meets it waits for the inserter, then answers from
// the row as committed: Done if it was completed, Claimed if the inserter
// rolled back.
func TestClaimRacingAnUncommittedInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, db, table)

	for _, commit := range []bool{true, false} {
		key := map[bool]string{true: "committed", false: "rolled-back"}[commit]
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, `INSERT INTO "`+table+`" (key, token, lease_until, done_at)
VALUES ($1, 'other', clock_timestamp() + interval '1 minute', clock_timestamp())`, key)
		require.NoError(t, err)
		var txPID int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&txPID))

		type result struct {
			c   callback.Outcome
			err error
		}
		got := make(chan result, 1)
		go func() {
			c, err := s.Claim(ctx, key, time.Minute)
			got <- result{c, err}
		}()
		// Wait until the claim is blocked by the open transaction, as
		// the database reports it.
		blockedBy(t, db, txPID)
		if commit {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
		r := <-got
		require.NoError(t, r.err, key)
		if commit {
			assert.Equal(t, callback.AlreadyDone, r.c, key)
		} else {
			assert.Equal(t, callback.Claimed, r.c, key)
			assert.NoError(t, s.Complete(ctx, key))
		}
	}
}

// Migrate drops the partial index on done_at that earlier versions
// created: no query can use it, and it made every Complete write to it.
func TestMigrateDropsTheOldDoneAtIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, testDSN(t))
	for _, schema := range []string{"", "public."} {
		table := tableName(t, db)
		_, err := db.ExecContext(ctx, `CREATE TABLE "`+table+`" (
	key         text COLLATE "C" NOT NULL PRIMARY KEY,
	token       text        NOT NULL,
	lease_until timestamptz NOT NULL,
	claimed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	done_at     timestamptz
)`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `CREATE INDEX "`+table+`_done_at" ON "`+table+`" (done_at) WHERE done_at IS NOT NULL`)
		require.NoError(t, err)

		indexes := func() []string {
			rows, err := db.QueryContext(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY 1`, table)
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
		require.Equal(t, []string{table + "_done_at", table + "_pkey"}, indexes())
		newStore(t, db, schema+table)
		assert.Equal(t, []string{table + "_pkey"}, indexes(), "table %s%s", schema, table)
	}
}

// WithinTx's claim is one uncommitted row: while fn runs, other sessions
// do not see it, and a second WithinTx of the key waits for the first and
// then sees Done (or claims the key, if the first failed). If the
// connection of the first dies, the database rolls it back and the key is
// free at once, without waiting for a lease.
func TestWithinTxClaimIsOneUncommittedRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	first := newStore(t, openDB(t, dsn), table)
	second := newStore(t, openDB(t, dsn), table)
	rows := func(key string) int {
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`" WHERE key = $1`, key).Scan(&n))
		return n
	}
	errFailed := errors.New("fn failed")

	for _, end := range []string{"commit", "fn fails", "connection dies"} {
		t.Run(end, func(t *testing.T) {
			key := "k-" + end
			inFn := make(chan int) // the backend pid of the first transaction
			release := make(chan struct{})
			firstDone := make(chan error, 1)
			go func() {
				_, err := first.WithinTx(ctx, key, func(tx *sql.Tx) error {
					var pid int
					if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
						return err
					}
					inFn <- pid
					<-release
					if end == "fn fails" {
						return errFailed
					}
					return nil
				})
				firstDone <- err
			}()
			pid := <-inFn
			assert.Equal(t, 0, rows(key), "the claim is visible before commit")

			secondRan := make(chan bool, 1)
			secondDone := make(chan callback.Outcome, 1)
			go func() {
				ran := false
				c, err := second.WithinTx(ctx, key, func(*sql.Tx) error { ran = true; return nil })
				assert.NoError(t, err)
				secondRan <- ran
				secondDone <- c
			}()
			blockedBy(t, db, pid)
			switch end {
			case "connection dies":
				var ok bool
				require.NoError(t, db.QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&ok))
				require.True(t, ok)
			}
			close(release)
			err := <-firstDone
			ran, c := <-secondRan, <-secondDone
			switch end {
			case "commit":
				require.NoError(t, err)
				assert.Equal(t, callback.AlreadyDone, c)
				assert.False(t, ran)
			case "fn fails":
				require.ErrorIs(t, err, errFailed)
				assert.Equal(t, callback.Claimed, c)
				assert.True(t, ran)
			case "connection dies":
				require.ErrorIs(t, err, pgstore.ErrUnavailable)
				assert.Equal(t, callback.Claimed, c, "the key is free at once")
				assert.True(t, ran)
			}
			assert.Equal(t, 1, rows(key))
		})
	}
}

// WithinTx at SERIALIZABLE and REPEATABLE READ: 40 keys, each delivered
// four times at once over two replicas. Deliveries that fail (serialization
// failures) are delivered again until every one is answered; each key's
// effect is then written exactly once.
func TestWithinTxOnceAtEveryIsolationLevel(t *testing.T) {
	base := testDSN(t)
	for _, level := range []string{"serializable", "repeatable read"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			admin := openDB(t, base)
			table := tableName(t, admin)
			effects := `"` + table + `_effects"`
			_, err := admin.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL)`)
			require.NoError(t, err)
			dsn := withIsolation(t, base, level)
			stores := []*pgstore.Store{newStore(t, openDB(t, dsn), table), newStore(t, openDB(t, dsn), table)}

			const keys, copies = 40, 4
			var wg sync.WaitGroup
			var failures atomic.Int32
			for k := range keys {
				for c := range copies {
					wg.Go(func() {
						key := fmt.Sprintf("iso-%02d", k)
						for {
							cl, err := stores[(k+c)%2].WithinTx(ctx, key, func(tx *sql.Tx) error {
								_, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, key)
								return err
							})
							if err == nil && cl != callback.Busy {
								return
							}
							if err != nil {
								failures.Add(1)
							}
						}
					})
				}
			}
			wg.Wait()
			var n, distinct int
			require.NoError(t, admin.QueryRowContext(ctx,
				`SELECT count(*), count(DISTINCT key) FROM `+effects).Scan(&n, &distinct))
			assert.Equal(t, keys, distinct)
			assert.Equal(t, keys, n, "an effect was written twice")
			t.Logf("%s: %d deliveries failed and were delivered again", level, failures.Load())
		})
	}
}
