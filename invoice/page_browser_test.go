package invoice_test

import (
	"net/url"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

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

// The return link the script shows is the one the server allows: a path
// that a browser reads as another host never becomes a link.
func TestPageBrowserReturnLinkStaysOnTheSite(t *testing.T) {
	for _, link := range []string{`/\evil.example/x`, "/\t/evil.example/x"} {
		e := newShopEnv(t, nil, invoice.WithPollInterval(100e6),
			invoice.WithReturnURL(func(*invoice.Invoice) string { return link }))
		inv := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
		b := needs.NewBrowser(t)
		pageURL := e.url + "/pay/" + inv.ID
		b.Do(t, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("#invoice")))
		e.confirm(e.pay(inv, decimal.RequireFromString("0.001")))
		b.WaitFor(t, `document.getElementById('invoice').getAttribute('data-status') === 'settled'`)
		checkLinks(t, b, pageURL, "")
		hrefs := needs.Eval[[]string](t, b, `Array.from(document.querySelectorAll('a[href]')).map(function (a) { return a.href; })`)
		for _, h := range hrefs {
			assert.NotContains(t, h, "evil.example", "%q", link)
		}
	}
}
