package needs

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkNote checks that out holds the note once, whole, before the
// package's ok line.
func checkNote(t *testing.T, how string, out []byte) {
	t.Helper()
	s := strings.ReplaceAll(string(out), "\r\n", "\n")
	notes := noteRE.FindAllStringIndex(s, -1)
	require.Len(t, notes, 1, "%s: one note:\n%s", how, s)
	ok := strings.Index(s, "ok  \tgithub.com/forwardpay/cryptapi-go/internal/needs/testdata/skipper\t")
	require.GreaterOrEqual(t, ok, 0, "%s: the ok line:\n%s", how, s)
	assert.Less(t, notes[0][0], ok, "%s: the note comes before the ok line", how)
	note := s[notes[0][0]:ok]
	assert.Contains(t, note, "  6 need PostgreSQL: CRYPTAPI_TEST_DATABASE_URL is unset. To run them: from the module root", how)
	assert.Contains(t, note, "  1 needs npm package left-pad@1.3.0", how)
	assert.Contains(t, note, "add -count=1.\n", how)
}

func TestNoteReachesThePerson(t *testing.T) {
	// intoFile runs go test with its output in a file that holds before,
	// opened with flag, and returns the file's content.
	intoFile := func(t *testing.T, before string, flag int) []byte {
		path := t.TempDir() + "/log"
		require.NoError(t, os.WriteFile(path, []byte(before), 0o644))
		f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o644)
		require.NoError(t, err)
		cmd := skipper(t)
		cmd.Stdout, cmd.Stderr = f, f
		require.NoError(t, cmd.Run())
		require.NoError(t, f.Close())
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return b
	}
	t.Run("file, as with > log 2>&1", func(t *testing.T) {
		t.Parallel()
		checkNote(t, "> log 2>&1", intoFile(t, "", os.O_TRUNC))
	})
	t.Run("file opened for appending, as with >> log", func(t *testing.T) {
		t.Parallel()
		b := intoFile(t, "before\n", os.O_APPEND)
		assert.True(t, bytes.HasPrefix(b, []byte("before\n")))
		checkNote(t, ">> log", b)
	})
	t.Run("pipe, as with | tee log", func(t *testing.T) {
		t.Parallel()
		cmd := skipper(t)
		out, err := cmd.CombinedOutput() // a pipe
		require.NoError(t, err)
		checkNote(t, "| tee log", out)
	})
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		script, err := exec.LookPath("script")
		require.NoError(t, err, "script (util-linux) gives the command a terminal")
		cmd := skipper(t)
		line := strings.Join(cmd.Args, " ")
		tty := exec.Command(script, "-qec", line, "/dev/null")
		tty.Env = cmd.Env
		tty.Dir = cmd.Dir
		out, err := tty.CombinedOutput()
		require.NoError(t, err, "%s", out)
		checkNote(t, "terminal", out)
	})
	t.Run("-v shows it once", func(t *testing.T) {
		t.Parallel()
		out, err := skipper(t, "-v").CombinedOutput()
		require.NoError(t, err)
		checkNote(t, "-v", out)
		assert.Contains(t, string(out), "--- SKIP: TestPostgreSQLOne")
	})
}

// The fallback when the kernel does not let the note share go test's
// descriptor: only descriptors a new open file description can write to
// safely are opened.
func TestOpenFDWritesOnlyWhereItIsSafe(t *testing.T) {
	dir := t.TempDir()
	check := func(f *os.File) *os.File {
		t.Helper()
		info, err := os.Stat("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
		require.NoError(t, err)
		return openFD("/proc/self", int(f.Fd()), info)
	}

	plain, err := os.OpenFile(dir+"/plain", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	defer plain.Close()
	assert.Nil(t, check(plain), "a file not opened for appending: go test's next line would overwrite the note")

	app, err := os.OpenFile(dir+"/append", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer app.Close()
	_, err = app.WriteString("go test's line\n")
	require.NoError(t, err)
	w := check(app)
	require.NotNil(t, w, "a file opened for appending")
	_, err = w.WriteString("note\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = app.WriteString("next line\n")
	require.NoError(t, err)
	b, err := os.ReadFile(dir + "/append")
	require.NoError(t, err)
	assert.Equal(t, "go test's line\nnote\nnext line\n", string(b))

	r, pw, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer pw.Close()
	w = check(pw)
	require.NotNil(t, w, "a pipe")
	_, err = w.WriteString("note\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	buf := make([]byte, 5)
	_, err = r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "note\n", string(buf))

	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.Nil(t, check(null), "a character device that is not a terminal")
}

func TestDupFDSharesTheOffset(t *testing.T) {
	path := t.TempDir() + "/log"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("first\n")
	require.NoError(t, err)
	dup := dupFD(os.Getpid(), int(f.Fd()))
	if dup == nil {
		t.Fatalf("pidfd_getfd of this process's own descriptor failed: %v", syscall.ENOSYS)
	}
	_, err = dup.WriteString("note\n")
	require.NoError(t, err)
	require.NoError(t, dup.Close())
	_, err = f.WriteString("next\n")
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first\nnote\nnext\n", string(b))
}
