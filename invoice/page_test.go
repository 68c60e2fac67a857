package invoice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// countingStore counts what the page asks of the store: every ID, well
// formed or not, costs one lookup, and a read never writes.
type countingStore struct {
	invoice.Store
	loads, updates, notifies, inserts atomic.Int64
}

func (s *countingStore) Load(ctx context.Context, id string) (*invoice.Record, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, id)
}

func (s *countingStore) Insert(ctx context.Context, r *invoice.Record) error {
	s.inserts.Add(1)
	return s.Store.Insert(ctx, r)
}

func (s *countingStore) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	s.updates.Add(1)
	return s.Store.Update(ctx, id, key, change)
}

func (s *countingStore) Notify(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) error {
	s.notifies.Add(1)
	return s.Store.Notify(ctx, id, fn)
}

// calls is the number of store calls of every kind so far.
func (s *countingStore) calls() [4]int64 {
	return [4]int64{s.loads.Load(), s.updates.Load(), s.notifies.Load(), s.inserts.Load()}
}

// pageEnv mounts the Desk's page at /pay on a test server.
func pageEnv(t *testing.T, opts ...invoice.PageOption) (*invoicesuite.Env, *countingStore, *httptest.Server) {
	t.Helper()
	store := &countingStore{Store: invoice.NewMemoryStore()}
	e := invoicesuite.NewEnv(t, store)
	mux := http.NewServeMux()
	mux.Handle("/pay/", http.StripPrefix("/pay", e.Desk.Page(opts...)))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return e, store, ts
}

// noRedirects shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return getWith(t, url, nil)
}

// getWith sends a GET with the headers of h.
func getWith(t *testing.T, url string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func decodeQR(t *testing.T, png []byte) string {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(png))
	require.NoError(t, err)
	require.Equal(t, "png", format)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText()
}

var dataAttr = regexp.MustCompile(`<div id="invoice"[^>]* data-status="([^"]*)" data-exception="([^"]*)" data-phase="([^"]*)"`)

func TestPageShowsTheInvoiceAndItsStatusAgrees(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv := e.Create(invoice.CreateOptions{OrderID: "1001", Price: invoicesuite.D("25"), Currency: "USD", Description: "2 × Mug"})
	resp, body := get(t, ts.URL+"/pay/"+inv.ID)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	m := dataAttr.FindStringSubmatch(page)
	require.NotNil(t, m, "root element with data-status, data-exception and data-phase")
	assert.Equal(t, []string{"new", "", "pay"}, m[1:])
	assert.Contains(t, page, ">"+inv.Due.String()+"<")
	assert.Contains(t, page, `data-copy-value="`+inv.Due.String()+`"`)
	assert.Contains(t, page, `data-copy-value="`+inv.AddressIn+`"`)
	assert.Contains(t, page, ">2 × Mug<")
	assert.Contains(t, page, ">$25.00<", "the total")
	assert.Contains(t, page, "≈ $25.00")
	assert.Contains(t, page, "Send at least "+inv.Minimum.String()+" BTC; less is lost.")
	assert.NotContains(t, page, "1001", "the order ID is not shown")

	resp, body = get(t, ts.URL+"/pay/"+inv.ID+"/status")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var v invoice.PageView
	require.NoError(t, json.Unmarshal(body, &v))
	assert.Equal(t, inv.Due.String(), v.Due)
	assert.Equal(t, inv.PaymentURI, v.PaymentURI)
	assert.Equal(t, invoice.PhasePay, v.Phase)
	assert.Equal(t, int64(900), v.QuoteSeconds)
	assert.Equal(t, "15:00", v.QuoteLeft)
	assert.Equal(t, int64(3600), v.ExpiryTotal)
	assert.Contains(t, page, ">"+v.Headline+"<", "the page shows the status's headline")
	assert.Contains(t, page, `src="`+v.QRURL+`"`)
	assert.Contains(t, page, `alt="`+v.QRAlt+`"`)

	_, png := get(t, ts.URL+"/pay/"+v.QRURL)
	assert.Equal(t, inv.PaymentURI, decodeQR(t, png))
	_, png = get(t, ts.URL+"/pay/"+v.QRAddressURL)
	assert.Equal(t, "bitcoin:"+inv.AddressIn, decodeQR(t, png))

	// A partial payment: the page shows the remainder, the status agrees.
	e.Pay("btc", inv.AddressIn, "0.0002")
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"/status")
	require.NoError(t, json.Unmarshal(body, &v))
	inv = e.Get(inv.ID)
	assert.Equal(t, "paid_partial", string(v.Exception))
	assert.True(t, v.ShowProgress)
	assert.Equal(t, "48% paid", v.ProgressText)
	assert.Equal(t, inv.Due.String(), v.Due)
	assert.Equal(t, "$"+inv.Remaining.StringFixed(2), v.Remaining)
	_, png = get(t, ts.URL+"/pay/"+v.QRURL)
	assert.Equal(t, inv.PaymentURI, decodeQR(t, png), "the QR asks for the remainder")
	_, body = get(t, ts.URL+"/pay/"+inv.ID)
	assert.Contains(t, string(body), ">"+inv.Due.String()+"<")
	assert.Contains(t, string(body), ">48% paid<")

	// Expiry: nothing to pay, no code to pay. A page that was still
	// loading the code of a moment ago gets a blank image (not an error).
	e.Clock.Advance(2 * time.Hour)
	_, body = get(t, ts.URL+"/pay/"+inv.ID)
	assert.Equal(t, []string{"expired", "paid_partial", "expired"}, dataAttr.FindStringSubmatch(string(body))[1:])
	assert.Contains(t, string(body), "Do not send any payment to this address.")
	assert.Contains(t, string(body), ">"+inv.ID+"<", "the ID to quote")
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"/status")
	v = invoice.PageView{}
	require.NoError(t, json.Unmarshal(body, &v))
	assert.Empty(t, v.QRURL, "the page shows no code")
	assert.Empty(t, v.Due)
	assert.Equal(t, "Part of the price arrived before the invoice expired. The shop will contact you to complete the order or refund you.", v.Detail)
	for _, p := range []string{invoice.PageQRPath, invoice.PageQRAddressPath} {
		resp, png = get(t, ts.URL+"/pay/"+inv.ID+"/"+p)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "image/png", resp.Header.Get("Content-Type"))
		img, _, err := image.Decode(bytes.NewReader(png))
		require.NoError(t, err)
		assert.Equal(t, 1, img.Bounds().Dx(), "a blank image, not a code to pay")
	}
}

func TestPageOpensOnlyForTheInvoiceID(t *testing.T) {
	e, store, ts := pageEnv(t)
	inv := e.Create(invoice.CreateOptions{OrderID: "ORDER1001ABCDEFGHIJKLMNOPQ", Price: invoicesuite.D("25"), Currency: "USD"})
	other := e.Create(invoice.CreateOptions{OrderID: "1002", Price: invoicesuite.D("30"), Currency: "USD"})
	require.Len(t, inv.OrderID, len(inv.ID), "an order ID of an ID's form")

	var want *http.Response
	var wantBody []byte
	probes := []string{
		inv.OrderID, "1002", strings.ToLower(inv.ID), inv.ID[:25], inv.ID + "A", inv.ID[:25] + "0",
		"AAAAAAAAAAAAAAAAAAAAAAAAAA", inv.ID + "%00", "%2e%2e", "_", "_/", "_/other.js", "_/logo.png",
		inv.ID + "/status/x", inv.ID + "/qr.png/", inv.ID + "/", inv.ID + "/nonce", other.ID + "x",
		strings.Repeat("A", 5000), "%ff%fe",
	}
	for _, id := range probes {
		for _, suffix := range []string{"", "/status", "/qr.png", "/qr-address.png"} {
			before := store.loads.Load()
			resp, body := get(t, ts.URL+"/pay/"+id+suffix)
			if resp.StatusCode/100 == 3 || resp.StatusCode == http.StatusBadRequest {
				continue // the mux cleaned the path or the client refused it: never reaches the page
			}
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, id+suffix)
			assert.Equal(t, before+1, store.loads.Load(), "one store lookup for %q", id+suffix)
			resp.Header.Del("Date")
			if want == nil {
				want, wantBody = resp, body
				continue
			}
			assert.Equal(t, want.Header, resp.Header, id+suffix)
			assert.Equal(t, wantBody, body, id+suffix)
		}
	}
	require.NotNil(t, want)
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "Cache-Control"} {
		assert.NotEmpty(t, want.Header.Get(h), h)
	}
	assert.NotContains(t, string(wantBody), inv.ID)

	// The real ID opens the page, and shows nothing of the other invoice.
	resp, body := get(t, ts.URL+"/pay/"+inv.ID)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), other.ID)
	assert.NotContains(t, string(body), other.AddressIn)

	// Only GET and HEAD.
	r, err := http.Post(ts.URL+"/pay/"+inv.ID, "text/plain", nil)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
}

func TestPageSendsAStrictPolicyAndNoInlineCode(t *testing.T) {
	e, _, ts := pageEnv(t, invoice.WithMerchantName("Shop"), invoice.WithLogo(pngOf(t, 64, 32)))
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	r1, body := get(t, ts.URL+"/pay/"+inv.ID)
	r2, _ := get(t, ts.URL+"/pay/"+inv.ID)
	csp := r1.Header.Get("Content-Security-Policy")
	nonce := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]{22})';`).FindStringSubmatch(csp)
	require.NotNil(t, nonce, csp)
	assert.NotEqual(t, csp, r2.Header.Get("Content-Security-Policy"), "a fresh nonce per response")
	for _, d := range []string{"default-src 'none'", "style-src 'self'", "img-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		assert.Contains(t, csp, d)
	}
	assert.NotContains(t, csp, "unsafe")
	assert.NotContains(t, csp, "data:")
	assert.Empty(t, r1.Header.Get("Content-Security-Policy-Report-Only"))
	assert.Equal(t, "nosniff", r1.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", r1.Header.Get("Referrer-Policy"))
	assert.Equal(t, "no-store", r1.Header.Get("Cache-Control"))

	page := string(body)
	scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1)
	require.Len(t, scripts, 1)
	assert.Regexp(t, `src="_/page\.js\?v=[A-Za-z0-9_-]+"`, scripts[0])
	assert.Contains(t, scripts[0], `nonce="`+nonce[1]+`"`)
	assert.NotRegexp(t, `(?i)\son[a-z]+=`, page, "no inline event handler")
	assert.NotRegexp(t, `(?i)\sstyle=|<style`, page, "no inline style")
	assert.NotContains(t, page, "http-equiv")
	assert.NotContains(t, page, "//", "no absolute or protocol-relative link")
	assert.Regexp(t, `(?s)role="status" aria-live="polite"[^>]*>\s*<p id="headline"`, page,
		"status changes are announced to screen readers")
	for _, img := range regexp.MustCompile(`<img[^>]*>`).FindAllString(page, -1) {
		assert.Regexp(t, `src="[A-Z2-7]{26}/|src="_/logo\.png\?v=`, img, "images from the page's own origin")
		assert.Regexp(t, `alt="`, img)
	}
	assert.Contains(t, page, `<img class="logo" src="_/logo.png?v=`)

	for _, a := range []string{"_/page.js", "_/page.css", "_/logo.png"} {
		resp, b := get(t, ts.URL+"/pay/"+a)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.NotEmpty(t, b)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	}
}

// pngOf is a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.Bytes()
}

func TestPageStringsCSSTemplateAndReturnLink(t *testing.T) {
	e, _, ts := pageEnv(t,
		invoice.WithPageStrings(invoice.PageStrings{Lang: "de", Title: "Bezahlen", Settled: "Bezahlt. Danke!",
			QRAlt: "QR-Code: {amount} {symbol} an {address}"}),
		invoice.WithPageCSS(".card { max-width: 20rem; }"),
		invoice.WithReturnURL(func(inv *invoice.Invoice) string { return "/orders/" + inv.OrderID }),
	)
	inv := e.Create(invoice.CreateOptions{OrderID: "7", Price: invoicesuite.D("0.001")})
	_, body := get(t, ts.URL+"/pay/"+inv.ID+"?lang=de")
	page := string(body)
	assert.Contains(t, page, `<html lang="de">`)
	assert.Contains(t, page, "<title>Bezahlen</title>")
	assert.Contains(t, page, `alt="QR-Code: 0,001 BTC an `+inv.AddressIn+`"`)
	assert.Contains(t, page, "Warten auf Ihre Zahlung", "strings not given keep the built-in translation")
	assert.NotContains(t, page, `class="button return"`, "no return link before the end")
	_, body = get(t, ts.URL+"/pay/"+inv.ID)
	assert.Contains(t, string(body), "<title>Payment</title>", "English stays English")

	_, css := get(t, ts.URL+"/pay/_/page.css")
	assert.True(t, strings.HasSuffix(string(css), ".card { max-width: 20rem; }"), "merchant rules come last")
	assert.Contains(t, string(css), "--accent", "after the default ones")

	tx := e.Pay("btc", inv.AddressIn, "0.001")
	e.Confirm(tx)
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"?lang=de")
	page = string(body)
	assert.Contains(t, page, "Bezahlt. Danke!")
	assert.Contains(t, page, `href="/orders/7"`)

	// Links a page must not carry are dropped.
	for _, bad := range []string{"javascript:alert(1)", "//evil.example", "data:text/html,x", "ftp://x"} {
		e2, _, ts2 := pageEnv(t, invoice.WithReturnURL(func(*invoice.Invoice) string { return bad }))
		inv := e2.Create(invoice.CreateOptions{Price: invoicesuite.D("0.001")})
		e2.Confirm(e2.Pay("btc", inv.AddressIn, "0.001"))
		var v invoice.PageView
		_, body := get(t, ts2.URL+"/pay/"+inv.ID+"/status")
		require.NoError(t, json.Unmarshal(body, &v))
		assert.Equal(t, invoice.StatusSettled, v.Status)
		assert.Empty(t, v.ReturnURL, bad)
		assert.False(t, v.ShowReturn, bad)
	}

	// A template of the merchant's own.
	tmpl := template.Must(template.New("p").Parse(`<p data-status="{{.View.Status}}">{{.View.Due}} {{.View.Symbol}}</p>`))
	e3, _, ts3 := pageEnv(t, invoice.WithPageTemplate(tmpl))
	inv = e3.Create(invoice.CreateOptions{Price: invoicesuite.D("0.002")})
	_, body = get(t, ts3.URL+"/pay/"+inv.ID)
	assert.Equal(t, `<p data-status="new">0.002 BTC</p>`, string(body))
}

// FuzzPagePath: whatever the path, the page handler serves an asset, the
// invoice's own page, status or QR code at exactly their paths, or the
// one 404 after one store lookup. ("%s" in an input stands for the ID.)
func FuzzPagePath(f *testing.F) {
	for _, s := range []string{"/", "/X", "/_/page.js", "/_/page.css", "/_/", "/_/logo.png", "/AAAAAAAAAAAAAAAAAAAAAAAAAA",
		"/00000000000000000000000000", "/%s", "/%s/", "/%s/status", "/%s/qr.png", "/%s/qr-address.png",
		"/%s/status/", "/%s//status", "/%s/../%s", "//%s", "/%s\x00", "%s", "/%s/STATUS"} {
		f.Add(s)
	}
	srv := cryptapitest.NewServer()
	f.Cleanup(srv.Close)
	client, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	require.NoError(f, err)
	store := &countingStore{Store: invoice.NewMemoryStore()}
	desk, err := invoice.New(client, store, invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	require.NoError(f, err)
	inv, err := desk.Create(context.Background(), &invoice.CreateOptions{Ticker: "btc", Price: invoicesuite.D("0.001"),
		Callback: "https://shop.example/callback", Address: invoicesuite.BTCDest})
	require.NoError(f, err)
	page := desk.Page()
	serve := func(path string) (*httptest.ResponseRecorder, int64) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = path
		before := store.loads.Load()
		w := httptest.NewRecorder()
		page.ServeHTTP(w, r)
		return w, store.loads.Load() - before
	}
	notFound, _ := serve("/nothing")
	require.Equal(f, http.StatusNotFound, notFound.Code)
	f.Fuzz(func(t *testing.T, path string) {
		path = strings.ReplaceAll(path, "%s", inv.ID)
		w, loads := serve(path)
		// Mounted with StripPrefix("/pay") paths start with "/", with
		// StripPrefix("/pay/") they do not: both work.
		switch strings.TrimPrefix(path, "/") {
		case "_/page.js", "_/page.css":
			assert.Equal(t, http.StatusOK, w.Code)
			return
		case inv.ID, inv.ID + "/status", inv.ID + "/qr.png", inv.ID + "/qr-address.png":
			assert.Equal(t, http.StatusOK, w.Code, path)
			return
		}
		assert.Equal(t, int64(1), loads, "one lookup for %q", path)
		assert.Equal(t, http.StatusNotFound, w.Code, path)
		assert.Equal(t, notFound.Body.String(), w.Body.String(), path)
		assert.Equal(t, notFound.Header(), w.Header(), path)
	})
}
