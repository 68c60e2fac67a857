package needs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// AxeCore is the axe-core release the accessibility checks run.
var AxeCore = Package{
	Name:      "axe-core",
	Version:   "4.14.1",
	Integrity: "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
}

// AxeViolation is one rule axe-core found broken, with the HTML of the
// elements that break it.
type AxeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"` // "minor", "moderate", "serious" or "critical"
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

var axeSource struct {
	sync.Mutex
	js string
}

// Axe runs axe-core ([AxeCore], see [NPM]: skipped when it cannot be had,
// failed under CI=true) on the page in b's tab, injected through the
// DevTools protocol (the page's Content-Security-Policy does not apply
// to it), and returns the serious and critical violations. Minor and
// moderate ones are logged. The test fails when axe did not run.
func Axe(tb testing.TB, b *Browser) []AxeViolation {
	tb.Helper()
	src := axeScript(tb)
	Run(tb, b, chromedp.Evaluate[chromedp.Void](src))
	all := Run(tb, b, chromedp.Evaluate[[]AxeViolation](`axe.run(document, {resultTypes: ['violations']}).then(function (r) {
		return r.violations.map(function (v) { return {id: v.id, impact: v.impact || '', help: v.help, nodes: v.nodes.map(function (n) { return n.html; })}; });
	})`, chromedp.EvalAwaitPromise))
	if n := Eval[int](tb, b, `axe.getRules().length`); n == 0 {
		tb.Fatal("axe-core ran without rules")
	}
	var serious []AxeViolation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			serious = append(serious, v)
		} else {
			tb.Logf("axe %s (%s): %s", v.ID, v.Impact, v.Help)
		}
	}
	return serious
}

// axeScript returns axe.min.js of AxeCore, read once per test binary.
func axeScript(tb testing.TB) string {
	tb.Helper()
	axeSource.Lock()
	defer axeSource.Unlock()
	if axeSource.js == "" {
		b, err := os.ReadFile(filepath.Join(NPM(tb, AxeCore), "axe.min.js"))
		if err != nil {
			tb.Fatal(err)
		}
		axeSource.js = string(b)
	}
	return axeSource.js
}
