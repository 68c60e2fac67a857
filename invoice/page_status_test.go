package invoice_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func decodeView(t *testing.T, url string, h http.Header) invoice.PageView {
	t.Helper()
	resp, body := getWith(t, url, h)
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	var v invoice.PageView
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}

var etagForm = regexp.MustCompile(`^"[A-Za-z0-9_-]{22}"$`)

// An open page asks whether its status changed: 304 Not Modified, with
// no body, while nothing shown changed (the seconds left count down in
// the page itself); 200 with a new tag as soon as something did. A tag is
// one invoice's, in one language: no other invoice or language answers
// 304 to it.
func TestPageStatusIsNotModifiedUntilItChanges(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	twin := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	status := ts.URL + "/pay/" + inv.ID + "/status?lang=en"
	resp, body := get(t, status)
	tag := resp.Header.Get("ETag")
	require.Regexp(t, etagForm, tag)
	require.NotEmpty(t, body)
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "no cache between the page and the server keeps it")
	_, page := get(t, ts.URL+"/pay/"+inv.ID+"?lang=en")
	assert.Contains(t, string(page), `data-etag="`+strings.ReplaceAll(tag, `"`, "&#34;")+`"`, "the page carries its status's tag")

	notModified := func(header string) bool {
		t.Helper()
		resp, body := getWith(t, status, http.Header{"If-None-Match": {header}})
		if resp.StatusCode == http.StatusNotModified {
			assert.Empty(t, body)
			assert.Equal(t, tag, resp.Header.Get("ETag"))
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
			return true
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return false
	}
	assert.True(t, notModified(tag))
	e.Clock.Advance(30 * time.Second)
	assert.True(t, notModified(tag), "only the seconds left changed")
	assert.True(t, notModified("W/"+tag))
	assert.True(t, notModified(`"other", `+tag))
	for _, h := range []string{"*", `"other"`, strings.Trim(tag, `"`), tag + "x", strings.Repeat(tag+", ", 100)} {
		assert.False(t, notModified(h), "%.40q", h)
	}
	resp, _ = get(t, ts.URL+"/pay/"+twin.ID+"/status?lang=en")
	twinTag := resp.Header.Get("ETag")
	assert.NotEqual(t, tag, twinTag, "two invoices in the same state")
	resp, _ = getWith(t, ts.URL+"/pay/"+twin.ID+"/status?lang=en", http.Header{"If-None-Match": {tag}})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another invoice's tag")
	resp, _ = getWith(t, ts.URL+"/pay/"+inv.ID+"/status?lang=de", http.Header{"If-None-Match": {tag}})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another language")
	assert.NotEqual(t, tag, resp.Header.Get("ETag"))

	// A payment changes what is shown: 200, a new tag, then 304 again.
	e.Pay("btc", inv.AddressIn, "0.0001")
	assert.False(t, notModified(tag), "a partial payment")
	resp, _ = get(t, status)
	tag = resp.Header.Get("ETag")
	assert.True(t, notModified(tag))

	// The clock alone: past the deadline the page shows expired.
	e.Clock.Advance(2 * time.Hour)
	assert.False(t, notModified(tag), "expired")
	resp, _ = get(t, status)
	tag = resp.Header.Get("ETag")
	assert.True(t, notModified(tag))
	assert.Equal(t, invoice.StatusExpired, decodeView(t, status, nil).Status)
}

// A page or status request reads the invoice once (a Load by ID) and
// never writes, also when the clock has made it expired before anything
// stored that: the page shows it as the clock makes it now.
func TestPageRequestsReadOnceAndNeverWrite(t *testing.T) {
	e, store, ts := pageEnv(t)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("0.001")})
	check := func(what string) {
		t.Helper()
		for _, path := range []string{"", "/status", "/qr.png", "/qr-address.png"} {
			before := store.calls()
			resp, _ := get(t, ts.URL+"/pay/"+inv.ID+path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			after := store.calls()
			assert.Equal(t, [4]int64{before[0] + 1, before[1], before[2], before[3]}, after, "%s %q: one Load, nothing else", what, path)
			_, _ = getWith(t, ts.URL+"/pay/"+inv.ID+path, http.Header{"If-None-Match": {resp.Header.Get("ETag")}})
			assert.Equal(t, [4]int64{before[0] + 2, before[1], before[2], before[3]}, store.calls(), "%s %q again", what, path)
		}
	}
	check("waiting")
	e.Clock.Advance(2 * time.Hour)
	check("past the deadline")
	assert.Equal(t, invoice.StatusNew, e.Stored(inv.ID).Status, "nothing stored")
	v := decodeView(t, ts.URL+"/pay/"+inv.ID+"/status", nil)
	assert.Equal(t, invoice.StatusExpired, v.Status)
	assert.Equal(t, invoice.PhaseExpired, v.Phase)
	assert.False(t, v.ShowPay)
	assert.Equal(t, "Do not send any payment to this address.", v.Warning)
}

// A quote that has lapsed is not offered: while no new one can be made,
// the page says the amount is being updated and shows no amount, link or
// code; then the new amount, once Tick made it.
func TestPageLapsedQuoteShowsNoStaleAmount(t *testing.T) {
	e := newShopEnv(t, nil)
	inv := e.create(invoice.CreateOptions{})
	e.infoDown.Store(true)
	e.clock.Advance(16 * time.Minute)
	v := statusOf(t, e.url+"/pay/"+inv.ID+"/status")
	assert.Equal(t, invoice.StatusNew, v.Status)
	assert.Equal(t, invoice.PhaseUpdating, v.Phase)
	assert.Equal(t, "Updating the amount", v.Headline)
	assert.False(t, v.ShowPay)
	assert.Empty(t, v.Due+v.DueText+v.DueFiat+v.PaymentURI+v.QRURL+v.QRAddressURL)
	_, page := get(t, e.url+"/pay/"+inv.ID)
	assert.NotContains(t, string(page), inv.Due.String())
	assert.NotContains(t, string(page), "bitcoin:")
	assert.Contains(t, string(page), `class="spinner"`)
	for _, p := range []string{invoice.PageQRPath, invoice.PageQRAddressPath} {
		_, png := get(t, e.url+"/pay/"+inv.ID+"/"+p)
		assert.Empty(t, qrText(t, png), p)
	}

	e.infoDown.Store(false)
	_, err := e.desk.Tick(e.ctx)
	require.NoError(t, err)
	v = statusOf(t, e.url+"/pay/"+inv.ID+"/status")
	now := e.stored(inv.ID)
	assert.Equal(t, invoice.PhasePay, v.Phase)
	assert.Equal(t, now.Due.String(), v.Due)
	assert.Equal(t, int64(900), v.QuoteSeconds, "a new quote")
}

// What the merchant and the order give the page is shown as text: markup
// is escaped, control and direction-override characters are dropped, and
// placeholders in it are not filled.
func TestPageShowsTheShopAndTheOrderAsText(t *testing.T) {
	name := "Tom's <b>Shop</b> & \"Co\" \u202egpj.exe\x00\x1b"
	desc := "<script>alert(1)</script> 2 × \"Mug\" {amount} {shop} <img src=x onerror=alert(2)>"
	e := newShopEnv(t, nil, invoice.WithMerchantName(name), invoice.WithLogo(pngOf(t, 120, 40)),
		invoice.WithReturnURL(func(*invoice.Invoice) string { return "/" }))
	inv := e.create(invoice.CreateOptions{Description: desc, Price: decimal.RequireFromString("0.001")})
	_, body := get(t, e.url+"/pay/"+inv.ID)
	page := string(body)
	assert.Contains(t, page, "<title>Pay Tom&#39;s &lt;b&gt;Shop&lt;/b&gt; &amp; &#34;Co&#34; gpj.exe</title>")
	assert.Contains(t, page, "<bdi>Tom&#39;s &lt;b&gt;Shop&lt;/b&gt; &amp; &#34;Co&#34; gpj.exe</bdi>")
	assert.Contains(t, page, "<bdi>&lt;script&gt;alert(1)&lt;/script&gt; 2 × &#34;Mug&#34; {amount} {shop} &lt;img src=x onerror=alert(2)&gt;</bdi>")
	assert.NotContains(t, page, "<script>alert")
	assert.NotContains(t, page, "<img src=x")
	assert.NotContains(t, page, "\u202e")
	assert.Contains(t, page, `<img class="logo" src="_/logo.png?v=`)
	assert.Contains(t, page, `alt="" width="120" height="40"`)

	v := statusOf(t, e.url+"/pay/"+inv.ID+"/status")
	assert.Equal(t, "Tom's <b>Shop</b> & \"Co\" gpj.exe", v.Merchant)
	assert.Equal(t, "<script>alert(1)</script> 2 × \"Mug\" {amount} {shop} <img src=x onerror=alert(2)>", v.Description)
	_, raw := get(t, e.url+"/pay/"+inv.ID+"/status")
	assert.NotContains(t, string(raw), "<script>", "JSON escapes markup too")

	resp, logo := get(t, e.url+"/pay/_/logo.png")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "image/png", resp.Header.Get("Content-Type"))
	assert.Equal(t, pngOf(t, 120, 40), logo)

	// Joiners stay: an emoji family is one emoji, and Persian keeps its
	// zero-width non-joiner.
	assert.Equal(t, "Family 👨\u200d👩\u200d👧 می\u200cخواهم", statusOf(t, newShopEnvPage(t, "Family 👨\u200d👩\u200d👧 می\u200cخواهم\u200f")).Merchant)

	// A placeholder in the shop's name is text too.
	e2 := newShopEnv(t, nil, invoice.WithMerchantName("{amount} {shop} Store"))
	inv2 := e2.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
	assert.Equal(t, "Pay {amount} {shop} Store", statusOf(t, e2.url+"/pay/"+inv2.ID+"/status").Title)

	// The receipt shows them too, as text.
	e.confirm(e.pay(inv, decimal.RequireFromString("0.001")))
	_, body = get(t, e.url+"/pay/"+inv.ID)
	assert.NotContains(t, string(body), "<script>alert")
	assert.Contains(t, string(body), "<dd><bdi>Tom&#39;s &lt;b&gt;Shop&lt;/b&gt;")
}

// A logo that is not a small PNG is not shown, and not served.
func TestPageRefusesLogosThatAreNotSmallPNGs(t *testing.T) {
	noise := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = byte(r.UintN(256))
	}
	var big, gifData bytes.Buffer
	require.NoError(t, png.Encode(&big, noise))
	require.Greater(t, big.Len(), invoice.MaxLogoBytes)
	require.NoError(t, gif.Encode(&gifData, image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{color.Black}), nil))
	for what, logo := range map[string][]byte{
		"a GIF":           gifData.Bytes(),
		"HTML":            []byte("<html><script>alert(1)</script></html>"),
		"too many pixels": pngOf(t, invoice.MaxLogoPixels+1, 8),
		"too many bytes":  big.Bytes(),
		"a truncated PNG": pngOf(t, 64, 64)[:24],
	} {
		e := newShopEnv(t, nil, invoice.WithLogo(logo))
		inv := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
		_, body := get(t, e.url+"/pay/"+inv.ID)
		assert.NotContains(t, string(body), "logo.png", what)
		resp, _ := get(t, e.url+"/pay/_/logo.png")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, what)
	}
}

// A payment in another coin, one after the end, and one more than asked:
// the page says what happens next, and shows the invoice ID to quote.
func TestPageSaysWhatHappensNext(t *testing.T) {
	e := newShopEnv(t, nil)
	wrong := e.create(invoice.CreateOptions{Ticker: "trc20_usdt", Price: decimal.RequireFromString("30"), Currency: "USD", MultiToken: true})
	e.confirm(e.payIn("trx", wrong, decimal.RequireFromString("250")))
	v := statusOf(t, e.url+"/pay/"+wrong.ID+"/status")
	assert.Equal(t, invoice.PhasePay, v.Phase, "still due")
	assert.True(t, v.ShowPay)
	assert.Contains(t, v.Detail, "does not count toward the price; the shop will review it and contact you")
	assert.True(t, v.ShowID)
	_, body := get(t, e.url+"/pay/"+wrong.ID)
	assert.Contains(t, string(body), `data-copy-value="`+wrong.ID+`"`)

	late := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
	e.clock.Advance(2 * time.Hour)
	e.confirm(e.pay(late, decimal.RequireFromString("0.001")))
	v = statusOf(t, e.url+"/pay/"+late.ID+"/status")
	assert.Equal(t, invoice.PhaseExpired, v.Phase)
	assert.Equal(t, invoice.ExceptionPaidLate, v.Exception)
	assert.Contains(t, v.Detail, "after the invoice ended")
	assert.True(t, v.ShowReceipt, "the payment is listed")
	require.Len(t, v.Payments, 1)
	assert.True(t, v.Payments[0].Late)

	over := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
	e.confirm(e.pay(over, decimal.RequireFromString("0.003")))
	v = statusOf(t, e.url+"/pay/"+over.ID+"/status")
	assert.Equal(t, invoice.PhaseSettled, v.Phase)
	assert.Equal(t, "You sent more than asked. The shop will contact you about the excess.", v.Detail)
	assert.Equal(t, "0.003\u00a0BTC", v.Received)
}

// The script stays small.
func TestPageScriptIsSmall(t *testing.T) {
	_, _, ts := pageEnv(t)
	_, js := get(t, ts.URL+"/pay/_/page.js")
	assert.Less(t, len(js), 16<<10)
}

// newShopEnvPage is the status URL of a new invoice of a shop named name.
func newShopEnvPage(t *testing.T, name string) string {
	t.Helper()
	e := newShopEnv(t, nil, invoice.WithMerchantName(name))
	inv := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
	return e.url + "/pay/" + inv.ID + "/status"
}
