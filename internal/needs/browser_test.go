package needs

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// servePage serves html under a strict Content-Security-Policy.
func servePage(t *testing.T, html string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(html))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const cleanPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pay</title></head>
<body><main><h1>Pay</h1><p id="p">text</p><button type="button">Copy</button></main></body></html>`

func TestBrowserIsHeadlessWithAFreshProfileAndReportsViolations(t *testing.T) {
	b := NewBrowser(t)
	u := servePage(t, cleanPage)
	b.Do(t, chromedp.Navigate(u))
	assert.Contains(t, Eval[string](t, b, `navigator.userAgent`), "HeadlessChrome")
	assert.Equal(t, "text", b.Text(t, "#p"))
	assert.Equal(t, "button", b.Attr(t, "button", "type"))
	assert.Empty(t, b.Reported())

	// What a page reports is recorded: a blocked image (CSP) and a
	// console error.
	Eval[bool](t, b, `(function () { var i = document.createElement('img'); i.alt = 'x'; i.src = 'http://127.0.0.2:9/x.png'; document.body.appendChild(i); console.error('boom'); return true; })()`)
	b.WaitFor(t, `(window.__cspViolations || []).length === 1`)
	require.Eventually(t, func() bool { return len(b.Reported()) >= 3 }, StepTimeout, 10*time.Millisecond)
	assert.Contains(t, b.Reported(), "error: boom")
	assert.Contains(t, b.Reported(), "error: CSP violation: img-src http://127.0.0.2:9/x.png")

	// The profile is the test's own: what one browser stores, another
	// does not see.
	Eval[bool](t, b, `localStorage.setItem('k', 'v'), true`)
	other := NewBrowser(t)
	other.Do(t, chromedp.Navigate(u))
	assert.Equal(t, "none", Eval[string](t, other, `localStorage.getItem('k') || 'none'`))
	assert.Equal(t, "v", Eval[string](t, b, `localStorage.getItem('k') || 'none'`))
}

func TestAxeReturnsSeriousAndCriticalViolations(t *testing.T) {
	b := NewBrowser(t)
	b.Do(t, chromedp.Navigate(servePage(t, cleanPage)))
	assert.Empty(t, Axe(t, b), "a clean page")

	// No lang (serious), an image without alt and a button without a
	// name (critical).
	b.Do(t, chromedp.Navigate(servePage(t, `<!doctype html><html><head><title>x</title></head><body><main>
		<img src="/x.png"><button type="button"></button></main></body></html>`)))
	ids := map[string]string{}
	for _, v := range Axe(t, b) {
		ids[v.ID] = v.Impact
		assert.NotEmpty(t, v.Nodes, v.ID)
	}
	assert.Equal(t, map[string]string{"html-has-lang": "serious", "image-alt": "critical", "button-name": "critical"}, ids)
}
