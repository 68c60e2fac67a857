package main

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// In a real browser, the panel's buttons work, and a page of another
// site that posts to the panel (a form submitted by its script, in each
// encoding a form has) moves nothing.
func TestPanelInARealBrowser(t *testing.T) {
	b := newBrowser(t)
	s := startTestShop(t)
	dir := artifactsDir(t)
	id := buy(t, b, s, "tee")

	// The developer presses "Pay in full" in the panel.
	b.Do(t,
		chromedp.Navigate(s.url+"/dev/"),
		chromedp.WaitReady(chromedp.CSS("main")),
	)
	needs.Eval[string](t, b, `window.__left = 'no'`)
	b.Do(t, chromedp.Click(chromedp.CSS(fmt.Sprintf(`form:has(input[name=invoice][value=%q]) button[value=full]`, id))))
	b.WaitFor(t, `window.__left === undefined && location.pathname === '/dev/' && document.readyState === 'complete'`)
	require.Equal(t, invoice.StatusProcessing, s.get(t, id).Status, "the panel's own form works")
	b.Screenshot(t, dir, "panel.png")

	// Another site's page posts the panel's form by itself, without the
	// token (it cannot read it) or with a guessed one.
	for _, enctype := range []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"} {
		for _, token := range []string{"", "guessed"} {
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, `<!doctype html><title>Free coins</title><form id="f" method="post" action="%s/dev/act" enctype="%s">
<input type="hidden" name="invoice" value="%s"><input type="hidden" name="action" value="confirm">%s</form>
<script>document.getElementById('f').submit()</script>`, html.EscapeString(s.url), enctype, html.EscapeString(id),
					map[bool]string{true: `<input type="hidden" name="token" value="` + token + `">`, false: ""}[token != ""])
			}))
			// Served as localhost, another site than 127.0.0.1 to the browser.
			evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) + "/"
			b.Do(t, chromedp.Navigate(evilURL))
			b.WaitFor(t, fmt.Sprintf(`location.href.indexOf(%q) === 0 && document.readyState === 'complete'`, s.url+"/dev/act"))
			body := b.Text(t, "body")
			assert.NotContains(t, body, "Developer panel", "%s %q: refused", enctype, token)
			evil.Close()
		}
	}
	assert.Equal(t, invoice.StatusProcessing, s.get(t, id).Status, "nothing was confirmed")
	assert.Len(t, s.unconfirmed(s.get(t, id)), 1, "the payment is still unconfirmed")
}
