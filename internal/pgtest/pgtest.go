// Package pgtest tells whoever runs the tests that the PostgreSQL tests did
// not run, and how to run them. "go test ./..." shows nothing of a passing
// package but its "ok" line, so a skip message alone is only seen with -v.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// EnvDSN names the environment variable holding the test database URL.
const EnvDSN = "CRYPTAPI_TEST_DATABASE_URL"

// HowToRun says how to start a throwaway server for the tests.
const HowToRun = `from the module root: eval "$(bash .ci/postgres.sh start)", then ` +
	`go test -race ./...; stop the server with: bash .ci/postgres.sh stop "$CRYPTAPI_TEST_PGDIR"`

// skipped counts the tests skipped for want of a database.
var skipped atomic.Int32

// DSN returns the test database URL. Without one, the test is skipped,
// except when the environment variable CI is "true": there it fails, so
// that CI cannot pass without running the database tests.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("CI must run the PostgreSQL tests: set " + EnvDSN + ", " + HowToRun)
		}
		skipped.Add(1)
		tb.Skip("PostgreSQL tests skipped: set " + EnvDSN + ", " + HowToRun)
	}
	return dsn
}

// Main runs the tests of package pkg and, when some were skipped for want
// of a database, says so on the terminal (or on stderr without one, which
// go test shows with -v or when the package fails). It returns the exit
// status for os.Exit.
func Main(m *testing.M, pkg string) int {
	code := m.Run()
	if n := skipped.Load(); n > 0 {
		w := io.Writer(os.Stderr)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer tty.Close()
			w = tty
		}
		fmt.Fprintf(w, "NOTE %s: %d PostgreSQL tests did not run (%s is unset). To run them, %s\n", pkg, n, EnvDSN, HowToRun)
	}
	return code
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
