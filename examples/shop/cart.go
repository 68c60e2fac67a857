package main

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// The cart lives in the customer's browser, in one cookie: the shop keeps
// nothing until checkout, and the cart works without JavaScript.
const (
	cartCookie = "cart"
	// maxQty is the most of one product a cart holds.
	maxQty = 10
)

// line is one product in a cart or an order, and how many.
type line struct {
	Product product
	Qty     int
}

// Total is the line's price.
func (l line) Total() decimal.Decimal { return l.Product.Price.Mul(decimal.NewFromInt(int64(l.Qty))) }

// Less and More are the quantities of the cart's minus and plus buttons.
func (l line) Less() int { return l.Qty - 1 }
func (l line) More() int { return min(l.Qty+1, maxQty) }

// AtMost reports whether the line holds maxQty already.
func (l line) AtMost() bool { return l.Qty >= maxQty }

// cart is the customer's lines, in the order they were added.
type cart []line

// Count is the number of items.
func (c cart) Count() int {
	n := 0
	for _, l := range c {
		n += l.Qty
	}
	return n
}

// Total is what the cart costs.
func (c cart) Total() decimal.Decimal {
	sum := decimal.Zero
	for _, l := range c {
		sum = sum.Add(l.Total())
	}
	return sum
}

// Description says what the cart holds, for the invoice and the payment
// page: "Coffee mug" or "2 × Coffee mug, T-shirt".
func (c cart) Description() string {
	parts := make([]string, 0, len(c))
	for _, l := range c {
		if l.Qty == 1 {
			parts = append(parts, l.Product.Name)
		} else {
			parts = append(parts, strconv.Itoa(l.Qty)+" × "+l.Product.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// set returns the cart with product p at qty (0 removes it), added last
// when new.
func (c cart) set(p product, qty int) cart {
	qty = max(0, min(qty, maxQty))
	out := make(cart, 0, len(c)+1)
	found := false
	for _, l := range c {
		if l.Product.ID == p.ID {
			found = true
			l.Qty = qty
		}
		if l.Qty > 0 {
			out = append(out, l)
		}
	}
	if !found && qty > 0 {
		out = append(out, line{p, qty})
	}
	return out
}

// qty returns how many of product id the cart holds.
func (c cart) qty(id string) int {
	for _, l := range c {
		if l.Product.ID == id {
			return l.Qty
		}
	}
	return 0
}

// encode writes the cart as the cookie holds it: "mug:2|tee:1".
func (c cart) encode() string {
	parts := make([]string, 0, len(c))
	for _, l := range c {
		parts = append(parts, l.Product.ID+":"+strconv.Itoa(l.Qty))
	}
	return strings.Join(parts, "|")
}

// decodeCart reads a cart cookie's value. What it cannot use (a product
// the shop does not sell, a quantity out of range, a line twice, more
// lines than products) is dropped: the cookie is the customer's to edit.
func decodeCart(products []product, s string) cart {
	var c cart
	for part := range strings.SplitSeq(s, "|") {
		if len(c) == len(products) {
			break
		}
		id, n, ok := strings.Cut(part, ":")
		p, known := find(products, id)
		qty, err := strconv.Atoi(n)
		if !ok || !known || err != nil || qty < 1 || qty > maxQty || c.qty(id) > 0 {
			continue
		}
		c = append(c, line{p, qty})
	}
	return c
}

// cartOf returns the request's cart.
func (s *shop) cartOf(r *http.Request) cart {
	ck, err := r.Cookie(cartCookie)
	if err != nil || len(ck.Value) > 1024 {
		return nil
	}
	return decodeCart(s.products, ck.Value)
}

// saveCart sets the cart cookie (for a week), or removes it when empty.
func saveCart(w http.ResponseWriter, c cart) {
	ck := &http.Cookie{Name: cartCookie, Value: c.encode(), Path: "/", MaxAge: 7 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode}
	if len(c) == 0 {
		ck.Value, ck.MaxAge = "", -1
	}
	http.SetCookie(w, ck)
}

// showCart is the cart page.
func (s *shop) showCart(w http.ResponseWriter, r *http.Request) {
	c := s.cartOf(r)
	s.page(w, r, "cart.html", "Your cart", struct {
		Cart   cart
		Coin   string
		Choice bool
	}{c, accepted(s.opts.coins), s.choice()})
}

// addToCart puts one more of a product in the cart and goes back to the
// store, which says so.
func (s *shop) addToCart(w http.ResponseWriter, r *http.Request) {
	p, ok := find(s.products, r.PostFormValue("product"))
	if !ok {
		s.notForSale(w, r)
		return
	}
	c := s.cartOf(r)
	saveCart(w, c.set(p, c.qty(p.ID)+1))
	http.Redirect(w, r, "/?added="+p.ID+"#"+p.ID, http.StatusSeeOther)
}

// setInCart sets how many of a product the cart holds (0 removes it).
func (s *shop) setInCart(w http.ResponseWriter, r *http.Request) {
	p, ok := find(s.products, r.PostFormValue("product"))
	qty, err := strconv.Atoi(r.PostFormValue("qty"))
	if !ok || err != nil {
		s.notForSale(w, r)
		return
	}
	saveCart(w, s.cartOf(r).set(p, qty))
	http.Redirect(w, r, "/cart", http.StatusSeeOther)
}
