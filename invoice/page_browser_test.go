package invoice_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// Environment of the browser tests.
const (
	// screenshotsEnv names the directory the screenshots are saved in
	// (default: a temporary directory of the test).
	screenshotsEnv = "CRYPTAPI_SCREENSHOTS_DIR"
	// docScreenshotEnv, set to 1, writes the README's screenshots to
	// docs/.
	docScreenshotEnv = "CRYPTAPI_UPDATE_SCREENSHOT"
)

// docShots are the screenshots the README shows.
var docShots = map[string]bool{
	"pay-360x640-light-en": true, "pay-360x640-dark-de": true, "pay-360x640-light-ja": true,
	"pay-1280x800-light-en": true, "settled-1280x800-dark-en": true, "settled-360x640-dark-de": true,
	"expired-360x640-light-en": true,
}

// docShot writes png as docs/page-<name>.png when the README's
// screenshots are to be rewritten and name is one of them.
func docShot(t *testing.T, name string, png []byte) {
	t.Helper()
	if os.Getenv(docScreenshotEnv) == "1" && docShots[name] {
		require.NoError(t, os.WriteFile(filepath.Join("..", "docs", "page-"+name+".png"), png, 0o644))
	}
}

// ethDest is a destination valid for ERC-20 tokens.
const ethDest = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// screen is one way a customer sees the page.
type screen struct {
	w, h int64
	dark bool
	lang string // Accept-Language
}

func (s screen) String() string {
	scheme := "light"
	if s.dark {
		scheme = "dark"
	}
	return fmt.Sprintf("%dx%d-%s-%s", s.w, s.h, scheme, s.lang)
}

// open starts a browser that shows pages as s sees them.
func open(t *testing.T, s screen) *needs.Browser {
	t.Helper()
	b := needs.NewBrowser(t)
	see(t, b, s)
	return b
}

// see makes b show pages as s sees them, from the next navigation on.
func see(t *testing.T, b *needs.Browser, s screen) {
	t.Helper()
	scheme := "light"
	if s.dark {
		scheme = "dark"
	}
	scale := 2.0
	if os.Getenv(docScreenshotEnv) == "1" {
		scale = 1 // the README's screenshots stay small
	}
	ua := needs.Eval[string](t, b, `navigator.userAgent`)
	viewport := []chromedp.EmulateViewportOption{chromedp.EmulateScale(scale)}
	if s.w < 600 {
		// A phone: touch, and scroll bars that take no room.
		viewport = append(viewport, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	b.Do(t,
		chromedp.EmulateViewport(s.w, s.h, viewport...),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Media: "screen", Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				return err
			}
			// The browser's language, without the Network domain's events
			// (decoding them made the tests slow under -race).
			_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
				UserAgent: ua, AcceptLanguage: s.lang + ",en",
			})
			return err
		}),
	)
}

func navigate(t *testing.T, b *needs.Browser, url string) {
	t.Helper()
	b.Do(t, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#invoice")))
	b.WaitFor(t, `document.documentElement.classList.contains('js') && Array.from(document.images).every(function (i) { return i.complete; })`)
}

// shot saves what the screen shows (the viewport, not the whole page) as
// name in dir; for the README's screenshots, compressed harder.
func shot(t *testing.T, b *needs.Browser, dir, name string) []byte {
	t.Helper()
	data := needs.Run(t, b, chromedp.CaptureScreenshot())
	if os.Getenv(docScreenshotEnv) == "1" {
		img, err := png.Decode(bytes.NewReader(data))
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img))
		data = buf.Bytes()
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	return data
}

// testLogo is a shop's logo: a cup on a round badge.
func testLogo(t *testing.T) []byte {
	t.Helper()
	const n = 96
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	brown := color.NRGBA{0x7a, 0x44, 0x1f, 0xff}
	cream := color.NRGBA{0xf6, 0xe7, 0xd0, 0xff}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := float64(x)-47.5, float64(y)-47.5
			if dx*dx+dy*dy > 47*47 {
				continue
			}
			img.Set(x, y, brown)
			cup := x >= 28 && x <= 60 && y >= 36 && y <= 66
			handle := x > 60 && x <= 70 && y >= 42 && y <= 58 && !(x > 63 && x < 67 && y > 45 && y < 55)
			steam := (x == 38 || x == 48) && y >= 20 && y <= 30
			if cup || handle || steam {
				img.Set(x, y, cream)
			}
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// demoShop is the shop the screenshots show: a name, a logo, a product.
func demoShop(t *testing.T, rewrite func(string) string, opts ...invoice.PageOption) *shopEnv {
	t.Helper()
	return newShopEnv(t, rewrite, append([]invoice.PageOption{
		invoice.WithMerchantName("Northwind Coffee Roasters"),
		invoice.WithLogo(testLogo(t)),
		invoice.WithPollInterval(100 * time.Millisecond),
		invoice.WithReturnURL(func(inv *invoice.Invoice) string { return "/orders/" + inv.OrderID }),
	}, opts...)...)
}

func demoInvoice(e *shopEnv) *invoice.Invoice {
	return e.create(invoice.CreateOptions{OrderID: "1042", Ticker: "polygon_usdt", Address: ethDest,
		Description: "Ethiopia Yirgacheffe, 2 × 250 g whole bean", Price: decimal.RequireFromString("25"), Currency: "USD"})
}

// aboveTheFold are the parts of a page asking for payment that must be
// on the first screen, without scrolling.
var aboveTheFold = []string{
	".shop", ".logo", ".what", ".total-amount", "#headline", ".chip", "[data-countdown=expiry]", ".timebar",
	"#amount", `button[data-copy-value][aria-label="%s"]`, ".qr-codes img", ".qr-switch", ".qr-label",
	"#address", `button[data-copy-value][aria-label="%s"]`,
}

// box is where an element is on the screen, and whether it is shown.
type box struct {
	Sel                      string
	Found, Shown             bool
	Top, Bottom, Left, Right float64
}

const boxesJS = `(function (sels) {
	return sels.map(function (sel) {
		var el = Array.from(document.querySelectorAll(sel)).filter(function (e) {
			return e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
		})[0];
		if (!el) { return {Sel: sel, Found: document.querySelector(sel) !== null}; }
		var r = el.getBoundingClientRect();
		return {Sel: sel, Found: true, Shown: r.width > 0 && r.height > 0, Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right};
	});
})(%s)`

// checkFold fails when an element of sels is not wholly on the first
// screen of b's page.
func checkFold(t *testing.T, b *needs.Browser, s screen, sels []string) {
	t.Helper()
	list := "[" + strings.Join(func() []string {
		q := make([]string, len(sels))
		for i, sel := range sels {
			q[i] = fmt.Sprintf("%q", sel)
		}
		return q
	}(), ",") + "]"
	assert.Equal(t, 0.0, needs.Eval[float64](t, b, `window.scrollY`))
	for _, bx := range needs.Eval[[]box](t, b, fmt.Sprintf(boxesJS, list)) {
		if !assert.True(t, bx.Shown, "%s: %s is not shown", s, bx.Sel) {
			continue
		}
		assert.True(t, bx.Top >= 0 && bx.Bottom <= float64(s.h) && bx.Left >= 0 && bx.Right <= float64(s.w),
			"%s: %s is not on the first screen: %+v", s, bx.Sel, bx)
	}
	assert.True(t, needs.Eval[bool](t, b, `document.documentElement.scrollWidth <= window.innerWidth`), "%s: no sideways scrolling", s)
}

func checkAxe(t *testing.T, b *needs.Browser, what string) {
	t.Helper()
	for _, v := range needs.Axe(t, b) {
		t.Errorf("%s: axe %s (%s): %s: %q", what, v.ID, v.Impact, v.Help, v.Nodes)
	}
}

// On a phone (360×640) and a desktop (1280×800), light and dark, in
// English, German and Japanese: what a customer needs to pay is on the
// first screen, nothing scrolls sideways, the address does not wrap on
// the desktop, and axe-core finds nothing serious. The screenshots are
// saved (and, with CRYPTAPI_UPDATE_SCREENSHOT=1, the README's in docs/).
func TestPageBrowserFitsOneScreen(t *testing.T) {
	e := demoShop(t, nil, invoice.WithPollInterval(invoice.DefaultPollInterval)) // nothing changes here
	usdt := demoInvoice(e)
	e.pay(usdt, decimal.RequireFromString("10"))
	// A coin with eight decimals: a longer amount, and a longer address.
	btc := e.create(invoice.CreateOptions{OrderID: "1045", Description: "Espresso blend, 1 kg", Price: decimal.RequireFromString("25"), Currency: "USD"})
	e.pay(btc, decimal.RequireFromString("0.0002"))
	for _, inv := range []*invoice.Invoice{usdt, btc} {
		require.Equal(t, invoice.ExceptionPaidPartial, e.stored(inv.ID).Exception)
	}
	e.clock.Advance(12*time.Minute + 48*time.Second) // the customer took a while
	dir := artifactsDir(t)
	t.Logf("screenshots in %s", dir)
	b := needs.NewBrowser(t)
	for _, s := range []screen{
		{360, 640, false, "en"}, {360, 640, true, "en"}, {1280, 800, false, "en"}, {1280, 800, true, "en"},
		{360, 640, false, "de"}, {360, 640, true, "de"}, {1280, 800, false, "de"}, {1280, 800, true, "de"},
		{360, 640, false, "ja"}, {360, 640, true, "ja"}, {1280, 800, false, "ja"}, {1280, 800, true, "ja"},
	} {
		t.Run(s.String(), func(t *testing.T) {
			see(t, b, s)
			strs, _ := invoice.PageStringsFor(s.lang)
			sels := append([]string(nil), aboveTheFold...)
			sels[9] = fmt.Sprintf(sels[9], strs.CopyAmount)
			sels[14] = fmt.Sprintf(sels[14], strs.CopyAddress)
			for _, inv := range []*invoice.Invoice{usdt, btc} {
				if inv == btc && s.dark {
					continue // the layout is the light one's
				}
				navigate(t, b, e.url+"/pay/"+inv.ID)
				assert.Equal(t, strs.Lang, needs.Eval[string](t, b, `document.documentElement.lang`))
				checkFold(t, b, s, sels)
				if s.w >= 1280 {
					lines := needs.Eval[float64](t, b, `(function (a) { var c = getComputedStyle(a); return Math.round((a.getBoundingClientRect().height - parseFloat(c.paddingTop) - parseFloat(c.paddingBottom) - parseFloat(c.borderTopWidth) - parseFloat(c.borderBottomWidth)) / parseFloat(c.lineHeight)); })(document.getElementById('address'))`)
					assert.Equal(t, 1.0, lines, "%s: the address is on one line", s)
					assert.True(t, needs.Eval[bool](t, b, `(function (a) { return a.scrollWidth <= a.clientWidth; })(document.getElementById('address'))`), "%s: the address is shown whole", s)
				}
				if inv == btc {
					shot(t, b, dir, "pay-btc-"+s.String()+".png")
					continue
				}
				checkAxe(t, b, s.String())
				docShot(t, "pay-"+s.String(), shot(t, b, dir, "pay-"+s.String()+".png"))
			}
			assert.Empty(t, b.Reported())
		})
	}
}

// The page turns from waiting to partly paid to processing to settled,
// and another one to expired, without a reload; each state passes axe;
// nothing breaks the page's policy.
func TestPageBrowserFollowsThePayment(t *testing.T) {
	e := demoShop(t, nil)
	inv := demoInvoice(e)
	dir := artifactsDir(t)
	s := screen{360, 640, false, "en"}
	b := open(t, s)
	navigate(t, b, e.url+"/pay/"+inv.ID)
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)
	state := func(phase, exception string) {
		t.Helper()
		b.WaitFor(t, fmt.Sprintf(`document.getElementById('invoice').dataset.phase === %q && document.getElementById('invoice').dataset.exception === %q`, phase, exception))
		b.WaitFor(t, `Array.from(document.images).every(function (i) { return i.complete; })`)
		assert.Equal(t, "yes", needs.Eval[string](t, b, `window.__samePage`), "no reload")
	}
	state("pay", "")
	assert.Equal(t, "Waiting for your payment", b.Text(t, "#headline"))
	assert.Equal(t, inv.Due.String(), b.Text(t, "#amount"))
	assert.Equal(t, "$25.00", b.Text(t, ".total-amount"))
	assert.Equal(t, "Send USDT on the Polygon network only.", b.Text(t, ".network"))
	checkAxe(t, b, "waiting")

	tx1 := e.pay(inv, decimal.RequireFromString("10"))
	state("pay", "paid_partial")
	now := e.stored(inv.ID)
	assert.Equal(t, "Partly paid: please send the remainder", b.Text(t, "#headline"))
	assert.Equal(t, "40% paid", b.Text(t, ".chip"))
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, now.Due.String()))
	assert.Equal(t, now.Due.String(), b.Attr(t, `button[aria-label="Copy amount"]`, "data-copy-value"))
	checkLinks(t, b, e.url+"/pay/"+inv.ID, now.PaymentURI)
	checkCodes(t, b, now.PaymentURI, now)
	assert.Equal(t, "$15.00", b.Text(t, "[data-field=remaining]"))
	shot(t, b, dir, "follow-1-partial.png")
	checkAxe(t, b, "partly paid")

	e.confirm(tx1)
	tx2 := e.pay(inv, now.Due)
	state("processing", "")
	assert.Equal(t, "Payment received", b.Text(t, "#headline"))
	assert.Equal(t, 0, needs.Eval[int](t, b, `document.querySelectorAll('.pay').length`), "nothing more to pay")
	shot(t, b, dir, "follow-2-processing.png")
	checkAxe(t, b, "processing")

	e.confirm(tx2)
	state("settled", "")
	assert.Equal(t, "Paid in full. Thank you!", b.Text(t, "#headline"))
	txids := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.payments button[data-copy-value]')).map(function (b) { return b.getAttribute('data-copy-value'); })`)
	assert.Equal(t, []string{tx1, tx2}, txids, "the receipt lists each transaction, with a copy button")
	assert.Equal(t, inv.ID, b.Text(t, ".receipt code.id"))
	assert.Equal(t, "/orders/1042", b.Attr(t, "a.return", "href"))
	shot(t, b, dir, "follow-3-settled.png")
	checkAxe(t, b, "settled")

	inv2 := demoInvoice(e)
	navigate(t, b, e.url+"/pay/"+inv2.ID)
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)
	e.clock.Advance(2 * time.Hour)
	state("expired", "")
	assert.Equal(t, "This invoice has expired", b.Text(t, "#headline"))
	assert.Equal(t, "Do not send any payment to this address.", b.Text(t, ".alert-head"))
	assert.Equal(t, inv2.ID, b.Text(t, ".id-row code.id"))
	assert.Equal(t, 0, needs.Eval[int](t, b, `document.querySelectorAll('.pay, .qr-codes img, #address').length`), "no address, no code")
	shot(t, b, dir, "follow-4-expired.png")
	checkAxe(t, b, "expired")

	assert.Empty(t, needs.Eval[[]string](t, b, `window.__cspViolations || []`))
	assert.Empty(t, b.Reported(), "console errors, exceptions or CSP violations")

	// A script without the response's nonce does not run, not even one
	// from the page's own origin, and nor does an image from elsewhere.
	needs.Eval[bool](t, b, `(function () {
		var s = document.createElement('script'); s.src = '_/page.js?again'; document.body.appendChild(s);
		var i = document.createElement('img'); i.alt = 'x'; i.src = 'http://127.0.0.2:9/x.png'; document.body.appendChild(i);
		return true; })()`)
	b.WaitFor(t, `(window.__cspViolations || []).length === 2`)
	assert.ElementsMatch(t, []string{"script-src-elem " + e.url + "/pay/_/page.js?again", "img-src http://127.0.0.2:9/x.png"},
		needs.Eval[[]string](t, b, `window.__cspViolations`))
}

// visibleLinks are the resolved hrefs of the links the customer can see.
const visibleLinks = `Array.from(document.querySelectorAll('a[href]')).filter(function (a) {
	return a.getClientRects().length > 0 && getComputedStyle(a).visibility !== 'hidden';
}).map(function (a) { return a.href; })`

// visibleImages are the resolved srcs of the images the customer can see.
const visibleImages = `Array.from(document.images).filter(function (i) {
	return i.getClientRects().length > 0 && getComputedStyle(i).visibility !== 'hidden' && i.getAttribute('src');
}).map(function (i) { return i.src; })`

// checkLinks fails when a link the customer can see leads off the page's
// site other than to https, or is a wallet link other than want (the
// payment URI the page's status allows now; "" for none).
func checkLinks(t *testing.T, b *needs.Browser, pageURL, want string) {
	t.Helper()
	page, err := url.Parse(pageURL)
	require.NoError(t, err)
	for _, href := range needs.Eval[[]string](t, b, visibleLinks) {
		u, err := url.Parse(href)
		require.NoError(t, err, href)
		switch u.Scheme {
		case "http", "https":
			assert.True(t, u.Host == page.Host || u.Scheme == "https", "a link off the site: %s", href)
			assert.Equal(t, page.Host, u.Host, "a link off the site: %s", href)
		default:
			assert.Equal(t, want, href, "a wallet link the status does not allow now")
		}
	}
}

// checkCodes fails when a QR code the customer can see encodes anything
// but the payment URI of the status (want) or the bare address.
func checkCodes(t *testing.T, b *needs.Browser, want string, inv *invoice.Invoice) {
	t.Helper()
	for _, src := range needs.Eval[[]string](t, b, visibleImages) {
		if !strings.Contains(src, "/qr") {
			continue
		}
		resp, png := get(t, src)
		require.Equal(t, http.StatusOK, resp.StatusCode, src)
		text := qrText(t, png)
		scheme, _, _ := strings.Cut(want, ":")
		allowed := []string{inv.AddressIn, scheme + ":" + inv.AddressIn}
		if want != "" {
			allowed = append(allowed, want)
		}
		assert.Contains(t, allowed, text, "a QR code the status does not allow now")
	}
}

// When the service writes the amount in a form the page cannot rewrite
// (exponent notation), the page after a partial payment asks for the
// current Due or for nothing: no link, code or amount asks for the
// original full amount.
func TestPageBrowserNeverAsksForAStaleAmount(t *testing.T) {
	e := newShopEnv(t, exponentAmount, invoice.WithPollInterval(100*time.Millisecond))
	inv := e.create(invoice.CreateOptions{})
	require.Contains(t, inv.PaymentURI, "e-", "the service's URI in exponent form")
	b := needs.NewBrowser(t)
	pageURL := e.url + "/pay/" + inv.ID
	b.Do(t, chromedp.EmulateViewport(360, 640))
	navigate(t, b, pageURL)
	checkLinks(t, b, pageURL, inv.PaymentURI)
	checkCodes(t, b, inv.PaymentURI, inv)

	e.pay(inv, inv.Due.Div(decimal.NewFromInt(2)).Round(8))
	now := e.stored(inv.ID)
	require.Equal(t, invoice.ExceptionPaidPartial, now.Exception)
	require.Empty(t, now.PaymentURI, "the form is unknown: no URI for the remainder")
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('invoice').getAttribute('data-exception') === %q`, "paid_partial"))
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, now.Due.String()))
	b.WaitFor(t, `Array.from(document.images).every(function (i) { return i.complete; })`)
	checkLinks(t, b, pageURL, "")
	checkCodes(t, b, "", now)
	assert.Equal(t, now.Due.String(), b.Attr(t, `button[aria-label="Copy amount"]`, "data-copy-value"))
	assert.Empty(t, b.Reported())
}

// The return link the script shows is the one the server allows: a path
// that a browser reads as another host never becomes a link.
func TestPageBrowserReturnLinkStaysOnTheSite(t *testing.T) {
	b := needs.NewBrowser(t)
	for _, link := range []string{`/\evil.example/x`, "/\t/evil.example/x"} {
		e := newShopEnv(t, nil, invoice.WithPollInterval(100*time.Millisecond),
			invoice.WithReturnURL(func(*invoice.Invoice) string { return link }))
		inv := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
		pageURL := e.url + "/pay/" + inv.ID
		navigate(t, b, pageURL)
		e.confirm(e.pay(inv, decimal.RequireFromString("0.001")))
		b.WaitFor(t, `document.getElementById('invoice').getAttribute('data-status') === 'settled'`)
		checkLinks(t, b, pageURL, "")
		hrefs := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('a[href]')).map(function (a) { return a.href; })`)
		for _, h := range hrefs {
			assert.NotContains(t, h, "evil.example", "%q", link)
		}
	}
}

// scripts turns the page's JavaScript off or on.
func scripts(t *testing.T, b *needs.Browser, on bool) {
	t.Helper()
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}))
}

// Without JavaScript the page shows the state it was rendered with, in
// the browser's language; the QR code's switch and the language switch
// work; a reload shows the current state.
func TestPageBrowserWorksWithoutJavaScript(t *testing.T) {
	e := demoShop(t, nil)
	inv := e.create(invoice.CreateOptions{OrderID: "1043", Description: "Espresso blend, 1 kg", Price: decimal.RequireFromString("25"), Currency: "USD"})
	s := screen{360, 640, false, "de"}
	b := open(t, s)
	scripts(t, b, false)
	pageURL := e.url + "/pay/" + inv.ID
	b.Do(t, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("#invoice")))
	assert.Equal(t, "de", needs.Eval[string](t, b, `document.documentElement.lang`))
	assert.Equal(t, "Warten auf Ihre Zahlung", b.Text(t, "#headline"))
	assert.Equal(t, strings.Replace(inv.Due.String(), ".", ",", 1), b.Text(t, "#amount"))
	assert.False(t, needs.Eval[bool](t, b, `document.documentElement.classList.contains('js')`))
	assert.Equal(t, "hidden", needs.Eval[string](t, b, `getComputedStyle(document.querySelector('button[data-copy-value]')).visibility`),
		"no copy button without the script")
	assert.Equal(t, []string{"qr-with"}, needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.qr-codes img')).filter(function (i) { return i.getClientRects().length > 0; }).map(function (i) { return i.className; })`))
	b.Do(t, chromedp.Click(chromedp.CSS(".qr-label")))
	assert.Equal(t, []string{"qr-bare"}, needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.qr-codes img')).filter(function (i) { return i.getClientRects().length > 0; }).map(function (i) { return i.className; })`),
		"the switch shows the code without the amount")
	assert.True(t, needs.Eval[bool](t, b, `getComputedStyle(document.querySelector('.qr-note')).display !== 'none'`), "and says to type the amount")
	checkCodes(t, b, inv.PaymentURI, inv)

	// The language switch is a list of links.
	b.Do(t, chromedp.Click(chromedp.CSS(".lang summary")))
	assert.True(t, needs.Eval[bool](t, b, `(function (r) { return r.right <= window.innerWidth && r.left >= 0 && r.bottom <= window.innerHeight; })(document.querySelector('.lang ul').getBoundingClientRect())`),
		"the list of languages is on the screen")
	shot(t, b, artifactsDir(t), "nojs-languages-de.png")
	b.Do(t, chromedp.Click(chromedp.CSS(`.lang a[lang="ja"]`)), chromedp.WaitReady(chromedp.CSS("#invoice")))
	b.WaitFor(t, `document.documentElement.lang === 'ja'`)
	assert.Equal(t, "お支払いをお待ちしています", b.Text(t, "#headline"))

	e.confirm(e.pay(inv, inv.Due))
	assert.Equal(t, "お支払いをお待ちしています", b.Text(t, "#headline"), "no script, no update")
	b.Do(t, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#invoice")))
	b.WaitFor(t, `document.getElementById('invoice').dataset.phase === 'settled'`)
	assert.Equal(t, "お支払いが完了しました。ありがとうございます！", b.Text(t, "#headline"))
	assert.Equal(t, inv.ID, b.Text(t, ".receipt code.id"))
	shot(t, b, artifactsDir(t), "nojs-settled-ja.png")
	assert.Empty(t, b.Reported())
}

// The copy buttons copy the machine value, whatever the language shows;
// the switch changes the language without a script of its own.
func TestPageBrowserCopiesTheExactValue(t *testing.T) {
	e := demoShop(t, nil)
	inv := e.create(invoice.CreateOptions{OrderID: "1044", Description: "Espresso blend, 1 kg", Price: decimal.RequireFromString("25"), Currency: "USD"})
	require.Contains(t, inv.Due.String(), ".")
	b := open(t, screen{360, 640, false, "fr"})
	pageURL := e.url + "/pay/" + inv.ID
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		u, _ := url.Parse(e.url)
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: u.Scheme + "://" + u.Host,
			}); err != nil {
				return err
			}
		}
		return nil
	}))
	navigate(t, b, pageURL)
	assert.Equal(t, strings.Replace(inv.Due.String(), ".", ",", 1), b.Text(t, "#amount"))
	for _, tc := range []struct{ label, want string }{
		{"Copier le montant", inv.Due.String()},
		{"Copier l’adresse", inv.AddressIn},
	} {
		sel := fmt.Sprintf(`button[aria-label=%q]`, tc.label)
		b.Do(t, chromedp.Click(chromedp.CSS(sel)))
		b.WaitFor(t, fmt.Sprintf(`document.querySelector(%q).textContent === 'Copié'`, sel))
		got := needs.Run(t, b, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		assert.Equal(t, tc.want, got, tc.label)
		b.WaitFor(t, fmt.Sprintf(`document.querySelector(%q).textContent === 'Copier'`, sel))
	}
	assert.Empty(t, b.Reported())
}

// At 200% zoom (a 1280×800 screen is then 640×400 CSS pixels, a 640×...
// phone 180 wide is below any real one: 320 is the width WCAG asks to
// reflow to) nothing needs sideways scrolling and every control is whole.
func TestPageBrowserAt200PercentZoom(t *testing.T) {
	e := demoShop(t, nil)
	inv := demoInvoice(e)
	e.pay(inv, decimal.RequireFromString("10"))
	b := needs.NewBrowser(t)
	for _, s := range []screen{{640, 400, false, "de"}, {320, 512, true, "de"}, {320, 512, false, "ja"}} {
		see(t, b, s)
		navigate(t, b, e.url+"/pay/"+inv.ID)
		assert.True(t, needs.Eval[bool](t, b, `document.documentElement.scrollWidth <= window.innerWidth`), "%s: no sideways scrolling", s)
		outside := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('button, a, input, summary, #address, #amount, .total-amount, .chip, .time')).filter(function (e) {
			if (e.getClientRects().length === 0 || getComputedStyle(e).visibility === 'hidden') { return false; }
			var r = e.getBoundingClientRect();
			return r.left < 0 || r.right > window.innerWidth || e.scrollWidth > e.clientWidth + 1;
		}).map(function (e) { return e.outerHTML.slice(0, 80); })`)
		assert.Empty(t, outside, "%s: cut off", s)
		shot(t, b, artifactsDir(t), "zoom-"+s.String()+".png")
	}

	// Long words in the shop's name and the description do not push the
	// page sideways either.
	long := newShopEnv(t, nil, invoice.WithMerchantName(strings.Repeat("Kaffeerösterei", 6)),
		invoice.WithReturnURL(func(*invoice.Invoice) string { return "/" }))
	inv2 := long.create(invoice.CreateOptions{Description: strings.Repeat("Einzelhandelsverkaufsgegenstand", 10), Price: decimal.RequireFromString("0.001")})
	for _, settled := range []bool{false, true} {
		if settled {
			long.confirm(long.pay(inv2, decimal.RequireFromString("0.001")))
		}
		see(t, b, screen{320, 568, false, "de"})
		navigate(t, b, long.url+"/pay/"+inv2.ID)
		assert.True(t, needs.Eval[bool](t, b, `document.documentElement.scrollWidth <= window.innerWidth`), "long words, settled %v", settled)
	}
}

// The receipt and the expired page, on a phone and a desktop, light and
// dark: axe finds nothing serious; the receipt's transaction ID and the
// expired page's invoice ID are whole on the screen.
func TestPageBrowserReceiptAndExpiredScreens(t *testing.T) {
	e := demoShop(t, nil)
	paid := demoInvoice(e)
	e.confirm(e.pay(paid, decimal.RequireFromString("10")))
	e.confirm(e.pay(paid, decimal.RequireFromString("15")))
	expired := demoInvoice(e)
	e.clock.Advance(2 * time.Hour)
	dir := artifactsDir(t)
	b := needs.NewBrowser(t)
	for _, s := range []screen{{360, 640, false, "en"}, {360, 640, true, "de"}, {1280, 800, false, "ja"}, {1280, 800, true, "en"}} {
		for _, c := range []struct {
			name  string
			inv   *invoice.Invoice
			phase string
			whole string
		}{{"settled", paid, "settled", ".receipt code.id"}, {"expired", expired, "expired", ".id-row code.id"}} {
			see(t, b, s)
			navigate(t, b, e.url+"/pay/"+c.inv.ID)
			assert.Equal(t, c.phase, b.Attr(t, "#invoice", "data-phase"))
			assert.True(t, needs.Eval[bool](t, b, `document.documentElement.scrollWidth <= window.innerWidth`), "%s %s: no sideways scrolling", s, c.name)
			assert.True(t, needs.Eval[bool](t, b, fmt.Sprintf(`(function (e) { return e.scrollWidth <= e.clientWidth; })(document.querySelector(%q))`, c.whole)), "%s %s: the ID is whole", s, c.name)
			checkAxe(t, b, s.String()+" "+c.name)
			docShot(t, c.name+"-"+s.String(), shot(t, b, dir, c.name+"-"+s.String()+".png"))
			if c.name == "settled" && s.w < 600 {
				// Printed, the receipt keeps what it says and drops the controls.
				b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
					return err
				}))
				shown := needs.Eval[[]bool](t, b, `['.receipt', '.payments code', '.receipt code.id', '.copy', '.actions', '.lang'].map(function (sel) {
					var e = document.querySelector(sel); return e !== null && e.getClientRects().length > 0; })`)
				assert.Equal(t, []bool{true, true, true, false, false, false}, shown, "%s: printed", s)
				shot(t, b, dir, "print-"+s.String()+".png")
			}
			assert.Empty(t, b.Reported())
		}
	}
}

// A quote that lapses while the service's price cannot be read: the open
// page takes the amount, the code and the address away and says the
// amount is being updated, then shows the new amount Tick made, without
// a reload.
func TestPageBrowserLapsedQuote(t *testing.T) {
	e := demoShop(t, nil)
	inv := demoInvoice(e)
	b := open(t, screen{360, 640, true, "en"})
	navigate(t, b, e.url+"/pay/"+inv.ID)
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)
	e.infoDown.Store(true)
	e.clock.Advance(16 * time.Minute)
	b.WaitFor(t, `document.getElementById('invoice').dataset.phase === 'updating'`)
	assert.Equal(t, "Updating the amount", b.Text(t, "#headline"))
	assert.Equal(t, 0, needs.Eval[int](t, b, `document.querySelectorAll('#amount, #address, .qr-codes img, a.wallet, button[data-copy-value]').length`))
	checkAxe(t, b, "updating")
	shot(t, b, artifactsDir(t), "updating-360x640-dark-en.png")

	_, err := e.desk.Tick(e.ctx)
	require.NoError(t, err, "Tick logs what it cannot renew")
	assert.Equal(t, "updating", needs.Eval[string](t, b, `document.getElementById('invoice').dataset.phase`))
	e.infoDown.Store(false)
	e.clock.Advance(10 * time.Second) // Tick reads a price that failed again after 10 s
	_, err = e.desk.Tick(e.ctx)
	require.NoError(t, err)
	b.WaitFor(t, `document.getElementById('invoice').dataset.phase === 'pay'`)
	now := e.stored(inv.ID)
	assert.True(t, now.QuoteExpiresAt.After(e.clock.Now()), "a new quote")
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, now.Due.String()))
	assert.Equal(t, "yes", needs.Eval[string](t, b, `window.__samePage`))
	assert.Empty(t, b.Reported())
}
