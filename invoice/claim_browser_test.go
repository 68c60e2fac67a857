package invoice_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// claimScreens are the screens the claim page is looked at on: a phone
// and a desktop, light and dark, in English, German and Japanese.
var claimScreens = []screen{
	{360, 640, false, "en"}, {360, 640, true, "en"}, {1280, 800, false, "en"}, {1280, 800, true, "en"},
	{360, 640, false, "de"}, {1280, 800, true, "de"}, {360, 640, false, "ja"}, {1280, 800, false, "ja"},
}

// lookAtClaim looks at the claim page at url on every claim screen:
// in the screen's language, no Go error text, nothing scrolling
// sideways, what the customer acts on on the first screen, axe-core's
// serious violations; and saves a screenshot of each.
func lookAtClaim(t *testing.T, b *needs.Browser, dir, name, url string, fold []string) {
	t.Helper()
	for _, s := range claimScreens {
		see(t, b, s)
		b.Do(t, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#refund")))
		strs, _ := invoice.PageStringsFor(s.lang)
		assert.Equal(t, strs.Lang, needs.Eval[string](t, b, `document.documentElement.lang`), "%s %s", name, s)
		text := b.Text(t, "body")
		for _, bad := range goErrorText {
			assert.NotContains(t, text, bad, "%s %s", name, s)
		}
		checkFold(t, b, s, fold)
		if s.lang == "en" || s.w > 1000 {
			checkAxe(t, b, name+" "+s.String())
		}
		png := shot(t, b, dir, "claim-"+name+"-"+s.String()+".png")
		if name == "2-wrong-network" && s.String() == "360x640-light-en" {
			docClaimShot(t, png)
		}
	}
	see(t, b, claimScreens[0])
}

// A refund end to end, on the fake, with the customer in a real browser:
// the payout wallet is funded, the excess of an overpaid invoice is
// refunded, the customer opens the claim link, is told plainly when the
// address is of another network, gives their own, and SendRefund sends
// it; once the fake's payout completes, Tick records it, and the invoice
// and the page show the refund sent with its transaction ID. The page has
// no script (it works the same with JavaScript off), follows its policy,
// fits the screen in three languages, and passes axe-core.
func TestRefundClaimedInARealBrowser(t *testing.T) {
	e, _, ts, inv, rf := claimEnv(t, true, invoice.WithMerchantName("Northwind Coffee Roasters"), invoice.WithLogo(testLogo(t)))
	require.NoError(t, e.Srv.FundPayoutWallet("btc", invoicesuite.D("0.01")))
	dir := artifactsDir(t)
	b := needs.NewBrowser(t)
	see(t, b, claimScreens[0])
	page := ts.URL + "/pay/" + rf.ClaimPath

	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#refund")))
	// No script at all: the form is plain HTML, posted and answered by
	// the server, so the page works the same with JavaScript off.
	assert.Zero(t, needs.Eval[int](t, b, `document.scripts.length`))
	assert.Equal(t, "Where should we send your refund?", b.Text(t, "#headline"))
	assert.Equal(t, "awaiting_address", b.Attr(t, "#refund", "data-refund-status"))
	assert.Equal(t, "0.00058333\u00a0BTC", b.Text(t, ".total-amount"))
	lookAtClaim(t, b, dir, "1-awaiting", page, []string{".shop", ".total-amount", "#headline", "#address", "button[type=submit]"})

	// Another network's address: refused, said plainly, kept to correct.
	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#address")))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), invoicesuite.CustomerTRX), chromedp.Submit(chromedp.CSS("#address")))
	b.WaitFor(t, `document.readyState === 'complete' && document.querySelector('#address-error') !== null`)
	assert.Equal(t, "This address is for Tron, not BTC. Enter an address of the Bitcoin network.", b.Text(t, "#address-error"))
	assert.Equal(t, "true", b.Attr(t, "#address", "aria-invalid"))
	assert.Equal(t, invoicesuite.CustomerTRX, needs.Eval[string](t, b, `document.querySelector('#address').value`))
	assert.Equal(t, "address", needs.Eval[string](t, b, `document.activeElement.id`), "the field has the focus")
	checkAxe(t, b, "refused address")
	// The page of the refused address, in every language and screen: the
	// form posts again to itself, in the page's language.
	for _, s := range claimScreens {
		see(t, b, s)
		b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#address")))
		b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), invoicesuite.CustomerTRX), chromedp.Submit(chromedp.CSS("#address")))
		b.WaitFor(t, `document.readyState === 'complete' && document.querySelector('#address-error') !== null`)
		strs, _ := invoice.PageStringsFor(s.lang)
		assert.Contains(t, b.Text(t, "#address-error"), strings.Split(strs.RefundWrongNetwork, "{")[0], s.String())
		checkFold(t, b, s, []string{"#address-error", "#address", "button[type=submit]"})
		png := shot(t, b, dir, "claim-2-wrong-network-"+s.String()+".png")
		if s.String() == "360x640-light-en" {
			docClaimShot(t, png)
		}
	}
	see(t, b, claimScreens[0])

	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#address")))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), invoicesuite.CustomerBTC), chromedp.Submit(chromedp.CSS("#address")))
	b.WaitFor(t, `document.readyState === 'complete' && document.querySelector('#refund').dataset.refundStatus === 'ready'`)
	assert.Equal(t, invoicesuite.CustomerBTC, b.Text(t, `[data-field="address"]`))
	assert.Zero(t, needs.Eval[int](t, b, `document.querySelectorAll('form').length`), "no second address")
	lookAtClaim(t, b, dir, "3-ready", page, []string{".total-amount", "#headline", `[data-field="address"]`})

	sending, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	require.Equal(t, invoice.RefundSending, sending.Status)
	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#refund")))
	assert.Equal(t, "Your refund is on its way", b.Text(t, "#headline"))

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

	b.Do(t, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#refund")))
	assert.Equal(t, "Your refund was sent", b.Text(t, "#headline"))
	assert.Equal(t, got.Refunds[0].TxID, b.Text(t, `[data-field="txid"]`))
	lookAtClaim(t, b, dir, "4-sent", page, []string{".total-amount", "#headline", `[data-field="txid"]`})

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

// docClaimShot writes png as the README's screenshot of the claim page
// when the README's screenshots are to be rewritten.
func docClaimShot(t *testing.T, png []byte) {
	t.Helper()
	if os.Getenv(docScreenshotEnv) == "1" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "docs", "claim-page.png"), png, 0o644))
	}
}
