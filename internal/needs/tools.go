package needs

import (
	"os/exec"
	"testing"
)

// Chromium returns the path of Chromium ("chromium", or Ubuntu's
// "chromium-browser", on PATH). Without it the test is skipped (it fails
// under CI=true).
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(tb, "Chromium", "no chromium on PATH", "install it (Debian: apt-get install -y chromium)")
	return ""
}

// Node returns the path of node. Without it the test is skipped (it
// fails under CI=true).
func Node(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(tb, "node", "no node on PATH", "install Node.js 18 or later (Debian: apt-get install -y nodejs)")
	}
	return p
}
