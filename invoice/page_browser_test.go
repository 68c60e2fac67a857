package invoice_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
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
		allowed := []string{inv.AddressIn, "bitcoin:" + inv.AddressIn}
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
	e := newShopEnv(t, exponentAmount, invoice.WithPollInterval(100e6))
	inv := e.create(invoice.CreateOptions{})
	require.Contains(t, inv.PaymentURI, "e-", "the service's URI in exponent form")
	b := needs.NewBrowser(t)
	pageURL := e.url + "/pay/" + inv.ID
	b.Do(t, chromedp.EmulateViewport(360, 640), chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("#invoice")))
	b.WaitFor(t, `!document.querySelector('[data-copy]').hidden`)
	checkLinks(t, b, pageURL, inv.PaymentURI)
	checkCodes(t, b, inv.PaymentURI, inv)

	e.pay(inv, inv.Due.Div(decimal.NewFromInt(2)).Round(8))
	now := e.stored(inv.ID)
	require.Equal(t, invoice.ExceptionPaidPartial, now.Exception)
	require.Empty(t, now.PaymentURI, "the form is unknown: no URI for the remainder")
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('invoice').getAttribute('data-exception') === %q`, "paid_partial"))
	b.WaitFor(t, fmt.Sprintf(`document.getElementById('amount').textContent === %q`, now.Due.String()))
	checkLinks(t, b, pageURL, "")
	checkCodes(t, b, "", now)
	assert.Empty(t, b.Reported())
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
