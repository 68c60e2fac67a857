package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// deliveries plans nKeys callbacks, each delivered twice, to two different
// replicas of n. Every replica's queue is in key order, so the two replicas
// holding a key reach it at about the same point of their runs.
func deliveries(nKeys, n int) (keys []string, queues [][]int) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys = make([]string, nKeys)
	queues = make([][]int, n)
	for k := range keys {
		keys[k] = fmt.Sprintf("%08x-0000-4000-8000-%012x:confirmed", rng.Uint32(), k)
		r1 := rng.IntN(n)
		r2 := (r1 + 1 + rng.IntN(n-1)) % n
		queues[r1] = append(queues[r1], k)
		queues[r2] = append(queues[r2], k)
	}
	return keys, queues
}

// deliverFunc handles one delivery as the callback handler would and says
// whether it was answered *ok*. A delivery that was not is redelivered later.
type deliverFunc func(ctx context.Context, replica int, s *pgstore.Store, key string) (acked bool)

// runReplicas runs one goroutine per store, delivering its queue. The first
// delivery of a key waits for the other replica's first delivery of the same
// key, so the two really race; deliveries that were not acknowledged are
// retried after the rest, with a short pause, until acknowledged or ctx ends.
// It returns how many deliveries were acknowledged.
func runReplicas(ctx context.Context, t *testing.T, stores []*pgstore.Store, keys []string, queues [][]int, deliver deliverFunc) int64 {
	t.Helper()
	arrived := make([]atomic.Int32, len(keys))
	gates := make([]chan struct{}, len(keys))
	for k := range gates {
		gates[k] = make(chan struct{})
	}
	var acks atomic.Int64
	var wg sync.WaitGroup
	for r := range stores {
		wg.Go(func() {
			type item struct {
				k     int
				retry bool
			}
			q := make([]item, 0, len(queues[r]))
			for _, k := range queues[r] {
				q = append(q, item{k: k})
			}
			for len(q) > 0 {
				if ctx.Err() != nil {
					t.Errorf("replica %d: gave up with %d deliveries unacknowledged: %v", r, len(q), ctx.Err())
					return
				}
				it := q[0]
				q = q[1:]
				if !it.retry {
					if arrived[it.k].Add(1) == 1 {
						select {
						case <-gates[it.k]:
						case <-ctx.Done():
						}
					} else {
						close(gates[it.k])
					}
				}
				if deliver(ctx, r, stores[r], keys[it.k]) {
					acks.Add(1)
					continue
				}
				q = append(q, item{k: it.k, retry: true})
				pause(ctx, 2*time.Millisecond)
			}
		})
	}
	wg.Wait()
	return acks.Load()
}

func countDone(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRowContext(context.Background(),
		`SELECT count(*) FROM "`+table+`" WHERE done_at IS NOT NULL`).Scan(&n))
	return n
}

// Eight replicas, each with its own pool, receive 1,000 callbacks twice
// each, the two copies racing on two replicas: each is processed exactly
// once and none is lost.
func TestReplicasProcessEachCallbackOnce(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	const nReplicas, nKeys = 8, 1000
	stores, dbs := replicas(t, dsn, tableName(t, openDB(t, dsn)), nReplicas)
	table := stores[0].Table()[1 : len(stores[0].Table())-1]
	keys, queues := deliveries(nKeys, nReplicas)
	idx := make(map[string]int, nKeys)
	for k, key := range keys {
		idx[key] = k
	}

	processed := make([]atomic.Int32, nKeys)
	var claimed, done, inProgress atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	acks := runReplicas(ctx, t, stores, keys, queues, func(ctx context.Context, r int, s *pgstore.Store, key string) bool {
		c, err := s.Claim(ctx, key, 30*time.Second)
		if err != nil {
			t.Errorf("replica %d: claim: %v", r, err)
			return false
		}
		switch c {
		case callback.Claimed:
			claimed.Add(1)
			processed[idx[key]].Add(1)
			if err := s.Complete(ctx, key); err != nil {
				t.Errorf("replica %d: complete: %v", r, err)
				return false
			}
			return true
		case callback.AlreadyDone:
			done.Add(1)
			return true
		default:
			inProgress.Add(1)
			return false
		}
	})

	assert.EqualValues(t, 2*nKeys, acks, "every delivery answered *ok* in the end")
	assert.EqualValues(t, nKeys, claimed.Load())
	assert.EqualValues(t, nKeys, done.Load(), "every duplicate saw Done in the end")
	for k := range processed {
		if n := processed[k].Load(); n != 1 {
			t.Errorf("key %s processed %d times", keys[k], n)
		}
	}
	assert.Equal(t, nKeys, countDone(t, dbs[0], table))
	assert.Positive(t, inProgress.Load(), "duplicates should have raced into each other's leases")
	t.Logf("%d keys on %d replicas: %d InProgress answers (duplicates that raced), %d Done", nKeys, nReplicas, inProgress.Load(), done.Load())
}

// A replica that dies after claiming: its keys are processed by the others
// once the lease has run out, once each; the dead replica, should it wake
// up, can no longer complete them.
func TestCrashedReplicaIsTakenOver(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	const nKeys, lease = 20, 200 * time.Millisecond
	stores, dbs := replicas(t, dsn, tableName(t, openDB(t, dsn)), 4)
	dead, live := stores[0], stores[1:]
	table := dead.Table()[1 : len(dead.Table())-1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	keys := make([]string, nKeys)
	deadClaimedAt := make(map[string]time.Time, nKeys)
	for k := range keys {
		keys[k] = fmt.Sprintf("crash-%02d:confirmed", k)
		c, err := dead.Claim(ctx, keys[k], lease)
		require.NoError(t, err)
		require.Equal(t, callback.Claimed, c)
		var at time.Time
		require.NoError(t, dbs[0].QueryRowContext(ctx, `SELECT claimed_at FROM "`+table+`" WHERE key = $1`, keys[k]).Scan(&at))
		deadClaimedAt[keys[k]] = at
	}
	// The dead replica does nothing more. The service redelivers each key
	// to the live replicas until one answers *ok*.
	processed := make(map[string]*atomic.Int32, nKeys)
	for _, k := range keys {
		processed[k] = new(atomic.Int32)
	}
	var inProgress atomic.Int64
	var wg sync.WaitGroup
	for r, s := range live {
		wg.Go(func() {
			for _, key := range keys {
				for {
					if ctx.Err() != nil {
						t.Errorf("replica %d: %s never acknowledged", r, key)
						return
					}
					c, err := s.Claim(ctx, key, 30*time.Second)
					if err != nil {
						t.Errorf("replica %d: claim: %v", r, err)
						return
					}
					if c == callback.Claimed {
						processed[key].Add(1)
						if err := s.Complete(ctx, key); err != nil {
							t.Errorf("replica %d: complete: %v", r, err)
						}
					}
					if c != callback.Busy {
						break
					}
					inProgress.Add(1)
					pause(ctx, 10*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()

	for _, key := range keys {
		assert.EqualValues(t, 1, processed[key].Load(), key)
		var at time.Time
		require.NoError(t, dbs[0].QueryRowContext(ctx, `SELECT claimed_at FROM "`+table+`" WHERE key = $1`, key).Scan(&at))
		assert.GreaterOrEqual(t, at.Sub(deadClaimedAt[key]), lease, "%s taken over before the lease ran out", key)
		assert.ErrorIs(t, dead.Complete(ctx, key), callback.ErrNotClaimed, "the dead replica woke up")
	}
	assert.Positive(t, inProgress.Load(), "the live replicas met the dead one's leases")
	assert.Equal(t, nKeys, countDone(t, dbs[1], table))
}

var errEffect = errors.New("recording the effect failed")

// The database goes away in the middle of a run (every connection cut, new
// ones refused) and comes back. Replicas model the handler: *ok* only after
// a durable record. Each acknowledgement is checked against the database,
// directly, at the moment it is given; at the end every key is done. With
// WithinTx the effect, written to the same database, happens exactly once.
func TestDatabaseLostMidRun(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"claim-complete", "within-tx"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dsn := testDSN(t)
			const nReplicas, nKeys, lease = 8, 400, 300 * time.Millisecond
			direct := openDB(t, dsn)
			table := tableName(t, direct)
			newStore(t, direct, table)
			effects := `"` + table + `_effects"`
			_, err := direct.ExecContext(context.Background(), `CREATE TABLE `+effects+` (key text NOT NULL, replica int NOT NULL)`)
			require.NoError(t, err)

			u, err := urlHost(dsn)
			require.NoError(t, err)
			px := startProxy(t, u)
			stores, _ := replicas(t, withHost(t, dsn, px.addr), table, nReplicas)
			keys, queues := deliveries(nKeys, nReplicas)

			var acks, failures, reprocessed atomic.Int64
			failuresBy := make([]atomic.Int64, nReplicas)
			processed := make(map[string]*atomic.Int32, nKeys)
			for _, k := range keys {
				processed[k] = new(atomic.Int32)
			}
			durable := func(ctx context.Context, r int, key string) bool {
				var done bool
				err := direct.QueryRowContext(ctx, `SELECT done_at IS NOT NULL FROM "`+table+`" WHERE key = $1`, key).Scan(&done)
				if err != nil || !done {
					t.Errorf("replica %d: about to answer *ok* for %s without a durable record (err=%v)", r, key, err)
					return false
				}
				acks.Add(1)
				return true
			}
			failed := func(r int, op string, err error) bool {
				failures.Add(1)
				failuresBy[r].Add(1)
				if !errors.Is(err, pgstore.ErrUnavailable) && !errors.Is(err, callback.ErrNotClaimed) && !errors.Is(err, errEffect) {
					t.Errorf("replica %d: %s: want ErrUnavailable or the effect's error, got %v", r, op, err)
				}
				return false
			}
			var deliver deliverFunc
			if mode == "claim-complete" {
				deliver = func(ctx context.Context, r int, s *pgstore.Store, key string) bool {
					c, err := s.Claim(ctx, key, lease)
					if err != nil {
						return failed(r, "claim", err)
					}
					switch c {
					case callback.Busy:
						return false
					case callback.AlreadyDone:
						return durable(ctx, r, key)
					}
					if processed[key].Add(1) > 1 {
						reprocessed.Add(1)
					}
					if err := s.Complete(ctx, key); err != nil {
						return failed(r, "complete", err)
					}
					return durable(ctx, r, key)
				}
			} else {
				deliver = func(ctx context.Context, r int, s *pgstore.Store, key string) bool {
					c, err := s.WithinTx(ctx, key, func(tx *sql.Tx) error {
						if _, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key, replica) VALUES ($1, $2)`, key, r); err != nil {
							return fmt.Errorf("%w: %w", errEffect, err)
						}
						return nil
					})
					if err != nil {
						return failed(r, "within tx", err)
					}
					if c == callback.Busy {
						return false
					}
					return durable(ctx, r, key)
				}
			}

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			finished := make(chan int64)
			go func() { finished <- runReplicas(ctx, t, stores, keys, queues, deliver) }()

			waitFor(t, time.Minute, "a quarter of the deliveries", func() bool { return acks.Load() >= nKeys/2 })
			px.down()
			ackedBefore := acks.Load()
			waitFor(t, 30*time.Second, "every replica to fail a few deliveries", func() bool {
				for r := range failuresBy {
					if failuresBy[r].Load() < 3 {
						return false
					}
				}
				return true
			})
			px.up(t)
			got := <-finished

			assert.EqualValues(t, 2*nKeys, got, "every delivery acknowledged in the end")
			assert.Equal(t, nKeys, countDone(t, direct, table))
			t.Logf("%d acknowledged before the outage, %d failed deliveries", ackedBefore, failures.Load())
			if mode == "claim-complete" {
				t.Logf("%d keys processed again after their Complete was lost (at-least-once outside the database)", reprocessed.Load())
			}
			if mode == "within-tx" {
				rows, err := direct.QueryContext(context.Background(), `SELECT key, count(*) FROM `+effects+` GROUP BY key HAVING count(*) <> 1`)
				require.NoError(t, err)
				defer rows.Close()
				for rows.Next() {
					var k string
					var n int
					require.NoError(t, rows.Scan(&k, &n))
					t.Errorf("%s: effect committed %d times", k, n)
				}
				require.NoError(t, rows.Err())
				var n int
				require.NoError(t, direct.QueryRowContext(context.Background(), `SELECT count(DISTINCT key) FROM `+effects).Scan(&n))
				assert.Equal(t, nKeys, n, "every effect committed")
			} else {
				for _, key := range keys {
					assert.GreaterOrEqual(t, processed[key].Load(), int32(1), key)
				}
			}
		})
	}
}
