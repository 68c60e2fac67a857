package cryptapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQRCode(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/qrcode/", serveFixture(t, "qrcode.json"))
		qr, err := c.QRCode(context.Background(), "btc", &QRCodeOptions{Address: btcIn})
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, btcIn, q.Get("address"))
		assert.False(t, q.Has("size"), "the default size is the service's")
		assert.False(t, q.Has("value"), "no value unless given")

		assert.Equal(t, "success", qr.Status)
		assert.Equal(t, "bitcoin:"+btcIn+"?amount=0.00125", qr.PaymentURI)
		raw, err := qr.PNG()
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(raw))
		require.NoError(t, err, "a real PNG")
		assert.Equal(t, 148, img.Bounds().Dx())
	})
}

func TestQRCodeValueAndSize(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /trc20/usdt/qrcode/", serveFixture(t, "qrcode.json"))
	_, err := c.QRCode(context.Background(), "trc20/usdt", &QRCodeOptions{
		Address: "TVFXgg1TkVd9xztW1inaA2U4RCiyWVUTg2", Value: mustDec("12.500000"), Size: 256,
	})
	require.NoError(t, err)
	q := api.last().Query
	assert.Equal(t, "12.5", q.Get("value"), "exact decimal text")
	assert.Equal(t, "256", q.Get("size"))

	for _, size := range []int{MinQRSize, MaxQRSize} {
		_, err := c.QRCode(context.Background(), "btc/", &QRCodeOptions{Address: btcIn, Size: size})
		assert.ErrorIs(t, err, ErrInvalidTicker)
		api.handle("GET /btc/qrcode/", serveFixture(t, "qrcode.json"))
		_, err = c.QRCode(context.Background(), "btc", &QRCodeOptions{Address: btcIn, Size: size})
		require.NoError(t, err, "size %d is allowed", size)
	}
}

func TestQRCodeValidationBeforeNetwork(t *testing.T) {
	cases := []struct {
		name string
		opts *QRCodeOptions
		want error
	}{
		{"nil options", nil, ErrAddressRequired},
		{"no address", &QRCodeOptions{}, ErrAddressRequired},
		{"blank address", &QRCodeOptions{Address: "  "}, ErrAddressRequired},
		{"malformed address", &QRCodeOptions{Address: "3PFD?x=1"}, ErrInvalidOption},
		{"size 63", &QRCodeOptions{Address: btcIn, Size: MinQRSize - 1}, ErrInvalidQRSize},
		{"size 1025", &QRCodeOptions{Address: btcIn, Size: MaxQRSize + 1}, ErrInvalidQRSize},
		{"negative size", &QRCodeOptions{Address: btcIn, Size: -512}, ErrInvalidQRSize},
		{"negative value", &QRCodeOptions{Address: btcIn, Value: mustDec("-0.1")}, ErrInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			api.handle("GET /btc/qrcode/", serveFixture(t, "qrcode.json"))
			qr, err := c.QRCode(context.Background(), "btc", tc.opts)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, qr)
			assert.Zero(t, api.count())
		})
	}
}

func TestQRCodePNG(t *testing.T) {
	img := genQRPNG()
	b64 := base64.StdEncoding.EncodeToString(img)

	for name, text := range map[string]string{
		"plain":           b64,
		"spaces":          "\n " + b64 + " \n",
		"data URI":        "data:image/png;base64," + b64,
		"without padding": strings.TrimRight(b64, "="),
	} {
		got, err := (&QRCode{QRCode: text}).PNG()
		require.NoError(t, err, name)
		assert.Equal(t, img, got, name)
	}
	for name, text := range map[string]string{
		"empty":        "",
		"not base64":   "not base64 at all!",
		"not a PNG":    base64.StdEncoding.EncodeToString([]byte("GIF89a....")),
		"empty data":   "data:image/png;base64,",
		"truncated 1B": b64[:1],
	} {
		got, err := (&QRCode{QRCode: text}).PNG()
		assert.Error(t, err, name)
		assert.Nil(t, got, name)
	}
}

func TestQRCodeZeroValueLeftOut(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/qrcode/", serveFixture(t, "qrcode.json"))
	_, err := c.QRCode(context.Background(), "btc", &QRCodeOptions{Address: btcIn, Value: decimal.Zero})
	require.NoError(t, err)
	assert.False(t, api.last().Query.Has("value"))
}
