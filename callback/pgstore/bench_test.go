package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/forwardpay/cryptapi-go/internal/needs"
)

// Run against a local server:
//
//	eval "$(.ci/postgres.sh start)"
//	go test -run '^$' -bench . -benchmem -count 3 ./callback/pgstore/
//	.ci/postgres.sh stop "$CRYPTAPI_TEST_PGDIR"
//
// Each benchmark reports ns/op as wall time over all replicas (so 1e9/ns/op
// is the throughput), and p50-us / p99-us, the latency of single operations.

func benchDSN(b *testing.B) string {
	b.Helper()
	return needs.PostgreSQL(b)
}

var replicaCounts = []int{1, 8}

// benchReplicas opens n pools (as n replicas would), warms one connection
// in each, and returns a Store per pool on a fresh table.
func benchReplicas(b *testing.B, dsn string, n int) ([]*pgstore.Store, []*sql.DB, string) {
	b.Helper()
	stores, dbs := replicas(b, dsn, tableName(b, openDB(b, dsn)), n)
	for _, db := range dbs {
		if err := db.PingContext(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	t := stores[0].Table()
	return stores, dbs, t[1 : len(t)-1]
}

// measure runs b.N operations spread over n goroutines, replica r calling
// op(r, i) for the operations it takes, and reports latency percentiles.
func measure(b *testing.B, n int, op func(ctx context.Context, r, i int) error) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	durs := make([][]time.Duration, n)
	for r := range durs {
		durs[r] = make([]time.Duration, 0, b.N) // no growth while timed
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for r := range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(ctx, r, i); err != nil {
					b.Error(err)
					return
				}
				durs[r] = append(durs[r], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(durs...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[int(p*float64(len(all)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "p50-us")
	b.ReportMetric(pct(0.99), "p99-us")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "ops/s")
}

// doneKeys claims and completes 1000 keys through s and returns them.
func doneKeys(b *testing.B, s *pgstore.Store) []string {
	b.Helper()
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("done-%d", i)
		if _, err := s.Claim(ctx, keys[i], time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := s.Complete(ctx, keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// bareInsert creates the baseline's table beside table (same key column,
// nothing else; dropped with it) and returns its insert statement.
func bareInsert(b *testing.B, db *sql.DB, table string) string {
	b.Helper()
	bare := `"` + table + `_effects"`
	if _, err := db.ExecContext(context.Background(),
		`CREATE TABLE `+bare+` (key text COLLATE "C" NOT NULL PRIMARY KEY)`); err != nil {
		b.Fatal(err)
	}
	return `INSERT INTO ` + bare + ` (key) VALUES ($1) ON CONFLICT DO NOTHING`
}

// BenchmarkClaimComplete is the handler's path for a new callback: Claim a
// new key, then Complete it.
func BenchmarkClaimComplete(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			stores, _, _ := benchReplicas(b, dsn, n)
			prefix := rand.Text()
			measure(b, n, func(ctx context.Context, r, i int) error {
				key := fmt.Sprintf("%s-%d:confirmed", prefix, i)
				c, err := stores[r].Claim(ctx, key, time.Minute)
				if err != nil {
					return err
				}
				if c != callback.Claimed {
					return fmt.Errorf("claim %s: %v", key, c)
				}
				return stores[r].Complete(ctx, key)
			})
		})
	}
}

// BenchmarkClaimDone is the path of a duplicate delivery: Claim of a key
// that is done (one statement, answered from its read).
func BenchmarkClaimDone(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			stores, _, _ := benchReplicas(b, dsn, n)
			keys := doneKeys(b, stores[0])
			measure(b, n, func(ctx context.Context, r, i int) error {
				c, err := stores[r].Claim(ctx, keys[i%len(keys)], time.Minute)
				if err == nil && c != callback.AlreadyDone {
					err = fmt.Errorf("claim: %v", c)
				}
				return err
			})
		})
	}
}

// BenchmarkWithinTx is one transaction that claims the key, marks it done,
// runs an empty fn and commits.
func BenchmarkWithinTx(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			stores, _, _ := benchReplicas(b, dsn, n)
			prefix := rand.Text()
			noop := func(*sql.Tx) error { return nil }
			measure(b, n, func(ctx context.Context, r, i int) error {
				c, err := stores[r].WithinTx(ctx, fmt.Sprintf("%s-%d", prefix, i), noop)
				if err == nil && c != callback.Claimed {
					err = fmt.Errorf("within tx: %v", c)
				}
				return err
			})
		})
	}
}

// BenchmarkBareInsert is the floor on the same server: one
// INSERT ... ON CONFLICT DO NOTHING per key into a table with the same key
// column, no lease, no token, no completion.
func BenchmarkBareInsert(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			_, dbs, table := benchReplicas(b, dsn, n)
			q := bareInsert(b, dbs[0], table)
			prefix := rand.Text()
			measure(b, n, func(ctx context.Context, r, i int) error {
				_, err := dbs[r].ExecContext(ctx, q, fmt.Sprintf("%s-%d:confirmed", prefix, i))
				return err
			})
		})
	}
}

// BenchmarkClaimCompleteVsBareInsert runs the handler's path for a new
// callback (Claim, then Complete), a duplicate delivery (Claim of a done
// key), WithinTx with an empty fn, and the bare INSERT ... ON CONFLICT DO
// NOTHING baseline in alternating chunks of 64 operations (internal/
// benchcmp), each spread over the replicas' goroutines, so that drift on
// the shared machine hits them alike. The ratios are of wall time, which
// is what a replica waits; the CPU figures are this process's only (the
// database server's CPU is not in them).
func BenchmarkClaimCompleteVsBareInsert(b *testing.B) {
	dsn := benchDSN(b)
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			stores, dbs, table := benchReplicas(b, dsn, n)
			ctx := context.Background()
			insert := bareInsert(b, dbs[0], table)
			done := doneKeys(b, stores[0])
			prefix := rand.Text()
			noop := func(*sql.Tx) error { return nil }
			// spread runs ops operations over the n replicas; op gets the
			// replica and a number unique to this contender.
			spread := func(name string, op func(r, i int) error) benchcmp.Contender {
				var seq atomic.Int64
				return benchcmp.Contender{Name: name, Op: func(ops int) {
					var left atomic.Int64
					left.Store(int64(ops))
					var wg sync.WaitGroup
					for r := range n {
						wg.Go(func() {
							for left.Add(-1) >= 0 {
								if err := op(r, int(seq.Add(1))); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
				}}
			}
			benchcmp.Run(b, 64,
				spread("bare", func(r, i int) error {
					_, err := dbs[r].ExecContext(ctx, insert, fmt.Sprintf("%s-%d:confirmed", prefix, i))
					return err
				}),
				spread("claimcomplete", func(r, i int) error {
					key := fmt.Sprintf("%s-%d:confirmed", prefix, i)
					c, err := stores[r].Claim(ctx, key, time.Minute)
					if err == nil && c != callback.Claimed {
						err = fmt.Errorf("claim %s: %v", key, c)
					}
					if err != nil {
						return err
					}
					return stores[r].Complete(ctx, key)
				}),
				spread("dup", func(r, i int) error {
					c, err := stores[r].Claim(ctx, done[i%len(done)], time.Minute)
					if err == nil && c != callback.AlreadyDone {
						err = fmt.Errorf("claim: %v", c)
					}
					return err
				}),
				spread("withintx", func(r, i int) error {
					c, err := stores[r].WithinTx(ctx, fmt.Sprintf("%s-%d:tx", prefix, i), noop)
					if err == nil && c != callback.Claimed {
						err = fmt.Errorf("within tx: %v", c)
					}
					return err
				}),
			)
		})
	}
}
