package invoice_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// keyCountingStore counts the lookups by key, to show that every token,
// well formed or not, costs one.
type keyCountingStore struct {
	invoice.Store
	lookups atomic.Int64
}

func (s *keyCountingStore) LoadByKey(ctx context.Context, key string) (*invoice.Record, error) {
	s.lookups.Add(1)
	return s.Store.LoadByKey(ctx, key)
}

// claimEnv mounts the Desk's page at /pay and makes an overpaid invoice
// with a refund of its excess.
func claimEnv(t *testing.T, keyed bool, opts ...invoice.PageOption) (*invoicesuite.Env, *keyCountingStore, *httptest.Server, *invoice.Invoice, *invoice.Refund) {
	t.Helper()
	store := &keyCountingStore{Store: invoice.NewMemoryStore()}
	var e *invoicesuite.Env
	if keyed {
		e = invoicesuite.NewKeyedEnv(t, store)
	} else {
		e = invoicesuite.NewEnv(t, store)
	}
	mux := http.NewServeMux()
	mux.Handle("/pay/", http.StripPrefix("/pay", e.Desk.Page(opts...)))
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	inv := e.Create(invoice.CreateOptions{OrderID: "order-77", Description: "2 mugs", Price: invoicesuite.D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.001"))
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Reason: "internal note: customer 4411 complained"})
	require.NoError(t, err)
	return e, store, ts, inv, rf
}

func postAddress(t *testing.T, u, addr string) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.PostForm(u, url.Values{"address": {addr}})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Go's error text never reaches a customer.
var goErrorText = []string{"invoice:", "cryptapi:", "invalid options", "%!", "<nil>", "ErrInvalid", "error:"}

// The claim page shows what will be sent, asks for an address checked for
// the coin's network (with a message the customer understands), takes it
// once, and then shows where the refund goes; the merchant's reason, the
// invoice and the order never show.
func TestClaimPageTakesAnAddressOnce(t *testing.T) {
	e, _, ts, inv, rf := claimEnv(t, false)
	page := ts.URL + "/pay/" + rf.ClaimPath
	resp, body := get(t, page)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	text := string(body)
	assert.Contains(t, text, "Where should we send your refund?")
	assert.Contains(t, text, "0.00058333")
	assert.Contains(t, text, "Bitcoin")
	assert.Contains(t, text, `name="address"`)
	assert.Contains(t, text, `<h2 id="address-heading" class="field-title"><label for="address">Your Bitcoin address</label></h2>`)
	for _, secret := range []string{inv.ID, "order-77", "customer 4411", "2 mugs", inv.AddressIn} {
		assert.NotContains(t, text, secret, "the page shows nothing of the invoice")
	}
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "form-action 'self'", "its form posts to itself")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), "the URL is the customer's secret")
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	invResp, _ := get(t, ts.URL+"/pay/"+inv.ID)
	assert.Contains(t, invResp.Header.Get("Content-Security-Policy"), "form-action 'none'", "the payment page posts nowhere")

	for name, c := range map[string]struct{ addr, says string }{
		"empty":           {"  ", "Enter your address."},
		"another network": {invoicesuite.CustomerTRX, "This address is for Tron, not BTC."},
		"an EVM address":  {"0x52908400098527886E0F7030069857D2E4169EE7", "This address is for EVM (Ethereum), not BTC."},
		"a typo":          {invoicesuite.CustomerBTC[:10] + "q" + invoicesuite.CustomerBTC[11:], "its check characters do not match"},
		"a look-alike":    {strings.Replace(invoicesuite.CustomerBTC, "a", "\u0430", 1), "This is not a BTC address."},
		"text":            {"my wallet please", "This is not a BTC address."},
		"html":            {`<script>alert(1)</script>`, "This is not a BTC address."},
	} {
		resp, body := postAddress(t, page, c.addr)
		assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, name)
		assert.Contains(t, body, c.says, name)
		assert.Contains(t, body, `aria-invalid="true"`, name)
		assert.Contains(t, body, `role="alert"`, name)
		assert.NotContains(t, body, "<script>alert", "%s: echoed escaped", name)
		for _, bad := range goErrorText {
			assert.NotContains(t, body, bad, name)
		}
	}
	assert.Equal(t, invoice.RefundAwaitingAddress, e.Get(inv.ID).Refunds[0].Status, "nothing stored")

	resp, _ = postAddress(t, page, " "+invoicesuite.CustomerBTC+"\n")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc, err := resp.Location()
	require.NoError(t, err)
	assert.Equal(t, page+"?lang=en", loc.String(), "back to the page, which a reload does not post again")
	resp, body = get(t, page)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "Your refund will be sent soon")
	assert.Contains(t, string(body), invoicesuite.CustomerBTC)
	assert.NotContains(t, string(body), `name="address"`, "no form once an address is set")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "form-action 'none'", "no form, no form-action")
	assert.Equal(t, invoicesuite.CustomerBTC, e.Get(inv.ID).Refunds[0].Address)

	resp, body2 := postAddress(t, page, invoicesuite.BTCDest)
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "a second address is refused")
	assert.Contains(t, body2, "cannot be changed")
	assert.NotContains(t, body2, `name="address"`)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "form-action 'none'", "the answer has no form either")
	assert.Equal(t, invoicesuite.CustomerBTC, e.Get(inv.ID).Refunds[0].Address)

	// Sent: the page shows the transaction.
	_, err = e.Desk.MarkRefundSent(e.Ctx, rf.ID, "f00dbabe")
	require.NoError(t, err)
	_, body = get(t, page)
	assert.Contains(t, string(body), "Your refund was sent")
	assert.Contains(t, string(body), "f00dbabe")
}

// Only a refund's token opens its claim page: guessed, malformed,
// cancelled and expired tokens, the invoice's ID and the store's other
// keys get the same 404 after the same one lookup.
func TestClaimPageOpensOnlyForALiveToken(t *testing.T) {
	e, store, ts, inv, rf := claimEnv(t, true)
	require.NoError(t, e.Srv.FundPayoutWallet("btc", invoicesuite.D("0.01")))
	_, notFoundBody := get(t, ts.URL+"/pay/nope")
	token := strings.TrimPrefix(rf.ClaimPath, invoice.PageClaimPath+"/")
	other, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: invoicesuite.D("0.0001"), ClaimFor: time.Hour})
	require.NoError(t, err)
	cancelled, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: invoicesuite.D("0.0001")})
	require.NoError(t, err)
	_, err = e.Desk.CancelRefund(e.Ctx, cancelled.ID, "")
	require.NoError(t, err)
	// A payout request a refund used is a key of the store, never a page.
	sent, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: invoicesuite.D("0.0001")})
	require.NoError(t, err)
	_, err = e.Desk.SetRefundAddress(e.Ctx, sent.ID, invoicesuite.CustomerBTC)
	require.NoError(t, err)
	_, err = e.Desk.SendRefund(e.Ctx, sent.ID)
	require.NoError(t, err)
	rec, err := store.Load(e.Ctx, inv.ID)
	require.NoError(t, err)
	var requestKey string
	for _, k := range rec.Keys() {
		if strings.HasPrefix(k, invoice.PayoutRequestKey) {
			requestKey = k
		}
	}
	require.NotEmpty(t, requestKey)
	e.Clock.Advance(time.Hour) // other's link expires (not stored yet: the page applies the clock)

	for name, path := range map[string]string{
		"guessed":               "claim/AAAAAAAAAAAAAAAAAAAAAAAAAA",
		"one character changed": "claim/" + token[:25] + map[bool]string{true: "B", false: "A"}[token[25] == 'A'],
		"lower case":            "claim/" + strings.ToLower(token),
		"too short":             "claim/" + token[:25],
		"too long":              "claim/" + token + "A",
		"the invoice ID":        "claim/" + inv.ID,
		"the refund ID":         "claim/" + rf.ID,
		"a payout request key":  "claim/" + url.PathEscape(requestKey),
		"cancelled":             other.ClaimPath[:0] + cancelled.ClaimPath,
		"expired":               other.ClaimPath,
		"empty":                 "claim/",
		"a path after it":       rf.ClaimPath + "/x",
		"a slash in it":         "claim/" + token[:13] + "/" + token[13:],
	} {
		before := store.lookups.Load()
		resp, body := get(t, ts.URL+"/pay/"+path)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, name)
		assert.Equal(t, string(notFoundBody), string(body), "%s: the same answer", name)
		assert.Equal(t, int64(1), store.lookups.Load()-before, "%s: one lookup", name)
		resp, body2 := postAddress(t, ts.URL+"/pay/"+path, invoicesuite.CustomerBTC)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: POST", name)
		assert.Equal(t, string(notFoundBody), body2, name)
	}
	got := e.Get(inv.ID)
	for _, r := range got.Refunds {
		if r.ID != sent.ID {
			assert.Empty(t, r.Address, "%s: no address was set through a dead link", r.ID)
		}
	}
	resp, _ := get(t, ts.URL+"/pay/"+rf.ClaimPath)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the live token still opens its page")
}

// Methods, sizes and a coin whose address format the SDK does not know.
func TestClaimPageMethodsAndLimits(t *testing.T) {
	_, _, ts, _, rf := claimEnv(t, false)
	page := ts.URL + "/pay/" + rf.ClaimPath
	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, err := http.NewRequest(m, page, strings.NewReader("address=x"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "GET, HEAD, POST", resp.Header.Get("Allow"))
	}
	resp, err := http.Post(ts.URL+"/pay/AAAAAAAAAAAAAAAAAAAAAAAAAA", "application/x-www-form-urlencoded", strings.NewReader("address=x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "the payment page takes no POST")
	resp, err = http.Head(page)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Post(page, "application/x-www-form-urlencoded", strings.NewReader("address="+strings.Repeat("1", 10000)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a body beyond 4 KiB")
	for name, h := range map[string]http.Header{
		"another site":   {"Sec-Fetch-Site": {"cross-site"}},
		"another origin": {"Origin": {"https://evil.example"}},
	} {
		req, err := http.NewRequest(http.MethodPost, page, strings.NewReader("address="+invoicesuite.CustomerBTC))
		require.NoError(t, err)
		req.Header = h
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := noRedirects.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
	}
	_, body := get(t, page)
	assert.Contains(t, string(body), `name="address"`, "no address was set from another site")
	m := regexp.MustCompile(`href="\.\./(_/page\.css\?v=[^"]+)"`).FindStringSubmatch(string(body))
	require.NotNil(t, m, "the claim page uses the payment page's stylesheet")
	css, _ := get(t, ts.URL+"/pay/"+m[1])
	assert.Equal(t, http.StatusOK, css.StatusCode)
	assert.Equal(t, "text/css; charset=utf-8", css.Header.Get("Content-Type"))
}

// The texts come from one table per language.
func TestClaimPageStrings(t *testing.T) {
	_, _, ts, _, rf := claimEnv(t, false, invoice.WithPageStrings(invoice.PageStrings{
		Lang: "fr", RefundTitle: "Votre remboursement", RefundAddressLabel: "Adresse {coin} du client",
	}))
	page := ts.URL + "/pay/" + rf.ClaimPath
	_, body := getWith(t, page, http.Header{"Accept-Language": {"fr-CH, fr;q=0.9"}})
	assert.Contains(t, string(body), `<html lang="fr">`)
	assert.Contains(t, string(body), "<title>Votre remboursement</title>")
	assert.Contains(t, string(body), `<label for="address">Adresse Bitcoin du client</label>`)
	assert.Contains(t, string(body), "Où devons-nous envoyer votre remboursement", "what is not changed keeps the built-in French")
	assert.Contains(t, string(body), "0,00058333\u00a0BTC", "French numbers")
	_, body = get(t, page+"?lang=ja")
	assert.Contains(t, string(body), `<html lang="ja">`)
	assert.Contains(t, string(body), "返金の送り先を入力してください")
	resp, _ := postAddress(t, page+"?lang=de", invoicesuite.CustomerBTC)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc, err := resp.Location()
	require.NoError(t, err)
	assert.Equal(t, "de", loc.Query().Get("lang"), "back to the page in its language")
	_, body = get(t, loc.String())
	assert.Contains(t, string(body), "Ihre Erstattung wird bald gesendet")
}

// A coin whose address format the SDK does not know: no claim page could
// check the customer's address, so Refund refuses it and stores nothing.
func TestRefundInACoinOfUnknownFormatIsRefused(t *testing.T) {
	coins := cryptapitest.DefaultCoins()
	xmr := coins["btc"]
	xmr.Name = "Monero"
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore(), cryptapitest.WithCoin("xmr", xmr))
	inv := e.Create(invoice.CreateOptions{Ticker: "xmr", Price: invoicesuite.D("0.001")})
	e.Confirm(e.Pay("xmr", inv.AddressIn, "0.002"))
	before := e.Get(inv.ID)
	for _, of := range []invoice.RefundOf{invoice.RefundOverpaid, invoice.RefundAll} {
		rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: of})
		assert.ErrorIs(t, err, cryptapi.ErrAddressFormatUnknown, of)
		assert.Nil(t, rf)
	}
	after := e.Get(inv.ID)
	assert.Empty(t, after.Refunds)
	assert.Equal(t, before.Version, after.Version, "nothing stored")
}

// A refund of a payment in a coin the customer chose before switching
// asks for an address of that coin, named as the invoice offered it.
func TestClaimPageOfACoinChosenBefore(t *testing.T) {
	e, _, ts, _, _ := claimEnv(t, false)
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("claim-choice")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125"))
	e.Clock.Advance(time.Minute)
	e.Choose(inv.ID, "btc")
	_, err = e.Desk.Invalidate(e.Ctx, inv.ID, "the customer gave up")
	require.NoError(t, err)
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	require.Equal(t, "ltc", rf.Ticker)
	page := ts.URL + "/pay/" + rf.ClaimPath
	_, body := get(t, page)
	assert.Contains(t, string(body), "Your Litecoin address")
	assert.Contains(t, string(body), "0.125")
	resp, text := postAddress(t, page, invoicesuite.CustomerBTC)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	assert.Contains(t, text, "This address is for Bitcoin, not LTC.")
	resp, _ = postAddress(t, page, invoicesuite.CustomerLTC)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, invoicesuite.CustomerLTC, e.Get(inv.ID).Refunds[0].Address)
}
