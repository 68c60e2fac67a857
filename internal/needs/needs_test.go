package needs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// recordingTB records what a need does to a test instead of doing it;
// everything else goes to the real test.
type recordingTB struct {
	testing.TB
	fatals, skips []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skips = append(r.skips, fmt.Sprintf(format, args...))
}

// isolateSkips gives the test an empty record of skips and restores the
// package's own at cleanup, so that what the test records does not reach
// this package's note.
func isolateSkips(t *testing.T) {
	skips.Lock()
	saved := skips.needs
	skips.needs = nil
	skips.Unlock()
	t.Cleanup(func() {
		skips.Lock()
		skips.needs = saved
		skips.Unlock()
	})
}

func TestMissingSkipsAndCountsElsewhereAndFailsUnderCI(t *testing.T) {
	isolateSkips(t)
	t.Setenv(EnvDSN, "")

	t.Setenv(EnvCI, "")
	r := &recordingTB{TB: t}
	PostgreSQL(r)
	PostgreSQL(r)
	require.Len(t, r.skips, 2)
	assert.Empty(t, r.fatals)
	assert.Contains(t, r.skips[0], "needs PostgreSQL: CRYPTAPI_TEST_DATABASE_URL is unset. To run it: ")
	assert.Contains(t, r.skips[0], `eval "$(bash .ci/postgres.sh start)"`)
	text := note("some/pkg")
	assert.Contains(t, text, "NOTE some/pkg: 2 tests did not run, for want of what they need:\n")
	assert.Contains(t, text, "  2 need PostgreSQL: CRYPTAPI_TEST_DATABASE_URL is unset. To run them: from the module root")

	t.Setenv(EnvCI, "true")
	r = &recordingTB{TB: t}
	PostgreSQL(r)
	assert.Empty(t, r.skips, "under CI=true a missing need is never a skip")
	require.Len(t, r.fatals, 1)
	assert.Contains(t, r.fatals[0], "CI=true: this test must run, but it needs PostgreSQL")
	assert.Contains(t, note("some/pkg"), "NOTE some/pkg: 2 tests", "a failure is not counted as a skip")

	t.Setenv(EnvCI, "1")
	r = &recordingTB{TB: t}
	PostgreSQL(r)
	assert.Len(t, r.skips, 1, `only CI=true makes a missing need fail`)

	t.Setenv(EnvDSN, "postgres://x@127.0.0.1:1/db")
	r = &recordingTB{TB: t}
	assert.Equal(t, "postgres://x@127.0.0.1:1/db", PostgreSQL(r))
	assert.Empty(t, r.skips)
	assert.Empty(t, r.fatals)
}

func TestMissingWithoutMainFails(t *testing.T) {
	isolateSkips(t)
	t.Setenv(EnvCI, "")
	t.Setenv(EnvDSN, "")
	mainRuns.Store(false)
	t.Cleanup(func() { mainRuns.Store(true) })
	r := &recordingTB{TB: t}
	PostgreSQL(r)
	assert.Empty(t, r.skips, "a skip nobody would hear of")
	require.Len(t, r.fatals, 1)
	assert.Contains(t, r.fatals[0], "needs.Main")
	assert.Empty(t, note("x"))
}

func TestNoteSaysOneTestInTheSingular(t *testing.T) {
	isolateSkips(t)
	record("Chromium", "no chromium on PATH", "install it")
	assert.Equal(t, "NOTE a/b: 1 test did not run, for want of what it needs:\n"+
		"  1 needs Chromium: no chromium on PATH. To run it: install it\n"+
		"  go test -v ./a/b shows which; under CI=true they fail instead. go test caches this result: once what is missing is there, add -count=1.\n",
		note("a/b"))
}

// skipper runs go test on testdata/skipper, whose tests skip for want of
// PostgreSQL and of an npm package (the registry is a closed port), with
// args, and returns the command, ready to run.
func skipper(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "go test puts the go command on PATH")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/"
	require.NoError(t, ln.Close())
	a := []string{"test", "-count=1"}
	if raceEnabled {
		a = append(a, "-race") // the race build of the dependencies is in the build cache
	}
	cmd := exec.Command(goCmd, append(append(a, args...), "./testdata/skipper")...)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case EnvCI, EnvDSN, EnvNPMCache, "npm_config_registry", "npm_config_cache":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, EnvNPMCache+"="+t.TempDir(), "npm_config_registry="+closed, "npm_config_cache="+t.TempDir())
	return cmd
}

// noteRE matches the note's first line and captures its count.
var noteRE = regexp.MustCompile(`(?m)^NOTE internal/needs/testdata/skipper: (\d+) tests did not run, for want of what they need:$`)

// testEvent is one line of go test -json.
type testEvent struct {
	Action, Package, Test, Output string
}

func TestNoteCountIsTheNumberOfTestsSkippedForANeed(t *testing.T) {
	out, err := skipper(t, "-json").Output()
	require.NoError(t, err)
	outputs := map[string]string{}
	var skipped []string
	var pkgOutput strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var e testEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "every line of go test -json is JSON: %q", sc.Text())
		switch {
		case e.Action == "output" && e.Test == "":
			pkgOutput.WriteString(e.Output)
		case e.Action == "output":
			outputs[e.Test] += e.Output
		case e.Action == "skip" && e.Test != "":
			skipped = append(skipped, e.Test)
		}
	}
	forNeed := 0
	for _, name := range skipped {
		if strings.Contains(outputs[name], "needs PostgreSQL") || strings.Contains(outputs[name], "needs npm package") {
			forNeed++
		}
	}
	// 2 top-level PostgreSQL tests, 2 subtests of TestSubtests, 3 parallel
	// subtests; TestSkipsForAnotherReason is no missing need.
	assert.Equal(t, 7, forNeed, "skipped: %v", skipped)
	assert.Len(t, skipped, 8)
	notes := noteRE.FindAllStringSubmatch(pkgOutput.String(), -1)
	require.Len(t, notes, 1, "one note for the package in go test -json:\n%s", pkgOutput.String())
	assert.Equal(t, strconv.Itoa(forNeed), notes[0][1], "the note counts the tests skipped for a need")
	assert.Contains(t, pkgOutput.String(), "  6 need PostgreSQL: ")
	assert.Contains(t, pkgOutput.String(), "  1 needs npm package left-pad@1.3.0: npm pack left-pad@1.3.0 failed (is the npm registry reachable?): code ECONNREFUSED")
}

func TestUnderCIAMissingNeedFails(t *testing.T) {
	cmd := skipper(t)
	cmd.Env = append(cmd.Env, EnvCI+"=true")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	s := string(out)
	assert.Contains(t, s, "CI=true: this test must run, but it needs PostgreSQL: CRYPTAPI_TEST_DATABASE_URL is unset.")
	assert.Contains(t, s, "CI=true: this test must run, but it needs npm package left-pad@1.3.0")
	assert.Contains(t, s, "--- FAIL: TestPostgreSQLOne")
	assert.NotContains(t, s, "NOTE ", "nothing was skipped for a need")
	assert.Contains(t, s, "FAIL\tgithub.com/forwardpay/cryptapi-go/internal/needs/testdata/skipper")
}
