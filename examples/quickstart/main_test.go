package main

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// TestQuickstart runs the README's main command on the embedded fake and
// checks that it shows a verified pending and confirmed payment, writes a
// real PNG, and ends with the payment done in the logs.
func TestQuickstart(t *testing.T) {
	qr := filepath.Join(t.TempDir(), "qr.png")
	var out bytes.Buffer
	err := run(context.Background(), []string{"-qr-out", qr}, &out, func(string) string { return "" })
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

// TestQuickstartLiveRefusesWithoutOwnAddress: -live without the merchant's
// own destination (none given, or a published example address) refuses
// to start, saying why, before it listens or sends anything.
func TestQuickstartLiveRefusesWithoutOwnAddress(t *testing.T) {
	// The listen address is unusable: a run that got past the checks
	// would fail on it instead, without naming -address.
	base := []string{"-live", "-public-url", "https://shop.example", "-listen", "256.0.0.1:1"}
	for _, extra := range [][]string{
		nil,
		{"-address", ""},
		{"-address", "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"},
		{"-address", demoAddress},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append(append([]string(nil), base...), extra...), &out, func(string) string { return "" })
		require.Error(t, err, "%q", extra)
		assert.Contains(t, err.Error(), "-address", "%q", extra)
		assert.Contains(t, err.Error(), "forward", "the error says why: %q", extra)
	}
}

// TestQuickstartLiveWithoutAddressExitsNonZero runs the program's main
// (this test binary, re-executed) with -live and no -address: it exits 1
// and says why on stderr.
func TestQuickstartLiveWithoutAddressExitsNonZero(t *testing.T) {
	if os.Getenv("QUICKSTART_RUN_MAIN") == "1" {
		os.Args = []string{"quickstart", "-live", "-public-url", "https://shop.example", "-listen", "256.0.0.1:1"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestQuickstartLiveWithoutAddressExitsNonZero$")
	cmd.Env = append(os.Environ(), "QUICKSTART_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr.String(), "quickstart: -live needs -address")
}

// TestQuickstartServerSetsEveryTimeout: a client cannot hold the callback
// server's connections by sending slowly, reading slowly or idling.
func TestQuickstartServerSetsEveryTimeout(t *testing.T) {
	srv := newHTTPServer(http.NewServeMux())
	assert.Positive(t, srv.ReadHeaderTimeout)
	assert.Positive(t, srv.ReadTimeout)
	assert.Positive(t, srv.IdleTimeout)
	assert.Greater(t, srv.WriteTimeout, callback.DefaultLease, "room for fn to run within its lease and answer")
}

// TestQuickstartRefusesCallbacksForAddressesItDidNotCreate sends the
// quickstart's handler a callback signed by the service for an address
// that someone else created with the shop's callback URL: refused, and
// the order is not paid. The same callback for the shop's own address is
// accepted.
func TestQuickstartRefusesCallbacksForAddressesItDidNotCreate(t *testing.T) {
	fake := cryptapitest.NewServer()
	defer fake.Close()
	v, err := callback.NewVerifier(callback.WithPublicKey(fake.PublicKey()), callback.WithPublicURL("http://shop.test"))
	require.NoError(t, err)
	var out bytes.Buffer
	s := newShop(&out, "7f3c9a21e0b84d56")
	mux, err := s.routes(v)
	require.NoError(t, err)
	target := "/callback?order_id=1001&nonce=7f3c9a21e0b84d56&uuid=u1&address_in=bc1ql7hh7r5x7trdtsvkc4cgmcm2wgs0h2ay3nw49n&address_out=bc1qvkk04v2ftzu0rr56x0rcfdvaff9leh2guf8j7h&txid_in=t1" +
		"&txid_out=t2&confirmations=1&value_coin=0.1&coin=btc&price=64000&pending=0"
	deliver := func() int {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set(callback.SignatureHeader, fake.Sign([]byte("http://shop.test"+target)))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w.Code
	}
	assert.Equal(t, http.StatusForbidden, deliver())
	assert.NotContains(t, out.String(), "confirmed order")

	s.created("bc1ql7hh7r5x7trdtsvkc4cgmcm2wgs0h2ay3nw49n", "1001") // as if the shop had created it
	assert.Equal(t, http.StatusOK, deliver())
	assert.Contains(t, out.String(), "confirmed order 1001")
}

// TestQuickstartHelpSucceeds: -h prints the flags and is not an error.
func TestQuickstartHelpSucceeds(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-h"}, &out, func(string) string { return "" })
	require.NoError(t, err)
	assert.Contains(t, out.String(), "-qr-out")
}

// TestQuickstartLeavesNoFiles: without -qr-out the run writes nothing,
// in the temporary directory or elsewhere.
func TestQuickstartLeavesNoFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	wd := t.TempDir()
	t.Chdir(wd)
	var out bytes.Buffer
	err := run(context.Background(), nil, &out, func(string) string { return "" })
	require.NoError(t, err, out.String())
	text := out.String()
	assert.Contains(t, text, "-byte PNG (-qr-out FILE writes it)")
	// Each line comes before the callback it causes (run under -race:
	// the callbacks' lines are written from the handler's goroutine).
	assert.Less(t, strings.Index(text, "customer   sent"), strings.Index(text, "callback   pending"))
	assert.Less(t, strings.Index(text, "chain      1 confirmation"), strings.Index(text, "callback   confirmed"))
	for _, dir := range []string{tmp, wd} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "files left in %s", dir)
	}
}
