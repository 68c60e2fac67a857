package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// Environment of the browser tests.
const (
	// screenshotsEnv names the directory the screenshots are saved in
	// (default: a temporary directory of the test).
	screenshotsEnv = "CRYPTAPI_SCREENSHOTS_DIR"
	// docScreenshotEnv, set to 1, writes docs/payment-page.png, the
	// README's screenshot.
	docScreenshotEnv = "CRYPTAPI_UPDATE_SCREENSHOT"
)

const howToRunBrowser = "install Chromium (Debian: apt-get install -y chromium) and run: go test ./examples/shop"

// chromium returns the browser's path. Without one the test is skipped,
// except under CI, where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must run the browser tests: Chromium not found; " + howToRunBrowser)
	}
	t.Skip("browser tests skipped: Chromium not found; " + howToRunBrowser)
	return ""
}

// browser starts a headless Chromium with a fresh profile and no
// network of its own, and records what its pages report: console errors
// and warnings, uncaught exceptions, browser log entries (where Chromium
// reports Content-Security-Policy violations) and securitypolicyviolation
// events.
type browser struct {
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	// Chromium's own temporary files (its singleton socket among them) go
	// to a directory removed with the test, not to the user's TMPDIR. Its
	// path is kept short: a unix socket path has at most 107 bytes.
	tmp, err := os.MkdirTemp("", "cr")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
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
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	b := &browser{ctx: ctx}
	// The listener is added through the DevTools protocol to every
	// document before its own scripts; the page's CSP does not apply to it.
	const listen = `document.addEventListener('securitypolicyviolation', function (e) {
		(window.__cspViolations = window.__cspViolations || []).push(e.violatedDirective + ' ' + e.blockedURI);
		console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI);
	});`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: listen})
			return err
		}),
		chromedp.EmulateViewport(360, 800),
	))
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

func (b *browser) report(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

func (b *browser) reported() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// limit bounds one step of a test (a wait that never ends fails it).
func (b *browser) limit(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.limit(t), steps...))
}

func runIn[T any](t *testing.T, b *browser, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.limit(t), a)
	require.NoError(t, err)
	return v
}

func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	return runIn(t, b, chromedp.Evaluate[T](expr))
}

// waitFor waits until the page's expression is true.
func (b *browser) waitFor(t *testing.T, expr string) {
	t.Helper()
	_, err := chromedp.Run(b.limit(t), chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond)))
	require.NoError(t, err, expr)
}

// text is the text of the element sel selects. It is read in one
// evaluation in the page, so that the page's own updates between finding
// the element and reading it cannot invalidate a node handle.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	r := eval[[]string](t, b, fmt.Sprintf(`(function () { var e = document.querySelector(%q); return e ? [e.textContent] : []; })()`, sel))
	require.Len(t, r, 1, "no element %s", sel)
	return strings.TrimSpace(r[0])
}

// attr is the attribute name of the element sel selects, read in one
// evaluation like text.
func (b *browser) attr(t *testing.T, sel, name string) string {
	t.Helper()
	r := eval[[]string](t, b, fmt.Sprintf(`(function () { var e = document.querySelector(%q); return e && e.hasAttribute(%q) ? [e.getAttribute(%q)] : []; })()`, sel, name, name))
	require.Len(t, r, 1, "%s[%s]", sel, name)
	return r[0]
}

// screenshot saves the page as name in the artifacts directory and
// returns the PNG.
func (b *browser) screenshot(t *testing.T, dir, name string) []byte {
	t.Helper()
	png := runIn(t, b, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	return png
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// testShop is the demo shop on the fake service with a fake clock,
// served on loopback.
type testShop struct {
	*shop
	clock *cryptapitest.FakeClock
	fake  *cryptapitest.Server
	url   string
}

func startTestShop(t *testing.T) *testShop {
	t.Helper()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	fake := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	t.Cleanup(fake.Close)
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	opts, err := fakeOptions(fake, clock, base)
	require.NoError(t, err)
	opts.pageOptions = []invoice.PageOption{invoice.WithPollInterval(200 * time.Millisecond)}
	s, err := newShop(opts)
	require.NoError(t, err)
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(ts.Close)
	return &testShop{shop: s, clock: clock, fake: fake, url: base}
}

// panel presses a developer panel button for invoice id, as the
// developer's browser would.
func (s *testShop) panel(t *testing.T, id, action string) {
	t.Helper()
	resp, err := noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {action}})
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "%s: %s", action, body)
}

func (s *testShop) get(t *testing.T, id string) *invoice.Invoice {
	t.Helper()
	inv, err := s.desk.Get(context.Background(), id)
	require.NoError(t, err)
	return inv
}

func fetchQR(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, u)
	img, _, err := image.Decode(resp.Body)
	require.NoError(t, err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText()
}

const (
	statusIs    = `document.getElementById('invoice').getAttribute('data-status') === %q`
	exceptionIs = `document.getElementById('invoice').getAttribute('data-exception') === %q`
)

// buy checks out product in the shop and returns the invoice ID of the
// payment page the browser lands on.
func buy(t *testing.T, b *browser, s *testShop, product string) string {
	t.Helper()
	b.do(t,
		chromedp.Navigate(s.url+"/"),
		chromedp.Click(chromedp.CSS("#buy-"+product)),
		chromedp.WaitReady(chromedp.CSS("#invoice")),
	)
	loc := runIn(t, b, chromedp.Location())
	require.True(t, strings.HasPrefix(loc, s.url+"/pay/"), loc)
	return strings.TrimPrefix(loc, s.url+"/pay/")
}

func TestPaymentPageInARealBrowser(t *testing.T) {
	b := newBrowser(t)
	s := startTestShop(t)
	dir := artifactsDir(t)
	t.Logf("screenshots in %s", dir)

	// A customer buys a T-shirt and sees what to pay.
	id := buy(t, b, s, "tee")
	inv := s.get(t, id)
	b.waitFor(t, fmt.Sprintf(statusIs, "new"))
	assert.Equal(t, inv.Due.String(), b.text(t, "#amount"))
	assert.Equal(t, inv.AddressIn, b.text(t, "#address"))
	assert.Equal(t, "≈ 25.00 USD", b.text(t, "[data-field=due_fiat]"))
	assert.Contains(t, b.text(t, ".warning"), "Send at least 5 USDT")
	src := b.attr(t, `img[data-src="qr_url"]`, "src")
	pageURL, _ := url.Parse(s.url + "/pay/" + id)
	qr, _ := pageURL.Parse(src)
	assert.Equal(t, inv.PaymentURI, fetchQR(t, qr.String()), "the QR code is the payment URI")
	src = b.attr(t, `img[data-src="qr_address_url"]`, "src")
	qr, _ = pageURL.Parse(src)
	assert.Equal(t, "tron:"+inv.AddressIn, fetchQR(t, qr.String()), "the second QR code has no amount")
	altsOK := eval[bool](t, b, `Array.from(document.images).length === 2 && Array.from(document.images).every(function (i) { return i.alt.trim() !== '' && i.complete && i.naturalWidth > 0; })`)
	assert.True(t, altsOK, "both QR images load and have alt text")
	copyShown := eval[bool](t, b, `Array.from(document.querySelectorAll('button[data-copy]')).every(function (x) { return !x.hidden; })`)
	assert.True(t, copyShown, "the script shows the copy buttons")
	fits := eval[bool](t, b, `document.documentElement.scrollWidth <= 360`)
	assert.True(t, fits, "no horizontal scrolling at 360 px")
	png := b.screenshot(t, dir, "1-new.png")
	if os.Getenv(docScreenshotEnv) == "1" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "payment-page.png"), png, 0o644))
	}
	t.Run("accessibility", func(t *testing.T) { checkAccessibility(t, b) })

	// The page is not reloaded from here on: a mark set now must survive.
	eval[string](t, b, `window.__samePage = 'yes'`)

	// Half is paid: the page shows the remainder by itself.
	s.panel(t, id, actPartial)
	b.waitFor(t, fmt.Sprintf(exceptionIs, "paid_partial"))
	inv = s.get(t, id)
	require.Equal(t, invoice.ExceptionPaidPartial, inv.Exception)
	b.waitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, inv.Due.String()))
	assert.Equal(t, inv.Remaining.StringFixed(2), b.text(t, "[data-field=remaining]"))
	assert.Equal(t, "Partly paid: please send the remainder", b.text(t, "[data-field=headline]"))
	src = b.attr(t, `img[data-src="qr_url"]`, "src")
	qr, _ = pageURL.Parse(src)
	assert.Equal(t, inv.PaymentURI, fetchQR(t, qr.String()), "the QR code asks for the remainder")
	b.screenshot(t, dir, "2-partial.png")

	// The rest is paid and confirmed: the page turns to settled.
	s.panel(t, id, actConfirm)
	s.panel(t, id, actFull)
	s.panel(t, id, actConfirm)
	b.waitFor(t, fmt.Sprintf(statusIs, "settled"))
	assert.Equal(t, invoice.StatusSettled, s.get(t, id).Status)
	assert.Equal(t, "Paid in full. Thank you!", b.text(t, "[data-field=headline]"))
	same := eval[string](t, b, `window.__samePage`)
	assert.Equal(t, "yes", same, "settled without a reload")
	payHidden := eval[bool](t, b, `document.querySelector('section.pay').hidden && !document.querySelector('[data-show=show_return]').hidden`)
	assert.True(t, payHidden, "nothing left to pay; the return link is shown")
	b.screenshot(t, dir, "3-settled.png")
	t.Run("accessibility settled", func(t *testing.T) { checkAccessibility(t, b) })

	// Another order is left to expire: the open page turns to expired.
	id2 := buy(t, b, s, "mug")
	b.waitFor(t, fmt.Sprintf(statusIs, "new"))
	eval[string](t, b, `window.__samePage = 'yes'`)
	s.clock.Advance(31 * time.Minute)
	b.waitFor(t, fmt.Sprintf(statusIs, "expired"))
	assert.Equal(t, invoice.StatusNew, s.get(t, id2).Status, "the page shows the passed deadline before Tick stores it")
	_, err := s.desk.Tick(context.Background())
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusExpired, s.get(t, id2).Status)
	assert.Equal(t, "This invoice has expired", b.text(t, "[data-field=headline]"))
	same = eval[string](t, b, `window.__samePage`)
	assert.Equal(t, "yes", same, "expired without a reload")
	b.screenshot(t, dir, "4-expired.png")

	// Nothing the pages did broke their policy.
	violations := eval[[]string](t, b, `window.__cspViolations || []`)
	assert.Empty(t, violations)
	assert.Empty(t, b.reported(), "console errors, exceptions or CSP violations")

	// Without JavaScript, the page shows the state it was rendered with,
	// and a reload shows the current one.
	b.do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	id3 := buy(t, b, s, "hoodie")
	assert.Equal(t, "new", b.attr(t, "#invoice", "data-status"))
	assert.Equal(t, "", b.attr(t, `button[data-copy="address"]`, "hidden"), "no copy button without the script")
	s.panel(t, id3, actFull)
	s.panel(t, id3, actConfirm)
	require.Equal(t, invoice.StatusSettled, s.get(t, id3).Status)
	assert.Equal(t, "new", b.attr(t, "#invoice", "data-status"), "no script, no update")
	b.do(t, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#invoice")))
	assert.Equal(t, "settled", b.attr(t, "#invoice", "data-status"), "a reload shows the current state")
	b.screenshot(t, dir, "5-settled-without-javascript.png")
	b.do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		return err
	}))

	// And the detector does see a violation: an image from elsewhere.
	eval[bool](t, b, `(function () { var i = document.createElement('img'); i.alt = 'x'; i.src = 'http://127.0.0.2:9/x.png'; document.body.appendChild(i); return true; })()`)
	b.waitFor(t, `(window.__cspViolations || []).length === 1`)
	assert.NotEmpty(t, b.reported(), "the violation is reported")
}

// checkAccessibility runs axe-core, installed from npm into a temporary
// directory, in the browser's current page, injected through the
// DevTools protocol (the page's CSP does not apply to it), and fails on
// serious or critical violations.
func checkAccessibility(t *testing.T, b *browser) {
	src := axeSource(t)
	runIn(t, b, chromedp.Evaluate[chromedp.Void](src))
	type violation struct {
		ID     string   `json:"id"`
		Impact string   `json:"impact"`
		Help   string   `json:"help"`
		Nodes  []string `json:"nodes"`
	}
	res := runIn(t, b, chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ['violations']}).then(function (r) {
		return r.violations.map(function (v) { return {id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(function (n) { return n.html; })}; });
	})`, chromedp.EvalAwaitPromise))
	for _, v := range res {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe %s (%s): %s: %q", v.ID, v.Impact, v.Help, v.Nodes)
		} else {
			t.Logf("axe %s (%s): %s", v.ID, v.Impact, v.Help)
		}
	}
	n := eval[int](t, b, `axe.getRules().length`)
	assert.Positive(t, n, "axe ran with its rules")
}

var axe struct {
	once sync.Once
	src  string
	err  error
}

// axeSource installs axe-core with npm, once per test binary.
func axeSource(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the accessibility check: npm not found (Debian: apt-get install -y npm)")
		}
		t.Skip("accessibility check skipped: npm not found")
	}
	axe.once.Do(func() {
		dir, err := os.MkdirTemp("", "axe-core-")
		if err != nil {
			axe.err = err
			return
		}
		cmd := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "axe-core@4")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			axe.err = fmt.Errorf("npm install axe-core: %v: %s", err, out.String())
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axe.src, axe.err = string(b), err
		_ = os.RemoveAll(dir)
	})
	require.NoError(t, axe.err)
	return axe.src
}
