package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// customer is a browser with its cookies that does not follow redirects.
type customer struct {
	t    *testing.T
	s    *testShop
	http *http.Client
}

func newCustomer(t *testing.T, s *testShop) *customer {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &customer{t, s, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// post submits a form of the shop and returns the status, the Location
// and the body.
func (c *customer) post(path string, form url.Values) (int, string, string) {
	c.t.Helper()
	resp, err := c.http.PostForm(c.s.url+path, form)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

func (c *customer) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.s.url + path)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The cart holds what the customer chose, in the browser; the checkout
// makes of it one order and its invoice, empties the cart, and the
// order's page lists it.
func TestCartToOrder(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)

	code, loc, _ := c.post("/cart/add", url.Values{"product": {"mug"}})
	require.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, "/?added=mug#mug", loc)
	c.post("/cart/add", url.Values{"product": {"hoodie"}})
	c.post("/cart/add", url.Values{"product": {"hoodie"}})
	c.post("/cart/set", url.Values{"product": {"mug"}, "qty": {"3"}})
	code, body := c.get("/cart")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `<output aria-label="Quantity of Coffee mug">3</output>`)
	assert.Contains(t, body, `<output aria-label="Quantity of Hoodie">2</output>`)
	assert.Contains(t, body, "$135.50")
	_, body = c.get("/")
	assert.Contains(t, body, `<span class="count">5</span>`)

	// At most ten of a product; nothing of a product not sold; 0 removes.
	c.post("/cart/set", url.Values{"product": {"hoodie"}, "qty": {"99"}})
	_, body = c.get("/cart")
	assert.Contains(t, body, `<output aria-label="Quantity of Hoodie">10</output>`)
	code, _, body = c.post("/cart/add", url.Values{"product": {"yacht"}})
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "not for sale")
	code, _, _ = c.post("/cart/set", url.Values{"product": {"mug"}, "qty": {"-1"}})
	assert.Equal(t, http.StatusSeeOther, code)
	c.post("/cart/set", url.Values{"product": {"hoodie"}, "qty": {"2"}})
	code, _, _ = c.post("/cart/set", url.Values{"product": {"mug"}, "qty": {"many"}})
	assert.Equal(t, http.StatusNotFound, code)
	_, body = c.get("/cart")
	assert.NotContains(t, body, "Coffee mug")

	// The checkout page, and the order.
	c.post("/cart/add", url.Values{"product": {"stickers"}})
	code, body = c.get("/checkout")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Pay $104.00")
	code, _, body = c.post("/checkout", url.Values{"coin": {"btc"}})
	assert.Equal(t, http.StatusUnprocessableEntity, code, "a coin the shop does not take")
	friendly(t, body, "coin")
	code, loc, body = c.post("/checkout", url.Values{"coin": {s.opts.coins[0]}})
	require.Equal(t, http.StatusSeeOther, code, body)
	require.True(t, strings.HasPrefix(loc, "/pay/"), loc)
	inv := s.get(t, strings.TrimPrefix(loc, "/pay/"))
	assert.Equal(t, "2 × Hoodie, Sticker pack", inv.Description)
	assert.True(t, decimal.RequireFromString("104").Equal(inv.Price), inv.Price)
	o := s.orders.byNumber(inv.OrderID)
	require.NotNil(t, o)
	assert.Len(t, o.Token, 26, "an unguessable page")

	_, body = c.get("/cart")
	assert.Contains(t, body, "Your cart is empty")
	code, _ = c.get("/checkout")
	assert.Equal(t, http.StatusSeeOther, code, "nothing to check out")
	_, body = c.get("/orders/")
	assert.Contains(t, body, `href="`+o.Path()+`"`)
	code, body = c.get(o.Path())
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Awaiting payment")
	assert.Contains(t, body, `href="/pay/`+inv.ID+`"`)
	assert.Contains(t, body, "2 × $49.00")

	// "Buy now" leaves the cart alone.
	c.post("/cart/add", url.Values{"product": {"cap"}})
	code, _, _ = c.post("/checkout", url.Values{"product": {"tote"}})
	require.Equal(t, http.StatusSeeOther, code)
	_, body = c.get("/cart")
	assert.Contains(t, body, "Cap")
	assert.NotContains(t, body, "Tote bag")
}

// An order whose payment time ran out with nothing received can be paid
// again, at today's price, from its page; one that received something
// cannot (the staff sort it out), and an open one goes to its page.
func TestOrderPaidAgainAfterExpiry(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)
	_, loc, _ := c.post("/checkout", url.Values{"product": {"tee"}})
	first := strings.TrimPrefix(loc, "/pay/")
	o := s.orders.byNumber(s.get(t, first).OrderID)

	code, loc, _ := c.post(o.Path()+"/pay", nil)
	require.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, "/pay/"+first, loc, "the open invoice")

	s.clock.Advance(31 * time.Minute) // nobody ticked: the page shows it expired
	_, body := c.get(o.Path())
	assert.Contains(t, body, "Payment time ran out")
	assert.Contains(t, body, `action="`+o.Path()+`/pay"`)
	code, loc, _ = c.post(o.Path()+"/pay", nil)
	require.Equal(t, http.StatusSeeOther, code)
	second := strings.TrimPrefix(loc, "/pay/")
	require.NotEqual(t, first, second, "a new invoice")
	assert.Equal(t, invoice.StatusExpired, s.get(t, first).Status)
	invs, err := s.desk.ByOrderID(context.Background(), o.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{second, first}, []string{invs[0].ID, invs[1].ID})
	_, body = c.get(o.Path())
	assert.Contains(t, body, "Awaiting payment")

	// Paid in part, then expired: no second invoice.
	s.panel(t, second, actPartial)
	s.panel(t, second, actExpire)
	_, body = c.get(o.Path())
	assert.Contains(t, body, "Payment incomplete")
	assert.Contains(t, body, "quoting order "+o.ID)
	assert.NotContains(t, body, "/pay\"")
	code, loc, _ = c.post(o.Path()+"/pay", nil)
	assert.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, o.Path(), loc)
	invs, err = s.desk.ByOrderID(context.Background(), o.ID)
	require.NoError(t, err)
	assert.Len(t, invs, 2)
}

// Order pages are named by a random token: order numbers, invoice IDs
// and guesses find nothing, and say so in words.
func TestGuessedOrderPagesFindNothing(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)
	_, loc, _ := c.post("/checkout", url.Values{"product": {"tee"}})
	inv := s.get(t, strings.TrimPrefix(loc, "/pay/"))
	o := s.orders.byNumber(inv.OrderID)
	for _, p := range []string{"/orders/" + o.ID, "/orders/" + inv.ID, "/orders/" + strings.ToLower(o.Token),
		"/orders/" + o.Token + "A", "/orders/AAAAAAAAAAAAAAAAAAAAAAAAAA", "/orders/%2e%2e"} {
		code, body := c.get(p)
		assert.Equal(t, http.StatusNotFound, code, p)
		assert.Contains(t, body, "We could not find this order", p)
		code, _, _ = c.post(p+"/pay", nil)
		assert.Equal(t, http.StatusNotFound, code, p)
	}
	code, body := c.get("/no/such/page")
	assert.Equal(t, http.StatusNotFound, code)
	friendly(t, body, "404")
	code, _ = c.get("/static/")
	assert.Equal(t, http.StatusNotFound, code, "no listing of the files")
	invs, err := s.desk.ByOrderID(context.Background(), o.ID)
	require.NoError(t, err)
	assert.Len(t, invs, 1, "no invoice made by a guess")
}

// The store takes its own forms only: a post from another site is
// refused before it touches the cart or makes an order.
func TestStoreRefusesOtherSitesForms(t *testing.T) {
	s := startTestShop(t)
	for _, site := range []string{"cross-site", "same-site"} {
		for _, path := range []string{"/checkout", "/cart/add", "/cart/set"} {
			resp, body := request{path: path, form: url.Values{"product": {"tee"}, "qty": {"1"}},
				header: map[string]string{"Sec-Fetch-Site": site}}.send(t, s)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s", site, path)
			assert.Empty(t, resp.Cookies(), path)
			friendly(t, body, path)
		}
	}
	n := 0
	for _, err := range s.desk.List(context.Background(), nil) {
		require.NoError(t, err)
		n++
	}
	assert.Zero(t, n, "no invoice")
	resp, _ := request{path: "/checkout", form: url.Values{"product": {"tee"}},
		header: map[string]string{"Sec-Fetch-Site": "same-origin"}}.send(t, s)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the store's own form")
}

// Every page of the shop, the payment page aside (its own policy), is
// served under a policy that runs no script and loads nothing from
// elsewhere, and none has a script: they work with JavaScript off.
func TestPagesRunNoScript(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)
	c.post("/cart/add", url.Values{"product": {"mug"}})
	_, loc, _ := c.post("/checkout", url.Values{"product": {"tee"}})
	inv := s.get(t, strings.TrimPrefix(loc, "/pay/"))
	cookie := signIn(t, s)
	for _, p := range []string{"/", "/cart", "/checkout", "/orders/", s.orders.byNumber(inv.OrderID).Path(), "/dev/",
		"/admin/", "/admin/invoices/" + inv.ID, "/nowhere", "/static/shop.css", "/static/img/mug.svg"} {
		resp, body := request{path: p, cookies: append(c.http.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(s.url, "http://")}), cookie)}.send(t, s)
		assert.Equal(t, pageCSP, resp.Header.Get("Content-Security-Policy"), p)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), p)
		assert.NotContains(t, strings.ToLower(body), "<script", p)
		assert.NotRegexp(t, `(?i)\son[a-z]+\s*=`, body, p+": no inline handler")
	}
	for _, p := range s.products {
		resp, _ := request{path: p.Picture()}.send(t, s)
		assert.Equal(t, http.StatusOK, resp.StatusCode, p.ID)
		assert.Equal(t, "image/svg+xml", resp.Header.Get("Content-Type"), p.ID)
	}
}

// A cart cookie is the customer's to edit: what the shop cannot use is
// dropped.
func TestDecodeCart(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"mug:2|tee:1":                            "mug:2|tee:1",
		"tee:1|mug:2":                            "tee:1|mug:2",
		"mug:0|tee:11|cap:-1":                    "",
		"mug:2|mug:3":                            "mug:2",
		"yacht:1|mug:1":                          "mug:1",
		"mug:1:1|tee|:3|cap:1":                   "cap:1",
		"mug: 1|tee:+1|cap:0x1":                  "tee:1",
		"MUG:1|<script>:1|hoodie:1":              "hoodie:1",
		strings.Repeat("mug:1|", 1000) + "tee:1": "mug:1|tee:1",
	} {
		assert.Equal(t, want, decodeCart(catalogue, in).encode(), "%.40q", in)
	}
}

func FuzzDecodeCart(f *testing.F) {
	for _, s := range []string{"", "mug:2|tee:1", "mug:10|mug:1", "cap:-1|tote:3", "stickers:007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := decodeCart(catalogue, s)
		require.LessOrEqual(t, len(c), len(catalogue))
		seen := map[string]bool{}
		for _, l := range c {
			require.False(t, seen[l.Product.ID], "a product twice")
			seen[l.Product.ID] = true
			require.True(t, l.Qty >= 1 && l.Qty <= maxQty, l.Qty)
			require.True(t, slices.ContainsFunc(catalogue, func(p product) bool { return p.ID == l.Product.ID && p.Price.Equal(l.Product.Price) }))
		}
		again := decodeCart(catalogue, c.encode())
		require.Equal(t, c.encode(), again.encode(), "stable")
	})
}

// A checkout form pressed twice (a double click, a reload, a retry after
// a timeout), even at once, is one order with one invoice: the order is
// the form's, and the Desk answers a repeated Create of an order with its
// open invoice.
func TestCheckoutPressedTwiceIsOneOrder(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)
	formOf := func(page string) string {
		t.Helper()
		m := regexp.MustCompile(`name="form" value="([A-Z2-7]{26})"`).FindStringSubmatch(page)
		require.NotNil(t, m, "the form has its name")
		return m[1]
	}

	// The cart's checkout, pressed twice: the second press comes after the
	// first emptied the cart.
	c.post("/cart/add", url.Values{"product": {"mug"}})
	c.post("/cart/add", url.Values{"product": {"tee"}})
	_, page := c.get("/checkout")
	form := url.Values{"form": {formOf(page)}, "coin": {s.opts.coins[0]}}
	_, first, _ := c.post("/checkout", form)
	code, again, body := c.post("/checkout", form)
	require.Equal(t, http.StatusSeeOther, code, body)
	assert.Equal(t, first, again, "the same payment page")

	// "Buy now", pressed by five at once.
	_, page = c.get("/")
	buy := url.Values{"form": {formOf(page)}, "product": {"hoodie"}}
	locs := make(chan string, 5)
	for range 5 {
		go func() {
			resp, err := plain.PostForm(s.url+"/checkout", buy)
			if err != nil {
				locs <- err.Error()
				return
			}
			resp.Body.Close()
			locs <- resp.Header.Get("Location")
		}()
	}
	hoodie := <-locs
	for range 4 {
		assert.Equal(t, hoodie, <-locs)
	}
	// Another product of the same page is another order.
	_, other, _ := c.post("/checkout", url.Values{"form": buy["form"], "product": {"cap"}})
	assert.NotEqual(t, hoodie, other)

	var orders []string
	for inv, err := range s.desk.List(context.Background(), nil) {
		require.NoError(t, err)
		orders = append(orders, inv.OrderID+" "+inv.Description)
	}
	assert.Equal(t, []string{"1003 Cap", "1002 Hoodie", "1001 Coffee mug, T-shirt"}, orders)

	// Without its name, each post is an order of its own.
	_, a, _ := c.post("/checkout", url.Values{"product": {"tote"}})
	_, b, _ := c.post("/checkout", url.Values{"product": {"tote"}, "form": {"forged"}})
	assert.NotEqual(t, a, b)
}

// The order page says where the order stands in the customer's words,
// for every status and exception the panel can make.
func TestOrderPageSaysWhereTheOrderStands(t *testing.T) {
	s := startTestShop(t)
	c := newCustomer(t, s)
	state := func(actions ...string) string {
		t.Helper()
		_, loc, _ := c.post("/checkout", url.Values{"product": {"hoodie"}})
		id := strings.TrimPrefix(loc, "/pay/")
		for _, a := range actions {
			s.panel(t, id, a)
		}
		_, body := c.get(s.orders.byNumber(s.get(t, id).OrderID).Path())
		m := regexp.MustCompile(`<h2 id="state-title">([^<]*)</h2>`).FindStringSubmatch(body)
		require.NotNil(t, m)
		friendly(t, body, strings.Join(actions, ","))
		return m[1]
	}
	assert.Equal(t, "Awaiting payment", state())
	assert.Equal(t, "Partly paid", state(actPartial))
	assert.Equal(t, "Paid in another coin", state(actWrongCoin))
	assert.Equal(t, "Payment received", state(actFull))
	assert.Equal(t, "Paid", state(actFull, actConfirm))
	assert.Equal(t, "Payment incomplete", state(actLate))
	assert.Equal(t, "Payment incomplete", state(actPartial, actExpire))
	assert.Equal(t, "Payment time ran out", state(actExpire))
}

// The mark drawn as a PNG is the SVG's: a blue tile with rounded
// corners, a white leaf in its middle, its rib blue.
func TestLogoPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(logoPNG(96)))
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 96, 96), img.Bounds())
	at := func(x, y int) color.NRGBA { return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA) }
	assert.Zero(t, at(0, 0).A, "a round corner")
	assert.Equal(t, color.NRGBA{0x1d, 0x55, 0xc9, 0xff}, at(6, 48), "the tile")
	assert.Equal(t, color.NRGBA{0xff, 0xff, 0xff, 0xff}, at(54, 30), "the leaf")
	assert.Equal(t, color.NRGBA{0x1d, 0x55, 0xc9, 0xff}, at(48, 60), "the rib")
	assert.Less(t, len(logoPNG(96)), 8<<10)

	s := startTestShop(t)
	for _, p := range []string{"/favicon.ico", "/logo.png"} {
		resp, body := request{path: p}.send(t, s)
		assert.Equal(t, "image/png", resp.Header.Get("Content-Type"), p)
		assert.Equal(t, string(logoPNG(96)), body, p)
	}
}

// A form's address opened as a page leads to the page the form is on.
func TestFormAddressesLeadToTheirPage(t *testing.T) {
	s := startTestShop(t)
	for path, page := range map[string]string{"/cart/add": "/cart", "/cart/set": "/cart", "/orders/T0KEN/pay": "/orders/T0KEN",
		"/admin/invoices/ID/settle": "/admin/invoices/ID", "/dev/act": "/dev/"} {
		resp, _ := request{path: path}.send(t, s)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
		assert.Equal(t, page, resp.Header.Get("Location"), path)
	}
}
