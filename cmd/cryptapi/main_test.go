package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain says, when tests were skipped for want of node or of the npm
// registry, which and how to run them.
func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// testKey has characters that URL encoding changes, so that both its raw
// and its escaped forms are looked for in the output.
const testKey = "sk_test_S3cr3t+/=Key"

// prefix is where the fake service is mounted, so that a URL built from
// the host alone fails.
const prefix = "/api"

var (
	keyOnce sync.Once
	signKey *rsa.PrivateKey
)

// testSigningKey is one 1024-bit key shared by the tests.
func testSigningKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			panic(err)
		}
		signKey = k
	})
	return signKey
}

// recorded is one request the fake service received.
type recorded struct {
	Method string
	Path   string
	Query  url.Values
	Body   string
}

// fakeService answers service-shaped JSON from testdata under prefix.
type fakeService struct {
	*httptest.Server
	key *rsa.PrivateKey
	png []byte

	mu   sync.Mutex
	reqs []recorded
	echo bool // answer every call with an error that quotes the request
}

// fixtures maps operation paths to testdata files.
var fixtures = map[string]string{
	"/btc/info/":                  "info_btc.json",
	"/info/":                      "coins.json",
	"/btc/create/":                "create_btc.json",
	"/btc/logs/":                  "logs_btc.json",
	"/btc/convert/":               "convert_btc.json",
	"/btc/estimate/":              "estimate_btc.json",
	"/checkout/request/":          "checkout.json",
	"/deposit/request/":           "deposit.json",
	"/btc/payout/request/create/": "payout.json",
	"/btc/payout/request/bulk/":   "payout_bulk.json",
}

const paymentURI = "bitcoin:bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x?amount=0.01"

// setup starts a fake service for one test.
func setup(t *testing.T) *fakeService {
	t.Helper()
	f := &fakeService{key: testSigningKey(t), png: testPNG(t)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeService) base() string { return f.URL + prefix }

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)})
	echo := f.echo
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	path, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"status":"error","error":"not found"}`)
		return
	}
	if echo {
		// A careless gateway: the message and the body quote the request.
		b, _ := json.Marshal(map[string]string{
			"status": "error",
			"error":  "invalid api key " + r.URL.Query().Get("apikey") + " in " + r.URL.String(),
		})
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(b)
		return
	}
	switch path {
	case "/btc/qrcode/":
		b, _ := json.Marshal(map[string]string{
			"status":      "success",
			"qr_code":     base64.StdEncoding.EncodeToString(f.png),
			"payment_uri": paymentURI,
		})
		_, _ = w.Write(b)
		return
	case "/pubkey/":
		der, _ := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
		b, _ := json.Marshal(map[string]string{
			"status": "success",
			"pubkey": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		})
		_, _ = w.Write(b)
		return
	}
	name, ok := fixtures[path]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"status":"error","error":"not found"}`)
		return
	}
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if path == "/btc/create/" {
		data = bindCreate(data, r.URL.Query())
	}
	_, _ = w.Write(data)
}

// bindCreate makes a create answer bound to the request, as the service's
// answer to a first create is: its callback URL, and its destination
// (written as a text map for several).
func bindCreate(data []byte, q url.Values) []byte {
	var a map[string]any
	if json.Unmarshal(data, &a) != nil {
		return data
	}
	a["callback_url"] = q.Get("callback")
	if addr := q.Get("address"); addr != "" {
		if parts := strings.Split(addr, "|"); strings.Contains(addr, "@") {
			m := make([]string, len(parts))
			for i, p := range parts {
				share, out, _ := strings.Cut(p, "@")
				m[i] = fmt.Sprintf("%q: %s", out, share)
			}
			addr = "{" + strings.Join(m, ", ") + "}"
		}
		a["address_out"] = addr
	}
	b, _ := json.Marshal(a)
	return b
}

func (f *fakeService) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func (f *fakeService) paths() []string {
	var out []string
	for _, r := range f.requests() {
		out = append(out, strings.TrimPrefix(r.Path, prefix))
	}
	return out
}

func (f *fakeService) setEcho(on bool) {
	f.mu.Lock()
	f.echo = on
	f.mu.Unlock()
}

// testPNG is a small real PNG image.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 64))
	for i := 0; i < 64; i++ {
		img.SetGray(i, i, color.Gray{Y: 255})
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// result is what one run of the tool did.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the tool with args and the environment env.
func cli(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return cliCtx(t, context.Background(), env, args...)
}

func cliCtx(t *testing.T, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb, func(k string) string { return env[k] })
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// assertNoKey checks that neither the key nor its escaped forms were
// printed.
func assertNoKey(t *testing.T, r result, args []string) {
	t.Helper()
	for _, form := range []string{testKey, url.QueryEscape(testKey), url.PathEscape(testKey), "S3cr3t"} {
		assert.NotContains(t, r.stdout, form, "stdout of %v", args)
		assert.NotContains(t, r.stderr, form, "stderr of %v", args)
	}
}

// invocation is one successful call of a subcommand against the fake.
type invocation struct {
	name string
	args []string
}

// invocations returns a working call of every subcommand that talks to
// the service, with files written under dir.
func invocations(base, dir string) []invocation {
	common := []string{"-base-url", base, "-retries", "0"}
	with := func(args ...string) []string { return append(append([]string{}, args...), common...) }
	return []invocation{
		{"info", with("info", "-ticker", "btc")},
		{"coins", with("coins")},
		{"create", with("create", "-ticker", "btc", "-address", "bc1q820tmstfrkdxd3p8pu8guqhc9daatv6m4uttrv", "-callback", "https://shop.example/cb", "-param", "order=42")},
		{"logs", with("logs", "-ticker", "btc", "-callback", "https://shop.example/cb?order=42")},
		{"qrcode", with("qrcode", "-ticker", "btc", "-address", "bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x", "-value", "0.01", "-out", filepath.Join(dir, "qr.png"))},
		{"convert", with("convert", "-ticker", "btc", "-value", "25", "-from", "USD")},
		{"estimate", with("estimate", "-ticker", "btc", "-addresses", "2", "-priority", "fast")},
		{"pubkey", with("pubkey")},
		{"request", with("request", "-ticker", "btc", "-amount", "25", "-currency", "USD", "-address", "bc1q820tmstfrkdxd3p8pu8guqhc9daatv6m4uttrv", "-callback", "https://shop.example/cb", "-param", "order=42", "-qr-out", filepath.Join(dir, "req.png"))},
		{"checkout", with("checkout", "-value", "25", "-redirect-url", "https://shop.example/thanks", "-notify-url", "https://shop.example/ipn", "-description", "Order 42", "-expire-at", "2h")},
		{"deposit", with("deposit", "-notify-url", "https://shop.example/ipn", "-description", "Wallet top-up")},
		{"payout", with("payout", "-ticker", "btc", "-address", "bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335", "-value", "0.5")},
		{"payout-bulk", with("payout", "-ticker", "btc", "-to", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4=0.1", "-to", "bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu=0.2")},
		{"verify", with("verify", "-url", "https://shop.example/cb?x=1", "-signature", "AAAA", "-fetch-key")},
	}
}

func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		r := cli(t, nil, args...)
		assert.Equal(t, 0, r.code, "%v", args)
		assert.Empty(t, r.stderr)
		for _, c := range commands() {
			assert.Regexp(t, `(?m)^  `+c.name+` +\S`, r.stdout, "command %s listed", c.name)
		}
		assert.Contains(t, r.stdout, "Exit status")
	}

	r := cli(t, nil)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "Usage:")
	assert.Empty(t, r.stdout)

	r = cli(t, nil, "frobnicate")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "cryptapi: unknown command \"frobnicate\"\nRun 'cryptapi -h' for the list of commands.\n", r.stderr)

	r = cli(t, nil, "help", "create")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "Usage: cryptapi create "), r.stdout)
	r = cli(t, nil, "help", "sim", "pay")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "Usage: cryptapi sim pay "), r.stdout)
	r = cli(t, nil, "help", "sim")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "Usage:\n  cryptapi sim <command> [flags]\n")
}

// allCommandPaths lists every runnable command, sim's included.
func allCommandPaths() [][]string {
	var out [][]string
	for _, c := range commands() {
		if c.subs == nil {
			out = append(out, []string{c.name})
			continue
		}
		for _, s := range c.subs {
			out = append(out, []string{c.name, s.name})
		}
	}
	return out
}

func TestHelpEveryCommand(t *testing.T) {
	env := map[string]string{envAPIKey: testKey}
	paths := allCommandPaths()
	require.Len(t, paths, 21)
	for _, p := range paths {
		name := strings.Join(p, " ")
		t.Run(name, func(t *testing.T) {
			for _, h := range []string{"-h", "-help", "--help"} {
				r := cli(t, env, append(append([]string{}, p...), h)...)
				assert.Equal(t, 0, r.code)
				assert.Empty(t, r.stderr)
				assert.True(t, strings.HasPrefix(r.stdout, "Usage: cryptapi "+name+" "), r.stdout)
				lines := strings.Split(r.stdout, "\n")
				require.Greater(t, len(lines), 3)
				assert.Empty(t, lines[1], "a blank line follows the usage line")
				assert.NotEmpty(t, lines[2], "a description follows")
				assert.Contains(t, r.stdout, "\nFlags:\n")
				assertNoKey(t, r, p)
			}
			// A key given on the command line does not show in -h either.
			r := cli(t, nil, append(append([]string{}, p...), "-api-key", testKey, "-h")...)
			if strings.Contains(r.stdout, "-api-key") {
				assert.Equal(t, 0, r.code)
			}
			assertNoKey(t, r, p)
		})
	}

	r := cli(t, nil, "sim", "-h")
	assert.Equal(t, 0, r.code)
	for _, s := range []string{"serve", "pay", "confirm"} {
		assert.Regexp(t, `(?m)^  `+s+` +\S`, r.stdout)
	}
	r = cli(t, nil, "sim")
	assert.Equal(t, 2, r.code)
}

func TestCommandsHumanOutput(t *testing.T) {
	f := setup(t)
	dir := t.TempDir()
	env := map[string]string{envAPIKey: testKey}
	want := map[string][]string{
		"info": {`(?m)^Ticker +btc$`, `(?m)^Minimum transaction +0\.0001$`, `(?m)^Fee percent +1$`,
			`(?m)^Price USD +60000$`, `(?m)^Prices updated +2026-10-01T12:00:00Z$`},
		"coins": {`(?m)^TICKER +COIN +MINIMUM +FEE % +PRICE USD$`, `(?m)^btc +Bitcoin +0\.0001 +1 +60000$`,
			`(?m)^trc20_usdt +USDT +1 +1 +1$`},
		"create": {`(?m)^Address in +bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x$`, `(?m)^Callback URL +https://shop\.example/cb\?order=42$`,
			`(?m)^Minimum transaction +0\.0001$`},
		"logs": {`(?m)^Address out +\{"bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4": 0\.70, "bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu": 0\.30\}$`, `(?m)^Payments +2$`,
			`(?m)^6b1f3c0e-0000-4000-8000-000000000001 +aaaa1111 +0\.01 +0\.0099 +1 +done +yes +2026-10-01T12:05:00Z$`,
			`(?m)^6b1f3c0e-0000-4000-8000-000000000002 +cccc3333 +0\.02 +0 +0 +pending +no +`,
			`(?m)^6b1f3c0e-0000-4000-8000-000000000001 +pending +200 +\*ok\* +-$`},
		"qrcode":   {`(?m)^File +` + regexp.QuoteMeta(filepath.Join(dir, "qr.png")) + `$`, `(?m)^Payment URI +` + regexp.QuoteMeta(paymentURI) + `$`},
		"convert":  {`(?m)^Amount +25 USD$`, `(?m)^In coin +0\.00041667 btc$`, `(?m)^Exchange rate +60000$`},
		"estimate": {`(?m)^Estimated cost +0\.00002 btc$`, `(?m)^Estimated cost USD +1\.2$`},
		"pubkey":   {`\A-----BEGIN PUBLIC KEY-----\n`, `(?m)^Published key +no$`, `(?m)^Bits +1024$`},
		"request": {`(?m)^Pay to +bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x$`, `(?m)^Amount +0\.00041667 btc$`, `(?m)^Asked +25 USD$`,
			`(?m)^Minimum transaction +0\.0001 btc$`, `(?m)^QR code +` + regexp.QuoteMeta(filepath.Join(dir, "req.png")) + `$`},
		"checkout":    {`(?m)^Payment URL +https://pay\.example/p/abc123/$`, `(?m)^Payment ID +abc123$`, `(?m)^Success token +tok_5e4f3a2b1c$`},
		"deposit":     {`(?m)^Payment URL +https://pay\.example/d/dep456/$`, `(?m)^Payment ID +dep456$`},
		"payout":      {`(?m)^Status +success$`, `(?m)^Payouts +1$`, `(?m)^Total +0\.5 btc$`},
		"payout-bulk": {`(?m)^Payouts +2$`, `(?m)^Total +0\.3 btc$`, `(?m)^Request IDs +101, 102$`},
	}
	for _, inv := range invocations(f.base(), dir) {
		if inv.name == "verify" {
			continue // TestVerify
		}
		t.Run(inv.name, func(t *testing.T) {
			r := cli(t, env, inv.args...)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			assert.Empty(t, r.stderr)
			require.Contains(t, want, inv.name)
			for _, re := range want[inv.name] {
				assert.Regexp(t, re, r.stdout)
			}
			assertNoKey(t, r, inv.args)
		})
	}
}

func TestCommandsJSONOutput(t *testing.T) {
	f := setup(t)
	dir := t.TempDir()
	env := map[string]string{envAPIKey: testKey}
	check := map[string]func(t *testing.T, v any){
		"info": func(t *testing.T, v any) {
			m := v.(map[string]any)
			assert.Equal(t, "0.0001", m["minimum_transaction_coin"])
			assert.Equal(t, "10000", m["minimum_transaction"])
			assert.Equal(t, "60000", m["prices"].(map[string]any)["USD"])
		},
		"coins": func(t *testing.T, v any) {
			l := v.([]any)
			require.Len(t, l, 2)
			assert.Equal(t, "btc", l[0].(map[string]any)["ticker"])
			assert.Equal(t, "trc20_usdt", l[1].(map[string]any)["ticker"])
		},
		"create": func(t *testing.T, v any) {
			assert.Equal(t, "bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x", v.(map[string]any)["address_in"])
		},
		"logs": func(t *testing.T, v any) {
			m := v.(map[string]any)
			ps := m["payments"].([]any)
			require.Len(t, ps, 2)
			assert.Equal(t, true, ps[0].(map[string]any)["confirmed"])
			assert.Equal(t, false, ps[1].(map[string]any)["confirmed"])
			assert.Equal(t, "0.0099", ps[0].(map[string]any)["value_forwarded_coin"])
			assert.Len(t, ps[0].(map[string]any)["deliveries"], 2)
			outs := m["outputs"].([]any)
			require.Len(t, outs, 2)
			assert.Equal(t, "0.7", outs[0].(map[string]any)["share"])
		},
		"qrcode": func(t *testing.T, v any) {
			m := v.(map[string]any)
			assert.Equal(t, paymentURI, m["payment_uri"])
			assert.Equal(t, filepath.Join(dir, "qr.png"), m["file"])
		},
		"convert": func(t *testing.T, v any) {
			assert.Equal(t, "0.00041667", v.(map[string]any)["value_coin"])
		},
		"estimate": func(t *testing.T, v any) {
			assert.Equal(t, "0.00002", v.(map[string]any)["estimated_cost"])
		},
		"pubkey": func(t *testing.T, v any) {
			m := v.(map[string]any)
			assert.Equal(t, callback.Fingerprint(&f.key.PublicKey), m["fingerprint"])
			assert.Equal(t, false, m["published"])
			assert.Contains(t, m["pem"], "-----BEGIN PUBLIC KEY-----")
		},
		"request": func(t *testing.T, v any) {
			m := v.(map[string]any)
			assert.Equal(t, "0.00041667", m["amount_coin"])
			assert.Equal(t, "0.0001", m["minimum"])
			assert.Equal(t, paymentURI, m["payment_uri"])
		},
		"checkout": func(t *testing.T, v any) {
			assert.Equal(t, "tok_5e4f3a2b1c", v.(map[string]any)["success_token"])
		},
		"deposit": func(t *testing.T, v any) {
			assert.Equal(t, "dep456", v.(map[string]any)["payment_id"])
		},
		"payout": func(t *testing.T, v any) {
			assert.Equal(t, "success", v.(map[string]any)["status"])
		},
		"payout-bulk": func(t *testing.T, v any) {
			assert.Equal(t, []any{"101", "102"}, v.(map[string]any)["request_ids"])
		},
	}
	for _, inv := range invocations(f.base(), dir) {
		if inv.name == "verify" {
			continue
		}
		t.Run(inv.name, func(t *testing.T) {
			r := cli(t, env, append(inv.args, "-json")...)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			var v any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
			check[inv.name](t, v)
			assertNoKey(t, r, inv.args)
		})
	}
}

func TestRequestsSent(t *testing.T) {
	f := setup(t)
	dir := t.TempDir()
	env := map[string]string{envAPIKey: testKey}
	byName := map[string][]string{}
	for _, inv := range invocations(f.base(), dir) {
		byName[inv.name] = inv.args
	}
	last := func() recorded {
		rs := f.requests()
		require.NotEmpty(t, rs)
		return rs[len(rs)-1]
	}

	r := cli(t, env, "create", "-base-url", f.base(), "-ticker", "btc", "-address", "0.7@bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4|0.3@bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu",
		"-callback", "https://shop.example/cb", "-param", "order=42", "-pending", "-confirmations", "2",
		"-post", "-json-body", "-priority", "fast", "-convert", "-multi-token")
	require.Equal(t, 0, r.code, r.stderr)
	q := last().Query
	assert.Equal(t, "https://shop.example/cb?order=42", q.Get("callback"))
	assert.Equal(t, "0.7@bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4|0.3@bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu", q.Get("address"))
	for k, v := range map[string]string{"pending": "1", "confirmations": "2", "post": "1", "json": "1",
		"priority": "fast", "convert": "1", "multi_token": "1", "apikey": testKey} {
		assert.Equal(t, v, q.Get(k), k)
	}

	require.Equal(t, 0, cli(t, env, byName["qrcode"]...).code)
	q = last().Query
	assert.Equal(t, "0.01", q.Get("value"))
	assert.Equal(t, "512", q.Get("size"))

	require.Equal(t, 0, cli(t, env, byName["estimate"]...).code)
	q = last().Query
	assert.Equal(t, "2", q.Get("addresses"))
	assert.Equal(t, "fast", q.Get("priority"))

	require.Equal(t, 0, cli(t, env, byName["checkout"]...).code)
	q = last().Query
	assert.NotEmpty(t, q.Get("expire_at"))
	assert.Equal(t, "Order 42", q.Get("item_description"))
	assert.Equal(t, "25", q.Get("value"))

	require.Equal(t, 0, cli(t, env, byName["payout"]...).code)
	rec := last()
	assert.Equal(t, prefix+"/btc/payout/request/bulk/", rec.Path, "one request through the current scheme")
	assert.Equal(t, http.MethodPost, rec.Method)
	assert.JSONEq(t, `{"outputs":{"bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335":0.5}}`, rec.Body)

	require.Equal(t, 0, cli(t, env, byName["payout-bulk"]...).code)
	rec = last()
	assert.Equal(t, http.MethodPost, rec.Method)
	assert.JSONEq(t, `{"outputs":{"bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4":0.1,"bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu":0.2}}`, rec.Body)

	before := len(f.requests())
	require.Equal(t, 0, cli(t, env, byName["request"]...).code)
	assert.Equal(t, []string{"/btc/convert/", "/btc/info/", "/btc/create/", "/btc/qrcode/"}, f.paths()[before:])
}

func TestQRCodeWritesPNG(t *testing.T) {
	f := setup(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "pay.png")
	r := cli(t, nil, "qrcode", "-base-url", f.base(), "-ticker", "btc",
		"-address", "bc1qstx7pky9vsvdyekdz97g6p90vfchkyv709dv8x", "-size", "256", "-out", out)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, out)
	assert.Contains(t, r.stdout, paymentURI)

	fh, err := os.Open(out)
	require.NoError(t, err)
	defer fh.Close()
	img, err := png.Decode(fh)
	require.NoError(t, err)
	assert.Equal(t, 64, img.Bounds().Dx())
	assert.Equal(t, "256", f.requests()[0].Query.Get("size"))

	// request -qr-out writes a PNG too.
	out2 := filepath.Join(dir, "req.png")
	r = cli(t, nil, "request", "-base-url", f.base(), "-ticker", "btc", "-amount", "0.01",
		"-address", "bc1q820tmstfrkdxd3p8pu8guqhc9daatv6m4uttrv", "-callback", "https://shop.example/cb", "-qr-out", out2)
	require.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(out2)
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
}

func TestRequestBelowMinimum(t *testing.T) {
	f := setup(t)
	r := cli(t, nil, "request", "-base-url", f.base(), "-ticker", "btc", "-amount", "0.00005",
		"-address", "bc1q820tmstfrkdxd3p8pu8guqhc9daatv6m4uttrv", "-callback", "https://shop.example/cb")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "cryptapi: request: 0.00005 btc is below the minimum transaction of 0.0001 btc; "+
		"the service would ignore the payment and the funds would be lost. No address was created\n", r.stderr)
	assert.Equal(t, []string{"/btc/info/"}, f.paths(), "no address is created")
}

func TestUsageErrorsSendNothing(t *testing.T) {
	f := setup(t)
	base := []string{"-base-url", f.base()}
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"info"}, "-ticker is required"},
		{[]string{"info", "-ticker", "btc", "extra"}, `unexpected argument "extra"`},
		{[]string{"info", "-ticker", "btc", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"info", "-ticker", "../etc"}, "invalid ticker"},
		{[]string{"info", "-ticker", "btc", "-timeout", "0s"}, "-timeout must be positive"},
		{[]string{"info", "-ticker", "btc", "-retries", "-1"}, "-retries must be 0 or more"},
		{[]string{"create", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4"}, "-callback is required"},
		{[]string{"create", "-ticker", "btc", "-callback", "https://shop.example/cb"}, "destination address is required"},
		{[]string{"create", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-callback", "ftp://x"}, "callback must be an absolute http(s) URL"},
		{[]string{"create", "-ticker", "btc", "-address", "0.5@bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4|0.4@bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu", "-callback", "https://shop.example/cb"}, "shares add up to 0.9"},
		{[]string{"create", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-callback", "https://shop.example/cb", "-param", "noequals"}, "-param must be name=value"},
		{[]string{"create", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-callback", "https://shop.example/cb", "-confirmations", "-1"}, "-confirmations must be 0 or more"},
		{[]string{"qrcode", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-size", "20"}, "-size must be between 64 and 1024"},
		{[]string{"qrcode", "-ticker", "btc", "-address-in", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-amount", "-1"}, "-amount must be a positive amount"},
		{[]string{"convert", "-ticker", "btc", "-amount", "abc", "-currency", "USD"}, `invalid value "abc" for flag -amount: not a decimal number`},
		{[]string{"convert", "-ticker", "btc", "-amount", "1,5", "-currency", "USD"}, "not a decimal number"},
		{[]string{"convert", "-ticker", "btc", "-currency", "USD"}, "-amount is required"},
		{[]string{"convert", "-ticker", "btc", "-value", "0", "-from", "USD"}, "-amount must be a positive amount"},
		{[]string{"estimate", "-ticker", "btc", "-addresses", "21"}, "-addresses must be between 1 and 20"},
		{[]string{"request", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-callback", "https://shop.example/cb"}, "-amount is required"},
		{[]string{"checkout", "-amount", "10", "-redirect-url", "https://shop.example/"}, "this operation needs an API key"},
		{[]string{"checkout", "-api-key", testKey, "-value", "10", "-redirect-url", "https://shop.example/", "-expire-at", "10m"}, "-expire-at must be at least 1h ahead"},
		{[]string{"checkout", "-api-key", testKey, "-value", "10", "-redirect-url", "https://shop.example/", "-expire-at", "tomorrow"}, "-expire-at must be an RFC 3339 time"},
		{[]string{"deposit"}, "-notify-url is required"},
		{[]string{"payout", "-ticker", "btc", "-address", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4", "-amount", "1"}, "this operation needs an API key"},
		{[]string{"payout", "-api-key", testKey, "-ticker", "btc", "-to", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4"}, "-to must be ADDRESS=AMOUNT"},
		{[]string{"payout", "-api-key", testKey, "-ticker", "btc", "-to", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4=1", "-address", "bc1q3y32wp55kz58j0wvajytqfjqku00wpmrlt3twu"}, "not both"},
		{[]string{"payout", "-api-key", testKey, "-ticker", "btc", "-to", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4=1", "-to", "bc1qxg0datgk0tah33svhy6dyrln645e8up6a9xan4=2"}, "given twice"},
		{[]string{"info", "-ticker", "btc", "-api-key", ""}, "empty API key"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := cli(t, nil, append(c.args, base...)...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Empty(t, r.stdout)
			assert.True(t, strings.HasPrefix(r.stderr, "cryptapi: "+c.args[0]+": "), r.stderr)
			assert.Contains(t, r.stderr, c.msg)
			assert.NotContains(t, r.stderr, "cryptapi: cryptapi")
			assertNoKey(t, r, c.args)
		})
	}
	assert.Empty(t, f.requests(), "usage errors send nothing")
}

func TestServiceErrors(t *testing.T) {
	f := setup(t)
	r := cli(t, nil, "logs", "-base-url", f.base(), "-ticker", "ltc", "-callback", "https://shop.example/cb")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "cryptapi: logs: service error (HTTP 404): not found\n", r.stderr)
}

// TestAPIKeyNeverPrinted runs every subcommand with a key, given by flag
// and by the environment, against a service that answers, one that
// quotes the request (key included) in its errors, and one that is gone.
func TestAPIKeyNeverPrinted(t *testing.T) {
	f := setup(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL + prefix
	gone.Close()

	dir := t.TempDir()
	for _, mode := range []string{"ok", "echo", "gone"} {
		for _, inv := range invocations(f.base(), dir) {
			args := inv.args
			if mode == "gone" {
				args = append(append([]string{}, args...), "-base-url", goneURL)
			}
			t.Run(mode+"/"+inv.name, func(t *testing.T) {
				f.setEcho(mode == "echo")
				defer f.setEcho(false)
				byEnv := cli(t, map[string]string{envAPIKey: testKey}, args...)
				byFlag := cli(t, nil, append(append([]string{}, args...), "-api-key", testKey)...)
				for _, r := range []result{byEnv, byFlag} {
					assertNoKey(t, r, args)
					if mode != "ok" {
						assert.NotEqual(t, 0, r.code)
						assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
					}
				}
				if mode == "echo" {
					assert.Contains(t, byEnv.stderr, "REDACTED")
				}
			})
		}
	}
	// Flag errors with the key on the command line.
	for _, args := range [][]string{
		{"info", "-api-key", testKey, "-bogus"},
		{"info", "-api-key", testKey},
		{"info", "-ticker", "btc", "-api-key", testKey, "-base-url", "not a url"},
		{"sim", "serve", "-api-key", testKey, "-addr", "256.0.0.1:bad"},
	} {
		r := cli(t, nil, args...)
		assert.NotEqual(t, 0, r.code, "%v", args)
		assertNoKey(t, r, args)
	}
}

func TestInterrupted(t *testing.T) {
	f := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := cliCtx(t, ctx, nil, "info", "-base-url", f.base(), "-ticker", "btc")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "cryptapi: info: interrupted\n", r.stderr)
}

func sign(t *testing.T, key *rsa.PrivateKey, data []byte) string {
	t.Helper()
	sum := sha256.Sum256(data)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(sig)
}

func TestVerify(t *testing.T) {
	f := setup(t)
	dir := t.TempDir()
	der, err := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
	require.NoError(t, err)
	keyFile := filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))

	getURL := "https://shop.example/cb?order=42&uuid=6b1f3c0e&value_coin=0.01&pending=0"
	getSig := sign(t, f.key, []byte(getURL))
	body := []byte(`{"uuid": "6b1f3c0e", "value_coin": 0.01, "pending": 0}`)
	bodyFile := filepath.Join(dir, "body.json")
	require.NoError(t, os.WriteFile(bodyFile, body, 0o600))
	postSig := sign(t, f.key, body)
	badKey := filepath.Join(dir, "bad.pem")
	require.NoError(t, os.WriteFile(badKey, []byte("not a key"), 0o600))

	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"get valid", []string{"-url", getURL, "-signature", getSig, "-pubkey-file", keyFile}, 0, "valid\n", ""},
		{"get tampered", []string{"-url", getURL + "&x=1", "-signature", getSig, "-pubkey-file", keyFile}, 1, "invalid\n", "signature does not verify"},
		{"post valid", []string{"-body-file", bodyFile, "-signature", postSig, "-pubkey-file", keyFile}, 0, "valid\n", ""},
		{"post with the GET signature", []string{"-body-file", bodyFile, "-signature", getSig, "-pubkey-file", keyFile}, 1, "invalid\n", "does not verify"},
		{"published key by default", []string{"-url", getURL, "-signature", getSig}, 1, "invalid\n", "key: published, " + callback.PublishedKeyFingerprint},
		{"fetched key", []string{"-url", getURL, "-signature", getSig, "-fetch-key", "-base-url", f.base()}, 0, "valid\n", ""},
		{"not base64", []string{"-url", getURL, "-signature", "%%%", "-pubkey-file", keyFile}, 1, "invalid\n", "not base64"},
		{"both inputs", []string{"-url", getURL, "-body-file", bodyFile, "-signature", getSig}, 2, "", "one of them"},
		{"no input", []string{"-signature", getSig}, 2, "", "one of them"},
		{"no signature", []string{"-url", getURL}, 2, "", "-signature is required"},
		{"two key sources", []string{"-url", getURL, "-signature", getSig, "-pubkey-file", keyFile, "-fetch-key"}, 2, "", "not both"},
		{"missing key file", []string{"-url", getURL, "-signature", getSig, "-pubkey-file", filepath.Join(dir, "nope.pem")}, 1, "", "no such file"},
		{"bad key file", []string{"-url", getURL, "-signature", getSig, "-pubkey-file", badKey}, 1, "", "not a PEM RSA public key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"verify"}, c.args...)...)
			assert.Equal(t, c.code, r.code, r.stderr)
			assert.Equal(t, c.stdout, r.stdout)
			if c.stderr == "" {
				assert.Empty(t, r.stderr)
			} else {
				assert.Contains(t, r.stderr, c.stderr)
				assert.True(t, strings.HasPrefix(r.stderr, "cryptapi: verify: "), r.stderr)
				assert.NotContains(t, r.stderr, getSig, "the signature is not echoed")
			}
		})
	}

	r := cli(t, nil, "verify", "-url", getURL, "-signature", getSig, "-pubkey-file", keyFile, "-json")
	assert.Equal(t, 0, r.code)
	var v struct {
		Valid bool   `json:"valid"`
		Key   string `json:"key"`
		FP    string `json:"key_fingerprint"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.True(t, v.Valid)
	assert.Equal(t, "file", v.Key)
	assert.Equal(t, callback.Fingerprint(&f.key.PublicKey), v.FP)

	r = cli(t, nil, "verify", "-url", getURL+"&x", "-signature", getSig, "-pubkey-file", keyFile, "-json")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.False(t, v.Valid)

	// pubkey's output is a key file verify reads.
	r = cli(t, nil, "pubkey", "-base-url", f.base())
	require.Equal(t, 0, r.code)
	saved := filepath.Join(dir, "saved.pem")
	require.NoError(t, os.WriteFile(saved, []byte(r.stdout), 0o600))
	r = cli(t, nil, "verify", "-url", getURL, "-signature", getSig, "-pubkey-file", saved)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "valid\n", r.stdout)
}

func TestCleanMessage(t *testing.T) {
	cases := map[string]string{
		"cryptapi: callback URL is required":                      "callback URL is required",
		"cryptapi: create: cryptapi: service error (HTTP 400): x": "service error (HTTP 400): x",
		"cryptapi: convert: boom":                                 "convert: boom",
		"line one\nline two\x1b[31m":                              "line one line two [31m",
	}
	for in, want := range cases {
		assert.Equal(t, want, cleanMessage("create", in), in)
	}
}

func TestRedactingWriter(t *testing.T) {
	var b bytes.Buffer
	r := &redactor{}
	r.add(testKey)
	w := &redactingWriter{w: &b, r: r}
	n, err := io.WriteString(w, "k="+testKey+" q="+url.QueryEscape(testKey)+"\n")
	require.NoError(t, err)
	assert.Equal(t, len("k="+testKey+" q="+url.QueryEscape(testKey)+"\n"), n)
	assert.Equal(t, "k=REDACTED q=REDACTED\n", b.String())
}
