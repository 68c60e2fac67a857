package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

// Four replicas, each with its own pool, Store and Desk on the same
// tables, run Run at once while the clock moves on in steps: every
// invoice is changed once per event (each expiry, each end of monitoring,
// each re-quote applied once), onChange hears each change once, in order,
// and each replica reads a coin's price at most once a minute.
func TestFourReplicasRunningTickAtOnce(t *testing.T) {
	dsn := testDSN(t)
	const replicas = 4
	table := tableName(t, openDB(t, dsn))
	clock := cryptapitest.NewFakeClock(invoicesuite.T0)
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	heard := map[string][]int64{}
	onChange := func(_ context.Context, inv *invoice.Invoice) error {
		mu.Lock()
		defer mu.Unlock()
		heard[inv.ID] = append(heard[inv.ID], inv.Version)
		return nil
	}
	shop := httptest.NewUnstartedServer(nil)
	desks := make([]*invoice.Desk, replicas)
	stores := make([]*pgstore.Store, replicas)
	for i := range replicas {
		stores[i] = newStore(t, openDB(t, dsn), table)
		c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithoutRetries())
		require.NoError(t, err)
		desks[i], err = invoice.New(c, stores[i], invoice.WithClock(clock), invoice.WithOnChange(onChange))
		require.NoError(t, err)
	}
	v, err := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL("http://"+shop.Listener.Addr().String()))
	require.NoError(t, err)
	shop.Config.Handler, err = desks[0].Handler(v)
	require.NoError(t, err)
	shop.Start()
	t.Cleanup(shop.Close)

	type plan struct {
		inv       *invoice.Invoice
		status    invoice.Status
		exception invoice.Exception
		requotes  int
	}
	var plans []plan
	create := func(i int, o invoice.CreateOptions) *invoice.Invoice {
		o.Ticker, o.Callback, o.Address, o.Price, o.Currency = "btc", shop.URL+"/callback", invoicesuite.BTCDest, invoicesuite.D("25"), "USD"
		inv, err := desks[i%replicas].Create(ctx, &o)
		require.NoError(t, err)
		return inv
	}
	pay := func(inv *invoice.Invoice, amount string, confirm bool) {
		tx, err := srv.Pay("btc", inv.AddressIn, invoicesuite.D(amount))
		require.NoError(t, err)
		if confirm {
			require.NoError(t, srv.Confirm(tx, 1))
		}
		require.NoError(t, srv.Flush(ctx))
	}
	for i := range 8 {
		// Unpaid, its one quote lasting until its deadline: expired at 30
		// minutes.
		plans = append(plans, plan{inv: create(i, invoice.CreateOptions{ExpiresIn: 30 * time.Minute, QuoteTTL: time.Hour}), status: invoice.StatusExpired})
		// Partly paid and confirmed: expired, paid_partial.
		p := create(i, invoice.CreateOptions{ExpiresIn: 30 * time.Minute, QuoteTTL: time.Hour})
		pay(p, "0.0002", true)
		plans = append(plans, plan{inv: p, status: invoice.StatusExpired, exception: invoice.ExceptionPaidPartial})
		// Paid in full, never confirmed: expired at the end of monitoring.
		d := create(i, invoice.CreateOptions{ExpiresIn: 30 * time.Minute, MonitorFor: time.Hour})
		pay(d, "0.00041667", false)
		plans = append(plans, plan{inv: d, status: invoice.StatusExpired})
		// Unpaid for three hours at 15 minute quotes: re-quoted at 15, 30,
		// ..., 165 minutes (11 times), expired at 180.
		plans = append(plans, plan{inv: create(i, invoice.CreateOptions{ExpiresIn: 3 * time.Hour, QuoteTTL: 15 * time.Minute}),
			status: invoice.StatusExpired, requotes: 11})
	}

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, d := range desks {
		wg.Go(func() {
			err := d.Run(runCtx, 2*time.Millisecond)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	// idle waits until nothing is due on the store at the clock's time.
	idle := func() {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			due := 0
			for _, err := range stores[0].Due(ctx, clock.Now()) {
				require.NoError(t, err)
				due++
			}
			if due == 0 {
				return
			}
			require.True(t, time.Now().Before(deadline), "%d invoices still due", due)
			time.Sleep(5 * time.Millisecond)
		}
	}
	infos := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if strings.HasSuffix(r.Path, "/info/") {
				n++
			}
		}
		return n
	}
	for step := 1; step <= 36; step++ { // 3 hours in 5 minute steps
		before := infos()
		clock.Advance(5 * time.Minute)
		idle()
		assert.LessOrEqual(t, infos()-before, replicas, "step %d: at most one price read per replica", step)
	}
	stop()
	wg.Wait()

	for i, p := range plans {
		got, err := desks[(i+1)%replicas].Get(ctx, p.inv.ID)
		require.NoError(t, err)
		assert.Equal(t, p.status, got.Status, "invoice %d", i)
		assert.Equal(t, p.exception, got.Exception, "invoice %d", i)
		count := map[string]int{}
		for _, e := range got.Events {
			count[e.Kind]++
		}
		assert.Equal(t, 1, count[invoice.EventExpired], "invoice %d expired once", i)
		if p.requotes > 0 {
			// Created, each re-quote, expired: one version each.
			assert.Equal(t, int64(1+p.requotes+1), got.Version, "invoice %d: each re-quote applied once", i)
			assert.Equal(t, 1, count[invoice.EventRequoted], "consecutive re-quotes keep one event")
		}
		want := []int64{}
		for v := int64(2); v <= got.Version; v++ {
			want = append(want, v)
		}
		mu.Lock()
		assert.Equal(t, want, heard[p.inv.ID], "invoice %d: onChange once per change, in order", i)
		mu.Unlock()
	}
}

// The pending flag, which keeps an invoice due while a change waits for
// onChange, is never lost when a change is stored while Notify finishes:
// after every race, an invoice with a change not passed on is due.
func TestAChangeStoredDuringNotifyStaysDue(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, db, table)
	e := invoicesuite.NewEnv(t, s)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	ctx := context.Background()
	bump := func(r *invoice.Record) (*invoice.Record, error) {
		n := *r
		n.Invoice.Version++
		return &n, nil
	}
	errRefused := errors.New("refused")
	due := func() bool {
		for id, err := range s.Due(ctx, invoicesuite.T0) {
			require.NoError(t, err)
			if id == inv.ID {
				return true
			}
		}
		return false
	}
	for round := range 150 {
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := s.Update(ctx, inv.ID, "", bump)
			assert.NoError(t, err)
		})
		wg.Go(func() {
			err := s.Notify(ctx, inv.ID, func(_ context.Context, c *invoice.Invoice) error {
				if round%5 == 0 {
					return errRefused
				}
				return nil
			})
			if err != nil {
				assert.ErrorIs(t, err, errRefused)
			}
		})
		wg.Wait()
		var left int
		require.NoError(t, db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM "%s_changes" WHERE invoice_id = $1 AND notified_at IS NULL`,
			table), inv.ID).Scan(&left))
		if left > 0 {
			require.True(t, due(), "round %d: %d changes wait, the invoice is not due", round, left)
		}
	}
	require.NoError(t, s.Notify(ctx, inv.ID, func(context.Context, *invoice.Invoice) error { return nil }))
	assert.False(t, due(), "every change passed: not due")
}
