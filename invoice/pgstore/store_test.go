package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

func TestScenariosWithPostgreSQL(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	invoicesuite.Run(t, func(t *testing.T) invoice.Store { return newStore(t, db, tableName(t, db)) })
}

func TestNewRefusesBadTables(t *testing.T) {
	for _, name := range []string{"", "a.b.c", "1abc", `x"; DROP TABLE y; --`, "a b", string(make([]byte, 54))} {
		_, err := pgstore.New(nil)
		assert.Error(t, err)
		_, err = pgstore.New(openDBNoConnect(t), pgstore.WithTable(name))
		assert.ErrorIs(t, err, pgstore.ErrInvalidTable, "%q", name)
	}
	_, err := pgstore.New(openDBNoConnect(t), pgstore.WithTable("shop.invoices"))
	assert.NoError(t, err)
}

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := pgstore.New(openDB(t, dsn), pgstore.WithTable(table))
			assert.NoError(t, err)
			assert.NoError(t, s.Migrate(context.Background()))
		})
	}
	wg.Wait()
	newStore(t, db, table)
}

// An invoice store whose callback key cannot be completed (the claim was
// lost) stores nothing: the change and the done mark go together.
func TestUpdateStoresNothingWhenTheCallbackKeyIsNotHeld(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	s := newStore(t, db, tableName(t, db))
	e := invoicesuite.NewEnv(t, s)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	ctx := context.Background()
	called := false
	_, err := s.Update(ctx, inv.ID, "never-claimed:pending", func(r *invoice.Record) (*invoice.Record, error) {
		called = true
		n := *r
		n.Invoice.Version++
		n.Invoice.OrderID = "changed"
		return &n, nil
	})
	assert.True(t, called)
	assert.ErrorIs(t, err, callback.ErrNotClaimed)
	got := e.Stored(inv.ID)
	assert.Equal(t, inv.Version, got.Version, "rolled back")
	assert.Equal(t, "", got.OrderID)
	require.NoError(t, s.Notify(ctx, inv.ID, func(context.Context, *invoice.Invoice) error {
		t.Error("no change was stored, none is offered")
		return nil
	}))

	// Claimed through the store's callback store, it commits with the
	// change, and the key is done.
	c, err := s.Callbacks().Claim(ctx, "k:pending", time.Minute)
	require.NoError(t, err)
	require.Equal(t, callback.Claimed, c)
	_, err = s.Update(ctx, inv.ID, "k:pending", func(r *invoice.Record) (*invoice.Record, error) { return nil, nil })
	require.NoError(t, err)
	c, err = s.Callbacks().Claim(ctx, "k:pending", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, callback.AlreadyDone, c)
}

func TestLoadInsertNotFoundAndDuplicate(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	s := newStore(t, db, tableName(t, db))
	ctx := context.Background()
	_, err := s.Load(ctx, "nope")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	_, err = s.Update(ctx, "nope", "", func(r *invoice.Record) (*invoice.Record, error) { return r, nil })
	assert.ErrorIs(t, err, invoice.ErrNotFound)

	e := invoicesuite.NewEnv(t, s)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	r, err := s.Load(ctx, inv.ID)
	require.NoError(t, err)
	want, err := json.Marshal(inv)
	require.NoError(t, err)
	got, err := json.Marshal(&r.Invoice)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "round trip through jsonb is exact")
	assert.ErrorIs(t, s.Insert(ctx, r), invoice.ErrDuplicate)
}

// onChange's writes through pgstore.Tx commit with the mark: an onChange
// that wrote and then failed leaves no write, and the change is offered
// again.
func TestOnChangeEffectsCommitWithTheMark(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, db, table)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `CREATE TABLE "`+table+`_effects" (invoice_id text, version bigint, PRIMARY KEY (invoice_id, version))`)
	require.NoError(t, err)
	e := invoicesuite.NewEnv(t, s)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	_, err = e.Desk.Invalidate(ctx, inv.ID, "") // one change, passed to the env's onChange
	require.NoError(t, err)
	_, err = s.Update(ctx, inv.ID, "", func(r *invoice.Record) (*invoice.Record, error) {
		n := *r
		n.Invoice.Version++
		return &n, nil
	})
	require.NoError(t, err)

	record := func(ctx context.Context, inv *invoice.Invoice, fail bool) error {
		tx, ok := pgstore.Tx(ctx)
		require.True(t, ok)
		if _, err := tx.ExecContext(ctx, `INSERT INTO "`+table+`_effects" VALUES ($1, $2)`, inv.ID, inv.Version); err != nil {
			return err
		}
		if fail {
			return errors.New("shop failed after writing")
		}
		return nil
	}
	err = s.Notify(ctx, inv.ID, func(ctx context.Context, inv *invoice.Invoice) error { return record(ctx, inv, true) })
	assert.Error(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`_effects"`).Scan(&n))
	assert.Equal(t, 0, n, "rolled back with the failure")
	var versions []int64
	require.NoError(t, s.Notify(ctx, inv.ID, func(ctx context.Context, inv *invoice.Invoice) error {
		versions = append(versions, inv.Version)
		return record(ctx, inv, false)
	}))
	assert.Equal(t, []int64{3}, versions, "offered again, once")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`_effects"`).Scan(&n))
	assert.Equal(t, 1, n)
	_, ok := pgstore.Tx(ctx)
	assert.False(t, ok, "no transaction outside Notify")
}

func TestRefundScenariosWithPostgreSQL(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	invoicesuite.RunRefunds(t, func(t *testing.T) invoice.Store { return newStore(t, db, tableName(t, db)) })
}
