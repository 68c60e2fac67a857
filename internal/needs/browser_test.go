package needs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
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

// With the page's scripts off its own timers do not run, so a wait done
// inside the page would never see a page that was still loading when the
// wait began: WaitFor asks from the test, and sees the next page complete.
func TestWaitForSeesAPageLoadWithItsScriptsOff(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pay</title></head><body>` + body + `</body></html>`))
		}
	}
	mux.HandleFunc("/{$}", page(`<a id="next" href="/next">next</a>`))
	mux.HandleFunc("/next", page(`<img alt="" src="/slow.png"><p id="p">next</p>`))
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "image/png")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := NewBrowser(t)
	b.Do(t, chromedp.Navigate(srv.URL+"/"))
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.Do(t, chromedp.Click(chromedp.CSS("#next")))
	// The image answers once the wait has begun on a page still loading.
	time.AfterFunc(300*time.Millisecond, func() { close(release) })
	b.WaitFor(t, `location.pathname === '/next' && document.readyState === 'complete'`)
	assert.Equal(t, "next", b.Text(t, "#p"))
}
