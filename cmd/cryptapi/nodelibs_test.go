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
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The service's own Node libraries, as published on npm. Pinned, so that
// a new release is a deliberate change here (npm view NAME@VERSION
// dist.integrity gives the integrity). Neither has dependencies.
var (
	npmCryptAPI = needs.Package{Name: "@cryptapi/api", Version: "1.1.0",
		Integrity: "sha512-NqwXdSEeLavRlumXU8iglSxiRmEcbx0Hnw/uqvoCb9k90og+9nP0I6sL/XeNLNdAJ3q8sinENpwM3LFmqDqUUA=="}
	npmBlockBee = needs.Package{Name: "@blockbee/api", Version: "1.1.0",
		Integrity: "sha512-0d7YVjJW1CTxwKW8k2uQMVBKW9J4K6sJgQhFBOtgJ27HnZhtXwLJmrka3gaCX8lVnQ5/B3gTrLjQ1wMuzPvgew=="}
)

// nodeDriver runs every operation the two libraries offer, against the
// simulators named in its environment, and prints one JSON line per
// operation: {"lib", "op", "ok", "value", "error"}. After the library
// calls it makes, with Node's own fetch, the calls of @blockbee/api 2.x
// (its GitHub source, newer than the npm release), exactly as that source
// builds them: the fake must serve those too.
const nodeDriver = `
const CryptAPI = require('@cryptapi/api')
const BlockBee = require('@blockbee/api')
const env = process.env
const out = (lib, op, ok, value, error) => console.log(JSON.stringify({lib, op, ok, value: value === undefined ? null : value, error: error || ''}))
async function step(lib, op, fn) {
	try { const v = await fn(); out(lib, op, true, v) ; return v }
	catch (e) { out(lib, op, false, null, String(e && e.message || e)) ; return null }
}
async function control(base, name, form) {
	const r = await fetch(base + '/_sim/' + name, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(form)})
	const j = await r.json()
	if (j.status !== 'success') throw new Error(name + ': ' + j.error)
	return j
}
const sleep = ms => new Promise(r => setTimeout(r, ms))

async function cryptapi() {
	const lib = 'cryptapi', sim = env.SIM_KEYLESS
	await step(lib, 'getInfo', () => CryptAPI.getInfo())
	await step(lib, 'getInfo(btc)', () => CryptAPI.getInfo('btc'))
	await step(lib, 'getSupportedCoins', async () => Object.keys(await CryptAPI.getSupportedCoins()).sort())
	await step(lib, 'getEstimate', () => CryptAPI.getEstimate('btc', 2, 'fast'))
	await step(lib, 'getConvert', () => CryptAPI.getConvert('btc', 30, 'USD'))
	await step(lib, 'getConvert(token)', () => CryptAPI.getConvert('trc20_usdt', 30, 'EUR'))
	const ca = new CryptAPI('btc', env.BTC_DEST, env.MERCHANT + '/cb/ä?x=%2F', {order_id: '12 34'}, {pending: 1})
	const addr = await step(lib, 'getAddress', () => ca.getAddress())
	await step(lib, 'checkLogs(empty)', () => ca.checkLogs())
	await step(lib, 'getQrcode', () => ca.getQrcode(0.01, 300))
	await step(lib, 'getQrcode(no value)', () => ca.getQrcode())
	const paid = await control(sim, 'pay', {ticker: 'btc', address: addr, amount: '0.01'})
	await control(sim, 'confirm', {txid: paid.txid, confirmations: '1'})
	await step(lib, 'checkLogs', () => ca.checkLogs())
	const tok = new CryptAPI('trc20_usdt', env.TRX_DEST, env.MERCHANT + '/usdt', {}, {})
	await step(lib, 'getAddress(token)', () => tok.getAddress())
	await step(lib, 'getEstimate(token)', () => CryptAPI.getEstimate('trc20_usdt'))
}

async function blockbee() {
	const lib = 'blockbee', key = env.API_KEY, sim = env.SIM_KEYED
	await step(lib, 'getInfo', () => BlockBee.getInfo(null, true, key))
	await step(lib, 'getInfo(btc)', () => BlockBee.getInfo('btc', false, key))
	await step(lib, 'getSupportedCoins', async () => Object.keys(await BlockBee.getSupportedCoins(key)).sort())
	await step(lib, 'getEstimate', () => BlockBee.getEstimate('btc', key, 3, 'default'))
	await step(lib, 'getConvert', () => BlockBee.getConvert('eth', 100, 'USD', key))
	const bb = new BlockBee('btc', '', env.MERCHANT + '/bb', {order_id: 7}, {post: 1}, key)
	const addr = await step(lib, 'getAddress', () => bb.getAddress())
	await step(lib, 'getQrcode', () => bb.getQrcode(0.002, 256))
	await step(lib, 'checkLogs(empty)', () => bb.checkLogs())
	const paid = await control(sim, 'pay', {ticker: 'btc', address: addr, amount: '0.002'})
	await control(sim, 'confirm', {txid: paid.txid, confirmations: '1'})
	await step(lib, 'checkLogs', () => bb.checkLogs())
	const own = new BlockBee('bep20_usdt', env.ETH_DEST, env.MERCHANT + '/own', {}, {}, key)
	await step(lib, 'getAddress(own address)', () => own.getAddress())
	// 1.1.0's createPayout uses /{ticker}/payout/, a path the current scheme
	// dropped: it gets the service's answer to an unknown path.
	await step(lib, 'createPayout(1.1.0)', () => BlockBee.createPayout('btc', env.BTC_DEST, 0.001, key))
}

// The calls of @blockbee/api 2.x, built as its source builds them: GET with
// URLSearchParams (no key on the public reads), POST JSON for bulk
// requests, POST forms for the payout calls, the key in the query string.
async function blockbee2() {
	const lib = 'blockbee2', key = env.API_KEY, base = env.SIM_KEYED
	const get = async (coin, endpoint, params) => {
		const url = coin ? new URL(base + '/' + coin.replace('_', '/') + '/' + endpoint + '/') : new URL(base + '/' + endpoint + '/')
		Object.keys(params || {}).forEach(k => url.searchParams.append(k, params[k]))
		const r = await fetch(url, {method: 'GET', headers: {referer: base}, credentials: 'include'})
		const j = await r.json()
		if (j.status === 'error') throw new Error(j.error)
		return j
	}
	const post = async (coin, endpoint, body, isJson) => {
		let url = new URL(base + '/' + endpoint + '/')
		if (coin) url = new URL(base + '/' + coin.replace('_', '/') + '/' + endpoint + '/')
		url.searchParams.append('apikey', key)
		const headers = {'Content-Type': isJson ? 'application/json' : 'application/x-www-form-urlencoded'}
		const r = await fetch(url, {method: 'POST', headers, body: isJson ? JSON.stringify(body) : new URLSearchParams(body).toString()})
		const j = await r.json()
		if (j.status === 'error') throw new Error(j.error)
		return success(j)
	}
	// The Ruby library takes nothing but "success" from a POST, and
	// php-blockbee 2.1.1 reads the payout wallet only from a "success".
	const success = j => { if (j.status !== 'success') throw new Error('status ' + j.status + ', not success'); return j }
	await step(lib, 'getInfo', () => get(null, 'info', {prices: 0}))
	await step(lib, 'getInfo(btc)', () => get('btc', 'info', {}))
	await step(lib, 'getEstimate', () => get('btc', 'estimate', {addresses: 1, priority: 'default'}))
	await step(lib, 'getConvert', () => get('btc', 'convert', {value: 10, from: 'USD'}))
	await step(lib, 'convert(ticker-less)', () => get(null, 'convert', {from: 'EUR', to: 'trc20_usdt', value: 25}))
	await step(lib, 'pubkey', () => get(null, 'pubkey', {}))
	const cb = new URL(env.MERCHANT + '/b2?id=1')
	const created = await step(lib, 'getAddress', () => get('btc', 'create', {callback: encodeURI(cb.toString()), apikey: key}))
	await step(lib, 'getQrcode', () => get('btc', 'qrcode', {address: created && created.address_in, apikey: key, size: 512}))
	await step(lib, 'checkLogs', () => get('btc', 'logs', {callback: encodeURI(cb.toString()), apikey: key}))
	const redirect = new URL('https://shop.example/thanks?order=9'), notify = new URL(env.MERCHANT + '/ipn?order=9')
	const pay = await step(lib, 'paymentRequest', () => get('', 'checkout/request', {redirect_url: encodeURI(redirect.toString()), notify_url: encodeURI(notify.toString()), value: 20, apikey: key}))
	await step(lib, 'paymentLogs', () => get('', 'checkout/logs', {apikey: key, token: pay && pay.payment_id}))
	const dep = await step(lib, 'depositRequest', () => get('', 'deposit/request', {notify_url: encodeURI(new URL(env.MERCHANT + '/dep').toString()), apikey: key}))
	await control(base, 'deposit-pay', {payment_id: dep.payment_id, ticker: 'trc20_usdt', amount: '12.5'})
	await step(lib, 'depositLogs', () => get('', 'deposit/logs', {apikey: key, token: dep.payment_id}))
	await control(base, 'fund', {ticker: 'polygon_usdt', amount: '5'})
	const wallet = await step(lib, 'getPayoutWallet', async () => success(await get('polygon_usdt', 'payout/address', {apikey: key})))
	await step(lib, 'getPayoutWallet(balance)', async () => success(await get('polygon_usdt', 'payout/balance', {apikey: key})))
	const outputs = {}
	outputs[env.ETH_DEST] = 0.5
	outputs[wallet && wallet.address] = 0.1
	const reqs = await step(lib, 'createPayout', () => post('polygon_usdt', 'payout/request/bulk', {outputs}, true))
	await step(lib, 'createPayout(process)', () => post('polygon_usdt', 'payout/request/bulk/process', {outputs: {[env.ETH_DEST]: 0.25}}, true))
	await step(lib, 'listPayouts(requests)', () => get('polygon_usdt', 'payout/request/list', {status: 'pending', p: 1, apikey: key}))
	const made = await step(lib, 'createPayoutByIds', () => post('', 'payout/create', {request_ids: (reqs ? reqs.request_ids : []).join(',')}))
	await step(lib, 'processPayout', () => post('', 'payout/process', {payout_id: made && made.payout_info.id}))
	await step(lib, 'checkPayoutStatus', () => post('', 'payout/status', {payout_id: made && made.payout_info.id}))
	await step(lib, 'listPayouts', () => get('polygon_usdt', 'payout/list', {status: 'processing', p: 1, apikey: key}))
}

;(async () => {
	await cryptapi()
	await blockbee()
	await blockbee2()
	await sleep(10)
})().catch(e => { console.error(e); process.exit(2) })
`

// nodeLine is one line of the driver's output.
type nodeLine struct {
	Lib   string          `json:"lib"`
	Op    string          `json:"op"`
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// installNodeLibs gives the test its own copy of the published libraries
// (needs.NPM: from the cache, or fetched once), points each at the base
// URL of its simulator by replacing its base URL constant, the one thing
// changed, and writes the driver. It returns the driver's directory and
// the NODE_PATH that finds the libraries.
func installNodeLibs(t *testing.T, keylessURL, keyedURL string) (dir, nodePath string) {
	t.Helper()
	var paths []string
	for _, lib := range []struct {
		pkg     needs.Package
		baseURL string
		sim     string
	}{
		{npmCryptAPI, "https://api.cryptapi.io", keylessURL},
		{npmBlockBee, "https://api.blockbee.io", keyedURL},
	} {
		pkgDir := needs.NPM(t, lib.pkg)
		p := filepath.Join(pkgDir, "index.js")
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		quoted := "'" + lib.baseURL + "'"
		require.Equal(t, 1, strings.Count(string(src), quoted), "%s names its base URL once", lib.pkg)
		src = []byte(strings.Replace(string(src), quoted, "'"+lib.sim+"'", 1))
		require.NoError(t, os.WriteFile(p, src, 0o600))
		paths = append(paths, strings.TrimSuffix(pkgDir, string(filepath.Separator)+filepath.FromSlash(lib.pkg.Name)))
	}
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.js"), []byte(nodeDriver), 0o600))
	return dir, strings.Join(paths, string(os.PathListSeparator))
}

// recorder is a merchant endpoint that acknowledges every callback and
// notification and remembers the request targets.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	targets []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.targets = append(r.targets, req.Method+" "+req.RequestURI)
		r.mu.Unlock()
		_, _ = io.WriteString(w, callback.OK)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.targets...)
}

// drain keeps reading a simulator's output so that it never blocks.
func drain(s *simRun) {
	go func() {
		for range s.lines {
		}
	}()
}

// TestOfficialNodeLibrariesAgainstSimServe runs the service's own Node
// libraries, as published on npm (pinned; see needs.NPM), against "cryptapi sim serve" in both
// forms with nothing changed but their base URL: every operation they
// offer must work, as it does against the service.
func TestOfficialNodeLibrariesAgainstSimServe(t *testing.T) {
	node := needs.Node(t)
	shop := newRecorder(t)
	keyless := startSim(t, "-json")
	keyed := startSim(t, "-json", "-api-key", testKey)
	kb, bb := keyless.event(), keyed.event()
	require.Equal(t, "listening", kb.Event)
	require.Equal(t, "listening", bb.Event)
	drain(keyless)
	drain(keyed)

	dir, nodePath := installNodeLibs(t, kb.BaseURL, bb.BaseURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "driver.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath,
		"SIM_KEYLESS="+kb.BaseURL, "SIM_KEYED="+bb.BaseURL, "API_KEY="+testKey, "MERCHANT="+shop.URL,
		"BTC_DEST="+merchantAddress, "TRX_DEST=TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
		"ETH_DEST=0x71C7656EC7ab88b098defB751B7401B5f6d8976F")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "node driver: %s", stderr.String())

	got := map[string]nodeLine{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var l nodeLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		got[l.Lib+" "+l.Op] = l
	}
	val := func(name string) map[string]any {
		t.Helper()
		l, ok := got[name]
		require.True(t, ok, "%s did not run", name)
		var m map[string]any
		_ = json.Unmarshal(l.Value, &m)
		return m
	}

	// The dropped path, said explicitly: 1.1.0's createPayout calls
	// /{ticker}/payout/, which the current scheme no longer has; the
	// simulator answers it as the service answers an unknown path (HTTP
	// 404, {"status":"error","error":"Not found"}), and the library
	// returns null.
	old := got["blockbee createPayout(1.1.0)"]
	assert.True(t, old.OK, "the library does not throw: %s", old.Error)
	assert.Equal(t, "null", string(old.Value), "@blockbee/api 1.1.0 createPayout uses the dropped /{ticker}/payout/ path: answered as an unknown path")

	for name, l := range got {
		if name == "blockbee createPayout(1.1.0)" {
			continue
		}
		assert.True(t, l.OK, "%s failed: %s", name, l.Error)
		assert.NotEqual(t, "null", string(l.Value), "%s returned null (the library's way of saying the call failed)", name)
	}
	assert.Equal(t, 13+11+22, len(got), "every operation ran")

	// Spot checks of what the libraries read.
	assert.Contains(t, string(got["cryptapi getSupportedCoins"].Value), `"trc20_usdt"`)
	assert.Contains(t, string(got["blockbee getSupportedCoins"].Value), `"bep20_usdt"`)
	logs := val("cryptapi checkLogs")
	require.Len(t, logs["callbacks"], 1)
	assert.Equal(t, "done", logs["callbacks"].([]any)[0].(map[string]any)["result"])
	assert.Empty(t, val("cryptapi checkLogs(empty)")["callbacks"], "a new address: success with no callbacks")
	assert.Contains(t, logs["callback_url"], "/cb/%25C3%25A4?x=%252F&order_id=12+34", "the double-encoded callback URL is stored as sent")
	blogs := val("blockbee checkLogs")
	require.Len(t, blogs["callbacks"], 1)
	assert.Equal(t, "success", val("blockbee2 depositLogs")["status"])
	assert.Equal(t, "12.5", val("blockbee2 depositLogs")["total_deposited"])
	status := val("blockbee2 checkPayoutStatus")["payout_info"].(map[string]any)
	assert.Equal(t, "Processing", status["status"])
	assert.Contains(t, val("blockbee2 pubkey")["pubkey"], "BEGIN PUBLIC KEY")
	qr := val("cryptapi getQrcode(no value)")
	assert.NotEmpty(t, qr["qr_code"])
	assert.NotContains(t, qr["payment_uri"], "amount", "no value: the bare address")

	// The callbacks reached the merchant, the double-encoded URL as sent.
	seen := strings.Join(shop.seen(), "\n")
	assert.Contains(t, seen, "GET /cb/%25C3%25A4?x=%252F&order_id=12+34&uuid=")
	assert.Contains(t, seen, "POST /bb?order_id=7")
	assert.Contains(t, seen, "/dep?")
}
