package cryptapitest

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"
)

// paymentURI is the URI a wallet reads from the QR code:
// <chain>:<address>[?amount=<value>], for example
// "bitcoin:bc1q...?amount=0.001" or "tron:T...?amount=10". Bitcoin Cash
// addresses already carry their "bitcoincash:" prefix.
func paymentURI(c *Coin, addr string, value decimal.Decimal) string {
	uri := addr
	if c.Chain != ChainBitcoinCash || !strings.HasPrefix(addr, ChainBitcoinCash+":") {
		uri = c.Chain + ":" + addr
	}
	if value.IsPositive() {
		uri += "?amount=" + value.String()
	}
	return uri
}

// qrPNG draws content as a size x size PNG and returns it base64-encoded.
// Modules are whole pixels (the largest that fit), centred in a white
// margin, so that the image scans reliably at every size.
func qrPNG(content string, size int) (string, error) {
	q, err := qrcode.New(content, qrcode.Medium)
	if err != nil {
		return "", err
	}
	bits := q.Bitmap() // includes the quiet zone
	n := len(bits)
	scale := size / n
	if scale < 1 {
		// The symbol has more modules than the image has pixels; let the
		// library sample it down, whatever the result.
		var buf bytes.Buffer
		if err := png.Encode(&buf, q.Image(size)); err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
	}
	img := image.NewPaletted(image.Rect(0, 0, size, size), color.Palette{color.White, color.Black})
	off := (size - n*scale) / 2
	for y, row := range bits {
		for x, dark := range row {
			if !dark {
				continue
			}
			for dy := 0; dy < scale; dy++ {
				i := img.PixOffset(off+x*scale, off+y*scale+dy)
				for dx := 0; dx < scale; dx++ {
					img.Pix[i+dx] = 1
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
