package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

// Four replicas, each with its own pool on the same tables: ten
// concurrent Refund calls for the whole amount make one refund (the
// others fail with ErrNotRefundable), and ten concurrent SendRefund
// calls, with every replica's Tick, ask the service for one payout.
func TestRefundsOnFourReplicasWithTheirOwnPools(t *testing.T) {
	dsn := testDSN(t)
	table := tableName(t, openDB(t, dsn))
	e := invoicesuite.NewKeyedEnv(t, newStore(t, openDB(t, dsn), table))
	desks := []*invoice.Desk{e.Desk}
	for range 3 {
		desks = append(desks, e.NewDeskOn(newStore(t, openDB(t, dsn), table)))
	}
	require.NoError(t, e.Srv.FundPayoutWallet("btc", invoicesuite.D("0.01")))
	inv := e.Create(invoice.CreateOptions{OrderID: "r", Price: invoicesuite.D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.001"))

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 10)
	ids := make([]string, 10)
	for i := range 10 {
		wg.Go(func() {
			<-start
			rf, err := desks[i%4].Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Reason: "out of stock"})
			errs[i] = err
			if err == nil {
				ids[i] = rf.ID
			}
		})
	}
	close(start)
	wg.Wait()
	var id string
	for i, err := range errs {
		if err == nil {
			require.Empty(t, id, "one refund")
			id = ids[i]
			continue
		}
		assert.ErrorIs(t, err, invoice.ErrNotRefundable)
	}
	require.NotEmpty(t, id)
	_, err := desks[2].SetRefundAddress(e.Ctx, id, invoicesuite.CustomerBTC)
	require.NoError(t, err)

	start = make(chan struct{})
	for i := range 14 {
		wg.Go(func() {
			<-start
			if i >= 10 {
				_, _ = desks[i%4].Tick(e.Ctx)
				return
			}
			rf, err := desks[i%4].SendRefund(e.Ctx, id)
			if assert.NoError(t, err) {
				assert.Equal(t, invoice.RefundSending, rf.Status)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.Len(t, e.Srv.Payouts(), 1, "one payout request")
	assert.Len(t, e.Srv.PayoutBatches(), 1, "one payout")

	e.Clock.Advance(2 * time.Minute)
	start = make(chan struct{})
	for _, d := range desks {
		wg.Go(func() {
			<-start
			_, err := d.Tick(e.Ctx)
			assert.NoError(t, err)
		})
	}
	close(start)
	wg.Wait()
	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 1)
	assert.Equal(t, invoice.RefundSent, got.Refunds[0].Status)
	assert.Equal(t, e.Srv.PayoutBatches()[0].TxID, got.Refunds[0].TxID)
	e.AssertOnePerChange(got)
}

// Migrate adds the claims table to a table of the previous version that
// holds rows, indexing the tokens its records hold: a refund made before
// is found by its token, and refunds of old invoices work.
func TestMigrateAddsClaimsToATableWithRows(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	ctx := context.Background()
	table := tableName(t, db)
	s := newStore(t, db, table)
	e := invoicesuite.NewEnv(t, s)
	paid := e.Create(invoice.CreateOptions{OrderID: "m1", Price: invoicesuite.D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", paid.AddressIn, "0.001"))
	old, err := e.Desk.Refund(ctx, paid.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	other := e.Create(invoice.CreateOptions{OrderID: "m2", Price: invoicesuite.D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", other.AddressIn, "0.0005"))
	// The previous version had no claims table.
	_, err = db.ExecContext(ctx, `DROP TABLE "`+table+`_keys"`)
	require.NoError(t, err)

	s2, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(t, err)
	require.NoError(t, s2.Migrate(ctx))
	require.NoError(t, s2.Migrate(ctx), "again: nothing to do")
	token := strings.TrimPrefix(old.ClaimPath, invoice.PageClaimPath+"/")
	r, err := s2.LoadByKey(ctx, token)
	require.NoError(t, err, "the token a record held is indexed")
	assert.Equal(t, paid.ID, r.ID())

	desk := e.NewDeskOn(s2)
	rf, err := desk.Refund(ctx, other.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	r, err = s2.LoadByKey(ctx, strings.TrimPrefix(rf.ClaimPath, invoice.PageClaimPath+"/"))
	require.NoError(t, err)
	assert.Equal(t, other.ID, r.ID())
	_, err = s2.LoadByKey(ctx, "AAAAAAAAAAAAAAAAAAAAAAAAAA")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`_keys"`).Scan(&n))
	assert.Equal(t, 2, n)
}
