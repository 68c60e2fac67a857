package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// keyModel is what the callers of a set of keys know from the answers the
// store gave them; every answer is checked against it.
type keyModel struct {
	mu        sync.Mutex
	holder    map[string]int  // key -> worker whose claim's lease is running, -1 none
	inFn      map[string]int  // key -> how many WithinTx fns are running
	completed map[string]bool // key -> Complete or WithinTx succeeded (and not purged)
	errs      []string
}

func (m *keyModel) failf(format string, args ...any) {
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// TestInterleavedOperationsKeepEveryPromise runs workers, each with its own
// Store on one of two pools, doing random Claim, Complete, Release, Renew,
// WithinTx (committing or failing), lease expiry and Purge on four keys,
// and checks every answer against what the earlier answers imply: one
// holder at a time, no Claimed once a key was completed (until a purge
// deleted it), no spurious ErrNotClaimed for a live holder, no successful
// Complete or Renew while another caller holds the key, and each WithinTx
// effect written once per completion. At READ COMMITTED no WithinTx fn runs
// beside another claim of its key; at REPEATABLE READ and SERIALIZABLE
// PostgreSQL may let them overlap and fail all but one before it commits,
// so there only the effects are held to once.
func TestInterleavedOperationsKeepEveryPromise(t *testing.T) {
	base := testDSN(t)
	for _, tc := range []struct {
		name  string
		purge bool
		level string
	}{
		{"read committed", false, ""},
		{"read committed with purge", true, ""},
		{"serializable", false, "serializable"},
		{"repeatable read with purge", true, "repeatable read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			admin := openDB(t, base)
			table := tableName(t, admin)
			effects := `"` + table + `_effects"`
			_, err := admin.ExecContext(ctx, `CREATE TABLE `+effects+` (key text NOT NULL)`)
			require.NoError(t, err)
			dsn := base
			if tc.level != "" {
				dsn = withIsolation(t, base, tc.level)
			}
			pools := []*sql.DB{openDB(t, dsn), openDB(t, dsn)}
			newStore(t, admin, table)
			keys := []string{"a", "b", "c", "d"}
			m := &keyModel{holder: map[string]int{}, inFn: map[string]int{}, completed: map[string]bool{}}
			for _, k := range keys {
				m.holder[k] = -1
			}
			var world sync.RWMutex // ops read-lock it; expiry and purge write-lock it
			var dbErrs, ops [8]int
			const workers, rounds = 8, 120
			errFn := errors.New("fn fails")
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					s, err := pgstore.New(pools[w%2], pgstore.WithTable(table))
					if err != nil {
						panic(err)
					}
					holding := ""
					// dbErr reports whether err is a database error; it is
					// called with m.mu held. At READ COMMITTED there must be
					// none; at the other levels serialization failures come
					// from the store, or from fn's insert through WithinTx.
					dbErr := func(err error) bool {
						if err == nil || errors.Is(err, callback.ErrNotClaimed) {
							return false
						}
						if tc.level == "" {
							m.failf("worker %d: unexpected error: %v", w, err)
						}
						dbErrs[w]++
						return true
					}
					for range rounds {
						ops[w]++
						r := rng.IntN(100)
						switch {
						case r < 4: // the leases run out
							world.Lock()
							expireLeases(t, admin, table)
							m.mu.Lock()
							for _, k := range keys {
								m.holder[k] = -1
							}
							m.mu.Unlock()
							world.Unlock()
							continue
						case r < 7 && tc.purge: // purge everything done or expired, alone
							world.Lock()
							_, err := s.Purge(ctx, time.Microsecond)
							require.NoError(t, err)
							m.mu.Lock()
							for _, k := range keys {
								var done bool
								err := admin.QueryRowContext(ctx,
									`SELECT EXISTS (SELECT FROM "`+table+`" WHERE key = $1 AND done_at IS NOT NULL)`, k).Scan(&done)
								require.NoError(t, err)
								m.completed[k] = done
							}
							m.mu.Unlock()
							world.Unlock()
							continue
						}
						world.RLock()
						if holding != "" {
							k := holding
							switch r % 4 {
							case 0: // Complete
								err := s.Complete(ctx, k)
								m.mu.Lock()
								if !dbErr(err) {
									holding = ""
									switch {
									case err == nil && m.holder[k] != -1 && m.holder[k] != w:
										m.failf("worker %d completed %s held by %d", w, k, m.holder[k])
									case err == nil:
										m.holder[k], m.completed[k] = -1, true
									case m.holder[k] == w:
										m.failf("worker %d: Complete(%s) ErrNotClaimed while its lease runs", w, k)
									}
								}
								m.mu.Unlock()
							case 1: // Release
								m.mu.Lock()
								live := m.holder[k] == w
								if live {
									m.holder[k] = -1
								}
								m.mu.Unlock()
								err := s.Release(ctx, k)
								m.mu.Lock()
								if !dbErr(err) {
									holding = ""
									if err != nil && live {
										m.failf("worker %d: Release(%s) ErrNotClaimed while its lease ran", w, k)
									}
								}
								m.mu.Unlock()
							case 2: // Renew
								err := s.Renew(ctx, k, time.Minute)
								m.mu.Lock()
								if !dbErr(err) {
									switch {
									case err == nil && ((m.holder[k] != -1 && m.holder[k] != w) || (m.inFn[k] > 0 && tc.level == "")):
										m.failf("worker %d renewed %s held by %d / in %d fns", w, k, m.holder[k], m.inFn[k])
									case err == nil:
										if !m.completed[k] {
											m.holder[k] = w
										}
									default:
										if m.holder[k] == w {
											m.failf("worker %d: Renew(%s) ErrNotClaimed while its lease runs", w, k)
										}
										holding = ""
									}
								}
								m.mu.Unlock()
							default: // keep it, so that it may run out
							}
							world.RUnlock()
							continue
						}
						k := keys[rng.IntN(len(keys))]
						if r%2 == 0 {
							c, err := s.Claim(ctx, k, time.Minute)
							m.mu.Lock()
							if !dbErr(err) && c == callback.Claimed {
								// See WithinTx below: at the stricter levels a
								// Claim may take a key while a fn runs, and one
								// of the two fails before it commits.
								overlap := m.inFn[k] > 0 && tc.level == ""
								if m.holder[k] != -1 || overlap || m.completed[k] {
									m.failf("worker %d claimed %s: holder %d, in %d fns, completed %v",
										w, k, m.holder[k], m.inFn[k], m.completed[k])
								}
								m.holder[k] = w
								holding = k
							}
							m.mu.Unlock()
						} else {
							fail := rng.IntN(4) == 0
							c, err := s.WithinTx(ctx, k, func(tx *sql.Tx) error {
								m.mu.Lock()
								// At READ COMMITTED a second WithinTx or Claim of
								// the key waits for the first's transaction. At
								// the stricter levels PostgreSQL may let both
								// claim the key and fail all but one with a
								// serialization failure before it commits: the
								// effects check below keeps fn's writes to once.
								overlap := m.inFn[k] > 0 && tc.level == ""
								if m.holder[k] != -1 || overlap || m.completed[k] {
									m.failf("worker %d runs fn of %s: holder %d, in %d fns, completed %v",
										w, k, m.holder[k], m.inFn[k], m.completed[k])
								}
								m.inFn[k]++
								m.mu.Unlock()
								_, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key) VALUES ($1)`, k)
								m.mu.Lock()
								m.inFn[k]--
								m.mu.Unlock()
								if err == nil && fail {
									err = errFn
								}
								return err
							})
							m.mu.Lock()
							if errors.Is(err, errFn) {
								err = nil
							} else if !dbErr(err) && c == callback.Claimed {
								m.completed[k] = true
							}
							m.mu.Unlock()
						}
						world.RUnlock()
					}
				})
			}
			wg.Wait()
			require.Empty(t, m.errs)
			if !tc.purge {
				rows, err := admin.QueryContext(ctx, `SELECT key, count(*) FROM `+effects+` GROUP BY key HAVING count(*) > 1`)
				require.NoError(t, err)
				for rows.Next() {
					var k string
					var n int
					require.NoError(t, rows.Scan(&k, &n))
					t.Errorf("effect of %s written %d times", k, n)
				}
				require.NoError(t, rows.Close())
			}
			total, errs := 0, 0
			for w := range workers {
				total += ops[w]
				errs += dbErrs[w]
			}
			t.Logf("%d operations, %d failed with a database error", total, errs)
		})
	}
}
