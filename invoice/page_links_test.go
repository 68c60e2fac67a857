package invoice_test

import (
	"bytes"
	"encoding/json"
	"image"
	"net/http"
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
