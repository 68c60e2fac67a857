package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sim serve listens on loopback only, unless -allow-remote says
// otherwise: its control endpoints move money on the fake, which then
// sends correctly signed callbacks.
func TestSimServeRefusesNonLoopbackAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.7:0", "example.com:0", "localhost.:0", "0:0"} {
		// A simulator that starts anyway is stopped by the guard and
		// fails the test with status 0.
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		r := cliCtx(t, ctx, nil, "sim", "serve", "-addr", addr)
		cancel()
		assert.Equal(t, 2, r.code, "%s: %s", addr, r.stderr)
		assert.Contains(t, r.stderr, "-allow-remote", addr)
		assert.Empty(t, r.stdout, "%s: nothing served", addr)
	}
	r := cli(t, nil, "sim", "serve", "-addr", "no-port")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "-addr must be HOST:PORT")

	for _, addr := range []string{"127.0.0.1:0", "127.0.0.2:0", "localhost:0", "LOCALHOST:0", "[::1]:0"} {
		if addr == "[::1]:0" && !ipv6Loopback() {
			continue
		}
		s := startSim(t, "-json", "-addr", addr)
		e := s.event()
		require.Equal(t, "listening", e.Event, addr)
		u, err := url.Parse(e.BaseURL)
		require.NoError(t, err)
		assert.True(t, net.ParseIP(u.Hostname()).IsLoopback(), "%s served at %s", addr, e.BaseURL)
		assert.Equal(t, 0, s.stop())
	}

	// With the flag, every interface; the simulator says what it means,
	// and its control endpoints take the address of any interface as the
	// Host, never a DNS name.
	s := startSim(t, "-json", "-addr", "0.0.0.0:0", "-allow-remote")
	e := s.event()
	require.Equal(t, "listening", e.Event)
	drain(s)
	u, err := url.Parse(e.BaseURL)
	require.NoError(t, err)
	base := "http://127.0.0.1:" + u.Port()
	for host, want := range map[string]int{
		"192.168.1.2:" + u.Port():        http.StatusOK,
		"0.0.0.0:" + u.Port():            http.StatusForbidden,
		"sim.evil.example:" + u.Port():   http.StatusForbidden,
		"localhost:" + u.Port():          http.StatusOK,
		"192.168.1.2.nip.io:" + u.Port(): http.StatusForbidden,
	} {
		code, out := controlCall{name: host, contentType: "application/json", host: host}.do(t, base, "flush")
		assert.Equal(t, want, code, "%s: %v", host, out)
	}
	assert.Equal(t, 0, s.stop())
	assert.Contains(t, s.stderr.String(), "anyone who can reach")

	// The flag on a loopback address changes nothing and warns of nothing.
	s = startSim(t, "-json", "-allow-remote")
	require.Equal(t, "listening", s.event().Event)
	assert.Equal(t, 0, s.stop())
	assert.NotContains(t, s.stderr.String(), "anyone who can reach")
}

func ipv6Loopback() bool {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// controlCall is one request to a control endpoint, as a page or a script
// could send it.
type controlCall struct {
	name        string
	contentType string
	body        string
	header      map[string]string
	host        string // the Host header; "" for the simulator's address
}

func (c controlCall) do(t *testing.T, base, endpoint string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/_sim/"+endpoint, strings.NewReader(c.body))
	require.NoError(t, err)
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.host != "" {
		req.Host = c.host
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]string
	require.NoError(t, json.Unmarshal(data, &out), "%s: %s", c.name, data)
	return resp.StatusCode, out
}

// The control endpoints take same-origin JSON only: a page on another
// site (a form post of any content type, a fetch whose Origin or fetch
// metadata says cross-site) and a DNS-rebinding page (same origin to the
// browser, a foreign Host) are refused, and nothing moves.
func TestSimControlTakesSameOriginJSONOnly(t *testing.T) {
	s := startSim(t, "-json", "-api-key", testKey)
	base := s.event().BaseURL
	drain(s)
	u, _ := url.Parse(base)
	port := u.Port()
	fund := `{"ticker":"btc","amount":"1"}`

	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("ticker", "btc")
	_ = mw.WriteField("amount", "1")
	_ = mw.Close()

	refused := []struct {
		call controlCall
		code int
	}{
		{controlCall{name: "form post", contentType: "application/x-www-form-urlencoded", body: "ticker=btc&amount=1"}, http.StatusUnsupportedMediaType},
		{controlCall{name: "multipart form post", contentType: mw.FormDataContentType(), body: mp.String()}, http.StatusUnsupportedMediaType},
		{controlCall{name: "text/plain form with a JSON body", contentType: "text/plain", body: fund}, http.StatusUnsupportedMediaType},
		{controlCall{name: "no content type", body: fund}, http.StatusUnsupportedMediaType},
		{controlCall{name: "JSON-like type", contentType: "application/jsonx", body: fund}, http.StatusUnsupportedMediaType},
		{controlCall{name: "cross-site fetch", contentType: "application/json", body: fund,
			header: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{controlCall{name: "other origin, no fetch metadata", contentType: "application/json", body: fund,
			header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden},
		{controlCall{name: "same-site, other port", contentType: "application/json", body: fund,
			header: map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}}, http.StatusForbidden},
		{controlCall{name: "opaque origin", contentType: "application/json", body: fund,
			header: map[string]string{"Origin": "null"}}, http.StatusForbidden},
		{controlCall{name: "fetch metadata says cross-site", contentType: "application/json", body: fund,
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{controlCall{name: "DNS rebinding: same origin to the browser, a foreign Host", contentType: "application/json", body: fund,
			host:   "rebind.evil.example:" + port,
			header: map[string]string{"Origin": "http://rebind.evil.example:" + port, "Sec-Fetch-Site": "same-origin"}}, http.StatusForbidden},
		{controlCall{name: "DNS rebinding without fetch metadata", contentType: "application/json", body: fund,
			host: "rebind.evil.example:" + port}, http.StatusForbidden},
		{controlCall{name: "localhost with a trailing dot", contentType: "application/json", body: fund,
			host: "localhost.:" + port}, http.StatusForbidden},
		{controlCall{name: "a name under localhost", contentType: "application/json", body: fund,
			host: "evil.localhost:" + port}, http.StatusForbidden},
		{controlCall{name: "0.0.0.0, which some browsers send to this machine", contentType: "application/json", body: fund,
			host: "0.0.0.0:" + port}, http.StatusForbidden},
		{controlCall{name: "an address of another interface", contentType: "application/json", body: fund,
			host: "192.168.1.2:" + port}, http.StatusForbidden},
		{controlCall{name: "unknown field", contentType: "application/json", body: `{"ticker":"btc","amount":"1","adress":"x"}`}, http.StatusBadRequest},
		{controlCall{name: "not an object", contentType: "application/json", body: `["btc"]`}, http.StatusBadRequest},
		{controlCall{name: "trailing data", contentType: "application/json", body: fund + `{}`}, http.StatusBadRequest},
	}
	refused = append(refused, []struct {
		call controlCall
		code int
	}{
		{controlCall{name: "amount of another type", contentType: "application/json", body: `{"ticker":"btc","amount":true}`}, http.StatusBadRequest},
		{controlCall{name: "ticker of another type", contentType: "application/json", body: `{"ticker":7,"amount":"1"}`}, http.StatusBadRequest},
		{controlCall{name: "not JSON", contentType: "application/json", body: `ticker=btc`}, http.StatusBadRequest},
		{controlCall{name: "amount not a number", contentType: "application/json", body: `{"ticker":"btc","amount":"1,5"}`}, http.StatusBadRequest},
	}...)
	for _, c := range refused {
		code, out := c.call.do(t, base, "fund")
		assert.Equal(t, c.code, code, "%s: %v", c.call.name, out)
		assert.Equal(t, "error", out["status"], c.call.name)
		assert.NotEmpty(t, out["error"], c.call.name)
		for _, goText := range []string{"controlRequest", "json.Number", "Go ", "struct"} {
			assert.NotContains(t, out["error"], goText, c.call.name)
		}
	}
	assert.Equal(t, "0", balance(t, base, "btc"), "nothing was funded")

	// What the CLI, a script or a page of the simulator itself sends.
	accepted := []controlCall{
		{name: "a script", contentType: "application/json", body: fund},
		{name: "a script, charset", contentType: "application/json; charset=utf-8", body: `{"ticker":"btc","amount":1}`},
		{name: "same-origin page", contentType: "application/json", body: fund,
			header: map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}},
		{name: "localhost", contentType: "application/json", body: fund, host: "localhost:" + port,
			header: map[string]string{"Origin": "http://localhost:" + port}},
		{name: "the address by IPv6 literal", contentType: "application/json", body: fund, host: "[::1]:" + port},
		{name: "an IPv6 literal on the default port", contentType: "application/json", body: fund, host: "[::1]"},
	}
	for _, c := range accepted {
		code, out := c.do(t, base, "fund")
		assert.Equal(t, http.StatusOK, code, "%s: %v", c.name, out)
	}
	assert.Equal(t, "6", balance(t, base, "btc"))

	// flush takes an empty JSON body.
	code, out := controlCall{name: "flush", contentType: "application/json"}.do(t, base, "flush")
	assert.Equal(t, http.StatusOK, code, "%v", out)
}

func balance(t *testing.T, base, ticker string) string {
	t.Helper()
	resp, err := http.Get(base + "/" + ticker + "/payout/balance/?apikey=" + url.QueryEscape(testKey))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out["balance"]
}
