// Package needs gives tests what they need from the machine (a PostgreSQL
// database, Chromium, node, an npm package at a pinned version), and says
// so when it is missing.
//
// Each function returns what the test needs, or, when it is missing:
//   - under CI=true, fails the test: CI cannot pass without running it;
//   - elsewhere, skips the test with a message saying what is missing and
//     how to make the test run, and counts it.
//
// A package whose tests use it runs them through [Main] in its TestMain,
// which, when tests were skipped, prints one note for the package: how
// many tests did not run, for want of what, and how to make them run.
// "go test ./..." hides everything a passing package prints, so Main
// also writes the note where the person who ran go test reads it (see
// [Main]).
package needs

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// EnvCI names the environment variable that, set to "true", makes a
// missing need fail the test instead of skipping it.
const EnvCI = "CI"

// CI reports whether the tests run under CI=true, where every need must
// be met.
func CI() bool { return os.Getenv(EnvCI) == "true" }

// mainRuns is set by Main: without it nobody would hear of the skips.
var mainRuns atomic.Bool

// missingNeed is one kind of need that made tests skip, with the count of
// tests it skipped.
type missingNeed struct {
	what  string // "PostgreSQL", "Chromium", "npm package axe-core@4.14.1"
	why   string // why it is missing (the first test's reason)
	how   string // how to make the tests run
	count int
}

var skips struct {
	sync.Mutex
	needs []*missingNeed // in the order first seen
}

// missing fails tb under CI=true, else records the skip and skips tb.
// what names the need, why says why it is missing, how how to provide it.
func missing(tb testing.TB, what, why, how string) {
	tb.Helper()
	if CI() {
		tb.Fatalf("CI=true: this test must run, but it needs %s: %s. To run it: %s", what, why, how)
		return
	}
	if !mainRuns.Load() {
		tb.Fatalf("this test needs %s (%s), and would be skipped without a word: "+
			"the package's TestMain must run its tests through needs.Main (func TestMain(m *testing.M) { os.Exit(needs.Main(m)) })", what, why)
		return
	}
	record(what, why, how)
	tb.Skipf("needs %s: %s. To run it: %s", what, why, how)
}

func record(what, why, how string) {
	skips.Lock()
	defer skips.Unlock()
	for _, n := range skips.needs {
		if n.what == what {
			n.count++
			return
		}
	}
	skips.needs = append(skips.needs, &missingNeed{what: what, why: why, how: how, count: 1})
}

// Main runs the package's tests and returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }
//
// When tests were skipped for want of what they need, it prints one note:
// how many tests did not run (each skipped test or subtest counts once),
// for want of what, and how to make them run. The note goes to the test
// binary's standard output, which go test shows with -v and -json (as
// IDEs run it) and when the package fails. When go test hides that output
// (a passing package in "go test ./..." without -v), Main also writes the
// note where go test's own output goes (see tell): a terminal, a pipe
// such as "| tee log", or a file such as "> log 2>&1", in its place among
// go test's lines.
func Main(m *testing.M) int {
	mainRuns.Store(true)
	code := m.Run()
	text := note(packageName())
	if text == "" {
		return code
	}
	fmt.Print(text)
	if code == 0 && !verbose() {
		tell(text)
	}
	return code
}

// note returns the note Main prints for package pkg, or "" when no test
// was skipped for want of what it needs.
func note(pkg string) string {
	skips.Lock()
	defer skips.Unlock()
	total := 0
	for _, n := range skips.needs {
		total += n.count
	}
	if total == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "NOTE %s: %d %s did not run, for want of what %s:\n", pkg, total, plural(total, "test", "tests"), plural(total, "it needs", "they need"))
	for _, n := range skips.needs {
		fmt.Fprintf(&b, "  %d %s %s: %s. To run %s: %s\n", n.count, plural(n.count, "needs", "need"), n.what, n.why, plural(n.count, "it", "them"), n.how)
	}
	fmt.Fprintf(&b, "  go test -v ./%s shows which; under CI=true they fail instead. go test caches this result: once what is missing is there, add -count=1.\n", pkg)
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verbose reports whether go test shows the test binary's output as it
// is: with -v, and with -json (-test.v=test2json).
func verbose() bool {
	f := flag.Lookup("test.v")
	return f != nil && f.Value.String() != "false"
}

// packageName is the directory of the package under test relative to the
// module root (go test runs a test binary in its package's directory),
// or the working directory's name outside a module.
func packageName() string {
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Base(os.Args[0])
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				break
			}
			return filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return filepath.Base(wd)
}
