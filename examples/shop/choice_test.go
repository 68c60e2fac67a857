package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// chooseCoin sends the payment page's picker form of invoice id at base,
// as the customer's browser does, and returns the status and Location.
func chooseCoin(t *testing.T, base, id, coin string) (int, string) {
	t.Helper()
	return postChoice(t, base, id, url.Values{"coin": {coin}}.Encode())
}

func postChoice(t *testing.T, base, id, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/pay/"+id+"/"+invoice.PageChoosePath+"?lang=en", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", base)
	resp, err := noFollow.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// The shop of `go run ./examples/shop` lets the customer choose the coin:
// the checkout lists the coins the cart can be paid in, the invoice
// starts without an address, the payment page's form chooses, the panel
// pays the chosen coin's address, a switch after a partial payment keeps
// what was paid, and the order settles. Every page of the shop says
// where the coin stands, and nobody sees Go error text.
func TestCustomerChoosesACoin(t *testing.T) {
	s := startShopWith(t, everyCoin)
	c := newCustomer(t, s)
	staff := signIn(t, s)
	noGoText := func(body string) {
		t.Helper()
		for _, bad := range goErrorText {
			assert.NotContains(t, body, bad)
		}
	}

	// A mug (12.50 USD) is below the smallest ETH (15 USD) and ERC-20
	// USDT (20 USD) payment: the checkout does not offer them.
	code, _, _ := c.post("/cart/add", url.Values{"product": {"mug"}})
	require.Equal(t, http.StatusSeeOther, code)
	code, body := c.get("/cart")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "you choose the coin when you pay")
	code, body = c.get("/checkout")
	require.Equal(t, http.StatusOK, code)
	for _, offered := range []string{"BTC", "USDT (TRC20)", "LTC", "USDT (POLYGON)"} {
		assert.Contains(t, body, offered)
	}
	assert.NotContains(t, body, ">ETH<")
	assert.NotContains(t, body, "USDT (ERC20)")
	assert.NotContains(t, body, `name="coin"`, "chosen on the next page")

	code, loc, body := c.post("/checkout", url.Values{"form": {checkoutName(t, body)}})
	require.Equal(t, http.StatusSeeOther, code, body)
	require.True(t, strings.HasPrefix(loc, "/pay/"), loc)
	id := strings.TrimPrefix(loc, "/pay/")
	inv := s.get(t, id)
	assert.Empty(t, inv.Ticker, "no coin until the customer chooses")
	assert.Empty(t, inv.AddressIn)
	var offered []string
	for _, cc := range inv.Coins {
		offered = append(offered, cc.Ticker)
	}
	assert.Equal(t, []string{"btc", "trc20_usdt", "ltc", "bch", "bep20_usdt", "polygon_usdt", "trx"}, offered)
	code, body = c.get(loc)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `action="`+id+`/`+invoice.PageChoosePath)

	// Before the choice: the panel cannot pay, and says why; every page
	// says the coin is not chosen yet.
	code, body = (request{path: "/dev/"}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "No coin chosen yet")
	s.panelExpect(t, id, actFull, http.StatusBadRequest, "has not chosen a coin yet")
	s.panelExpect(t, id, actWrongCoin, http.StatusBadRequest, "has not chosen a coin yet")
	code, body = (request{path: "/admin/", cookies: []*http.Cookie{staff}}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Not chosen")
	code, body = (request{path: "/admin/invoices/" + id, cookies: []*http.Cookie{staff}}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Not chosen yet")
	assert.Contains(t, body, "None until the customer chooses a coin")
	order := s.orders.byNumber(inv.OrderID)
	code, body = c.get(order.Path())
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Choose a coin and pay")
	assert.Contains(t, body, "coin not chosen yet")

	// Attacks on the choice: a coin not offered (ETH is below its
	// minimum here), one the shop does not have, garbage, an oversized
	// form. Nothing changes.
	for _, bad := range []string{"eth", "erc20_usdt", "doge", "../btc", "", strings.Repeat("x", 100)} {
		code, _ := chooseCoin(t, s.url, id, bad)
		assert.Equal(t, http.StatusBadRequest, code, "%q", bad)
	}
	code, _ = postChoice(t, s.url, id, "coin=btc&pad="+strings.Repeat("a", 4<<10))
	assert.Equal(t, http.StatusBadRequest, code, "an oversized form")
	code, _ = postChoice(t, s.url, "AAAAAAAAAAAAAAAAAAAAAAAAAA", url.Values{"coin": {"btc"}}.Encode())
	assert.Equal(t, http.StatusNotFound, code, "a guessed invoice")
	assert.Empty(t, s.get(t, id).AddressIn)

	// The choice, pressed twice: one address.
	code, loc = chooseCoin(t, s.url, id, "btc")
	require.Equal(t, http.StatusSeeOther, code)
	assert.Contains(t, loc, id)
	first := s.get(t, id)
	require.Equal(t, "btc", first.Ticker)
	require.NotEmpty(t, first.AddressIn)
	code, _ = chooseCoin(t, s.url, id, "BTC")
	require.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, first.AddressIn, s.get(t, id).AddressIn, "a double press makes one address")
	code, body = (request{path: "/dev/"}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "paying in BTC")

	// Half in BTC, then the customer switches to LTC: a new address,
	// the BTC payment still counts, and the rest is asked in LTC.
	s.panel(t, id, actPartial)
	half := s.get(t, id)
	require.Equal(t, invoice.ExceptionPaidPartial, half.Exception)
	code, _ = chooseCoin(t, s.url, id, "ltc")
	require.Equal(t, http.StatusSeeOther, code)
	switched := s.get(t, id)
	require.Equal(t, "ltc", switched.Ticker)
	require.NotEqual(t, first.AddressIn, switched.AddressIn)
	assert.True(t, switched.Remaining.LessThan(switched.Price), "the BTC payment counts")
	code, body = (request{path: "/admin/invoices/" + id, cookies: []*http.Cookie{staff}}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Earlier BTC address")
	assert.Contains(t, body, "Coin chosen", "the choices in the history, in words")
	assert.NotContains(t, body, "coin_chosen")
	assert.Contains(t, body, "USDT (TRC20), LTC, BCH, USDT (BEP20)", "the coins offered, told apart")
	assert.Contains(t, body, first.AddressIn)
	assert.Contains(t, body, " BTC")

	// The panel pays the LTC address; confirming confirms both coins'
	// payments; the order is paid.
	s.panel(t, id, actFull)
	s.panel(t, id, actConfirm)
	done := s.get(t, id)
	require.Equal(t, invoice.StatusSettled, done.Status, "%+v", done.Events)
	code, body = c.get(order.Path())
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Paid")
	assert.Regexp(t, `[0-9.]+ BTC &#43; [0-9.]+ LTC`, body, "what arrived in each coin")
	noGoText(body)
	code, body = (request{path: "/admin/", cookies: []*http.Cookie{staff}}).status(t, s)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "LTC")

	// A switch after it is paid is refused: the page shows the receipt.
	code, _ = chooseCoin(t, s.url, id, "btc")
	assert.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, "ltc", s.get(t, id).Ticker)

	// The refund of it all, from the panel, in a coin it was paid in.
	resp, err := noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {actRefund}, "key": {"k1"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	rf := s.get(t, id).Refunds
	require.Len(t, rf, 1)
	assert.Contains(t, []string{"btc", "ltc"}, rf[0].Ticker)
}

// The panel's "Pay in another coin" pays the chosen coin's address in a
// coin of its network that is not the one chosen, though the invoice
// offers it: a wrong coin for that address.
func TestPanelPaysAnotherCoinThanTheChosenOne(t *testing.T) {
	s := startShopWith(t, everyCoin)
	_, loc, _ := checkoutWith(t, s.url, url.Values{"product": {"hoodie"}})
	id := strings.TrimPrefix(loc, "/pay/")
	code, _ := chooseCoin(t, s.url, id, "trc20_usdt")
	require.Equal(t, http.StatusSeeOther, code)
	s.panel(t, id, actWrongCoin)
	inv := s.get(t, id)
	assert.Equal(t, invoice.ExceptionWrongCoin, inv.Exception)
	assert.True(t, inv.Remaining.Equal(inv.Price), "a wrong coin pays nothing of the price")
	_, body := newCustomer(t, s).get(s.orders.byNumber(inv.OrderID).Path())
	assert.Contains(t, body, "pay the order in USDT (TRC20)")
}

// A checkout form may name the coin: one offered starts the invoice in
// it (the customer may still switch); a forged one, or one below its
// minimum for the cart, gets a page that says so in words.
func TestCheckoutFormsNamingACoin(t *testing.T) {
	s := startShopWith(t, everyCoin)
	code, loc, body := checkoutWith(t, s.url, url.Values{"product": {"mug"}, "coin": {"ltc"}})
	require.Equal(t, http.StatusSeeOther, code, body)
	inv := s.get(t, strings.TrimPrefix(loc, "/pay/"))
	assert.Equal(t, "ltc", inv.Ticker)
	assert.NotEmpty(t, inv.AddressIn)
	assert.Len(t, inv.Coins, 7)

	for coin, want := range map[string]string{
		"doge":       "This coin is not accepted",
		"eth":        "not offered for this order",
		"<script>":   "This coin is not accepted",
		"erc20_usdt": "not offered for this order",
	} {
		code, _, body := checkoutWith(t, s.url, url.Values{"product": {"mug"}, "coin": {coin}})
		assert.Equal(t, http.StatusUnprocessableEntity, code, coin)
		assert.Contains(t, body, want, coin)
		for _, bad := range goErrorText {
			assert.NotContains(t, body, bad, coin)
		}
	}

	// The same checkout form posted again with another coin: the order
	// has its invoice; the customer lands on the order's page.
	c := newCustomer(t, s)
	_, _, _ = c.post("/cart/add", url.Values{"product": {"hoodie"}})
	_, page := c.get("/checkout")
	form := checkoutName(t, page)
	code, loc, _ = c.post("/checkout", url.Values{"form": {form}})
	require.Equal(t, http.StatusSeeOther, code)
	code, again, _ := c.post("/checkout", url.Values{"form": {form}})
	require.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, loc, again, "a double press: one invoice")
	code, other, _ := c.post("/checkout", url.Values{"form": {form}, "coin": {"btc"}})
	require.Equal(t, http.StatusSeeOther, code)
	assert.True(t, strings.HasPrefix(other, "/orders/"), other)
}

// A cart below every coin's smallest payment is told so in words, on the
// checkout page and after it.
func TestCartBelowEveryMinimum(t *testing.T) {
	s := startShopWith(t, func(o *options) {
		everyCoin(o)
		o.products = []product{{"pin", "Enamel pin", "Tiny.", decimal.RequireFromString("0.10"), "violet"}}
	})
	c := newCustomer(t, s)
	_, _, _ = c.post("/cart/add", url.Values{"product": {"pin"}})
	code, body := c.get("/checkout")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "smaller than the smallest payment any coin we accept can take")
	assert.NotContains(t, body, "Coins accepted")
	code, _, body = c.post("/checkout", url.Values{"form": {checkoutName(t, body)}})
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "too small to pay in crypto")
	assert.Contains(t, body, "0.16 USD", "the smallest LTC payment")
	for _, bad := range goErrorText {
		assert.NotContains(t, body, bad)
	}
}

func checkoutWith(t *testing.T, base string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := noFollow.PostForm(base+"/checkout", form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

// status is send's status and body.
func (r request) status(t *testing.T, s *testShop) (int, string) {
	t.Helper()
	resp, body := r.send(t, s)
	return resp.StatusCode, body
}

// panelExpect presses a developer panel button that must fail with code
// and a page that says want.
func (s *testShop) panelExpect(t *testing.T, id, action string, code int, want string) {
	t.Helper()
	resp, err := noFollow.PostForm(s.url+"/dev/act", url.Values{"invoice": {id}, "action": {action}})
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, code, resp.StatusCode, action)
	assert.Contains(t, string(body), want, action)
}

// checkoutName is the random name of the checkout form on page.
func checkoutName(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="form" value="([A-Z2-7]{26})"`).FindStringSubmatch(page)
	require.NotNil(t, m, "the form has its name")
	return m[1]
}

// The coins' prices move between the checkout page and the press: a coin
// whose minimum the new price puts above the cart is dropped from the
// invoice, and the others are still offered.
func TestCoinDroppedWhenItsPriceMovesAboveTheCart(t *testing.T) {
	s := startShopWith(t, everyCoin)
	c := newCustomer(t, s)
	_, _, _ = c.post("/cart/add", url.Values{"product": {"tee"}})
	_, page := c.get("/checkout")
	require.Contains(t, page, ">ETH<", "25 USD is above the smallest ETH payment (15 USD)")
	require.NoError(t, s.fake.SetPrice("eth", "USD", decimal.NewFromInt(6000))) // now 30 USD
	code, loc, body := c.post("/checkout", url.Values{"form": {checkoutName(t, page)}})
	require.Equal(t, http.StatusSeeOther, code, body)
	inv := s.get(t, strings.TrimPrefix(loc, "/pay/"))
	var offered []string
	for _, cc := range inv.Coins {
		offered = append(offered, cc.Ticker)
	}
	assert.NotContains(t, offered, "eth")
	assert.Contains(t, offered, "btc")
}

// Presses racing: the same checkout form from two tabs at once is one
// invoice; the same coin chosen from several tabs at once is one address;
// two coins chosen at once leave the invoice in one of them, each with
// its own address.
func TestChoicesRacing(t *testing.T) {
	s := startShopWith(t, everyCoin)
	c := newCustomer(t, s)
	_, _, _ = c.post("/cart/add", url.Values{"product": {"hoodie"}})
	_, page := c.get("/checkout")
	form := url.Values{"form": {checkoutName(t, page)}}
	locs := make([]string, 4)
	var wg sync.WaitGroup
	for i := range locs {
		wg.Go(func() {
			resp, err := c.http.PostForm(s.url+"/checkout", form)
			if err == nil {
				locs[i] = resp.Header.Get("Location")
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	for _, l := range locs {
		assert.Equal(t, locs[0], l, "one invoice")
	}
	id := strings.TrimPrefix(locs[0], "/pay/")
	require.NotEmpty(t, id)

	codes := make([]int, 6)
	for i := range codes {
		wg.Go(func() { codes[i], _ = chooseCoin(t, s.url, id, []string{"btc", "btc", "btc", "ltc", "ltc", "ltc"}[i]) })
	}
	wg.Wait()
	for _, code := range codes {
		assert.Equal(t, http.StatusSeeOther, code)
	}
	inv := s.get(t, id)
	assert.Contains(t, []string{"btc", "ltc"}, inv.Ticker)
	addrs := map[string]string{}
	for _, cc := range inv.Coins {
		if cc.AddressIn != "" {
			addrs[cc.Ticker] = cc.AddressIn
		}
	}
	assert.Len(t, addrs, 2, "one address per coin chosen")
	assert.NotEqual(t, addrs["btc"], addrs["ltc"])
	assert.Equal(t, addrs[inv.Ticker], inv.AddressIn)
}
