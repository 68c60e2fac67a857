package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/forwardpay/cryptapi-go"
)

func qrcodeCmd() *command {
	return &command{
		name:     "qrcode",
		synopsis: "-ticker TICKER -address-in ADDRESS [-amount AMOUNT] [-out FILE] [flags]",
		summary:  "write a payment QR code as a PNG file",
		help: `Asks the service for a QR code of the payment address (and amount),
writes it as a PNG file and prints the file's path and the payment URI
the code holds.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			addr := fs.String("address-in", "", "payment `address` the customer pays to, as printed by create (required)")
			alias(fs, "address", "address-in")
			var value decimalFlag
			fs.Var(&value, "amount", "`amount` in the coin to put in the payment URI")
			alias(fs, "value", "amount")
			size := fs.Int("size", cryptapi.DefaultQRSize, fmt.Sprintf("image size in `pixels`, %d to %d", cryptapi.MinQRSize, cryptapi.MaxQRSize))
			out := fs.String("out", "qrcode.png", "PNG `file` to write (replaced if it exists)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "address-in", *addr, "out", *out); err != nil {
					return err
				}
				if value.set && !value.d.IsPositive() {
					return usagef("-amount must be a positive amount")
				}
				if *size < cryptapi.MinQRSize || *size > cryptapi.MaxQRSize {
					return usagef("-size must be between %d and %d", cryptapi.MinQRSize, cryptapi.MaxQRSize)
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				qr, err := c.QRCode(ctx, *tk, &cryptapi.QRCodeOptions{Address: strings.TrimSpace(*addr), Value: value.d, Size: *size})
				if err != nil {
					return err
				}
				path, n, err := writePNG(*out, qr)
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						File       string `json:"file"`
						Bytes      int    `json:"bytes"`
						PaymentURI string `json:"payment_uri"`
					}{path, n, qr.PaymentURI})
				}
				t := newTable()
				t.kv("File", path)
				t.kv("Payment URI", qr.PaymentURI)
				return t.flush(a.stdout)
			}
		},
	}
}

// writePNG writes the QR code image to name and returns its absolute path
// and size.
func writePNG(name string, qr *cryptapi.QRCode) (string, int, error) {
	img, err := qr.PNG()
	if err != nil {
		return "", 0, err
	}
	path, err := filepath.Abs(name)
	if err != nil {
		return "", 0, err
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return "", 0, fmt.Errorf("writing the image: %w", err)
	}
	return path, len(img), nil
}
