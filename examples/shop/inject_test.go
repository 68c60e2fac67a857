package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// hostile is markup a product name, a reason or a search may carry.
const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)>'`

// Text that comes from elsewhere (a product name from the catalogue, the
// invoice's description made of it, a reason the staff type, an order
// number searched for, a cart cookie) is shown as text on every page,
// never as markup.
func TestNoMarkupGetsThrough(t *testing.T) {
	s := startShopWith(t, func(o *options) {
		o.products = []product{{"evil", hostile, hostile, decimal.RequireFromString("25"), "warm"}}
	})
	c := newCustomer(t, s)
	c.post("/cart/add", url.Values{"product": {"evil"}})
	_, loc, body := c.post("/checkout", url.Values{"product": {"evil"}})
	require.True(t, strings.HasPrefix(loc, "/pay/"), body)
	id := strings.TrimPrefix(loc, "/pay/")
	inv := s.get(t, id)
	assert.Equal(t, hostile, inv.Description)
	cookie := signIn(t, s)
	_, _ = request{path: "/admin/invoices/" + id + "/cancel", form: url.Values{"reason": {hostile}, "token": {s.guard.token}},
		cookies: []*http.Cookie{cookie}}.send(t, s)
	require.Equal(t, hostile, s.get(t, id).Events[len(s.get(t, id).Events)-1].Note)

	// An invoice made elsewhere (the merchant's own code) with markup in
	// its order ID.
	other, err := s.desk.Create(context.Background(), &invoice.CreateOptions{
		OrderID: hostile, Description: hostile, Ticker: s.opts.coins[0], Price: decimal.RequireFromString("30"), Currency: "USD",
		Callback: s.opts.publicURL + "/callback", Address: s.opts.wallets[s.opts.coins[0]],
	})
	require.NoError(t, err)

	order := s.orders.byNumber(inv.OrderID)
	jar := c.http.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(s.url, "http://")})
	for _, p := range []string{"/", "/?added=evil", "/cart", "/checkout", "/orders/", order.Path(), "/dev/", "/pay/" + id,
		"/admin/", "/admin/invoices/" + id, "/admin/invoices/" + other.ID, "/admin/?order=" + url.QueryEscape(hostile),
		"/admin/?status=" + url.QueryEscape(hostile)} {
		resp, body := request{path: p, cookies: append(jar, cookie)}.send(t, s)
		assert.Equal(t, http.StatusOK, resp.StatusCode, p)
		for _, raw := range []string{"<script>alert", "<img src=x", "onerror=alert(2)>"} {
			assert.NotContains(t, body, raw, "%s shows %s as markup", p, raw)
		}
	}
	// The cookie is the customer's: markup in it is dropped.
	resp, body := request{path: "/cart", cookies: []*http.Cookie{{Name: cartCookie, Value: url.QueryEscape(hostile) + ":1"}}}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Your cart is empty")
}
