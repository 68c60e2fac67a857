package main

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// customerWallet is an address of the customer's on the fake's Tron
// network (not the shop's wallet).
const customerWallet = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"

// staff posts the admin's forms of one shop, signed in.
type staff struct {
	t      *testing.T
	s      *testShop
	cookie *http.Cookie
}

func newStaff(t *testing.T, s *testShop) *staff { return &staff{t: t, s: s, cookie: signIn(t, s)} }

// post posts form to /admin/invoices/<id>/<action> with the page's token,
// and returns the status and the page; it checks that no page shows Go
// error text.
func (a *staff) post(id, action string, form url.Values) (int, string) {
	a.t.Helper()
	if form.Get("token") == "" {
		form.Set("token", a.s.guard.token)
	}
	resp, body := request{path: "/admin/invoices/" + id + "/" + action, form: form, cookies: []*http.Cookie{a.cookie}}.send(a.t, a.s)
	friendly(a.t, body, action)
	if resp.StatusCode == http.StatusSeeOther {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	return resp.StatusCode, body
}

// page returns the admin's page of invoice id.
func (a *staff) page(id string) string {
	a.t.Helper()
	resp, body := request{path: "/admin/invoices/" + id, cookies: []*http.Cookie{a.cookie}}.send(a.t, a.s)
	require.Equal(a.t, http.StatusOK, resp.StatusCode)
	friendly(a.t, body, "invoice page")
	return body
}

// claimedRefund refunds all of a paid T-shirt from the admin's form, and
// gives the refund the customer's address, as the claim page does.
func (a *staff) claimedRefund() (string, invoice.Refund) {
	a.t.Helper()
	id := paidTee(a.t, a.s)
	code, _ := a.post(id, refundNew, url.Values{"key": {"K"}, "of": {"all"}})
	require.Equal(a.t, http.StatusSeeOther, code)
	rf := a.s.get(a.t, id).Refunds[0]
	_, err := a.s.desk.SetRefundAddress(context.Background(), rf.ID, customerWallet)
	require.NoError(a.t, err)
	return id, rf
}

// paidTee buys a T-shirt and pays it in full, confirmed.
func paidTee(t *testing.T, s *testShop) string {
	t.Helper()
	id := buyTee(t, s)
	s.panel(t, id, actFull)
	s.panel(t, id, actConfirm)
	require.Equal(t, invoice.StatusSettled, s.get(t, id).Status)
	return id
}

var claimLink = regexp.MustCompile(`value="(http://[^"]+/pay/claim/[A-Z2-7]+)"`)

// The admin refunds a paid order: a refund with a claim link, which the
// customer opens and gives an address on; Send pays it from the fake's
// payout wallet, the payout completes once the clock moved and Tick ran,
// and the order shows the refund sent with its transaction.
func TestAdminRefundsAnOrderEndToEnd(t *testing.T) {
	s := startTestShop(t)
	a := newStaff(t, s)
	id := paidTee(t, s)
	inv := s.get(t, id)
	half := inv.Paid.Div(decimal.NewFromInt(2)).Truncate(inv.Decimals)

	page := a.page(id)
	key := regexp.MustCompile(`name="key" value="([A-Z2-7]+)"`).FindStringSubmatch(page)
	require.Len(t, key, 2, "the refund form carries its key")
	form := url.Values{"key": {key[1]}, "of": {"custom"}, "amount": {half.String()}, "reason": {"one size too small"}}
	code, to := a.post(id, refundNew, form)
	require.Equal(t, http.StatusSeeOther, code, to)
	assert.Equal(t, "/admin/invoices/"+id+"?done=refund#refunds", to)

	page = a.page(id)
	assert.Contains(t, page, "Awaiting address")
	assert.Contains(t, page, "one size too small")
	_, order := newCustomer(t, s).get(s.orders.byNumber(inv.OrderID).Path())
	assert.Contains(t, order, `id="claim-link"`, "the customer's order page leads to the claim page")
	link := claimLink.FindStringSubmatch(page)
	require.Len(t, link, 2, "the admin shows the claim link to give the customer")
	assert.NotContains(t, link[1], id, "the claim link names no invoice")

	// The customer opens the link and gives an address on the claim page.
	resp, err := plain.Get(link[1])
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = noFollow.PostForm(link[1], url.Values{"address": {customerWallet}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	page = a.page(id)
	assert.Contains(t, page, "Ready to send")
	assert.Contains(t, page, customerWallet)

	rfs, err := s.desk.Refunds(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, rfs, 1)
	rf := rfs[0]
	code, to = a.post(id, refundSend, url.Values{"refund": {rf.ID}})
	require.Equal(t, http.StatusSeeOther, code, to)
	assert.Contains(t, to, "done=sending")
	a.page(id)
	// Pressed again: the refund as it stands, no second payout.
	code, _ = a.post(id, refundSend, url.Values{"refund": {rf.ID}})
	require.Equal(t, http.StatusSeeOther, code)
	require.Len(t, s.fake.PayoutBatches(), 1, "one payout")

	// The service pays it once its time has passed; Tick sees it done.
	s.clock.Advance(cryptapitest.PayoutSettleTime + invoice.RefundCheckEvery)
	resp, err = noFollow.PostForm(s.url+"/dev/act", url.Values{"action": {actTick}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	got, err := s.desk.GetRefund(context.Background(), rf.ID)
	require.NoError(t, err)
	require.Equal(t, invoice.RefundSent, got.Status)
	require.NotEmpty(t, got.TxID)
	assert.Equal(t, s.fake.PayoutBatches()[0].TxID, got.TxID)
	assert.True(t, half.Equal(got.Amount))
	page = a.page(id)
	assert.Contains(t, page, ">Sent<")
	assert.Contains(t, page, got.TxID)
	assert.Contains(t, page, "Refund sent")

	// The customer's order page says so too.
	_, order = newCustomer(t, s).get(s.orders.byNumber(inv.OrderID).Path())
	assert.Contains(t, order, "Refund of "+half.String()+" USDT")
	assert.Contains(t, order, got.TxID)
}

// The refund forms refuse, in words, what cannot be refunded, and make
// one refund however often they are pressed.
func TestAdminRefundRefusals(t *testing.T) {
	s := startTestShop(t)
	a := newStaff(t, s)

	// An unpaid order.
	open := buyTee(t, s)
	assert.NotContains(t, a.page(open), `id="refund"`, "no refund form on an unpaid invoice")
	code, body := a.post(open, refundNew, url.Values{"key": {"K1"}, "of": {"all"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "Nothing was paid")
	s.panel(t, open, actExpire)
	code, body = a.post(open, refundNew, url.Values{"key": {"K1"}, "of": {"all"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "Nothing was paid")
	assert.Empty(t, s.get(t, open).Refunds)

	id := paidTee(t, s)
	paid := s.get(t, id).Paid
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		says   string
	}{
		{"above what was received", url.Values{"of": {"custom"}, "amount": {paid.Add(decimal.New(1, -6)).String()}}, http.StatusConflict, "more than can be refunded: " + paid.String() + " USDT is left"},
		{"nothing overpaid", url.Values{"of": {"overpaid"}}, http.StatusConflict, "Nothing was paid over the price"},
		{"negative", url.Values{"of": {"custom"}, "amount": {"-1"}}, http.StatusUnprocessableEntity, "as a number in the coin"},
		{"an exponent", url.Values{"of": {"custom"}, "amount": {"1e5000"}}, http.StatusUnprocessableEntity, "with a dot for decimals"},
		{"a huge exponent", url.Values{"of": {"custom"}, "amount": {"1e999999999"}}, http.StatusUnprocessableEntity, "with a dot for decimals"},
		{"a comma", url.Values{"of": {"custom"}, "amount": {"1,5"}}, http.StatusUnprocessableEntity, "with a dot for decimals"},
		{"hex", url.Values{"of": {"custom"}, "amount": {"0x10"}}, http.StatusUnprocessableEntity, "with a dot for decimals"},
		{"full-width digits", url.Values{"of": {"custom"}, "amount": {"\uff11"}}, http.StatusUnprocessableEntity, "with a dot for decimals"},
		{"too many places", url.Values{"of": {"custom"}, "amount": {"0.0000001"}}, http.StatusUnprocessableEntity, "decimal places"},
		{"no choice", url.Values{"of": {"everything"}}, http.StatusUnprocessableEntity, "Choose what to refund"},
		{"no key", url.Values{"of": {"all"}, "key": {""}}, http.StatusUnprocessableEntity, "reload the page"},
		{"coin not paid", url.Values{"of": {"all"}, "ticker": {"btc"}}, http.StatusConflict, "Nothing is left to refund in BTC"},
		{"unknown coin", url.Values{"of": {"all"}, "ticker": {"<b>x</b>"}}, http.StatusUnprocessableEntity, "cannot be used"},
	} {
		if _, ok := c.form["key"]; !ok {
			c.form.Set("key", "K-"+strings.ReplaceAll(c.name, " ", "-"))
		}
		code, body := a.post(id, refundNew, c.form)
		assert.Equal(t, c.status, code, c.name)
		assert.Contains(t, body, c.says, c.name)
		assert.NotContains(t, body, "<b>x</b>", c.name)
	}
	assert.Empty(t, s.get(t, id).Refunds, "nothing was stored")

	// A forged token, or none.
	for _, tok := range []string{"forged", ""} {
		form := url.Values{"key": {"K2"}, "of": {"all"}, "token": {tok}}
		if tok == "" {
			form.Del("token")
			form.Set("token", strings.ToLower(s.guard.token))
		}
		code, _ := a.post(id, refundNew, form)
		assert.Equal(t, http.StatusForbidden, code)
	}
	// The right token from another site's page, or a signed-out browser.
	form := url.Values{"key": {"K2"}, "of": {"all"}, "token": {s.guard.token}}
	for _, r := range []request{
		{header: map[string]string{"Origin": "http://evil.example"}, cookies: []*http.Cookie{a.cookie}},
		{header: map[string]string{"Sec-Fetch-Site": "cross-site"}, cookies: []*http.Cookie{a.cookie}},
		{},
	} {
		r.path, r.form = "/admin/invoices/"+id+"/"+refundNew, form
		resp, body := r.send(t, s)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		friendly(t, body, "refused")
	}
	assert.Empty(t, s.get(t, id).Refunds, "a forged form stored nothing")

	// Markup in the reason is text; pressed twice, one refund.
	form = url.Values{"key": {"K3"}, "of": {"all"}, "reason": {`<script>alert(1)</script><img src=x onload=alert(2)>`}}
	for range 2 {
		code, _ := a.post(id, refundNew, form)
		require.Equal(t, http.StatusSeeOther, code)
	}
	inv := s.get(t, id)
	require.Len(t, inv.Refunds, 1, "a second press makes no second refund")
	// The same form sent again with other values.
	code, body = a.post(id, refundNew, url.Values{"key": {"K3"}, "of": {"custom"}, "amount": {"1"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "This form made a refund already")
	page := a.page(id)
	assert.NotContains(t, page, "<script>alert")
	assert.NotContains(t, page, "<img src=x")
	assert.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, page, `id="refund"`, "everything is refunded: no form")

	// Everything is refunded now.
	code, body = a.post(id, refundNew, url.Values{"key": {"K4"}, "of": {"all"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "Nothing is left to refund in USDT")

	rf := inv.Refunds[0]
	// Not ready: no address yet.
	code, body = a.post(id, refundSend, url.Values{"refund": {rf.ID}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "Only a refund with the customer")
	code, body = a.post(id, refundMark, url.Values{"refund": {rf.ID}, "txid": {"abc"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "can be marked as sent")
	// Another invoice's refund, through this invoice's page.
	other := paidTee(t, s)
	code, _ = a.post(other, refundCancel, url.Values{"refund": {rf.ID}, "reason": {"x"}})
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = a.post(id, refundCancel, url.Values{"refund": {id + "-R9"}, "reason": {"x"}})
	assert.Equal(t, http.StatusNotFound, code)
	// Cancel needs a reason; then it is cancelled, and so is its link.
	code, body = a.post(id, refundCancel, url.Values{"refund": {rf.ID}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "Say why")
	for range 2 {
		code, _ = a.post(id, refundCancel, url.Values{"refund": {rf.ID}, "reason": {"customer kept it"}})
		require.Equal(t, http.StatusSeeOther, code)
	}
	resp, err := plain.Get(s.url + "/pay/" + rf.ClaimPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	page = a.page(id)
	assert.Contains(t, page, "customer kept it")
	assert.Contains(t, page, `id="refund"`, "after the cancel, there is something to refund again")
}

// Mark as sent records the merchant's own transaction once: a second
// press with the same transaction is not an error.
func TestAdminMarksARefundSent(t *testing.T) {
	s := startTestShop(t)
	a := newStaff(t, s)
	id, rf := a.claimedRefund()
	code, body := a.post(id, refundMark, url.Values{"refund": {rf.ID}, "txid": {"  "}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "Paste the ID of the transaction")
	for range 2 {
		code, _ = a.post(id, refundMark, url.Values{"refund": {rf.ID}, "txid": {"f00d"}})
		require.Equal(t, http.StatusSeeOther, code)
	}
	code, body = a.post(id, refundMark, url.Values{"refund": {rf.ID}, "txid": {"beef"}})
	assert.Equal(t, http.StatusConflict, code, "another transaction for a sent refund")
	assert.Contains(t, body, "reload the page")
	got := s.get(t, id).Refunds[0]
	assert.Equal(t, invoice.RefundSent, got.Status)
	assert.Equal(t, "f00d", got.TxID)
	assert.Empty(t, s.fake.PayoutBatches(), "no payout")
}

// A refund form pressed many times at once (a double click, two tabs) is
// one refund; forms with other keys racing for the whole amount make one
// refund too, and the others are told what is left.
func TestAdminRefundPressedAtOnce(t *testing.T) {
	s := startTestShop(t)
	a := newStaff(t, s)
	id := paidTee(t, s)
	press := func(key string) <-chan int {
		codes := make(chan int, 8)
		var wg sync.WaitGroup
		for range cap(codes) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := key
				if k == "" {
					k = rand.Text() // each tab its own form
				}
				form := url.Values{"key": {k}, "of": {"all"}, "token": {s.guard.token}}
				resp, body := request{path: "/admin/invoices/" + id + "/" + refundNew, form: form, cookies: []*http.Cookie{a.cookie}}.send(t, s)
				friendly(t, body, "refund at once")
				codes <- resp.StatusCode
			}()
		}
		wg.Wait()
		close(codes)
		return codes
	}
	for code := range press("same") {
		assert.Equal(t, http.StatusSeeOther, code)
	}
	require.Len(t, s.get(t, id).Refunds, 1)

	id = paidTee(t, s)
	ok := 0
	for code := range press("") {
		if code == http.StatusSeeOther {
			ok++
		} else {
			assert.Equal(t, http.StatusConflict, code)
		}
	}
	assert.Equal(t, 1, ok)
	require.Len(t, s.get(t, id).Refunds, 1, "never more than was received")
}

// panelBody returns the developer panel's page.
func panelBody(t *testing.T, s *testShop) string {
	t.Helper()
	resp, err := plain.Get(s.url + "/dev/")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	friendly(t, string(b), "panel")
	return string(b)
}

// The developer panel refunds an order and leads to its claim page, with
// an address of the customer's to enter there; a double press is one
// refund.
func TestPanelRefundsAndOpensTheClaimPage(t *testing.T) {
	s := startTestShop(t)
	id := buyTee(t, s)
	body := panelBody(t, s)
	assert.Regexp(t, `value="refund" id="refund-`+id+`" disabled`, body, "an unpaid invoice has nothing to refund")
	s.panel(t, id, actFull)
	s.panel(t, id, actConfirm)
	body = panelBody(t, s)
	key := regexp.MustCompile(`name="key" value="([A-Z2-7]+)"`).FindStringSubmatch(body)
	require.Len(t, key, 2)
	for range 2 {
		resp, err := noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {actRefund}, "key": {key[1]}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	}
	inv := s.get(t, id)
	require.Len(t, inv.Refunds, 1)
	assert.True(t, inv.Paid.Equal(inv.Refunds[0].Amount))
	body = panelBody(t, s)
	assert.Contains(t, body, `href="/pay/`+inv.Refunds[0].ClaimPath+`"`)
	assert.Contains(t, body, customerWallet)
	resp, err := plain.Get(s.url + "/pay/" + inv.Refunds[0].ClaimPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// Everything is refunded: the button says so in words.
	resp, err = noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {actRefund}, "key": {"other"}})
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "Nothing confirmed is left to refund")
}

// Every coin of the demo's fake has a customer's address for its claim
// page, and a funded payout wallet.
func TestEveryCoinHasATestAddressAndFunds(t *testing.T) {
	s := startTestShop(t)
	for _, tk := range s.fake.Tickers() {
		assert.NotEmpty(t, s.testAddress(tk), tk)
		_, balance, err := s.fake.PayoutWallet(tk)
		require.NoError(t, err)
		assert.True(t, balance.Equal(demoPayoutFunds), tk)
	}
}

// A payout the service refuses (the payout wallet is short) leaves the
// refund failed with the service's reason, said on the page; it can be
// cancelled then.
func TestAdminRefundThatFails(t *testing.T) {
	s := startTestShop(t)
	a := newStaff(t, s)
	id := buyTee(t, s)
	inv := s.get(t, id)
	_, err := s.fake.Pay(inv.Ticker, inv.AddressIn, demoPayoutFunds.Mul(decimal.NewFromInt(2)))
	require.NoError(t, err)
	require.NoError(t, s.fake.Flush(context.Background()))
	s.panel(t, id, actConfirm)
	code, _ := a.post(id, refundNew, url.Values{"key": {"K"}, "of": {"overpaid"}})
	require.Equal(t, http.StatusSeeOther, code)
	rf := s.get(t, id).Refunds[0]
	_, err = s.desk.SetRefundAddress(context.Background(), rf.ID, customerWallet)
	require.NoError(t, err)

	code, to := a.post(id, refundSend, url.Values{"refund": {rf.ID}})
	require.Equal(t, http.StatusSeeOther, code)
	for s.get(t, id).Refunds[0].Status == invoice.RefundSending {
		s.clock.Advance(invoice.RefundCheckEvery)
		_, err := s.desk.Tick(context.Background())
		require.NoError(t, err)
		to = "/admin/invoices/" + id + "?problem=failed"
	}
	got := s.get(t, id).Refunds[0]
	require.Equal(t, invoice.RefundFailed, got.Status)
	resp, body := request{path: to, cookies: []*http.Cookie{a.cookie}}.send(t, s)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	friendly(t, body, "failed refund")
	assert.Contains(t, body, "The payment service refused the payout")
	assert.Contains(t, body, ">Failed<")
	assert.Contains(t, body, "Insufficient balance")
	assert.Contains(t, body, "Send again")
	code, _ = a.post(id, refundCancel, url.Values{"refund": {rf.ID}, "reason": {"sent by bank instead"}})
	require.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, invoice.RefundCancelled, s.get(t, id).Refunds[0].Status)
}

// In the keyless form there is no payout wallet: the admin offers Mark
// as sent, not Send, and a Send posted anyway is refused in words.
func TestKeylessAdminMarksRefundsSent(t *testing.T) {
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	s := startShopOn(t, cryptapitest.NewServer(cryptapitest.WithClock(clock)), clock, nil)
	require.False(t, s.opts.client.HasAPIKey())
	a := newStaff(t, s)
	id, rf := a.claimedRefund()
	page := a.page(id)
	assert.NotContains(t, page, `id="send-`)
	assert.Contains(t, page, `id="mark-`+rf.ID+`"`)
	code, body := a.post(id, refundSend, url.Values{"refund": {rf.ID}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "without an API key")
	code, _ = a.post(id, refundMark, url.Values{"refund": {rf.ID}, "txid": {"<b>f00d</b>"}})
	require.Equal(t, http.StatusSeeOther, code)
	page = a.page(id)
	assert.Contains(t, page, "&lt;b&gt;f00d&lt;/b&gt;")
	assert.NotContains(t, page, "<b>f00d")
}
