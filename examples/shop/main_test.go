package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func TestLiveRefusesToStartWithoutItsSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"-live"}, errLiveNeedsDestination},
		{[]string{"-live", "-public-url", "https://shop.example"}, errLiveNeedsDestination},
		{[]string{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"}, errLiveNeedsPublicURL},
		{[]string{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", "-public-url", "javascript:x"}, errLiveNeedsPublicURL},
		{[]string{"-addr", "0.0.0.0:8080"}, errNotLoopback},
		{[]string{"-addr", ":8080"}, errNotLoopback},
		{[]string{"-addr", "192.168.1.2:8080"}, errNotLoopback},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out, io.Discard)
		assert.ErrorIs(t, err, tc.want, "%q", tc.args)
		assert.Empty(t, out.String(), "nothing started for %q", tc.args)
	}
	for _, ok := range [][]string{{}, {"-addr", "[::1]:0"}, {"-addr", "localhost:0"},
		{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", "-public-url", "https://shop.example"}} {
		_, err := parseConfig(ok, io.Discard)
		assert.NoError(t, err, "%q", ok)
	}
}

// The command starts on the fake, prints the URL to open, and that URL
// sells: a checkout leads to the payment page.
func TestRunPrintsAURLThatSells(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard); _ = pw.Close() }()
	line := make([]byte, 200)
	n, err := pr.Read(line)
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(line[:n])), "shop: open "), "/")
	u, err := url.Parse(base)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname(), "loopback only")

	resp, err := noFollow.PostForm(base+"/checkout", url.Values{"product": {"tee"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	page, err := http.Get(base + resp.Header.Get("Location"))
	require.NoError(t, err)
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	assert.Equal(t, http.StatusOK, page.StatusCode)
	assert.Contains(t, string(body), `data-status="new"`)
	assert.Contains(t, string(body), `name="coin" value="btc"`, "the customer chooses the coin")
	cancel()
	require.NoError(t, <-done)
}

// noFollow is the developer's browser: it does not follow redirects and,
// like a browser that shows the panel before a button is pressed, sends a
// panel action with the token of the panel's form.
var noFollow = &http.Client{
	Transport:     panelBrowser{},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// panelBrowser adds to a POST /dev/act without a token the token of the
// form the panel's page carries, loaded from the same address.
type panelBrowser struct{}

func (panelBrowser) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/dev/act" || r.Body == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err == nil && !form.Has("token") {
		page := *r.URL
		page.Path, page.RawQuery = "/dev/", ""
		resp, err := http.Get(page.String())
		if err != nil {
			return nil, err
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := tokenRE.FindSubmatch(html); m != nil {
			form.Set("token", string(m[1]))
			body = []byte(form.Encode())
		}
	}
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return http.DefaultTransport.RoundTrip(r)
}

// Every developer panel action does what its button says, on the fake.
func TestDeveloperPanelSimulatesTheCustomer(t *testing.T) {
	s := startTestShop(t)
	buyOne := func() string {
		resp, err := noFollow.PostForm(s.url+"/checkout", url.Values{"product": {"tee"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		return strings.TrimPrefix(resp.Header.Get("Location"), "/pay/")
	}

	id := buyOne()
	s.panel(t, id, actPartial)
	inv := s.get(t, id)
	assert.Equal(t, invoice.ExceptionPaidPartial, inv.Exception)
	assert.Equal(t, "12.5", inv.PaidPending.String())
	s.panel(t, id, actConfirm)
	assert.Equal(t, "12.5", s.get(t, id).Paid.String())
	s.panel(t, id, actFull)
	assert.Equal(t, invoice.StatusProcessing, s.get(t, id).Status)
	s.panel(t, id, actConfirm)
	assert.Equal(t, invoice.StatusSettled, s.get(t, id).Status)

	id = buyOne()
	s.panel(t, id, actWrongCoin)
	inv = s.get(t, id)
	assert.Equal(t, invoice.ExceptionWrongCoin, inv.Exception)
	require.Len(t, inv.Payments, 1)
	assert.Equal(t, "trx", inv.Payments[0].Coin)

	id = buyOne()
	quote := s.get(t, id).QuoteExpiresAt
	s.panel(t, id, actRequote)
	assert.True(t, s.get(t, id).QuoteExpiresAt.After(quote), "a new quote")
	s.panel(t, id, actLate)
	inv = s.get(t, id)
	assert.Equal(t, invoice.StatusExpired, inv.Status)
	assert.Equal(t, invoice.ExceptionPaidLate, inv.Exception)
	assert.Equal(t, "25", inv.PaidPending.String())

	id = buyOne()
	s.panel(t, id, actExpire)
	assert.Equal(t, invoice.StatusExpired, s.get(t, id).Status)

	// The panel refuses what it cannot do, and other sites.
	for _, f := range []url.Values{
		{"invoice": {id}, "action": {actFull}},     // nothing due on an expired invoice
		{"invoice": {"NOPE"}, "action": {actFull}}, // not one of the shop's invoices
		{"invoice": {id}, "action": {"refund"}},    // no such action
	} {
		resp, err := noFollow.PostForm(s.url+"/dev/act", f)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, f)
	}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/dev/act", strings.NewReader("invoice="+id+"&action=expire"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := noFollow.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// The panel's page lists the invoices.
	resp, err = http.Get(s.url + "/dev/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), "/pay/"+id)
}

// In live mode there is no developer panel.
func TestLiveShopHasNoPanel(t *testing.T) {
	fake := newDemoFake()
	t.Cleanup(fake.Close)
	ts := httptest.NewUnstartedServer(nil)
	opts, err := fakeOptions(fake, cryptapitest.NewFakeClock(time.Now()), "http://"+ts.Listener.Addr().String())
	require.NoError(t, err)
	// What run builds with -live: the service calls back at a public URL,
	// the shop listens on loopback, and there is no panel.
	opts.fake, opts.clock, opts.publicURL = nil, nil, "https://shop.example"
	s, err := newShop(opts)
	require.NoError(t, err)
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(ts.Close)
	for _, p := range []string{"/dev/", "/dev/act"} {
		resp, err := http.Post(ts.URL+p, "application/x-www-form-urlencoded", nil)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}
	resp, err := http.Get(ts.URL + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NotContains(t, string(body), "/dev/")
	assert.NotContains(t, string(body), "/admin/", "no link to the admin in the store")
	assert.NotContains(t, string(body), "Demo shop")

	// The admin is there, for the signed-in browser only.
	resp, err = http.Get(ts.URL + "/admin/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, err = noFollow.Get(ts.URL + s.guard.loginPath())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	// Through a tunnel, with the public name as the Host, it is not there.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+s.guard.loginPath(), nil)
	req.Host = "shop.example"
	resp, err = noFollow.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// The command prints the admin's sign-in link of its run, and the link
// signs the browser in.
func TestRunPrintsTheAdminSignIn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard); _ = pw.Close() }()
	lines := bufio.NewScanner(pr)
	var printed []string
	for len(printed) < 3 && lines.Scan() {
		printed = append(printed, lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Len(t, printed, 3)
	base := strings.TrimSuffix(strings.TrimPrefix(printed[0], "shop: open "), "/")
	link, ok := strings.CutPrefix(printed[1], "shop: admin (sign-in link of this run) at ")
	require.True(t, ok, printed[1])
	assert.True(t, strings.HasPrefix(link, base+"/admin/login?key="), link)
	assert.Equal(t, "shop: developer panel (fake service) at "+base+"/dev/", printed[2])

	resp, err := noFollow.Get(link)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/", nil)
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	page, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	page.Body.Close()
	assert.Equal(t, http.StatusOK, page.StatusCode)
	cancel()
	require.NoError(t, <-done)
}
