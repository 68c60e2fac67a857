package main

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/needs"
)

// What a customer sees in a real browser when there is no payment page:
// a title and a sentence that say what happened and what to do, a way
// back, no Go error text, on a phone and a desktop, light and dark.
func TestCheckoutProblemsInARealBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := artifactsDir(t)

	// Paying for the mug in ETH: below the coin's minimum.
	s := startRun(t, "-ticker", "eth")
	b.Do(t, chromedp.Navigate(s.url+"/"), chromedp.WaitReady(chromedp.CSS("#buy-mug")))
	assert.Contains(t, b.Text(t, "main p"), "paid in ETH")
	b.Screenshot(t, dir, "home-eth.png")
	b.Do(t, chromedp.Click(chromedp.CSS("#buy-mug")))
	b.WaitFor(t, `location.pathname === '/checkout' && document.readyState === 'complete'`)
	assert.Equal(t, "This order is too small to pay in ETH", b.Text(t, "h1"))
	assert.Contains(t, b.Text(t, "main p"), "about 15.00 USD")
	lookAt(t, b, dir, "below-minimum")

	// The service is down.
	fake := newDemoFake()
	ts := httptest.NewUnstartedServer(nil)
	opts, err := fakeOptions(fake, cryptapitest.NewFakeClock(time.Now()), "http://"+ts.Listener.Addr().String())
	require.NoError(t, err)
	opts.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	down, err := newShop(opts)
	require.NoError(t, err)
	ts.Config.Handler = down
	ts.Start()
	t.Cleanup(ts.Close)
	fake.Close()
	b.Do(t, chromedp.Navigate(ts.URL+"/"), chromedp.Click(chromedp.CSS("#buy-tee")))
	b.WaitFor(t, `location.pathname === '/checkout' && document.readyState === 'complete'`)
	assert.Equal(t, "Payments are not available right now", b.Text(t, "h1"))
	lookAt(t, b, dir, "service-down")
}

// lookAt checks a page that says what went wrong: a way back, and what
// look checks.
func lookAt(t *testing.T, b *needs.Browser, dir, name string) {
	t.Helper()
	assert.Equal(t, "/", b.Attr(t, "main a", "href"), "%s: a way back", name)
	look(t, b, dir, name, nil)
}
