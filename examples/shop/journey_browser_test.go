package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// submit presses the button (or follows the link) sel and waits for the
// page it leads to, whose path is path.
func submit(t *testing.T, b *needs.Browser, sel, path string) {
	t.Helper()
	needs.Eval[string](t, b, `window.__left = 'no'`)
	b.Do(t, chromedp.Click(chromedp.CSS(sel)))
	b.WaitFor(t, fmt.Sprintf(`window.__left === undefined && document.readyState === 'complete' && location.pathname === %q`, path))
}

// open loads the shop's page at path.
func open(t *testing.T, b *needs.Browser, s *testShop, path string) {
	t.Helper()
	b.Do(t, chromedp.Navigate(s.url+path), chromedp.WaitReady(chromedp.CSS("main")))
}

// The whole journey, with JavaScript off, in Chromium, on a phone and a
// desktop, light and dark, checked with axe-core, in the shop of `go run
// ./examples/shop`: a customer browses, fills the cart, checks out among
// the coins offered, lands on the payment page, chooses BTC there, then
// switches to USDT; the developer panel pays on the fake; the order page
// says it is paid. Then
// the staff, in the admin, settle an underpaid order by hand and reopen
// an expired one, and the customers' order pages follow.
func TestShopJourneyInARealBrowser(t *testing.T) {
	b := newBrowser(t)
	s := startShopWith(t, everyCoin)
	dir := artifactsDir(t)
	t.Logf("screenshots in %s", dir)
	noScript(t, b, true)
	setScreen(t, b, screens[0])

	// The store.
	open(t, b, s, "/")
	assert.Equal(t, "0", b.Text(t, ".nav .count"))
	look(t, b, dir, "store", map[screen]string{screens[2]: "shop-store.png"})

	// Into the cart: a mug and two T-shirts, then one fewer.
	submit(t, b, "#add-mug", "/")
	assert.Contains(t, b.Text(t, ".notice"), "Coffee mug is in your cart")
	submit(t, b, "#add-tee", "/")
	submit(t, b, "#add-tee", "/")
	assert.Equal(t, "3", b.Text(t, ".nav .count"))
	submit(t, b, `a[href="/cart"]`, "/cart")
	assert.Equal(t, "$62.50", b.Text(t, ".grand dd"))
	look(t, b, dir, "cart", map[screen]string{screens[0]: "shop-cart.png"})
	submit(t, b, `button[aria-label="One fewer T-shirt"]`, "/cart")
	assert.Equal(t, "$37.50", b.Text(t, ".grand dd"))

	// The checkout, then the payment page.
	submit(t, b, "#to-checkout", "/checkout")
	assert.Equal(t, "Pay $37.50", b.Text(t, "#pay-button"))
	coins := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('.coin-list li')).map(function (li) { return li.textContent; })`)
	assert.Equal(t, []string{"BBTC", "ΞETH", "₮USDT (TRC20)", "ŁLTC", "BBCH", "₮USDT (BEP20)", "₮USDT (ERC20)", "₮USDT (POLYGON)", "TTRX"}, coins,
		"every coin the cart is above the minimum of")
	look(t, b, dir, "checkout", map[screen]string{screens[0]: "shop-checkout.png"})
	needs.Eval[string](t, b, `window.__left = 'no'`)
	b.Do(t, chromedp.Click(chromedp.CSS("#pay-button")))
	b.WaitFor(t, `window.__left === undefined && location.pathname.indexOf('/pay/') === 0 && document.getElementById('invoice') !== null`)
	id := strings.TrimPrefix(needs.Run(t, b, chromedp.Location()), s.url+"/pay/")
	inv := s.get(t, id)
	assert.Equal(t, "Coffee mug, T-shirt", inv.Description)
	assert.Equal(t, "37.5", inv.Price.String())
	assert.Equal(t, "USD", inv.Currency)
	assert.Equal(t, "new", b.Attr(t, "#invoice", "data-status"))
	assert.Equal(t, shopName, b.Text(t, "h1.shop"))
	assert.Empty(t, inv.Ticker, "the customer chooses")
	assert.Len(t, needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('button[name=coin]')).map(function (b) { return b.value; })`), 9)
	look(t, b, dir, "payment-choose", nil)

	// The cart is empty again, and the order is listed.
	open(t, b, s, "/orders/")
	assert.Equal(t, "0", b.Text(t, ".nav .count"))
	assert.Equal(t, "Awaiting payment", b.Text(t, "td .pill"))
	look(t, b, dir, "orders", nil)
	submit(t, b, "td a", "/orders/"+s.orders.byNumber(inv.OrderID).Token)
	assert.Equal(t, "Awaiting payment", b.Text(t, "#state-title"))
	assert.Equal(t, "/pay/"+id, b.Attr(t, "#pay-link", "href"))
	assert.Equal(t, "Choose a coin and pay", b.Text(t, "#pay-link"))
	look(t, b, dir, "order-new", nil)
	open(t, b, s, "/cart")
	assert.Contains(t, b.Text(t, "main"), "Your cart is empty")
	look(t, b, dir, "cart-empty", nil)

	// The panel cannot pay before the choice, and says so.
	open(t, b, s, "/dev/")
	row := fmt.Sprintf(`form:has(input[name=invoice][value=%q])`, id)
	assert.True(t, needs.Eval[bool](t, b, fmt.Sprintf(`document.querySelector(%q).disabled`, row+` button[value=full]`)))
	assert.Contains(t, b.Text(t, "main"), "No coin chosen yet")

	// Back on the payment page, the customer chooses BTC, then switches
	// to USDT (TRC20) before paying: the form works without JavaScript.
	open(t, b, s, "/pay/"+id)
	submit(t, b, `button[name=coin][value=btc]`, "/pay/"+id)
	btc := s.get(t, id)
	require.Equal(t, "btc", btc.Ticker)
	assert.Equal(t, btc.AddressIn, b.Attr(t, `.addr button.copy`, "data-copy-value"))
	submit(t, b, `a.change`, "/pay/"+id)
	look(t, b, dir, "payment-switch", nil)
	submit(t, b, `button[name=coin][value=trc20_usdt]`, "/pay/"+id)
	usdt := s.get(t, id)
	require.Equal(t, "trc20_usdt", usdt.Ticker)
	require.NotEqual(t, btc.AddressIn, usdt.AddressIn)
	assert.Equal(t, "new", b.Attr(t, "#invoice", "data-status"))
	look(t, b, dir, "payment", nil)

	// The developer panel pays the USDT address in full and confirms.
	open(t, b, s, "/dev/")
	assert.Contains(t, b.Text(t, "main"), "paying in USDT (TRC20)")
	submit(t, b, row+` button[value=full]`, "/dev/")
	assert.Equal(t, "Paid in full on the fake chain.", b.Text(t, ".notice"))
	submit(t, b, row+` button[value=confirm]`, "/dev/")
	assert.Equal(t, invoice.StatusSettled, s.get(t, id).Status)
	look(t, b, dir, "panel", map[screen]string{screens[3]: "shop-panel.png"})

	// The order page says so, and the payment page links back to it.
	orderPath := s.orders.byNumber(inv.OrderID).Path()
	open(t, b, s, orderPath)
	assert.Equal(t, "Paid", b.Text(t, "#state-title"))
	assert.Contains(t, b.Text(t, ".pay-line"), "37.5 USDT")
	look(t, b, dir, "order-paid", map[screen]string{screens[1]: "shop-order.png"})
	open(t, b, s, "/pay/"+id)
	assert.Equal(t, "settled", b.Attr(t, "#invoice", "data-status"))
	assert.Equal(t, orderPath, b.Attr(t, "a.return", "href"))

	// An order paid in part, then expired: the staff settle it by hand.
	underpaid := buy(t, b, s, "hoodie")
	chooseCoin(t, s.url, underpaid, "trc20_usdt")
	s.panel(t, underpaid, actPartial)
	s.panel(t, underpaid, actConfirm)
	s.panel(t, underpaid, actExpire)
	// And one that expired with nothing paid: the staff reopen it.
	expired := buy(t, b, s, "cap")
	s.panel(t, expired, actExpire)

	open(t, b, s, s.guard.loginPath())
	require.Equal(t, "/admin/", needs.Eval[string](t, b, `location.pathname`), "signed in")
	submit(t, b, `.tabs a[href*="exception"]`, "/admin/")
	assert.Equal(t, "Needs attention", b.Text(t, `.tabs a[aria-current]`))
	rows := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('tbody td.lead a')).map(function (a) { return a.textContent; })`)
	assert.Equal(t, []string{"Order " + s.get(t, underpaid).OrderID}, rows)
	open(t, b, s, "/admin/")
	look(t, b, dir, "admin", map[screen]string{screens[2]: "shop-admin.png"})

	open(t, b, s, "/admin/invoices/"+underpaid)
	assert.Equal(t, "Expired", b.Text(t, "#status"))
	assert.Equal(t, "Partly paid", b.Text(t, "#exception"))
	look(t, b, dir, "admin-invoice", nil)
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#settle-reason"), "Customer paid the rest in cash"))
	submit(t, b, "#settle", "/admin/invoices/"+underpaid)
	assert.Equal(t, "The invoice is marked as settled.", b.Text(t, ".notice"))
	assert.Equal(t, "Settled", b.Text(t, "#status"))
	assert.Equal(t, "Settled by hand", b.Text(t, "#exception"))
	assert.Contains(t, b.Text(t, ".events li"), "Customer paid the rest in cash")
	got := s.get(t, underpaid)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionMarked, got.Exception)
	open(t, b, s, s.orders.byNumber(got.OrderID).Path())
	assert.Equal(t, "Paid", b.Text(t, "#state-title"))

	open(t, b, s, "/admin/invoices/"+expired)
	b.Do(t, chromedp.SetValue(chromedp.CSS("#reopen-for"), "2h"))
	b.Do(t, chromedp.SendKeys(chromedp.CSS("#reopen-reason"), "Customer asked for more time"))
	submit(t, b, "#reopen", "/admin/invoices/"+expired)
	assert.Equal(t, "Open", b.Text(t, "#status"))
	got = s.get(t, expired)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Equal(t, s.clock.Now().Add(2*time.Hour).Unix(), got.ExpiresAt.Unix(), "two more hours")
	open(t, b, s, s.orders.byNumber(got.OrderID).Path())
	assert.Equal(t, "Awaiting payment", b.Text(t, "#state-title"))
	assert.Equal(t, "/pay/"+expired, b.Attr(t, "#pay-link", "href"))
}
