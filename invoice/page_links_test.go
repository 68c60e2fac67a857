package invoice_test

import (
	"bytes"
	"encoding/json"
	"image"
	"net/http"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// qrText is the text of a QR code image, or "" for an image that holds
// no code (the blank image of an invoice with nothing to pay).
func qrText(t *testing.T, png []byte) string {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	require.NoError(t, err)
	if img.Bounds().Dx() < 21 {
		return ""
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText()
}

func statusOf(t *testing.T, url string) invoice.PageView {
	t.Helper()
	resp, body := get(t, url)
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	var v invoice.PageView
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}

// The return link: only https URLs and true same-site paths pass, the
// same for the server-rendered link and the status the script reads.
// Browsers read "/\host" (and "/<tab>/host": tabs and newlines are
// dropped) as "//host".
func TestPageReturnLinkIsHTTPSOrASameSitePath(t *testing.T) {
	for _, tc := range []struct {
		link string
		ok   bool
	}{
		{"/orders/7", true},
		{"/orders/7?x=1#top", true},
		{"https://shop.example/orders/7", true},
		{"/%5Cevil.example/x", true}, // an escaped backslash stays in the path
		{`/\evil.example/x`, false},
		{`/\\evil.example/x`, false},
		{`\/evil.example/x`, false},
		{"/\t/evil.example/x", false},
		{"/\n/evil.example/x", false},
		{"/orders/\r7", false},
		{" /orders/7", false},
		{"//evil.example/x", false},
		{"http://shop.example/orders/7", false},
		{"https://shop.example@evil.example/", false},
		{`https://shop.example\@evil.example/`, false},
		{"https:evil.example", false},
		{"https:///evil.example", false},
		{"javascript:alert(1)", false},
		{"JavaScript:alert(1)", false},
		{"data:text/html,x", false},
		{"orders/7", false},
		{"", false},
	} {
		e := newShopEnv(t, nil, invoice.WithReturnURL(func(*invoice.Invoice) string { return tc.link }))
		inv := e.create(invoice.CreateOptions{Price: decimal.RequireFromString("0.001")})
		e.confirm(e.pay(inv, decimal.RequireFromString("0.001")))
		v := statusOf(t, e.url+"/pay/"+inv.ID+"/status")
		require.Equal(t, invoice.StatusSettled, v.Status)
		_, page := get(t, e.url+"/pay/"+inv.ID)
		if tc.ok {
			assert.Equal(t, tc.link, v.ReturnURL, "%q", tc.link)
			assert.True(t, v.ShowReturn, "%q", tc.link)
			continue
		}
		assert.Empty(t, v.ReturnURL, "%q", tc.link)
		assert.False(t, v.ShowReturn, "%q", tc.link)
		assert.NotContains(t, string(page), "evil.example", "%q", tc.link)
	}
}

// The QR codes encode only what the page's scheme check allows: the same
// rule as for the "Open in wallet" link.
func TestPageQRCodesPassTheLinksSchemeCheck(t *testing.T) {
	for _, bad := range []string{"javascript:alert(document.domain)//", "data:text/html,", "JAVASCRIPT:x//", "vbscript:x//"} {
		e := newShopEnv(t, func(uri string) string { return bad + uri })
		inv := e.create(invoice.CreateOptions{})
		require.True(t, strings.HasPrefix(inv.PaymentURI, bad), "the service's URI as it came: %q", inv.PaymentURI)
		for _, paid := range []bool{false, true} {
			if paid {
				e.pay(inv, inv.Due.Div(decimal.NewFromInt(2)).Round(8))
			}
			v := statusOf(t, e.url+"/pay/"+inv.ID+"/status")
			require.True(t, v.ShowPay)
			assert.Empty(t, v.PaymentURI, "no link with a refused scheme")
			for _, p := range []string{invoice.PageQRPath, invoice.PageQRAddressPath} {
				resp, png := get(t, e.url+"/pay/"+inv.ID+"/"+p)
				if resp.StatusCode != http.StatusOK {
					continue // no code at all is fine
				}
				text := qrText(t, png)
				assert.False(t, strings.HasPrefix(strings.ToLower(text), strings.ToLower(bad[:4])), "%s encodes %q", p, text)
				assert.Contains(t, []string{"", inv.AddressIn}, text, "%s: the bare address or nothing", p)
			}
		}
	}

	// A wallet scheme passes, in the link and in both codes.
	e := newShopEnv(t, nil)
	inv := e.create(invoice.CreateOptions{})
	v := statusOf(t, e.url+"/pay/"+inv.ID+"/status")
	assert.Equal(t, inv.PaymentURI, v.PaymentURI)
	_, png := get(t, e.url+"/pay/"+inv.ID+"/"+invoice.PageQRPath)
	assert.Equal(t, inv.PaymentURI, qrText(t, png))
	_, png = get(t, e.url+"/pay/"+inv.ID+"/"+invoice.PageQRAddressPath)
	assert.Equal(t, "bitcoin:"+inv.AddressIn, qrText(t, png))
}
