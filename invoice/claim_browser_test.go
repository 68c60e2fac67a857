package invoice_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// screenshotsEnv names a directory where the browser tests save their
// screenshots (a temporary one otherwise).
const screenshotsEnv = "CRYPTAPI_SCREENSHOTS_DIR"

func screenshotsDir(t *testing.T) string {
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// afterNavigation waits until expr is true in the page a form's
// submission loads, polling across the navigation.
func afterNavigation(t *testing.T, b *needs.Browser, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), needs.StepTimeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		ok, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond)))
		if err == nil && ok {
			return
		}
		last = err
	}
	t.Fatalf("%s: %v", expr, last)
}

// lookAtClaim checks the claim page for Go error text, axe-core's serious
// violations and horizontal scrolling, and saves it at 360x640 and
// 1280x800, light and dark.
func lookAtClaim(t *testing.T, b *needs.Browser, dir, name string) {
	t.Helper()
	text := b.Text(t, "body")
	for _, bad := range goErrorText {
		assert.NotContains(t, text, bad, name)
	}
	for _, v := range needs.Axe(t, b) {
		t.Errorf("%s: axe %s (%s): %s: %q", name, v.ID, v.Impact, v.Help, v.Nodes)
	}
	for _, size := range [][2]int64{{360, 640}, {1280, 800}} {
		for _, scheme := range []string{"light", "dark"} {
			b.Do(t,
				chromedp.EmulateViewport(size[0], size[1]),
				chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
						Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
					})
					return err
				}),
			)
			fits := needs.Eval[bool](t, b, fmt.Sprintf(`document.documentElement.scrollWidth <= %d`, size[0]))
			assert.True(t, fits, "%s: no horizontal scrolling at %d px", name, size[0])
			b.Screenshot(t, dir, fmt.Sprintf("claim-%s-%dx%d-%s.png", name, size[0], size[1], scheme))
			if name == "2-wrong-network" && size[0] == 360 && scheme == "light" && os.Getenv("CRYPTAPI_UPDATE_SCREENSHOT") == "1" {
				b.Screenshot(t, "../docs", "claim-page.png") // the README's
			}
		}
	}
	b.Do(t, chromedp.EmulateViewport(360, 640), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}},
		})
		return err
	}))
}

// A refund end to end, on the fake, with the customer in a real browser:
// the payout wallet is funded, the excess of an overpaid invoice is
// refunded, the customer opens the claim link, is told plainly when the
// address is of another network, gives their own, and SendRefund sends
// it; once the fake's payout completes, Tick records it, and the invoice
// and the page show the refund sent with its transaction ID. The page has
// no script (it works the same with JavaScript off), follows its policy,
// and passes axe-core.
func TestRefundClaimedInARealBrowser(t *testing.T) {
	e, _, ts, inv, rf := claimEnv(t, true)
	require.NoError(t, e.Srv.FundPayoutWallet("btc", invoicesuite.D("0.01")))
	dir := screenshotsDir(t)
	b := needs.NewBrowser(t)
	b.Do(t, chromedp.EmulateViewport(360, 640))
	page := ts.URL + "/pay/" + rf.ClaimPath
	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#refund")))
	// No script at all: the form is plain HTML, posted and answered by
	// the server, so the page works the same with JavaScript off.
	assert.Zero(t, needs.Eval[int](t, b, `document.scripts.length`))
	assert.Equal(t, "Where should we send your refund?", b.Text(t, ".headline"))
	assert.Equal(t, "awaiting_address", b.Attr(t, "#refund", "data-refund-status"))
	assert.Contains(t, b.Text(t, ".amount"), "0.00058333 BTC")
	lookAtClaim(t, b, dir, "1-awaiting")

	// Another network's address: refused, said plainly, kept to correct.
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), invoicesuite.CustomerTRX), chromedp.Submit(chromedp.CSS("#address")))
	afterNavigation(t, b, `document.readyState === 'complete' && document.querySelector('#address-error') !== null`)
	assert.Equal(t, "This is a Tron address, not a BTC one. Enter an address of the BTC network.", b.Text(t, "#address-error"))
	assert.Equal(t, "true", b.Attr(t, "#address", "aria-invalid"))
	assert.Equal(t, invoicesuite.CustomerTRX, needs.Eval[string](t, b, `document.querySelector('#address').value`))
	assert.Equal(t, "address", needs.Eval[string](t, b, `document.activeElement.id`), "the field has the focus")
	lookAtClaim(t, b, dir, "2-wrong-network")

	needs.Eval[string](t, b, `document.querySelector('#address').value = ''`)
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), invoicesuite.CustomerBTC), chromedp.Submit(chromedp.CSS("#address")))
	afterNavigation(t, b, `document.readyState === 'complete' && document.querySelector('#refund').dataset.refundStatus === 'ready'`)
	assert.Equal(t, invoicesuite.CustomerBTC, b.Text(t, `[data-field="address"]`))
	assert.Zero(t, needs.Eval[int](t, b, `document.querySelectorAll('form').length`), "no second address")
	lookAtClaim(t, b, dir, "3-ready")

	sending, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	require.Equal(t, invoice.RefundSending, sending.Status)
	b.Do(t, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#refund")))
	assert.Equal(t, "Your refund is on its way", b.Text(t, ".headline"))

	e.Clock.Advance(cryptapitest.PayoutSettleTime + invoice.RefundCheckEvery) // the fake's payout completes
	_, err = e.Desk.Tick(e.Ctx)
	require.NoError(t, err)
	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 1)
	assert.Equal(t, invoice.RefundSent, got.Refunds[0].Status)
	batches := e.Srv.PayoutBatches()
	require.Len(t, batches, 1)
	assert.Equal(t, batches[0].TxID, got.Refunds[0].TxID)
	assert.Equal(t, "Done", batches[0].Status)
	require.Len(t, e.Srv.Payouts(), 1)
	assert.Equal(t, invoicesuite.CustomerBTC, e.Srv.Payouts()[0].Address, "to the customer's address")

	b.Do(t, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#refund")))
	assert.Equal(t, "Your refund was sent", b.Text(t, ".headline"))
	assert.Equal(t, got.Refunds[0].TxID, b.Text(t, `[data-field="txid"]`))
	lookAtClaim(t, b, dir, "4-sent")

	assert.Empty(t, needs.Eval[[]string](t, b, `window.__cspViolations || []`))
	// The refused address's page comes with 422, which Chromium reports;
	// nothing else.
	var reported []string
	for _, r := range b.Reported() {
		if !strings.Contains(r, "status of 422") {
			reported = append(reported, r)
		}
	}
	assert.Empty(t, reported, "console errors, exceptions or CSP violations")
	e.AssertOnePerChange(got)
}
