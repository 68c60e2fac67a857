package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// The staff refund an overpaid order in Chromium, with JavaScript off, on
// a phone and a desktop, light and dark, checked with axe-core: an
// amount above what was received is refused in words; the overpaid part
// is refunded; the customer enters an address on the claim page; Send
// pays it from the fake's payout wallet, and once the payout is done the
// admin shows the refund sent with its transaction.
func TestAdminRefundInARealBrowser(t *testing.T) {
	b := newBrowser(t)
	s := startTestShop(t)
	dir := artifactsDir(t)
	noScript(t, b, true)
	setScreen(t, b, screens[0])

	id := buy(t, b, s, "hoodie")
	s.panel(t, id, actFull)
	inv := s.get(t, id)
	_, err := s.fake.Pay(inv.Ticker, inv.AddressIn, decimal.NewFromInt(5))
	require.NoError(t, err)
	require.NoError(t, s.fake.Flush(context.Background()))
	s.panel(t, id, actConfirm)
	inv = s.get(t, id)
	require.Equal(t, invoice.ExceptionPaidOver, inv.Exception)

	open(t, b, s, s.guard.loginPath())
	page := "/admin/invoices/" + id
	open(t, b, s, page)
	assert.Equal(t, "overpaid", needs.Eval[string](t, b, `document.querySelector('input[name=of]:checked').value`))
	look(t, b, dir, "admin-refund-form", nil)

	// More than was received: refused in words, the form keeps its values.
	b.Do(t, chromedp.Click(chromedp.CSS(`input[name=of][value=custom]`)))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#refund-amount"), inv.Paid.Add(decimal.NewFromInt(1)).String()))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#refund-reason"), "<b>too much</b>"))
	submit(t, b, "#refund", page+"/refund")
	assert.Contains(t, b.Text(t, ".notice.bad"), "That is more than can be refunded")
	assert.Equal(t, "<b>too much</b>", needs.Eval[string](t, b, `document.getElementById('refund-reason').value`))
	assert.Equal(t, "custom", needs.Eval[string](t, b, `document.querySelector('input[name=of]:checked').value`))
	look(t, b, dir, "admin-refund-refused", nil)
	assert.Empty(t, s.get(t, id).Refunds)

	// The overpaid part.
	b.Do(t, chromedp.Click(chromedp.CSS(`input[name=of][value=overpaid]`)))
	b.Do(t, chromedp.SetValue(chromedp.CSS("#refund-reason"), "Paid 5 USDT too much"))
	submit(t, b, "#refund", page)
	assert.Contains(t, b.Text(t, ".notice.ok"), "The refund is made")
	rf := s.get(t, id).Refunds[0]
	assert.True(t, decimal.NewFromInt(5).Equal(rf.Amount), rf.Amount.String())
	assert.Equal(t, "Awaiting address", b.Text(t, ".refund .pill"))
	claim := b.Attr(t, ".claim-link", "value")
	assert.Equal(t, s.url+"/pay/"+rf.ClaimPath, claim)
	look(t, b, dir, "admin-refund-claim", nil)
	open(t, b, s, s.orders.byNumber(inv.OrderID).Path())
	assert.Equal(t, "/pay/"+rf.ClaimPath, b.Attr(t, "#claim-link", "href"))
	look(t, b, dir, "order-refund", nil)

	// The developer panel leads to the claim page, with an address to
	// enter there: the customer's side.
	open(t, b, s, "/dev/")
	assert.Contains(t, b.Text(t, ".sim-claims"), customerWallet)
	look(t, b, dir, "panel-refund", nil)
	needs.Eval[string](t, b, `window.__left = 'no'`)
	b.Do(t, chromedp.Click(chromedp.CSS("#claim-"+rf.ID)))
	b.WaitFor(t, `window.__left === undefined && document.readyState === 'complete' && document.getElementById('address') !== null`)
	assert.Equal(t, claim, needs.Run(t, b, chromedp.Location()))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#address"), customerWallet))
	needs.Eval[string](t, b, `window.__left = 'no'`)
	b.Do(t, chromedp.Submit(chromedp.CSS("#address")))
	b.WaitFor(t, `window.__left === undefined && document.readyState === 'complete' && document.getElementById('address') === null`)
	assert.Contains(t, b.Text(t, "body"), customerWallet)

	// Send, then the payout is done.
	open(t, b, s, page)
	assert.Equal(t, "Ready to send", b.Text(t, ".refund .pill"))
	look(t, b, dir, "admin-refund-ready", nil)
	submit(t, b, fmt.Sprintf("#send-%s", rf.ID), page)
	assert.Contains(t, b.Text(t, ".notice.ok"), "The payout is on its way")
	assert.Equal(t, "Sending", b.Text(t, ".refund .pill"))
	s.clock.Advance(cryptapitest.PayoutSettleTime + invoice.RefundCheckEvery)
	_, err = s.desk.Tick(context.Background())
	require.NoError(t, err)
	open(t, b, s, page)
	got := s.get(t, id).Refunds[0]
	require.Equal(t, invoice.RefundSent, got.Status)
	assert.Equal(t, "Sent", b.Text(t, ".refund .pill"))
	assert.Contains(t, b.Text(t, ".refund"), got.TxID)
	look(t, b, dir, "admin-refund-sent", map[screen]string{screens[2]: "shop-refund.png"})

	// The customer's order page shows the refund sent.
	open(t, b, s, s.orders.byNumber(inv.OrderID).Path())
	assert.Contains(t, b.Text(t, ".refund-card"), got.TxID)
	look(t, b, dir, "order-refunded", nil)
}
