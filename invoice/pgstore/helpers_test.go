package pgstore_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
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
	return needs.TableName(tb, db, "inv_", 20, "_changes", "_callbacks", "_effects")
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
