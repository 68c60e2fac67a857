package needs

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Browser is a running headless Chromium with one tab, for one test. It
// records what its pages report: console errors and warnings, uncaught
// exceptions, browser log entries (where Chromium reports
// Content-Security-Policy violations) and securitypolicyviolation events
// (also kept in the page as window.__cspViolations).
type Browser struct {
	ctx context.Context

	mu      sync.Mutex
	reports []string
}

// StepTimeout bounds each step of Browser's helpers: a wait that never
// ends fails the test.
const StepTimeout = 30 * time.Second

// NewBrowser starts a headless Chromium (see [Chromium]: skipped when
// missing, failed under CI=true) with a fresh profile in a temporary
// directory, no sandbox, no GPU, no QUIC, no first-run, sync, component
// updates or background networking of its own, and stops it at cleanup.
func NewBrowser(tb testing.TB) *Browser {
	tb.Helper()
	path := Chromium(tb)
	// Chromium's own temporary files (its singleton socket among them) go
	// to a directory removed with the test, not to the user's TMPDIR. Its
	// path is kept short: a unix socket path has at most 107 bytes.
	tmp, err := os.MkdirTemp("", "cr")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(tmp) })
	// The listener is added through the DevTools protocol to every
	// document before its own scripts; the page's CSP does not apply to it.
	const listen = `document.addEventListener('securitypolicyviolation', function (e) {
		(window.__cspViolations = window.__cspViolations || []).push(e.violatedDirective + ' ' + e.blockedURI);
		console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI);
	});`
	// A loaded machine (several test binaries starting browsers at once)
	// can make Chromium miss its start-up deadline: it is tried three
	// times, each in a profile of its own.
	var ctx context.Context
	for attempt := 1; ; attempt++ {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Env("TMPDIR="+tmp),
			chromedp.Flag("headless", true),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-quic", true),
			chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(tb.TempDir()),
		)
		var cancel context.CancelFunc
		ctx, cancel = chromedp.NewContext(alloc)
		// The first action starts the browser, which lives as long as the
		// context it runs in: the tab's own, not one with a timeout.
		err = chromedp.Do(ctx,
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				if _, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{}); err != nil {
					return err
				}
				_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: listen})
				return err
			}),
		)
		if err == nil {
			tb.Cleanup(cancelAlloc)
			tb.Cleanup(cancel)
			break
		}
		cancel()
		cancelAlloc()
		if attempt == 3 {
			tb.Fatalf("start Chromium (%s), three times: %v", path, err)
		}
		tb.Logf("start Chromium (%s), attempt %d: %v; trying again", path, attempt, err)
	}
	b := &Browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				b.report(m.String())
			}
		}
	}()
	return b
}

func (b *Browser) report(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reports = append(b.reports, s)
}

// Reported returns what the pages reported so far: console errors and
// warnings, exceptions, CSP violations.
func (b *Browser) Reported() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.reports...)
}

// step is the tab's context bounded by StepTimeout.
func (b *Browser) step(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
	tb.Cleanup(cancel)
	return ctx
}

// Do runs the steps in the tab, and fails the test on an error.
func (b *Browser) Do(tb testing.TB, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	if err := chromedp.Do(b.step(tb), steps...); err != nil {
		tb.Fatal(err)
	}
}

// Run runs a in b's tab and returns its value, and fails the test on an
// error.
func Run[T any](tb testing.TB, b *Browser, a chromedp.Action[T]) T {
	tb.Helper()
	v, err := chromedp.Run(b.step(tb), a)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Eval evaluates the JavaScript expression expr in b's page.
func Eval[T any](tb testing.TB, b *Browser, expr string) T {
	tb.Helper()
	return Run(tb, b, chromedp.Evaluate[T](expr))
}

// WaitFor waits until the page's expression expr is truthy. It is
// evaluated from the test every 50 ms, not by the page's own timers
// (which stop when a test turns the page's scripts off), and an
// evaluation that fails, as one in a page being left does, is tried
// again in the next page; after StepTimeout the test fails, saying where
// the browser is.
func (b *Browser) WaitFor(tb testing.TB, expr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
	defer cancel()
	var last error
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			wctx, wcancel := context.WithTimeout(b.ctx, 5*time.Second)
			where, _ := chromedp.Run(wctx, chromedp.Evaluate[string](`location.href + ' ' + document.body.innerText`))
			wcancel()
			tb.Fatalf("waiting for %s: %v (at %s)", expr, cmp.Or(last, ctx.Err()), where)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Text returns the text of the element sel selects, trimmed. It is read in
// one evaluation in the page, so that the page's own updates between
// finding the element and reading it cannot invalidate a node handle.
func (b *Browser) Text(tb testing.TB, sel string) string {
	tb.Helper()
	r := Eval[[]string](tb, b, fmt.Sprintf(`(function () { var e = document.querySelector(%q); return e ? [e.textContent] : []; })()`, sel))
	if len(r) != 1 {
		tb.Fatalf("no element %s", sel)
	}
	return strings.TrimSpace(r[0])
}

// Attr returns the attribute name of the element sel selects, read in one
// evaluation like Text; the test fails when there is none.
func (b *Browser) Attr(tb testing.TB, sel, name string) string {
	tb.Helper()
	r := Eval[[]string](tb, b, fmt.Sprintf(`(function () { var e = document.querySelector(%q); return e && e.hasAttribute(%q) ? [e.getAttribute(%q)] : []; })()`, sel, name, name))
	if len(r) != 1 {
		tb.Fatalf("no attribute %s[%s]", sel, name)
	}
	return r[0]
}

// Screenshot saves the whole page as PNG file name in dir and returns it.
func (b *Browser) Screenshot(tb testing.TB, dir, name string) []byte {
	tb.Helper()
	png := Run(tb, b, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		tb.Fatal(err)
	}
	return png
}
