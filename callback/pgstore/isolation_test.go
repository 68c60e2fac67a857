package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// withIsolation returns dsn with every transaction of its sessions at level.
func withIsolation(tb testing.TB, dsn, level string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	require.NoError(tb, err)
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += "default_transaction_isolation=" + url.PathEscape(level)
	return u.String()
}

// expireLeases makes every running claim in table look expired, as if the
// lease had run out: the database's view of "the lease has passed", without
// waiting for it.
func expireLeases(tb testing.TB, db *sql.DB, table string) {
	tb.Helper()
	_, err := db.ExecContext(context.Background(),
		`UPDATE "`+table+`" SET lease_until = clock_timestamp() - interval '1 second' WHERE done_at IS NULL`)
	require.NoError(tb, err)
}

// conflictCounter counts the store calls that fail with a serialization
// failure (40001) or a deadlock (40P01).
type conflictCounter struct {
	*pgstore.Store
	n *atomic.Int32
}

func (c *conflictCounter) count(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") {
		c.n.Add(1)
	}
	return err
}

func (c *conflictCounter) Claim(ctx context.Context, key string, lease time.Duration) (callback.Outcome, error) {
	cl, err := c.Store.Claim(ctx, key, lease)
	return cl, c.count(err)
}

func (c *conflictCounter) Complete(ctx context.Context, key string) error {
	return c.count(c.Store.Complete(ctx, key))
}

func (c *conflictCounter) Release(ctx context.Context, key string) error {
	return c.count(c.Store.Release(ctx, key))
}

func (c *conflictCounter) Renew(ctx context.Context, key string, lease time.Duration) error {
	return c.count(c.Store.Renew(ctx, key, lease))
}

// ledger records what fn did, per payment.
type ledger struct {
	mu        sync.Mutex
	successes map[string]int  // PaymentKey -> successful fn calls
	confirmed map[string]bool // uuid -> confirmed fn succeeded
	late      []string        // pending fn calls after their confirmation
}

func newLedger() *ledger {
	return &ledger{successes: map[string]int{}, confirmed: map[string]bool{}}
}

func (l *ledger) fn(_ context.Context, p *callback.Payment) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Pending && l.confirmed[p.UUID] {
		l.late = append(l.late, p.UUID)
	}
	if !p.Pending {
		l.confirmed[p.UUID] = true
	}
	l.successes[callback.PaymentKey(p)]++
	return nil
}

// TestProcessOnceAtEveryIsolationLevel delivers 60 payments (pending and
// confirmed, each twice, all at once) to two replicas whose sessions run at
// SERIALIZABLE or REPEATABLE READ, where concurrent statements fail with
// serialization errors. Every callback not answered "*ok*" is delivered again
// after the leases ran out, as the service would. fn must succeed once per
// payment key, no pending callback may reach fn after its confirmation, and
// every payment must end up acknowledged.
func TestProcessOnceAtEveryIsolationLevel(t *testing.T) {
	base := testDSN(t)
	for _, level := range []string{"serializable", "repeatable read"} {
		t.Run(level, func(t *testing.T) {
			dsn := withIsolation(t, base, level)
			admin := openDB(t, base)
			table := tableName(t, admin)
			stores := make([]*pgstore.Store, 2)
			for i := range stores {
				db := openDB(t, dsn)
				db.SetMaxOpenConns(8)
				stores[i] = newStore(t, db, table)
			}
			const payments = 60
			type delivery struct {
				p     *callback.Payment
				store callback.Store
			}
			var conflicts atomic.Int32
			counted := make([]callback.Store, len(stores))
			for i, s := range stores {
				counted[i] = &conflictCounter{Store: s, n: &conflicts}
			}
			var all []delivery
			for i := range payments {
				uuid := fmt.Sprintf("iso-%03d", i)
				for copy := range 2 {
					for _, pending := range []bool{true, false} {
						all = append(all, delivery{
							p:     &callback.Payment{UUID: uuid, AddressIn: "addr", Pending: pending},
							store: counted[(i+copy)%2],
						})
					}
				}
			}
			led := newLedger()
			acked := map[string]bool{}
			var errs []error
			todo := all
			for round := 0; len(todo) > 0 && round < 20; round++ {
				if round > 0 {
					expireLeases(t, admin, table)
				}
				var (
					mu   sync.Mutex
					next []delivery
					wg   sync.WaitGroup
				)
				for _, d := range todo {
					wg.Add(1)
					go func() {
						defer wg.Done()
						o, err := callback.Process(context.Background(), d.store, time.Minute, led.fn, d.p)
						mu.Lock()
						defer mu.Unlock()
						if o.Acknowledge() {
							acked[callback.PaymentKey(d.p)] = true
							if err != nil {
								errs = append(errs, err)
							}
							return
						}
						next = append(next, d) // the service delivers it again
					}()
				}
				wg.Wait()
				todo = next
			}
			require.Empty(t, todo, "every callback is acknowledged in the end")
			t.Logf("%d store calls failed with a serialization failure or deadlock", conflicts.Load())
			if level == "serializable" {
				assert.Positive(t, conflicts.Load(), "the run provoked serialization failures")
			}
			led.mu.Lock()
			defer led.mu.Unlock()
			twice := 0
			for k, n := range led.successes {
				if n > 1 {
					twice++
					t.Errorf("%s: fn succeeded %d times", k, n)
				}
			}
			assert.Zero(t, twice, "payment keys processed more than once")
			assert.Len(t, led.confirmed, payments, "every confirmed payment processed")
			assert.Empty(t, led.late, "pending callbacks that reached fn after their confirmation")
			if !assert.Zero(t, len(errs), "callbacks acknowledged with a store error") {
				t.Log("first:", errs[0])
			}
		})
	}
}

// TestRenewKeepsAClaimPastItsLeaseOnlyForItsHolder: a renewed claim is not
// taken over after its first lease; once another replica took the key over,
// the old holder's renewal fails with ErrNotClaimed and changes nothing; a
// renewal of a claim completed through CompleteTx is harmless.
func TestRenewKeepsAClaimPastItsLeaseOnlyForItsHolder(t *testing.T) {
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

	require.Equal(t, callback.Claimed, claim(a, "k"))
	expireLeases(t, db, table) // the first lease has passed...
	require.NoError(t, a.Renew(ctx, "k", time.Minute), "nobody took it over: still a's")
	assert.Equal(t, callback.Busy, claim(b, "k"), "...but the renewed claim holds")

	expireLeases(t, db, table)
	require.Equal(t, callback.Claimed, claim(b, "k"), "not renewed in time: taken over")
	assert.ErrorIs(t, a.Renew(ctx, "k", time.Minute), callback.ErrNotClaimed)
	var leaseLeft time.Duration
	var secs float64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT extract(epoch FROM lease_until - clock_timestamp()) FROM "`+table+`" WHERE key = 'k'`).Scan(&secs))
	leaseLeft = time.Duration(secs * float64(time.Second))
	assert.LessOrEqual(t, leaseLeft, time.Minute, "b's lease, untouched by a")
	require.NoError(t, b.Renew(ctx, "k", time.Hour))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT extract(epoch FROM lease_until - clock_timestamp()) FROM "`+table+`" WHERE key = 'k'`).Scan(&secs))
	assert.Greater(t, time.Duration(secs*float64(time.Second)), 50*time.Minute, "b renewed its own claim")

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, b.CompleteTx(ctx, tx, "k"))
	require.NoError(t, tx.Commit())
	assert.NoError(t, b.Renew(ctx, "k", time.Minute), "completed by this claim")
	assert.Equal(t, callback.AlreadyDone, claim(a, "k"))
	assert.ErrorIs(t, a.Renew(ctx, "never", time.Minute), callback.ErrNotClaimed)
	assert.ErrorIs(t, a.Renew(ctx, "k", 0), pgstore.ErrInvalidLease)
}

// TestSlowFnKeepsItsClaimAcrossReplicas: while fn runs past its lease (the
// database is told the lease has passed, three times over), Process renews
// the claim, so a redelivery to another replica is busy instead of running
// fn a second time; once fn returns, the key is done.
//
// The lease only sets the heartbeat's pace and bounds each store call (a
// quarter of it): it is long enough that a loaded database answers within
// that bound, since a claim whose answer came too late is retried and finds
// its own row in progress (Busy), and fn never runs.
func TestSlowFnKeepsItsClaimAcrossReplicas(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	a := newStore(t, db, table)
	b := newStore(t, openDB(t, dsn), table)
	const lease = 6 * time.Second // renewed every 2 s; each store call bounded by 1.5 s
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := &callback.Payment{UUID: "slow", AddressIn: "addr"}
	var calls atomic.Int32
	entered := make(chan struct{})
	finish := make(chan struct{})
	release := sync.OnceFunc(func() { close(finish) })
	defer release() // fn returns even when the test stops early
	fn := func(ctx context.Context, _ *callback.Payment) error {
		if calls.Add(1) == 1 {
			close(entered)
			<-finish
		}
		return ctx.Err()
	}
	type result struct {
		o   callback.Outcome
		err error
	}
	first := make(chan result, 1)
	go func() {
		o, err := callback.Process(context.Background(), a, lease, fn, p)
		first <- result{o, err}
	}()
	select {
	case <-entered:
	case r := <-first:
		t.Fatalf("Process returned %v (%v) without running fn", r.o, r.err)
	case <-ctx.Done():
		t.Fatal("fn did not start before the test's deadline")
	}
	for range 3 {
		expireLeases(t, db, table)
		waitFor(t, 30*time.Second, "the heartbeat to renew the claim", func() bool {
			var live bool
			require.NoError(t, db.QueryRowContext(context.Background(),
				`SELECT lease_until > clock_timestamp() FROM "`+table+`" WHERE key = $1`, callback.PaymentKey(p)).Scan(&live))
			return live
		})
	}
	o, err := callback.Process(context.Background(), b, lease, fn, p)
	assert.Equal(t, callback.Busy, o)
	assert.NoError(t, err)
	release()
	var r result
	select {
	case r = <-first:
	case <-ctx.Done():
		t.Fatal("Process did not return after fn did, before the test's deadline")
	}
	assert.Equal(t, callback.Processed, r.o)
	assert.NoError(t, r.err, "fn's context lived on while the claim was renewed")
	o, err = callback.Process(context.Background(), b, lease, fn, p)
	assert.Equal(t, callback.AlreadyDone, o)
	assert.NoError(t, err)
	assert.Equal(t, int32(1), calls.Load())
}
