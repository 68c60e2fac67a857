package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstart runs the README's main command on the embedded fake and
// checks that it shows a verified pending and confirmed payment, writes a
// real PNG, and ends with the payment done in the logs.
func TestQuickstart(t *testing.T) {
	qr := filepath.Join(t.TempDir(), "qr.png")
	var out bytes.Buffer
	err := run(context.Background(), []string{"-qr", qr}, &out, func(string) string { return "" })
	require.NoError(t, err, out.String())
	text := out.String()
	for _, want := range []string{
		"in-process fake, keyless form",
		"pay 0.00041667 btc (25 USD)",
		"callback   pending   order 1001",
		"callback   confirmed order 1001: 0.00041667 btc received, 0.00040667 forwarded, fee 0.00001",
		"result done confirmed true, 2 deliveries",
	} {
		assert.Contains(t, text, want)
	}
	assert.Less(t, strings.Index(text, "callback   pending"), strings.Index(text, "callback   confirmed"))
	f, err := os.Open(qr)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 256, img.Bounds().Dx())
}

func TestQuickstartLiveNeedsPublicURL(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-live"}, &out, func(string) string { return "" })
	assert.ErrorContains(t, err, "-public-url")
}
