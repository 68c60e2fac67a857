package invoice_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// pickerDocShots are the screenshots of the picker the README shows.
var pickerDocShots = map[string]bool{"choose-360x640-light-en": true}

// choiceInvoice is the demo shop's order paid in a coin the customer
// chooses: Bitcoin, Litecoin, Ether, or USDT on Tron or Polygon.
func choiceInvoice(e *shopEnv, order string) *invoice.Invoice {
	e.t.Helper()
	inv, err := e.desk.Create(e.ctx, &invoice.CreateOptions{
		OrderID: order, Description: "Ethiopia Yirgacheffe, 2 × 250 g whole bean", Price: decimal.RequireFromString("25"),
		Currency: "USD", Callback: e.url + "/callback",
		Tickers: []string{"btc", "ltc", "eth", "trc20_usdt", "polygon_usdt"},
		Destinations: map[string]string{"btc": invoicesuite.BTCDest, "ltc": invoicesuite.LTCDest, "eth": ethDest,
			"trc20_usdt": invoicesuite.TRXDest, "polygon_usdt": ethDest},
	})
	require.NoError(e.t, err)
	return inv
}

// pickerFold is what must be on the first screen of the picker.
var pickerFold = []string{".shop", ".logo", ".what", ".total-amount", "#headline", "[data-countdown=expiry]", ".timebar",
	"#choose-label", `button[value="btc"]`, `button[value="ltc"]`, `button[value="eth"]`, `button[value="trc20_usdt"]`,
	`button[value="polygon_usdt"]`}

// The picker on a phone (360×640) and a desktop (1280×800), light and
// dark, in English, German and Japanese: every coin, with its name, its
// network and the amount in it, on the first screen; nothing scrolls
// sideways; axe-core finds nothing serious. The screenshots are saved
// (and, with CRYPTAPI_UPDATE_SCREENSHOT=1, the README's in docs/).
func TestPageBrowserPickerFitsOneScreen(t *testing.T) {
	e := demoShop(t, nil, invoice.WithPollInterval(invoice.DefaultPollInterval))
	inv := choiceInvoice(e, "2001")
	e.clock.Advance(2*time.Minute + 13*time.Second)
	dir := artifactsDir(t)
	t.Logf("screenshots in %s", dir)
	b := needs.NewBrowser(t)
	for _, s := range []screen{
		{360, 640, false, "en"}, {360, 640, true, "en"}, {1280, 800, false, "en"}, {1280, 800, true, "en"},
		{360, 640, false, "de"}, {360, 640, true, "de"}, {1280, 800, false, "de"},
		{360, 640, false, "ja"}, {360, 640, true, "ja"}, {1280, 800, false, "ja"},
	} {
		t.Run(s.String(), func(t *testing.T) {
			see(t, b, s)
			navigate(t, b, e.url+"/pay/"+inv.ID)
			assert.Equal(t, "choose", b.Attr(t, "#invoice", "data-phase"))
			checkFold(t, b, s, pickerFold)
			strs, _ := invoice.PageStringsFor(s.lang)
			assert.Equal(t, strs.Choose, b.Text(t, "#headline"))
			names := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.coin-name')).map(function (n) { return n.textContent; })`)
			assert.Equal(t, []string{"Bitcoin", "Litecoin", "Ethereum", "Tether USD (TRC-20)", "Tether USD (Polygon)"}, names)
			assert.Equal(t, []string{"TRC20", "Polygon"}, needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.net')).map(function (n) { return n.textContent; })`))
			// Each button says the coin and the amount; its badge is a picture.
			said := needs.Eval[string](t, b, `(function (b) { var c = b.cloneNode(true);
				c.querySelectorAll('[aria-hidden="true"]').forEach(function (h) { h.remove(); });
				return c.textContent.replace(/\s+/g, ' ').trim(); })(document.querySelector('button[value="btc"]'))`)
			assert.Regexp(t, `^Bitcoin 0[.,]00041667\sBTC$`, said)
			checkAxe(t, b, s.String())
			name := "choose-" + s.String()
			png := shot(t, b, dir, name+".png")
			if os.Getenv(docScreenshotEnv) == "1" && pickerDocShots[name] {
				require.NoError(t, os.WriteFile(filepath.Join("..", "docs", "page-"+name+".png"), png, 0o644))
			}
			assert.Empty(t, b.Reported())
		})
	}
}

// A customer chooses Litecoin, switches to Bitcoin, pays part in
// Litecoin after all (the first address still counts), then the rest in
// Bitcoin: the page follows each step without a reload, and ends on a
// receipt that lists both coins. Each state passes axe; nothing breaks
// the page's policy.
func TestPageBrowserChooseSwitchAndSettle(t *testing.T) {
	e := demoShop(t, nil)
	inv := choiceInvoice(e, "2002")
	dir := artifactsDir(t)
	b := open(t, screen{360, 640, false, "en"})
	pageURL := e.url + "/pay/" + inv.ID
	navigate(t, b, pageURL)
	phase := func(want string) {
		t.Helper()
		b.Do(t, chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`#invoice[data-phase=%q]`, want))))
		b.WaitFor(t, `document.documentElement.classList.contains('js')`)
		b.WaitFor(t, `Array.from(document.images).every(function (i) { return i.complete; })`)
	}

	// The choice: a tap on Litecoin.
	b.Do(t, chromedp.Click(chromedp.CSS(`button[value="ltc"]`)))
	phase("pay")
	ltc := e.stored(inv.ID)
	require.Equal(t, "ltc", ltc.Ticker)
	assert.Equal(t, ltc.Due.String(), b.Text(t, "#amount"))
	assert.Equal(t, "LTC", b.Text(t, ".sym"))
	checkLinks(t, b, pageURL, ltc.PaymentURI)
	checkCodes(t, b, ltc.PaymentURI, ltc)
	checkAxe(t, b, "chosen")
	shot(t, b, dir, "choose-1-ltc.png")

	// The switch: "Change coin", the picker with Litecoin marked, Bitcoin.
	b.Do(t, chromedp.Click(chromedp.CSS("a.change")))
	phase("choose")
	assert.Equal(t, "true", b.Attr(t, `button[value="ltc"]`, "aria-current"))
	assert.Contains(t, b.Text(t, "#detail"), "still counts")
	checkAxe(t, b, "switching")
	shot(t, b, dir, "choose-2-switch.png")
	b.Do(t, chromedp.Click(chromedp.CSS(`button[value="btc"]`)))
	phase("pay")
	btc := e.stored(inv.ID)
	require.Equal(t, "btc", btc.Ticker)
	assert.Equal(t, btc.Due.String(), b.Text(t, "#amount"))
	assert.Equal(t, "BTC", b.Text(t, ".sym"))
	checkCodes(t, b, btc.PaymentURI, btc)
	needs.Eval[string](t, b, `window.__samePage = 'yes'`)

	// The customer's wallet had sent 10 USD of Litecoin to the first
	// address: it counts, and the page asks for the rest in Bitcoin.
	tx1 := e.payIn("ltc", ltc, decimal.RequireFromString("0.125"))
	b.WaitFor(t, `document.getElementById('invoice').dataset.exception === 'paid_partial'`)
	now := e.stored(inv.ID)
	assert.Equal(t, "0.00025", now.Due.String(), "15 USD at 60000")
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, now.Due.String()))
	assert.Equal(t, "40% paid", b.Text(t, ".chip"))
	assert.Equal(t, "yes", needs.Eval[string](t, b, `window.__samePage`), "no reload")
	checkCodes(t, b, now.PaymentURI, now)
	checkAxe(t, b, "partly paid in the first coin")
	shot(t, b, dir, "choose-3-partial-ltc.png")

	// The rest in Bitcoin; both confirm: a receipt in both coins.
	e.confirm(tx1)
	e.confirm(e.pay(now, now.Due))
	phase("settled")
	assert.Equal(t, "yes", needs.Eval[string](t, b, `window.__samePage`), "no reload")
	amounts := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.pay-amount')).map(function (a) { return a.textContent; })`)
	assert.Equal(t, []string{"0.125\u00a0LTC", "0.00025\u00a0BTC"}, amounts)
	assert.Equal(t, "0.125\u00a0LTC + 0.00025\u00a0BTC", b.Text(t, "[data-field=received]"))
	checkAxe(t, b, "settled")
	shot(t, b, dir, "choose-4-settled.png")
	got := e.stored(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	assert.Empty(t, needs.Eval[[]string](t, b, `window.__cspViolations || []`))
	assert.Empty(t, b.Reported(), "console errors, exceptions or CSP violations")
}

// Without JavaScript the picker is a plain form: a tap posts the choice
// and the browser lands on the page asking for that coin; the switch
// works the same way.
func TestPageBrowserPickerWithoutJavaScript(t *testing.T) {
	e := demoShop(t, nil)
	inv := choiceInvoice(e, "2003")
	b := open(t, screen{360, 640, true, "de"})
	scripts(t, b, false)
	b.Do(t, chromedp.Navigate(e.url+"/pay/"+inv.ID), chromedp.WaitReady(chromedp.CSS("#invoice")))
	assert.Equal(t, "choose", b.Attr(t, "#invoice", "data-phase"))
	b.Do(t, chromedp.Click(chromedp.CSS(`button[value="trc20_usdt"]`)))
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#invoice[data-phase="pay"]`)))
	got := e.stored(inv.ID)
	assert.Equal(t, "trc20_usdt", got.Ticker)
	assert.Equal(t, "25", b.Text(t, "#amount"))
	assert.Equal(t, "USDT nur über das TRC20-Netzwerk senden.", b.Text(t, ".network"))
	assert.Equal(t, "de", needs.Eval[string](t, b, `document.documentElement.lang`), "the language stays")
	shot(t, b, artifactsDir(t), "nojs-chosen-de.png")
	b.Do(t, chromedp.Click(chromedp.CSS("a.change")))
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#invoice[data-phase="choose"]`)))
	b.Do(t, chromedp.Click(chromedp.CSS(`button[value="eth"]`)))
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#invoice[data-phase="pay"]`)))
	assert.Equal(t, "eth", e.stored(inv.ID).Ticker)
	assert.Empty(t, b.Reported())
}
