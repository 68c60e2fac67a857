// Package skipper is a test package for needs' own tests: its tests skip
// for want of PostgreSQL and of an npm package, one skips for another
// reason, and some pass. needs_test.go runs it with go test.
package skipper

import (
	"os"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/needs"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

func TestPasses(t *testing.T) {}

func TestPostgreSQLOne(t *testing.T) { needs.PostgreSQL(t) }

func TestPostgreSQLTwo(t *testing.T) { needs.PostgreSQL(t) }

func TestSubtests(t *testing.T) {
	t.Run("passes", func(t *testing.T) {})
	t.Run("postgres", func(t *testing.T) { needs.PostgreSQL(t) })
	t.Run("npm", func(t *testing.T) {
		needs.NPM(t, needs.Package{Name: "left-pad", Version: "1.3.0",
			Integrity: "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQGinBN9yTQT3bFlCBy/aVx2HrNcqQGsdot8ghrjyrvMCoEA=="})
	})
}

func TestParallel(t *testing.T) {
	for range 3 {
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			needs.PostgreSQL(t)
		})
	}
}

func TestSkipsForAnotherReason(t *testing.T) { t.Skip("not a missing need") }
