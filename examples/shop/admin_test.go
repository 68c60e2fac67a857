package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// request is one request to the shop, as a browser or an attacker sends
// it.
type request struct {
	method, path string
	host         string            // "" for the shop's own address
	form         url.Values        // a urlencoded body when set
	contentType  string            // instead of the form's
	body         string            // instead of the form
	header       map[string]string // more headers
	cookies      []*http.Cookie
}

// send sends r to the shop and returns the answer with its body.
func (r request) send(t *testing.T, s *testShop) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	switch {
	case r.body != "":
		body = strings.NewReader(r.body)
	case r.form != nil:
		body = strings.NewReader(r.form.Encode())
	}
	method := r.method
	if method == "" {
		method = http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequest(method, s.url+r.path, body)
	require.NoError(t, err)
	if r.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	for _, c := range r.cookies {
		req.AddCookie(c)
	}
	if r.host != "" {
		req.Host = r.host
	}
	resp, err := plain.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// signIn opens the admin's sign-in link and returns the cookie it sets.
func signIn(t *testing.T, s *testShop) *http.Cookie {
	t.Helper()
	resp, body := request{path: s.guard.loginPath()}.send(t, s)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "/admin/", resp.Header.Get("Location"))
	for _, c := range resp.Cookies() {
		if c.Name == s.guard.cookie() {
			return c
		}
	}
	t.Fatal("no sign-in cookie")
	return nil
}

// friendly fails when a page shows Go error text.
func friendly(t *testing.T, body, what string) {
	t.Helper()
	text := body[max(strings.Index(body, "<main"), 0):]
	for _, bad := range goErrorText {
		assert.NotContains(t, text, bad, what)
	}
}

// The admin answers only the browser signed in with this run's link, at
// the shop's loopback address: not a page that rebinds its DNS name to
// it, nor a tunnel, nor an old cookie.
func TestAdminAnswersOnlyItsSignedInBrowser(t *testing.T) {
	s := startTestShop(t)
	other := startTestShop(t)
	u, _ := url.Parse(s.url)
	port := u.Port()
	buyTee(t, s)

	resp, body := request{path: "/admin/"}.send(t, s)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, "Please sign in")
	assert.NotContains(t, body, "Order 1001")
	friendly(t, body, "not signed in")

	for _, key := range []string{"", "wrong", other.guard.key, s.guard.key + "A", strings.ToLower(s.guard.key)} {
		resp, body := request{path: "/admin/login?key=" + url.QueryEscape(key)}.send(t, s)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, key)
		assert.Empty(t, resp.Cookies(), "%q: no cookie", key)
		friendly(t, body, "wrong key")
	}
	resp, _ = request{path: s.guard.loginPath(), host: "rebind.evil.example:" + port}.send(t, s)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "sign-in from a rebound name")
	assert.Empty(t, resp.Cookies())

	cookie := signIn(t, s)
	assert.True(t, cookie.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	assert.Equal(t, "/admin/", cookie.Path)

	resp, body = request{path: "/admin/", cookies: []*http.Cookie{cookie}}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Order 1001")
	for _, host := range []string{"rebind.evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.:" + port, "shop.example", "127.0.0.1:1"} {
		resp, body := request{path: "/admin/", host: host, cookies: []*http.Cookie{cookie}}.send(t, s)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, host)
		assert.NotContains(t, body, "Order 1001", host)
	}
	resp, _ = request{path: "/admin/", cookies: []*http.Cookie{{Name: s.guard.cookie(), Value: other.guard.key}}}.send(t, s)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "another run's key")
	resp, _ = request{path: "/admin/", cookies: []*http.Cookie{signIn(t, other)}}.send(t, s)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "another shop's cookie")
	assert.NotEqual(t, s.guard.cookie(), other.guard.cookie(), "each shop's cookie has its own name")
}

// A decision in the admin moves money (it settles an order by hand): it
// is taken only from the admin's own form, in the signed-in browser.
func TestAdminDecidesOnlyFromItsOwnForm(t *testing.T) {
	s := startTestShop(t)
	u, _ := url.Parse(s.url)
	port := u.Port()
	id := buyTee(t, s)
	cookie := signIn(t, s)
	_, page := request{path: "/admin/invoices/" + id, cookies: []*http.Cookie{cookie}}.send(t, s)
	m := tokenRE.FindStringSubmatch(page)
	require.NotNil(t, m, "the admin's form carries the token")
	token := m[1]
	settle := "/admin/invoices/" + id + "/settle"
	form := func(token string) url.Values { return url.Values{"reason": {"paid in cash"}, "token": {token}} }
	signed := []*http.Cookie{cookie}

	for _, r := range []request{
		{path: settle, form: form(token)}, // not signed in
		{path: settle, form: form(""), cookies: signed},
		{path: settle, form: form("forged"), cookies: signed},
		{path: settle, form: url.Values{"reason": {"x"}}, cookies: signed},
		{path: settle, form: form(token), cookies: signed, header: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{path: settle, form: form(token), cookies: signed, header: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:" + port}},
		{path: settle, form: form(token), cookies: signed, header: map[string]string{"Origin": "https://evil.example"}},
		{path: settle, form: form(token), cookies: signed, header: map[string]string{"Origin": "null"}},
		{path: settle, form: form(token), cookies: signed, host: "rebind.evil.example:" + port,
			header: map[string]string{"Origin": "http://rebind.evil.example:" + port, "Sec-Fetch-Site": "same-origin"}},
		{path: settle, body: form(token).Encode(), contentType: "text/plain", cookies: signed},
		{path: settle, body: `{"reason":"x","token":"` + token + `"}`, contentType: "application/json", cookies: signed},
		{path: settle + "?token=" + token, form: url.Values{"reason": {"x"}}, cookies: signed},
	} {
		resp, body := r.send(t, s)
		assert.Contains(t, []int{http.StatusForbidden, http.StatusUnsupportedMediaType}, resp.StatusCode, "%+v: %s", r, body)
		assert.NotContains(t, body, token, "%+v", r)
		friendly(t, body, "refused")
	}
	assert.Equal(t, invoice.StatusNew, s.get(t, id).Status, "nothing moved")

	resp, body := request{path: settle, form: form(token), cookies: signed,
		header: map[string]string{"Origin": s.url, "Sec-Fetch-Site": "same-origin"}}.send(t, s)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	assert.Equal(t, "/admin/invoices/"+id+"?done=settle", resp.Header.Get("Location"))
	inv := s.get(t, id)
	assert.Equal(t, invoice.StatusSettled, inv.Status)
	assert.Equal(t, invoice.ExceptionMarked, inv.Exception)
	assert.Equal(t, "paid in cash", inv.Events[len(inv.Events)-1].Note)
}

// Each decision does what it says where the invoice's status allows it,
// and otherwise says why not, in words, changing nothing.
func TestAdminDecisionsSayWhatHappened(t *testing.T) {
	s := startTestShop(t)
	cookie := signIn(t, s)
	token := s.guard.token // the forms' (TestAdminDecidesOnlyFromItsOwnForm reads it from the page)
	decide := func(id, action string, form url.Values) (int, string) {
		t.Helper()
		if form == nil {
			form = url.Values{}
		}
		form.Set("token", token)
		resp, body := request{path: "/admin/invoices/" + id + "/" + action, form: form, cookies: []*http.Cookie{cookie}}.send(t, s)
		friendly(t, body, action)
		return resp.StatusCode, body
	}

	open := buyTee(t, s)
	code, body := decide(open, decideSettle, url.Values{"reason": {"  \r\n "}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "Say why you accept this invoice as paid")
	code, body = decide(open, decideSettle, url.Values{"reason": {strings.Repeat("x", invoice.MaxReasonLen+1)}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "keep it under 500 characters")
	assert.Equal(t, invoice.StatusNew, s.get(t, open).Status)
	code, body = decide(open, decideReopen, url.Values{"expires": {"2h"}})
	assert.Equal(t, http.StatusConflict, code, "an open invoice cannot be reopened")
	assert.Contains(t, body, "Nothing was done")
	code, _ = decide(open, "delete", nil)
	assert.Equal(t, http.StatusNotFound, code)

	// A reason pasted with line breaks is kept on one line, without marks
	// that turn the text's direction.
	code, _ = decide(open, decideCancel, url.Values{"reason": {"Customer\r\nchanged \u202etheir\u202c\tmind\u2066"}})
	require.Equal(t, http.StatusSeeOther, code)
	inv := s.get(t, open)
	assert.Equal(t, invoice.StatusInvalid, inv.Status)
	assert.Equal(t, "Customer changed their mind", inv.Events[len(inv.Events)-1].Note)
	code, body = decide(open, decideSettle, url.Values{"reason": {"too late"}})
	assert.Equal(t, http.StatusConflict, code, "a cancelled invoice cannot be settled")
	assert.Contains(t, body, "does not allow this")

	expired := buyTee(t, s)
	s.panel(t, expired, actExpire)
	code, body = decide(expired, decideReopen, url.Values{"expires": {"1y"}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "Choose how long")
	code, _ = decide(expired, decideReopen, url.Values{"expires": {"24h"}, "reason": {"asked for more time"}})
	require.Equal(t, http.StatusSeeOther, code)
	inv = s.get(t, expired)
	assert.Equal(t, invoice.StatusNew, inv.Status)
	assert.Equal(t, s.clock.Now().Add(24*time.Hour).Unix(), inv.ExpiresAt.Unix())
	resp, body := request{path: "/admin/invoices/" + expired + "?done=reopen", cookies: []*http.Cookie{cookie}}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "The invoice is open again")

	// Guessed invoice IDs find nothing.
	for _, id := range []string{"AAAAAAAAAAAAAAAAAAAAAAAAAA", strings.ToLower(expired), expired + "A", "..%2f..%2fdev"} {
		resp, body := request{path: "/admin/invoices/" + id, cookies: []*http.Cookie{cookie}}.send(t, s)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, id)
		friendly(t, body, id)
		code, _ := decide(id, decideCancel, nil)
		assert.Equal(t, http.StatusNotFound, code, id)
	}
}

// The list shows what its filters select, newest first, in pages; an
// order is found by its number.
func TestAdminListFiltersAndFinds(t *testing.T) {
	s := startTestShop(t)
	cookie := signIn(t, s)
	list := func(query string) []string {
		t.Helper()
		resp, body := request{path: "/admin/" + query, cookies: []*http.Cookie{cookie}}.send(t, s)
		require.Equal(t, http.StatusOK, resp.StatusCode, query)
		friendly(t, body, query)
		var orders []string
		for _, m := range orderLinkRE.FindAllStringSubmatch(body, -1) {
			orders = append(orders, m[1])
		}
		return orders
	}
	var ids []string
	for range 30 {
		ids = append(ids, buyTee(t, s))
	}
	s.panel(t, ids[0], actFull)
	s.panel(t, ids[0], actConfirm)                                // 1001: settled
	s.panel(t, ids[1], actPartial)                                // 1002: new, paid_partial
	_, err := s.desk.Invalidate(context.Background(), ids[2], "") // 1003: cancelled
	require.NoError(t, err)

	page1 := list("")
	require.Len(t, page1, adminPageSize)
	assert.Equal(t, "1030", page1[0], "newest first")
	_, first := request{path: "/admin/", cookies: []*http.Cookie{cookie}}.send(t, s)
	next := olderRE.FindStringSubmatch(first)
	require.NotNil(t, next, "a link to older invoices")
	page2 := list(strings.TrimPrefix(htmlUnescape(next[1]), "/admin/"))
	assert.Equal(t, []string{"1005", "1004", "1003", "1002", "1001"}, page2)

	assert.Equal(t, []string{"1001"}, list("?status=settled"))
	assert.Equal(t, []string{"1003", "1001"}, list("?status=settled&status=invalid"))
	assert.Equal(t, []string{"1002"}, list("?exception=paid_partial"))
	assert.Equal(t, []string{"1002"}, list("?status=new&exception=paid_partial"))
	assert.Len(t, list("?exception=none"), adminPageSize)
	assert.NotContains(t, list("?exception=none"), "1002")
	assert.Equal(t, []string{"1003"}, list("?status=invalid"))
	assert.Empty(t, list("?status=expired"))
	assert.Len(t, list("?status=bogus&exception=%3Cscript%3E"), adminPageSize, "unknown filters select nothing special")
	for _, after := range []string{"NOSUCHINVOICE", strings.Repeat("A", 65), "%00"} {
		resp, body := request{path: "/admin/?after=" + after, cookies: []*http.Cookie{cookie}}.send(t, s)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, after)
		assert.Contains(t, body, "This page of the list does not exist", after)
		friendly(t, body, after)
	}
	resp, body := request{path: "/admin/?order=" + strings.Repeat("9", 201), cookies: []*http.Cookie{cookie}}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "An order number is a few digits")
	assert.Equal(t, []string{"1017"}, list("?order=1017"))
	assert.Equal(t, []string{"1017"}, list("?order=%231017"))
	assert.Empty(t, list("?order=9999"))
}

var (
	orderLinkRE = regexp.MustCompile(`<a href="/admin/invoices/[A-Z0-9]+">Order (\d+)</a>`)
	olderRE     = regexp.MustCompile(`<a class="button quiet" href="([^"]+)">Older</a>`)
)

func htmlUnescape(s string) string { return html.UnescapeString(s) }
