package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// merchantAddress has the shape of a Bitcoin address, as the fake checks.
const merchantAddress = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"

// guard bounds waits for output that must come; it fails the test rather
// than hang it, and is never waited out when the code works.
const guard = 30 * time.Second

// simRun is a "sim serve" running in the background.
type simRun struct {
	t      *testing.T
	lines  chan string
	stderr bytes.Buffer
	done   chan int
	cancel context.CancelFunc
	all    []string
}

// startSim runs "sim serve" with args on a free port.
func startSim(t *testing.T, args ...string) *simRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &simRun{t: t, lines: make(chan string, 256), done: make(chan int, 1), cancel: cancel}
	go func() {
		code := run(ctx, append([]string{"sim", "serve", "-addr", "127.0.0.1:0"}, args...), pw, &s.stderr, nil)
		_ = pw.Close()
		s.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, pr)
		close(s.lines)
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// next returns the next line printed by the simulator.
func (s *simRun) next() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		require.True(s.t, ok, "the simulator stopped; stderr: %s", s.stderr.String())
		s.all = append(s.all, l)
		return l
	case <-time.After(guard):
		s.t.Fatal("no output from the simulator")
	}
	return ""
}

// stop interrupts the simulator and returns its exit status.
func (s *simRun) stop() int {
	s.cancel()
	code, ok := <-s.done
	if !ok {
		return 0
	}
	close(s.done)
	for l := range s.lines {
		s.all = append(s.all, l)
	}
	return code
}

type simEvent struct {
	Event     string `json:"event"`
	BaseURL   string `json:"base_url"`
	PublicKey string `json:"public_key"`
	APIKey    bool   `json:"api_key"`
	Kind      string `json:"kind"`
	Pending   bool   `json:"pending"`
	Method    string `json:"method"`
	URL       string `json:"url"`
	Status    int    `json:"status"`
	OK        bool   `json:"ok"`
}

func (s *simRun) event() simEvent {
	s.t.Helper()
	var e simEvent
	l := s.next()
	require.NoError(s.t, json.Unmarshal([]byte(l), &e), l)
	return e
}

// merchant is a shop's callback endpoint that acknowledges everything.
type merchant struct {
	*httptest.Server
	hits chan http.Header
}

func newMerchant(t *testing.T) *merchant {
	m := &merchant{hits: make(chan http.Header, 16)}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits <- r.Header.Clone()
		_, _ = io.WriteString(w, callback.OK)
	}))
	t.Cleanup(m.Close)
	return m
}

func TestSimEndToEnd(t *testing.T) {
	shop := newMerchant(t)
	sim := startSim(t, "-json", "-api-key", testKey)
	banner := sim.event()
	require.Equal(t, "listening", banner.Event)
	require.True(t, strings.HasPrefix(banner.BaseURL, "http://127.0.0.1:"), banner.BaseURL)
	assert.True(t, banner.APIKey)
	base := banner.BaseURL
	env := map[string]string{envAPIKey: testKey, envSimURL: base}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "sim.pem")
	require.NoError(t, os.WriteFile(keyFile, []byte(banner.PublicKey), 0o600))

	// The merchant creates an address through the simulator.
	r := cli(t, env, "create", "-base-url", base, "-ticker", "btc", "-address", merchantAddress,
		"-callback", shop.URL+"/cb?order=7", "-pending", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var addr struct {
		AddressIn   string `json:"address_in"`
		CallbackURL string `json:"callback_url"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &addr))
	require.NotEmpty(t, addr.AddressIn)

	// The customer pays: the pending callback is delivered and printed.
	r = cli(t, env, "sim", "pay", "-ticker", "btc", "-address", addr.AddressIn, "-amount", "0.01", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var paid struct {
		TxID string `json:"txid"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &paid))
	require.NotEmpty(t, paid.TxID)
	e := sim.event()
	assert.Equal(t, "delivery", e.Event)
	assert.True(t, e.Pending)
	assert.True(t, e.OK)
	assert.True(t, strings.HasPrefix(e.URL, shop.URL+"/cb?order=7&"), e.URL)
	require.Len(t, shop.hits, 1, "delivered before sim pay returned")
	<-shop.hits

	// The blockchain confirms: the confirmed callback is delivered.
	r = cli(t, env, "sim", "confirm", "-sim", base, "-txid", paid.TxID, "-confirmations", "1")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Confirmations +1$`, r.stdout)
	e = sim.event()
	assert.False(t, e.Pending)
	assert.Equal(t, http.MethodGet, e.Method)
	assert.Equal(t, http.StatusOK, e.Status)
	require.Len(t, shop.hits, 1)
	h := <-shop.hits

	// Its signature verifies with the key the simulator printed, and with
	// the key fetched from it, not with the published one.
	sig := h.Get(callback.SignatureHeader)
	r = cli(t, env, "verify", "-url", e.URL, "-signature", sig, "-pubkey-file", keyFile)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "valid\n", r.stdout)
	r = cli(t, env, "verify", "-url", e.URL, "-signature", sig, "-fetch-key", "-base-url", base)
	assert.Equal(t, 0, r.code, r.stderr)
	r = cli(t, env, "verify", "-url", e.URL, "-signature", sig)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "invalid\n", r.stdout)

	// The logs show the payment done and confirmed.
	r = cli(t, env, "logs", "-base-url", base, "-ticker", "btc", "-callback", addr.CallbackURL, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var logs struct {
		Payments []struct {
			Result     string `json:"result"`
			Confirmed  bool   `json:"confirmed"`
			ValueCoin  string `json:"value_coin"`
			Deliveries []any  `json:"deliveries"`
		} `json:"payments"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &logs))
	require.Len(t, logs.Payments, 1)
	assert.Equal(t, "done", logs.Payments[0].Result)
	assert.True(t, logs.Payments[0].Confirmed)
	assert.Equal(t, "0.01", logs.Payments[0].ValueCoin)
	assert.Len(t, logs.Payments[0].Deliveries, 2)

	// Below the minimum, the payment is ignored and sim pay fails.
	r = cli(t, env, "sim", "pay", "-ticker", "btc", "-address", addr.AddressIn, "-amount", "0.00001")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cryptapi: sim pay: payment below the minimum transaction is ignored")
	assert.Contains(t, r.stderr, "(txid ")

	r = cli(t, env, "sim", "pay", "-ticker", "btc", "-address", merchantAddress, "-amount", "0.01")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "unknown payment address")

	r = cli(t, env, "sim", "confirm", "-txid", "feedbeef")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cryptapi: sim confirm: unknown transaction")

	// The API-key form serves checkout pages at the simulator's address,
	// and sim checkout-pay pays them: the notification is delivered.
	r = cli(t, env, "checkout", "-base-url", base, "-value", "10", "-redirect-url", shop.URL+"/thanks",
		"-notify-url", shop.URL+"/ipn?order=8", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var page struct {
		PaymentURL string `json:"payment_url"`
		PaymentID  string `json:"payment_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, base+"/pay/"+page.PaymentID+"/", page.PaymentURL)
	resp, err := http.Get(page.PaymentURL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the hosted page is served there")
	r = cli(t, env, "sim", "checkout-pay", "-payment-id", page.PaymentID, "-ticker", "btc", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `{"payment_id":"`+page.PaymentID+`","ticker":"btc"}`, r.stdout)
	e = sim.event()
	assert.Equal(t, "ipn", e.Kind)
	assert.True(t, e.OK)
	assert.True(t, strings.HasPrefix(e.URL, shop.URL+"/ipn?order=8&"), e.URL)
	require.Len(t, shop.hits, 1, "delivered before sim checkout-pay returned")
	<-shop.hits
	r = cli(t, env, "sim", "checkout-pay", "-payment-id", page.PaymentID, "-ticker", "btc")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cryptapi: sim checkout-pay: checkout payment already paid")

	// Deposit pages take deposits of any amount.
	r = cli(t, env, "deposit", "-base-url", base, "-notify-url", shop.URL+"/deposit", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	assert.Equal(t, base+"/pay/"+page.PaymentID+"/", page.PaymentURL)
	for _, amount := range []string{"0.001", "0.25"} {
		r = cli(t, env, "sim", "deposit-pay", "-payment-id", page.PaymentID, "-ticker", "btc", "-amount", amount)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `(?m)^Amount +`+strings.ReplaceAll(amount, ".", `\.`)+`$`, r.stdout)
		e = sim.event()
		assert.Equal(t, "ipn", e.Kind)
		assert.True(t, strings.HasPrefix(e.URL, shop.URL+"/deposit?"), e.URL)
		<-shop.hits
	}
	r = cli(t, env, "sim", "deposit-pay", "-payment-id", "nope", "-ticker", "btc", "-amount", "1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "unknown checkout payment or deposit")

	// Another key is refused.
	r = cli(t, nil, "info", "-base-url", base, "-ticker", "btc", "-api-key", "another-key")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "HTTP 401")

	assert.Equal(t, 0, sim.stop())
	for _, l := range append(sim.all, sim.stderr.String()) {
		assert.NotContains(t, l, testKey)
	}
}

func TestSimHumanOutput(t *testing.T) {
	shop := newMerchant(t)
	sim := startSim(t)
	first := sim.next()
	require.Regexp(t, `^Simulator listening at http://127\.0\.0\.1:\d+ \(keyless form`, first)
	base := strings.Fields(first)[3]
	var head []string
	for l := sim.next(); l != "Try, in another terminal:"; l = sim.next() {
		head = append(head, l)
	}
	text := strings.Join(head, "\n")
	i := strings.Index(text, "-----BEGIN PUBLIC KEY-----")
	require.GreaterOrEqual(t, i, 0, text)
	_, err := cryptapi.ParsePublicKey(text[i:])
	require.NoError(t, err)

	r := cli(t, nil, "create", "-base-url", base, "-ticker", "btc", "-address", merchantAddress,
		"-callback", shop.URL+"/cb", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var addr struct {
		AddressIn string `json:"address_in"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &addr))
	r = cli(t, nil, "sim", "pay", "-sim", base, "-ticker", "btc", "-address", addr.AddressIn, "-amount", "0.5")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Transaction +[0-9a-f]{64}$`, r.stdout)
	txid := strings.Fields(r.stdout)[1]
	r = cli(t, nil, "sim", "confirm", "-sim", base, "-txid", txid)
	require.Equal(t, 0, r.code, r.stderr)
	for l := sim.next(); ; l = sim.next() {
		if strings.Contains(l, " callback ") {
			assert.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z callback confirmed GET `+shop.URL+`/cb\?uuid=\S+ -> HTTP 200 "\*ok\*", acknowledged$`, l)
			break
		}
	}
	assert.Equal(t, 0, sim.stop())
	assert.Equal(t, "cryptapi: sim serve: stopped\n", sim.stderr.String())
}

func TestSimPrintsRetriesAsTheyHappen(t *testing.T) {
	var calls atomic.Int32
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, callback.OK)
	}))
	defer shop.Close()
	sim := startSim(t, "-json", "-retry-schedule", "1ms")
	base := sim.event().BaseURL
	env := map[string]string{envSimURL: base}

	r := cli(t, env, "create", "-base-url", base, "-ticker", "btc", "-address", merchantAddress, "-callback", shop.URL+"/cb", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var addr struct {
		AddressIn string `json:"address_in"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &addr))
	r = cli(t, env, "sim", "pay", "-ticker", "btc", "-address", addr.AddressIn, "-amount", "0.01")
	require.Equal(t, 0, r.code, r.stderr)
	txid := strings.Fields(r.stdout)[1]
	r = cli(t, env, "sim", "confirm", "-txid", txid)
	require.Equal(t, 0, r.code, r.stderr)

	// The failed attempt, then the retry the simulator makes on its own.
	first := sim.event()
	assert.Equal(t, http.StatusServiceUnavailable, first.Status)
	assert.False(t, first.OK)
	retry := sim.event()
	assert.True(t, retry.OK)
	assert.Equal(t, first.URL, retry.URL)

	// The flush endpoint answers once nothing is due.
	resp, err := http.Post(base+"/_sim/flush", "application/json", nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"status":"success"}`, string(body))
	assert.Equal(t, int32(2), calls.Load())
	assert.Equal(t, 0, sim.stop())
}

func TestSimErrors(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	r := cli(t, nil, "sim", "pay", "-sim", goneURL, "-ticker", "btc", "-address", "x", "-amount", "1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "cannot reach the simulator")

	notSim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<html>hello</html>")
	}))
	defer notSim.Close()
	r = cli(t, nil, "sim", "confirm", "-sim", notSim.URL, "-txid", "ab")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "is not a simulator")

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sim", "pay", "-ticker", "btc", "-address", "x"}, "-amount is required"},
		{[]string{"sim", "pay", "-ticker", "btc", "-address", "x", "-amount", "-2"}, "-amount must be a positive amount"},
		{[]string{"sim", "confirm"}, "-txid is required"},
		{[]string{"sim", "confirm", "-txid", "ab", "-confirmations", "0"}, "-confirmations must be at least 1"},
		{[]string{"sim", "checkout-pay", "-ticker", "btc"}, "-payment-id is required"},
		{[]string{"sim", "checkout-pay", "-payment-id", "p"}, "-ticker is required"},
		{[]string{"sim", "checkout-pay", "-payment-id", "p", "-ticker", "btc", "-amount", "0"}, "-amount must be a positive amount"},
		{[]string{"sim", "deposit-pay", "-payment-id", "p", "-ticker", "btc"}, "-amount is required"},
		{[]string{"sim", "pay", "-base-url", "ftp://x", "-ticker", "btc", "-address-in", "x", "-amount", "1"}, "-base-url must be"},
		{[]string{"sim", "serve", "-retry-schedule", "soon"}, "-retry-schedule must be"},
		{[]string{"sim", "serve", "-delivery-timeout", "0s"}, "-delivery-timeout must be positive"},
		{[]string{"sim", "frob"}, "unknown command"},
	} {
		r := cli(t, nil, c.args...)
		assert.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.msg)
	}

	// A busy address is an error, not a hang.
	srv := cryptapitest.NewServer()
	defer srv.Close()
	r = cli(t, nil, "sim", "serve", "-addr", strings.TrimPrefix(srv.URL(), "http://"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "address already in use")
}

// TestSimServerSetsEveryTimeout: a client cannot hold the simulator's
// connections by sending slowly, reading slowly or idling.
func TestSimServerSetsEveryTimeout(t *testing.T) {
	srv := newSimServer(http.NewServeMux())
	assert.Positive(t, srv.ReadHeaderTimeout)
	assert.Positive(t, srv.ReadTimeout)
	assert.Positive(t, srv.WriteTimeout)
	assert.Positive(t, srv.IdleTimeout)
}
