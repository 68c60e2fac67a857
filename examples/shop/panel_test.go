package main

import (
	"bytes"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// plain is a client that sends what it is told, nothing more: an attacker's
// page, an old browser or curl.
var plain = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// panelPage loads the developer panel with Host host ("" for the shop's
// own address) and returns the status and the token its forms carry.
func panelPage(t *testing.T, s *testShop, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+"/dev/", nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := plain.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if m := tokenRE.FindSubmatch(body); m != nil {
		return resp.StatusCode, string(m[1])
	}
	return resp.StatusCode, ""
}

// panelPost is one request to POST /dev/act.
type panelPost struct {
	name        string
	host        string
	query       string
	contentType string
	body        string
	header      map[string]string
}

func (p panelPost) send(t *testing.T, s *testShop) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/dev/act"+p.query, strings.NewReader(p.body))
	require.NoError(t, err)
	if p.contentType != "" {
		req.Header.Set("Content-Type", p.contentType)
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	if p.host != "" {
		req.Host = p.host
	}
	resp, err := plain.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The developer panel moves money on the fake: it answers only at the
// loopback address it serves, and only to its own form. A DNS-rebinding
// page (same origin to the browser, its own name as the Host) cannot read
// the panel or press its buttons; a browser that sends no fetch metadata
// still needs the token that only the panel's form carries.
func TestPanelAnswersOnlyItsOwnForm(t *testing.T) {
	s := startTestShop(t)
	other := startTestShop(t) // another run of the shop, with its own token
	u, _ := url.Parse(s.url)
	port := u.Port()
	id := buyTee(t, s)

	// Reading the panel.
	for _, host := range []string{"rebind.evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.:" + port,
		"evil.localhost:" + port, "0.0.0.0:" + port, "127.0.0.1:1", "192.168.1.2:" + port, "127.0.0.1"} {
		code, token := panelPage(t, s, host)
		assert.Equal(t, http.StatusForbidden, code, host)
		assert.Empty(t, token, "%s: no token", host)
	}
	code, token := panelPage(t, s, "")
	require.Equal(t, http.StatusOK, code)
	require.NotEmpty(t, token)
	for _, host := range []string{"localhost:" + port, "LocalHost:" + port, "[::1]:" + port, "127.0.0.2:" + port, "[::ffff:127.0.0.1]:" + port} {
		code, again := panelPage(t, s, host)
		assert.Equal(t, http.StatusOK, code, host)
		assert.Equal(t, token, again, host)
	}
	_, otherToken := panelPage(t, other, "")
	require.NotEqual(t, token, otherToken, "each run has its own token")

	form := func(token string) string {
		return url.Values{"invoice": {id}, "action": {actExpire}, "token": {token}}.Encode()
	}
	const urlencoded = "application/x-www-form-urlencoded"
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	for k, v := range map[string]string{"invoice": id, "action": actExpire, "token": token} {
		_ = mw.WriteField(k, v)
	}
	_ = mw.Close()

	refused := []panelPost{
		{name: "no token, no fetch metadata (an old browser)", contentType: urlencoded, body: url.Values{"invoice": {id}, "action": {actExpire}}.Encode()},
		{name: "no token, cross-site", contentType: urlencoded, body: url.Values{"invoice": {id}, "action": {actExpire}}.Encode(),
			header: map[string]string{"Origin": "https://evil.example"}},
		{name: "empty token", contentType: urlencoded, body: form("")},
		{name: "forged token", contentType: urlencoded, body: form(strings.Repeat("A", len(token)))},
		{name: "the token with one more character", contentType: urlencoded, body: form(token + "A")},
		{name: "the token of another run (a replay)", contentType: urlencoded, body: form(otherToken)},
		{name: "the token in the query", query: "?token=" + url.QueryEscape(token), contentType: urlencoded,
			body: url.Values{"invoice": {id}, "action": {actExpire}}.Encode()},
		{name: "the token twice, the first forged", contentType: urlencoded,
			body: "token=forged&" + form(token)},
		{name: "DNS rebinding with the token", host: "rebind.evil.example:" + port, contentType: urlencoded, body: form(token),
			header: map[string]string{"Origin": "http://rebind.evil.example:" + port, "Sec-Fetch-Site": "same-origin"}},
		{name: "DNS rebinding without fetch metadata", host: "rebind.evil.example:" + port, contentType: urlencoded, body: form(token)},
		{name: "cross-site with the token", contentType: urlencoded, body: form(token),
			header: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{name: "same-site, another port", contentType: urlencoded, body: form(token),
			header: map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}},
		{name: "an opaque origin", contentType: urlencoded, body: form(token), header: map[string]string{"Origin": "null"}},
		{name: "multipart form", contentType: mw.FormDataContentType(), body: mp.String()},
		{name: "text/plain form", contentType: "text/plain", body: form(token)},
		{name: "JSON", contentType: "application/json", body: `{"invoice":"` + id + `","action":"expire","token":"` + token + `"}`},
		{name: "no content type", body: form(token)},
	}
	for _, p := range refused {
		code, body := p.send(t, s)
		assert.Contains(t, []int{http.StatusForbidden, http.StatusUnsupportedMediaType}, code, "%s: %s", p.name, body)
		assert.NotContains(t, body, token, p.name)
	}
	assert.Equal(t, invoice.StatusNew, s.get(t, id).Status, "nothing moved")

	// The panel's own form, from a browser with or without fetch metadata,
	// at any loopback name of the address.
	accepted := []panelPost{
		{name: "the panel's form", contentType: urlencoded,
			header: map[string]string{"Origin": s.url, "Sec-Fetch-Site": "same-origin"}},
		{name: "no fetch metadata", contentType: urlencoded},
		{name: "localhost", host: "localhost:" + port, contentType: urlencoded + "; charset=utf-8",
			header: map[string]string{"Origin": "http://localhost:" + port}},
	}
	for i, p := range accepted {
		if i > 0 {
			id = buyTee(t, s)
		}
		p.body = form(token)
		code, body := p.send(t, s)
		assert.Equal(t, http.StatusSeeOther, code, "%s: %s", p.name, body)
		assert.Equal(t, invoice.StatusExpired, s.get(t, id).Status, p.name)
	}
}

// buyTee checks out a T-shirt and returns its invoice ID.
func buyTee(t *testing.T, s *testShop) string {
	t.Helper()
	resp, err := plain.PostForm(s.url+"/checkout", url.Values{"product": {"tee"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	return strings.TrimPrefix(resp.Header.Get("Location"), "/pay/")
}

// A shop on the IPv6 loopback address, or reached as localhost, takes its
// panel's form from its own origin, and refuses the other loopback name's
// origin (another origin to the browser).
func TestPanelOnEveryLoopbackName(t *testing.T) {
	for _, addr := range []string{"[::1]:0", "localhost:0", "127.0.0.1:0"} {
		if addr == "[::1]:0" {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				continue // no IPv6 here
			}
			_ = ln.Close()
		}
		s := startRun(t, "-addr", addr)
		u, _ := url.Parse(s.url)
		id := buyTee(t, &testShop{url: s.url})
		chooseCoin(t, s.url, id, "trc20_usdt")
		code, token := panelPage(t, &testShop{url: s.url}, "")
		require.Equal(t, http.StatusOK, code, addr)
		form := url.Values{"invoice": {id}, "action": {actFull}, "token": {token}}.Encode()
		other := "http://localhost:" + u.Port()
		if u.Hostname() == "localhost" {
			other = "http://127.0.0.1:" + u.Port()
		}
		code, body := panelPost{contentType: "application/x-www-form-urlencoded", body: form,
			header: map[string]string{"Origin": other, "Sec-Fetch-Site": "same-site"}}.send(t, &testShop{url: s.url})
		assert.Equal(t, http.StatusForbidden, code, "%s from %s: %s", addr, other, body)
		code, body = panelPost{contentType: "application/x-www-form-urlencoded", body: form,
			header: map[string]string{"Origin": s.url, "Sec-Fetch-Site": "same-origin"}}.send(t, &testShop{url: s.url})
		assert.Equal(t, http.StatusSeeOther, code, "%s: %s", addr, body)
	}
}

// What "localhost" resolved to is checked after listening: a system that
// maps it to another interface does not get a shop reachable from other
// machines.
func TestShopServesLoopbackOnly(t *testing.T) {
	for _, ip := range []string{"192.168.1.2", "0.0.0.0", "::", "2001:db8::1"} {
		assert.ErrorIs(t, loopbackOnly(&net.TCPAddr{IP: net.ParseIP(ip), Port: 8080}), errNotLoopback, ip)
	}
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "::1"} {
		assert.NoError(t, loopbackOnly(&net.TCPAddr{IP: net.ParseIP(ip), Port: 8080}), ip)
	}
	assert.Error(t, loopbackOnly(&net.UnixAddr{Name: "/tmp/x", Net: "unix"}))
}
