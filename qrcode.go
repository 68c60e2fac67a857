package cryptapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"
)

// QR code sizes in pixels.
const (
	MinQRSize     = 64
	MaxQRSize     = 1024
	DefaultQRSize = 512
)

// QRCodeOptions are the parameters of QRCode.
type QRCodeOptions struct {
	// Address is the payment address (Address.AddressIn). Required.
	Address string `url:"address"`
	// Value is the amount in the coin, encoded in the payment URI; zero
	// leaves it out.
	Value decimal.Decimal `url:"-"`
	// Size is the image size in pixels, MinQRSize..MaxQRSize; zero means
	// DefaultQRSize.
	Size int `url:"size,omitempty"`
}

// QRCode is the answer of QRCode.
type QRCode struct {
	// QRCode is the image, base64-encoded, as the service sent it.
	QRCode string `json:"qr_code"`
	// PaymentURI is the URI the image encodes.
	PaymentURI string `json:"payment_uri"`
	// Status is "success".
	Status string `json:"status"`
}

func (q *QRCode) apiStatus() string { return q.Status }

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// PNG returns the decoded image bytes. It accepts plain base64 and a
// data: URI, and checks that the result is a PNG.
func (q *QRCode) PNG() ([]byte, error) {
	s := strings.TrimSpace(q.QRCode)
	if i := strings.Index(s, ";base64,"); strings.HasPrefix(s, "data:") && i >= 0 {
		s = s[i+len(";base64,"):]
	}
	if s == "" {
		return nil, errors.New("cryptapi: QR code is empty")
	}
	img, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		img, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil {
			return nil, fmt.Errorf("cryptapi: QR code is not base64: %w", err)
		}
	}
	if !bytes.HasPrefix(img, pngMagic) {
		return nil, errors.New("cryptapi: QR code is not a PNG image")
	}
	return img, nil
}

// QRCode returns a QR code image for paying o.Address (and o.Value).
func (c *Client) QRCode(ctx context.Context, ticker string, o *QRCodeOptions) (*QRCode, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if o == nil || strings.TrimSpace(o.Address) == "" {
		return nil, ErrAddressRequired
	}
	if !validAddressText(o.Address) {
		return nil, fmt.Errorf("%w: malformed address", ErrInvalidOption)
	}
	if o.Size != 0 && (o.Size < MinQRSize || o.Size > MaxQRSize) {
		return nil, ErrInvalidQRSize
	}
	if o.Value.IsNegative() {
		return nil, ErrInvalidValue
	}
	var q url.Values
	if o.Value.IsPositive() {
		q = url.Values{"value": {o.Value.String()}}
	}
	return call[QRCode](ctx, c, &request{
		op:    "qrcode",
		path:  t.Path() + "/qrcode/",
		opts:  o,
		query: q,
		retry: true,
	})
}
