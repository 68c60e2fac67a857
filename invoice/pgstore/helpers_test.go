package pgstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// testDSN returns the test database URL. Without one, tests are skipped
// (and needs.Main says so), except under CI, where they fail.
func testDSN(tb testing.TB) string {
	tb.Helper()
	return needs.PostgreSQL(tb)
}

// openDB opens a pool of its own, as one replica would, closed at cleanup.
func openDB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	return needs.OpenDB(tb, dsn, 6)
}

// tableName returns a table name unique to this test and run, and drops
// its tables at cleanup.
func tableName(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	return needs.TableName(tb, db, "inv_", 20, "_changes", "_keys", "_callbacks", "_effects")
}

// newStore returns a migrated Store on db over table.
func newStore(tb testing.TB, db *sql.DB, table string) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(tb, err)
	require.NoError(tb, s.Migrate(context.Background()))
	return s
}

// openDBNoConnect opens a pool that is never used (New does no I/O).
func openDBNoConnect(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none")
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// bulkInsert adds n copies of r to table, as the store would index them,
// with IDs prefix0, prefix1, ... and creation times at at + i seconds,
// in one statement.
func bulkInsert(tb testing.TB, db *sql.DB, table string, r *invoice.Record, prefix string, n int, at time.Time) {
	tb.Helper()
	b, err := json.Marshal(r)
	require.NoError(tb, err)
	var tick any
	if t := r.TickAt(); !t.IsZero() {
		tick = t
	}
	_, err = db.ExecContext(context.Background(), `INSERT INTO "`+table+`"
	(id, order_id, status, version, record, invoice_created_at, exception, open_order, tick_at, pending)
SELECT $1 || g, '', $2, $3,
	jsonb_set(jsonb_set($4::jsonb, '{invoice,id}', to_jsonb($1 || g)), '{invoice,created_at}',
		to_jsonb(to_char(($5::timestamptz + g * interval '1 second') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))),
	$5::timestamptz + g * interval '1 second', $6, NULL, $7::timestamptz, false
FROM generate_series(0, $8::int - 1) AS g`,
		prefix, string(r.Invoice.Status), r.Version(), b, at, string(r.Invoice.Exception), tick, n)
	require.NoError(tb, err)
	_, err = db.ExecContext(context.Background(), `ANALYZE "`+table+`"`)
	require.NoError(tb, err)
}
