package invoice_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// postChoice sends the picker's form as a browser of the page's own
// origin does, and returns the answer (redirects not followed).
func postChoice(t *testing.T, pageURL, action, coin string, h http.Header) *http.Response {
	t.Helper()
	base, err := url.Parse(pageURL)
	require.NoError(t, err)
	target, err := base.Parse(action)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, target.String(), strings.NewReader(url.Values{"coin": {coin}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", base.Scheme+"://"+base.Host)
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := noRedirects.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

var formAction = regexp.MustCompile(`form-action ([^;]+)`)

// Without a coin chosen the page is the picker: each coin, with the
// service's name, its network and what the invoice asks in it, as
// buttons of one form that works without a script; no address, no code.
// The form posts the choice; the answer sends the browser back to the
// page, now asking for the coin chosen, with a link to switch.
func TestPagePickerIsAPlainForm(t *testing.T) {
	e, store, ts := pageEnv(t)
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p1")))
	require.NoError(t, err)
	pageURL := ts.URL + "/pay/" + inv.ID

	before := store.calls()
	resp, body := get(t, pageURL+"?lang=de")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	assert.Equal(t, []string{"new", "", "choose"}, dataAttr.FindStringSubmatch(page)[1:])
	assert.Equal(t, "'self'", formAction.FindStringSubmatch(resp.Header.Get("Content-Security-Policy"))[1],
		"the picker's form may post to the page's origin")
	assert.Contains(t, page, `<form class="picker" method="post" action="`+inv.ID+`/choose?lang=de" data-choose>`)
	for _, c := range []struct{ ticker, name, network, amount string }{
		{"btc", "Bitcoin", "", "0,00041667\u00a0BTC"},
		{"ltc", "Litecoin", "", "0,3125\u00a0LTC"},
		{"trc20_usdt", "Tether USD (TRC-20)", "TRC20", "25\u00a0USDT"},
	} {
		assert.Contains(t, page, `name="coin" value="`+c.ticker+`"`)
		assert.Contains(t, page, `<span class="coin-name">`+c.name+`</span>`)
		assert.Contains(t, page, `<span class="coin-amount">`+c.amount+`</span>`)
		if c.network != "" {
			assert.Contains(t, page, `<span class="net">`+c.network+`</span>`)
		}
	}
	assert.Contains(t, page, ">Womit möchten Sie zahlen?<")
	assert.NotContains(t, page, `class="qr`)
	assert.NotContains(t, page, `id="address"`)
	assert.Contains(t, page, `data-countdown="expiry"`, "the time left")
	v := decodeView(t, pageURL+"/status?lang=de", nil)
	assert.Equal(t, invoice.PhaseChoose, v.Phase)
	assert.True(t, v.ShowChoose)
	assert.False(t, v.ShowPay)
	require.Len(t, v.Coins, 3)
	assert.Equal(t, "0.3125", v.Coins[1].Value)
	assert.Equal(t, "Ł", v.Coins[1].Badge)
	after := store.calls()
	assert.Equal(t, before[0]+2, after[0], "one read per request")
	assert.Equal(t, before[1:], after[1:], "reads never write")
	assert.Zero(t, e.Creates(), "looking creates no address")

	// The choice.
	resp = postChoice(t, pageURL, v.ChooseAction, "ltc", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "../"+inv.ID+"?lang=de", resp.Header.Get("Location"))
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, pageURL+"?lang=de", loc.String(), "back to the page")
	assert.Equal(t, 1, e.Creates())
	got := e.Get(inv.ID)
	assert.Equal(t, "ltc", got.Ticker)

	resp, body = get(t, loc.String())
	page = string(body)
	assert.Equal(t, []string{"new", "", "pay"}, dataAttr.FindStringSubmatch(page)[1:])
	assert.Equal(t, "'none'", formAction.FindStringSubmatch(resp.Header.Get("Content-Security-Policy"))[1], "no form, no form-action")
	assert.Contains(t, page, `data-copy-value="`+got.AddressIn+`"`)
	assert.Contains(t, page, `<a class="change" href="`+inv.ID+`?lang=de&amp;choose=1">Währung wechseln</a>`)

	// The switch: the picker again, the coin chosen marked, a way back,
	// and the note that the first address still counts.
	resp, body = get(t, pageURL+"?lang=en&choose=1")
	page = string(body)
	assert.Equal(t, "choose", dataAttr.FindStringSubmatch(page)[3])
	assert.Equal(t, "'self'", formAction.FindStringSubmatch(resp.Header.Get("Content-Security-Policy"))[1])
	assert.Regexp(t, `value="ltc" class="coin-option" aria-current="true"`, page, "marked, with its tag")
	assert.Contains(t, page, `<a class="button secondary back" href="`+inv.ID+`?lang=en">Back to payment</a>`)
	assert.Contains(t, page, "A payment already sent to another one still counts.")
	assert.Contains(t, page, `data-status-url="`+inv.ID+`/status?lang=en&amp;choose=1"`, "the page asks for the status of what it shows")
	v = decodeView(t, pageURL+"/status?lang=en&choose=1", nil)
	assert.Equal(t, invoice.PhaseChoose, v.Phase)
	resp = postChoice(t, pageURL, v.ChooseAction, "btc", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "btc", e.Get(inv.ID).Ticker)
	assert.Equal(t, 2, e.Creates())

	// A coin given as the service's path form is the same coin.
	resp = postChoice(t, pageURL, v.ChooseAction, "TRC20/USDT", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "trc20_usdt", e.Get(inv.ID).Ticker)
}

// An invoice in one coin has no picker and no link to one; nor has an
// invoice once paid, ended or out of choices.
func TestPagePickerOnlyWhileAChoiceIsPossible(t *testing.T) {
	e, _, ts := pageEnv(t)
	single := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	_, body := get(t, ts.URL+"/pay/"+single.ID+"?choose=1")
	assert.Equal(t, "pay", dataAttr.FindStringSubmatch(string(body))[3])
	assert.NotContains(t, string(body), `class="change"`)
	assert.NotContains(t, string(body), `data-choose`)

	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p2")))
	require.NoError(t, err)
	coins := []string{"btc", "ltc"}
	for i := range invoice.MaxChoices {
		e.Choose(inv.ID, coins[i%2])
		v := decodeView(t, ts.URL+"/pay/"+inv.ID+"/status", nil)
		assert.Equal(t, i+1 < invoice.MaxChoices, v.ChooseURL != "", "choice %d", i+1)
	}
	v := decodeView(t, ts.URL+"/pay/"+inv.ID+"/status?choose=1", nil)
	assert.Equal(t, invoice.PhasePay, v.Phase, "no choices left: no picker")

	paid, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p3")))
	require.NoError(t, err)
	got := e.Choose(paid.ID, "btc")
	e.Pay("btc", got.AddressIn, got.Due.String())
	v = decodeView(t, ts.URL+"/pay/"+paid.ID+"/status?choose=1", nil)
	assert.Equal(t, invoice.PhaseProcessing, v.Phase)
	assert.Empty(t, v.ChooseURL)
	assert.Empty(t, v.Coins)
}

// What the form refuses: another site's request (before the invoice is
// even read), a coin the invoice does not offer, an unknown or malformed
// ID, another method, a body too large. None changes the invoice or
// asks the service for anything.
func TestPagePickerRefusals(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p4")))
	require.NoError(t, err)
	pageURL := ts.URL + "/pay/" + inv.ID
	action := inv.ID + "/choose?lang=en"
	before := e.Requests()
	for _, tc := range []struct {
		name   string
		coin   string
		action string
		h      http.Header
		want   int
	}{
		{"another site's form", "ltc", action, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"a sibling site's form", "ltc", action, http.Header{"Sec-Fetch-Site": {"same-site"}}, http.StatusForbidden},
		{"another origin, no fetch metadata", "ltc", action, http.Header{"Sec-Fetch-Site": nil, "Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"a coin not offered", "eth", action, nil, http.StatusBadRequest},
		{"no coin", "", action, nil, http.StatusBadRequest},
		{"markup for a coin", `"><script>alert(1)</script>`, action, nil, http.StatusBadRequest},
		{"an unknown invoice", "ltc", "AAAAAAAAAAAAAAAAAAAAAAAAAA/choose", nil, http.StatusNotFound},
		{"a malformed ID", "ltc", "../pay/x/choose", nil, http.StatusNotFound},
	} {
		resp := postChoice(t, pageURL, tc.action, tc.coin, tc.h)
		assert.Equal(t, tc.want, resp.StatusCode, tc.name)
		assert.Empty(t, resp.Header.Get("Location"), tc.name)
		assert.NotEmpty(t, resp.Header.Get("Content-Security-Policy"), tc.name)
	}
	// Another method on the form's path, a POST elsewhere.
	resp, _ := get(t, pageURL+"/choose")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "POST", resp.Header.Get("Allow"))
	r, err := http.Post(pageURL, "application/x-www-form-urlencoded", strings.NewReader("coin=ltc"))
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
	// A body larger than a choice.
	req, err := http.NewRequest(http.MethodPost, pageURL+"/choose", strings.NewReader("coin=ltc&x="+strings.Repeat("a", 4096)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err = noRedirects.Do(req)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r.StatusCode)
	assert.Equal(t, before, e.Requests(), "the service was asked nothing")
	assert.Equal(t, int64(1), e.Get(inv.ID).Version, "the invoice is untouched")

	// A tool without a browser's headers (no Origin, no Sec-Fetch-Site)
	// is not another site: the choice works.
	req, err = http.NewRequest(http.MethodPost, pageURL+"/choose", strings.NewReader("coin=ltc"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err = noRedirects.Do(req)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusSeeOther, r.StatusCode)
}

// When the choice cannot be made (the service is down), the customer is
// sent back to the picker, which says so in their language; when the
// invoice ended meanwhile, back to the page, which says that.
func TestPagePickerWhenTheChoiceFails(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p5")))
	require.NoError(t, err)
	pageURL := ts.URL + "/pay/" + inv.ID
	e.FailInfo.Store(true)
	e.Clock.Advance(2 * time.Minute) // the prices read at Create are old enough to be read again
	resp := postChoice(t, pageURL, inv.ID+"/choose?lang=fr", "ltc", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "../"+inv.ID+"?lang=fr&choose=1&failed=1", resp.Header.Get("Location"))
	_, body := get(t, pageURL+"?lang=fr&choose=1&failed=1")
	assert.Contains(t, string(body), "Cette cryptomonnaie n’est pas disponible pour le moment.")
	assert.NotContains(t, string(body), "503", "no error text of the service")
	e.FailInfo.Store(false)

	e.Clock.Advance(time.Hour)
	before := e.Requests()
	resp = postChoice(t, pageURL, inv.ID+"/choose?lang=en", "ltc", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "../"+inv.ID+"?lang=en", resp.Header.Get("Location"))
	assert.Equal(t, before, e.Requests(), "no address for an expired invoice")
	_, body = get(t, pageURL+"?lang=en")
	assert.Equal(t, "expired", dataAttr.FindStringSubmatch(string(body))[3])
}

func ptr[T any](v T) *T { return &v }

// While the quotes are being renewed the picker shows no amount, and
// still takes the choice (which quotes every coin again).
func TestPagePickerWithoutAmountsWhileTheQuotesLapse(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("p6")))
	require.NoError(t, err)
	e.Clock.Advance(16 * time.Minute)
	v := decodeView(t, ts.URL+"/pay/"+inv.ID+"/status", nil)
	assert.Equal(t, invoice.PhaseChoose, v.Phase)
	for _, c := range v.Coins {
		assert.Empty(t, c.Amount, c.Ticker)
		assert.Empty(t, c.Value, c.Ticker)
	}
	resp := postChoice(t, ts.URL+"/pay/"+inv.ID, v.ChooseAction, "btc", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	got := e.Get(inv.ID)
	assert.Equal(t, e.Clock.Now(), got.QuotedAt, "quoted at the choice")
	v = decodeView(t, ts.URL+"/pay/"+inv.ID+"/status", nil)
	assert.Equal(t, invoice.PhasePay, v.Phase)
	assert.Equal(t, got.Due.String(), v.Due)
}
