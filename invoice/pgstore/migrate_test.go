package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

// v010Tables creates the tables exactly as v0.1.0's Migrate did.
func v010Tables(t *testing.T, ctx context.Context, exec func(string, ...any), table string) {
	t.Helper()
	exec(`CREATE TABLE "` + table + `" (
	id         text COLLATE "C" NOT NULL PRIMARY KEY,
	order_id   text NOT NULL,
	status     text NOT NULL,
	version    bigint NOT NULL,
	record     jsonb NOT NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`)
	exec(`CREATE TABLE "` + table + `_changes" (
	invoice_id  text COLLATE "C" NOT NULL,
	version     bigint NOT NULL,
	invoice     jsonb NOT NULL,
	created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	notified_at timestamptz,
	PRIMARY KEY (invoice_id, version)
)`)
	exec(`CREATE INDEX "` + table + `_order_id" ON "` + table + `" (order_id)`)
	exec(`CREATE INDEX "` + table + `_pending" ON "` + table + `_changes" (invoice_id, version) WHERE notified_at IS NULL`)
}

// v010Record writes a record as v0.1.0 stored it: no request, events,
// monitoring, quote times or forwarding details, quote_ttl in
// nanoseconds, zero times written out.
func v010Record(t *testing.T, r *invoice.Record) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	delete(m, "request")
	delete(m, "marked")
	delete(m, "claim_until")
	inv := m["invoice"].(map[string]any)
	for _, k := range []string{"events", "monitor_for", "quoted_at"} {
		delete(inv, k)
	}
	inv["quote_ttl"] = int64(r.Invoice.QuoteTTL.Duration)
	for _, k := range []string{"quote_expires_at", "expires_at", "created_at", "updated_at"} {
		if _, ok := inv[k]; !ok {
			inv[k] = "0001-01-01T00:00:00Z"
		}
	}
	if ps, ok := inv["payments"].([]any); ok {
		for _, p := range ps {
			rc := p.(map[string]any)
			for _, k := range []string{"quoted_at", "txid_out", "fee", "forwarded"} {
				delete(rc, k)
			}
			if _, ok := rc["confirmed_at"]; !ok {
				rc["confirmed_at"] = "0001-01-01T00:00:00Z"
			}
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// Migrate upgrades a table made by v0.1.0, holding invoices in every
// state: they are listed in the order they were made, Tick finds the due
// ones (and the change onChange never accepted), the newest open invoice
// of an order holds it, and new invoices follow the old ones.
func TestMigrateUpgradesAV010TableWithRows(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	ctx := context.Background()
	table := tableName(t, db)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	v010Tables(t, ctx, exec, table)

	// Invoices made by the old code's rules, in memory, then written to
	// the old tables as v0.1.0 wrote them.
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	open := e.Create(invoice.CreateOptions{OrderID: "o-open", Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 2 * time.Hour})
	due := e.Create(invoice.CreateOptions{OrderID: "o-due", Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	processing := e.Create(invoice.CreateOptions{OrderID: "o-proc", Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Pay("btc", processing.AddressIn, "0.00041667")
	settled := e.Create(invoice.CreateOptions{OrderID: "o-paid", Price: invoicesuite.D("0.001")})
	e.Confirm(e.Pay("btc", settled.AddressIn, "0.001"))
	twiceOld := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 2 * time.Hour})
	twiceNew := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 2 * time.Hour})
	made := []*invoice.Invoice{open, due, processing, settled, twiceOld, twiceNew}
	for i, inv := range made {
		r, err := e.Store.Load(ctx, inv.ID)
		require.NoError(t, err)
		order := r.Invoice.OrderID
		if inv == twiceOld || inv == twiceNew {
			order = "o-twice" // v0.1.0 let an order have several open invoices
			var m map[string]any
			b := v010Record(t, r)
			require.NoError(t, json.Unmarshal(b, &m))
			m["invoice"].(map[string]any)["order_id"] = order
			b, _ = json.Marshal(m)
			exec(`INSERT INTO "`+table+`" (id, order_id, status, version, record, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
				r.ID(), order, string(r.Invoice.Status), r.Version(), b, invoicesuite.T0.Add(time.Duration(i)*time.Second))
			continue
		}
		exec(`INSERT INTO "`+table+`" (id, order_id, status, version, record, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.ID(), order, string(r.Invoice.Status), r.Version(), v010Record(t, r), invoicesuite.T0.Add(time.Duration(i)*time.Second))
	}
	// The settled invoice's last change was never accepted by onChange.
	exec(`INSERT INTO "`+table+`_changes" (invoice_id, version, invoice) VALUES ($1, $2, '{}'::jsonb)`, settled.ID, 1)
	exec(`INSERT INTO "`+table+`_changes" (invoice_id, version, invoice, notified_at) SELECT $1, 2, record->'invoice', now() FROM "`+table+`" WHERE id = $1`, settled.ID)
	exec(`INSERT INTO "`+table+`_changes" (invoice_id, version, invoice) SELECT $1, 3, record->'invoice' FROM "`+table+`" WHERE id = $1`, settled.ID)
	exec(`DELETE FROM "`+table+`_changes" WHERE invoice_id = $1 AND version = 1`, settled.ID)

	s, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx), "again: nothing to do")

	desk := e.NewDeskOn(s)
	var listed []string
	for inv, err := range desk.List(ctx, nil) {
		require.NoError(t, err)
		listed = append(listed, inv.ID)
		assert.Equal(t, invoice.DefaultMonitorFor, inv.MonitorFor.Duration, "monitoring defaults for old invoices")
	}
	assert.Equal(t, []string{twiceNew.ID, twiceOld.ID, settled.ID, processing.ID, due.ID, open.ID}, listed, "newest first, old rows in their order")
	stored, err := s.Load(ctx, open.ID)
	require.NoError(t, err)
	assert.Equal(t, open.QuoteTTL, stored.Invoice.QuoteTTL, "quote_ttl read from nanoseconds")

	e.Clock.Advance(45 * time.Minute) // due is past its deadline
	heard := len(e.Changes(settled.ID))
	n, err := desk.Tick(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "the due invoice expired; open and the pair re-quoted")
	got, err := desk.Get(ctx, due.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	got, err = desk.Get(ctx, processing.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusProcessing, got.Status, "monitored for a day after its deadline")
	accepted := e.Changes(settled.ID)
	require.Len(t, accepted, heard+1, "the change v0.1.0 never passed on was offered")
	assert.Equal(t, int64(3), accepted[heard].Version)

	e.Clock.Advance(24 * time.Hour)
	_, err = desk.Tick(ctx)
	require.NoError(t, err)
	got, err = desk.Get(ctx, processing.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusExpired, got.Status, "a dropped transaction of an old invoice ends too")

	// The newest open invoice of the order holds it.
	pair, err := desk.ByOrderID(ctx, "o-twice")
	require.NoError(t, err)
	require.Len(t, pair, 2)
	assert.Equal(t, twiceNew.ID, pair[0].ID)

	// New invoices follow the old ones, and Create keeps one open invoice
	// per order from now on.
	fresh, err := desk.Create(ctx, &invoice.CreateOptions{OrderID: "o-new", Ticker: "btc", Price: invoicesuite.D("25"), Currency: "USD",
		Callback: e.CallbackURL(), Address: invoicesuite.BTCDest})
	require.NoError(t, err)
	listed = nil
	for inv, err := range desk.List(ctx, nil) {
		require.NoError(t, err)
		listed = append(listed, inv.ID)
	}
	assert.Equal(t, fresh.ID, listed[0])
	assert.Len(t, listed, 7)
}
