package needs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// EnvDSN names the environment variable holding the test database URL.
const EnvDSN = "CRYPTAPI_TEST_DATABASE_URL"

// howToRunPostgreSQL says how to start a throwaway server for the tests.
const howToRunPostgreSQL = `from the module root: eval "$(bash .ci/postgres.sh start)", then ` +
	`go test -race ./...; stop the server with: bash .ci/postgres.sh stop "$CRYPTAPI_TEST_PGDIR"`

// PostgreSQL returns the URL of the test database, from EnvDSN. Without
// one the test is skipped (it fails under CI=true).
func PostgreSQL(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		missing(tb, "PostgreSQL", EnvDSN+" is unset", howToRunPostgreSQL)
	}
	return dsn
}

// OpenDB opens a pool of its own on dsn, as one replica would, with at
// most maxOpen connections, and closes it at cleanup.
func OpenDB(tb testing.TB, dsn string, maxOpen int) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatalf("open %s: %v", EnvDSN, err)
	}
	db.SetMaxOpenConns(maxOpen)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// TableName returns a table name unique to this test and run: prefix, a
// random part and the last maxShort characters of the test's name. At
// cleanup it drops that table and the table named name+suffix for each
// suffix.
func TableName(tb testing.TB, db *sql.DB, prefix string, maxShort int, suffixes ...string) string {
	tb.Helper()
	short := nonIdent.ReplaceAllString(strings.ToLower(tb.Name()), "_")
	if len(short) > maxShort {
		short = short[len(short)-maxShort:]
	}
	name := prefix + strings.ToLower(rand.Text()[:8]) + "_" + strings.Trim(short, "_")
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range append([]string{""}, suffixes...) {
			if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "`+name+s+`"`); err != nil {
				tb.Errorf("drop %s: %v", name+s, err)
			}
		}
	})
	return name
}
