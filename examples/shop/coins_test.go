package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// started is the shop started by run, as "go run ./examples/shop" does.
type started struct {
	url    string
	stderr *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the shop's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRun runs the shop with args on a free loopback port and returns
// the URL it prints; the shop stops at the end of the test.
func startRun(t *testing.T, args ...string) started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	stderr := &syncBuffer{}
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, stderr)
		_ = pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	line := make([]byte, 200)
	n, err := pr.Read(line)
	require.NoError(t, err, "stderr: %s", stderr.String())
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return started{url: strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(line[:n])), "shop: open "), "/"), stderr: stderr}
}

// checkout buys product and returns the answer's status, its Location
// and its body.
func checkout(t *testing.T, base, product string) (int, string, string) {
	t.Helper()
	resp, err := noFollow.PostForm(base+"/checkout", url.Values{"product": {product}})
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

// Every coin the demo offers sells: a checkout gets a payment address
// (the demo's destination is valid for the coin), and the developer
// panel pays and confirms it until the order is settled.
func TestEveryOfferedCoinSells(t *testing.T) {
	fake := newDemoFake()
	tickers := fake.Tickers()
	fake.Close()
	require.NotEmpty(t, tickers)
	spellings := map[string]string{"TRC20/USDT": "trc20_usdt", " btc ": "btc"} // as a user may type them
	for _, tk := range append(tickers, "TRC20/USDT", " btc ") {
		t.Run(tk, func(t *testing.T) {
			s := startRun(t, "-ticker", tk)
			code, loc, body := checkout(t, s.url, "hoodie")
			require.Equal(t, http.StatusSeeOther, code, "%s: %s", tk, body)
			require.True(t, strings.HasPrefix(loc, "/pay/"), loc)
			id := strings.TrimPrefix(loc, "/pay/")
			for _, action := range []string{actFull, actConfirm} {
				resp, err := noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {action}})
				require.NoError(t, err)
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, http.StatusSeeOther, resp.StatusCode, "%s %s: %s", tk, action, msg)
			}
			resp, err := http.Get(s.url + loc)
			require.NoError(t, err)
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Contains(t, string(page), `data-status="settled"`, tk)

			// The panel pays in another coin where the fake has one on
			// the network, and says so where it has none.
			_, loc, _ = checkout(t, s.url, "hoodie")
			resp, err = noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {strings.TrimPrefix(loc, "/pay/")}, "action": {actWrongCoin}})
			require.NoError(t, err)
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			key := tk
			if k, ok := spellings[tk]; ok {
				key = k
			}
			switch key {
			case "eth", "erc20_usdt", "trx", "trc20_usdt":
				assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "%s: %s", tk, msg)
			default:
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, tk)
				assert.Contains(t, string(msg), "no other coin on the network", tk)
			}
		})
	}
}

// A coin the demo's fake service does not have is refused at start,
// before anything is served, with the coins it has.
func TestUnknownCoinIsRefusedAtStart(t *testing.T) {
	// ("-ticker" left empty is the default: the customer chooses.)
	for _, tk := range []string{"doge", "trc20_nope", "BTC/", "../btc"} {
		var out bytes.Buffer
		// A shop that starts anyway stops at the guard, without error.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-ticker", tk}, &out, io.Discard)
		cancel()
		require.Error(t, err, "%q", tk)
		assert.Contains(t, err.Error(), "-ticker", tk)
		assert.Contains(t, err.Error(), "trc20_usdt", "%q: the coins to choose from", tk)
		assert.Empty(t, out.String(), "%q: nothing started", tk)
	}
}

// goErrorText are pieces of the SDK's and the fake's error texts that a
// customer must never see.
var goErrorText = []string{"cryptapi", "cryptapitest", "invoice:", "checkout failed", "minimum transaction", "error", "Error", "dial tcp", "%!"}

// Customers see a page that says what happened and what to do, never
// Go error text: for a product below the coin's minimum, an unknown
// product, and a service that fails (the error goes to the shop's log).
func TestCustomersSeeFriendlyMessages(t *testing.T) {
	// ETH's minimum is 0.005 (15 USD at the fake's price): the mug is
	// 12.50 USD.
	s := startRun(t, "-ticker", "eth")
	code, _, body := checkout(t, s.url, "mug")
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "Coffee mug")
	assert.Contains(t, body, "15.00 USD", "the smallest ETH payment, in the shop's currency")
	assert.Contains(t, body, `href="/"`, "a way back")
	for _, bad := range goErrorText {
		assert.NotContains(t, body, bad)
	}
	code, _, _ = checkout(t, s.url, "tee")
	assert.Equal(t, http.StatusSeeOther, code, "25 USD is above it")

	code, _, body = checkout(t, s.url, "yacht")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "not for sale")
	for _, bad := range goErrorText {
		assert.NotContains(t, body, bad)
	}

	// The service is down: the customer is asked to try again, and the
	// shop's log has the reason.
	fake := newDemoFake()
	opts, err := fakeOptions(fake, cryptapitest.NewFakeClock(time.Now()), "http://127.0.0.1:1")
	require.NoError(t, err)
	var logged syncBuffer
	opts.log = slog.New(slog.NewTextHandler(&logged, nil))
	shopHandler, err := newShop(opts)
	require.NoError(t, err)
	ts := httptest.NewServer(shopHandler)
	t.Cleanup(ts.Close)
	fake.Close()
	code, _, body = checkout(t, ts.URL, "tee")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "try again")
	for _, bad := range goErrorText {
		assert.NotContains(t, body, bad)
	}
	assert.Contains(t, logged.String(), "checkout", "the merchant sees why")
	assert.Contains(t, logged.String(), "connection refused")
}
