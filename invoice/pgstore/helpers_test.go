package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/pgtest"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, "invoice/pgstore")) }

// testDSN returns the test database URL. Without one, tests are skipped
// (and TestMain says so), except under CI, where they fail.
func testDSN(tb testing.TB) string {
	tb.Helper()
	return pgtest.DSN(tb)
}

// openDB opens a pool of its own, as one replica would, closed at cleanup.
func openDB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(tb, err)
	db.SetMaxOpenConns(6)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// tableName returns a table name unique to this test and run, and drops
// its tables at cleanup.
func tableName(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	short := nonIdent.ReplaceAllString(strings.ToLower(tb.Name()), "_")
	if len(short) > 20 {
		short = short[len(short)-20:]
	}
	name := "inv_" + strings.ToLower(rand.Text()[:8]) + "_" + strings.Trim(short, "_")
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, t := range []string{name, name + "_changes", name + "_callbacks", name + "_effects"} {
			if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "`+t+`"`); err != nil {
				tb.Errorf("drop %s: %v", t, err)
			}
		}
	})
	return name
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
