package main

import (
	"context"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/needs"
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

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// newBrowser is a headless Chromium (see needs.NewBrowser) with a phone's
// viewport.
func newBrowser(t *testing.T) *needs.Browser {
	t.Helper()
	b := needs.NewBrowser(t)
	b.Do(t, chromedp.EmulateViewport(360, 800))
	return b
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

func startTestShop(t *testing.T) *testShop { return startShopWith(t, nil) }

// startShopWith is startTestShop with options edited by edit.
func startShopWith(t *testing.T, edit func(*options)) *testShop {
	t.Helper()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	return startShopOn(t, newDemoFake(cryptapitest.WithClock(clock)), clock, edit)
}

// startShopOn is startShopWith on the fake fake, whose clock is clock.
func startShopOn(t *testing.T, fake *cryptapitest.Server, clock *cryptapitest.FakeClock, edit func(*options)) *testShop {
	t.Helper()
	t.Cleanup(fake.Close)
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	opts, err := fakeOptions(fake, clock, base)
	require.NoError(t, err)
	// The tests' shop takes one coin, as with -ticker trc20_usdt;
	// everyCoin gives the customer the choice.
	opts.coins, opts.wallets = []string{"trc20_usdt"}, map[string]string{"trc20_usdt": opts.wallets["trc20_usdt"]}
	opts.pageOptions = []invoice.PageOption{invoice.WithPollInterval(200 * time.Millisecond)}
	opts.log = slog.New(slog.DiscardHandler)
	if edit != nil {
		edit(&opts)
	}
	s, err := newShop(opts)
	require.NoError(t, err)
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(ts.Close)
	return &testShop{shop: s, clock: clock, fake: fake, url: base}
}

// everyCoin is the shop of `go run ./examples/shop`: the customer
// chooses among the demo's coins.
func everyCoin(o *options) { o.coins, o.wallets = demoCoins(o.fake) }

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
func buy(t *testing.T, b *needs.Browser, s *testShop, product string) string {
	t.Helper()
	b.Do(t,
		chromedp.Navigate(s.url+"/"),
		chromedp.Click(chromedp.CSS("#buy-"+product)),
		chromedp.WaitReady(chromedp.CSS("#invoice")),
	)
	// Its stylesheet and images too, before anything is measured (with
	// JavaScript off too: WaitFor asks from the test rather than waits in
	// the page).
	b.WaitFor(t, `document.readyState === 'complete'`)
	loc := needs.Run(t, b, chromedp.Location())
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
	b.WaitFor(t, fmt.Sprintf(statusIs, "new"))
	assert.Equal(t, inv.Due.String(), b.Text(t, "#amount"))
	assert.Equal(t, inv.AddressIn, b.Text(t, "#address"))
	assert.Equal(t, "≈ $25.00", b.Text(t, "[data-field=due_fiat]"))
	assert.Contains(t, b.Text(t, "[data-field=minimum_note]"), "Send at least 5 USDT")
	src := b.Attr(t, `img.qr-with`, "src")
	pageURL, _ := url.Parse(s.url + "/pay/" + id)
	qr, _ := pageURL.Parse(src)
	assert.Equal(t, inv.PaymentURI, fetchQR(t, qr.String()), "the QR code is the payment URI")
	src = b.Attr(t, `img.qr-bare`, "src")
	qr, _ = pageURL.Parse(src)
	assert.Equal(t, "tron:"+inv.AddressIn, fetchQR(t, qr.String()), "the second QR code has no amount")
	altsOK := needs.Eval[bool](t, b, `(function () { var q = Array.from(document.querySelectorAll('img.qr-with, img.qr-bare')); return q.length === 2 && q.every(function (i) { return i.alt.trim() !== '' && i.complete && i.naturalWidth > 0; }); })()`)
	assert.True(t, altsOK, "both QR images load and have alt text")
	assert.Equal(t, shopName, b.Text(t, "h1.shop"), "the shop's name")
	logoOK := needs.Eval[bool](t, b, `(function () { var l = document.querySelector('img.logo'); return l !== null && l.complete && l.naturalWidth === 96 && l.alt === ''; })()`)
	assert.True(t, logoOK, "the shop's mark, beside its name")
	copyShown := needs.Eval[bool](t, b, `Array.from(document.querySelectorAll('button[data-copy-value]')).every(function (x) { return getComputedStyle(x).visibility === 'visible'; })`)
	assert.True(t, copyShown, "the script shows the copy buttons")
	fits := needs.Eval[bool](t, b, `document.documentElement.scrollWidth <= 360`)
	assert.True(t, fits, "no horizontal scrolling at 360 px")
	png := b.Screenshot(t, dir, "1-new.png")
	if os.Getenv(docScreenshotEnv) == "1" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "payment-page.png"), png, 0o644))
	}
	t.Run("accessibility", func(t *testing.T) { checkAccessibility(t, b) })

	// The page is not reloaded from here on: a mark set now must survive.
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)

	// Half is paid: the page shows the remainder by itself.
	s.panel(t, id, actPartial)
	b.WaitFor(t, fmt.Sprintf(exceptionIs, "paid_partial"))
	inv = s.get(t, id)
	require.Equal(t, invoice.ExceptionPaidPartial, inv.Exception)
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, inv.Due.String()))
	assert.Equal(t, "$"+inv.Remaining.StringFixed(2), b.Text(t, "[data-field=remaining]"))
	assert.Equal(t, "Partly paid: please send the remainder", b.Text(t, "[data-field=headline]"))
	src = b.Attr(t, `img.qr-with`, "src")
	qr, _ = pageURL.Parse(src)
	assert.Equal(t, inv.PaymentURI, fetchQR(t, qr.String()), "the QR code asks for the remainder")
	b.Screenshot(t, dir, "2-partial.png")

	// The rest is paid and confirmed: the page turns to settled.
	s.panel(t, id, actConfirm)
	s.panel(t, id, actFull)
	s.panel(t, id, actConfirm)
	b.WaitFor(t, fmt.Sprintf(statusIs, "settled"))
	assert.Equal(t, invoice.StatusSettled, s.get(t, id).Status)
	assert.Equal(t, "Paid in full. Thank you!", b.Text(t, "[data-field=headline]"))
	same := needs.Eval[string](t, b, `window.__samePage`)
	assert.Equal(t, "yes", same, "settled without a reload")
	payHidden := needs.Eval[bool](t, b, `document.querySelectorAll('section.pay').length === 0 && document.querySelector('a.return') !== null`)
	assert.True(t, payHidden, "nothing left to pay; the return link is shown")
	b.Screenshot(t, dir, "3-settled.png")
	t.Run("accessibility settled", func(t *testing.T) { checkAccessibility(t, b) })

	// Another order is left to expire: the open page turns to expired.
	id2 := buy(t, b, s, "mug")
	b.WaitFor(t, fmt.Sprintf(statusIs, "new"))
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)
	s.clock.Advance(31 * time.Minute)
	b.WaitFor(t, fmt.Sprintf(statusIs, "expired"))
	assert.Equal(t, invoice.StatusNew, s.get(t, id2).Status, "the page shows the passed deadline before Tick stores it")
	_, err := s.desk.Tick(context.Background())
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusExpired, s.get(t, id2).Status)
	assert.Equal(t, "This invoice has expired", b.Text(t, "[data-field=headline]"))
	same = needs.Eval[string](t, b, `window.__samePage`)
	assert.Equal(t, "yes", same, "expired without a reload")
	b.Screenshot(t, dir, "4-expired.png")

	// Nothing the pages did broke their policy.
	violations := needs.Eval[[]string](t, b, `window.__cspViolations || []`)
	assert.Empty(t, violations)
	assert.Empty(t, b.Reported(), "console errors, exceptions or CSP violations")

	// Without JavaScript, the page shows the state it was rendered with,
	// and a reload shows the current one.
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	id3 := buy(t, b, s, "hoodie")
	assert.Equal(t, "new", b.Attr(t, "#invoice", "data-status"))
	assert.Equal(t, "hidden", needs.Eval[string](t, b, `getComputedStyle(document.querySelector('button[aria-label="Copy address"]')).visibility`), "no copy button without the script")
	s.panel(t, id3, actFull)
	s.panel(t, id3, actConfirm)
	require.Equal(t, invoice.StatusSettled, s.get(t, id3).Status)
	assert.Equal(t, "new", b.Attr(t, "#invoice", "data-status"), "no script, no update")
	b.Do(t, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#invoice")))
	assert.Equal(t, "settled", b.Attr(t, "#invoice", "data-status"), "a reload shows the current state")
	b.Screenshot(t, dir, "5-settled-without-javascript.png")
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		return err
	}))

	// And the detector does see a violation: an image from elsewhere.
	needs.Eval[bool](t, b, `(function () { var i = document.createElement('img'); i.alt = 'x'; i.src = 'http://127.0.0.2:9/x.png'; document.body.appendChild(i); return true; })()`)
	b.WaitFor(t, `(window.__cspViolations || []).length === 1`)
	assert.NotEmpty(t, b.Reported(), "the violation is reported")
}

// checkAccessibility runs axe-core (needs.Axe) in the browser's current
// page, and fails on serious or critical violations.
func checkAccessibility(t *testing.T, b *needs.Browser) {
	t.Helper()
	for _, v := range needs.Axe(t, b) {
		t.Errorf("axe %s (%s): %s: %q", v.ID, v.Impact, v.Help, v.Nodes)
	}
}
