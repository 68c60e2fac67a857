package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// home is the store's front page: every product, and a notice when one
// was just added to the cart.
func (s *shop) home(w http.ResponseWriter, r *http.Request) {
	added, _ := find(s.products, r.URL.Query().Get("added"))
	s.page(w, r, "home.html", "Shop", struct {
		Products []product
		Coin     string
		Added    product
		Form     string
	}{s.products, coinName(s.opts.ticker), added, rand.Text()})
}

// formID is what the checkout forms' "form" field holds: a random name
// of the form, made when its page was (rand.Text).
var formID = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// checkoutForm names the checkout form a post comes from: its page's
// random name and what it buys (a product, or the cart); "" when it has
// none, and every post is then an order of its own.
func checkoutForm(form url.Values) string {
	name := form.Get("form")
	if !formID.MatchString(name) {
		return ""
	}
	return name + "|" + form.Get("product")
}

// showCheckout is the last step before paying: what is bought, the total,
// and the coin to pay with.
func (s *shop) showCheckout(w http.ResponseWriter, r *http.Request) {
	c := s.cartOf(r)
	if len(c) == 0 {
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
		return
	}
	s.page(w, r, "checkout.html", "Checkout", struct {
		Cart   cart
		Ticker string
		Coin   string
		Form   string
	}{c, s.opts.ticker, coinName(s.opts.ticker), rand.Text()})
}

// checkout turns the cart, or the one product of a "Buy now" button, into
// an order and its invoice, and sends the customer to the payment page.
func (s *shop) checkout(w http.ResponseWriter, r *http.Request) {
	lines := s.cartOf(r)
	fromCart := true
	if id := r.PostForm.Get("product"); id != "" {
		p, ok := find(s.products, id)
		if !ok {
			s.notForSale(w, r)
			return
		}
		lines, fromCart = cart{{p, 1}}, false
	}
	form := checkoutForm(r.PostForm)
	if len(lines) == 0 && s.orders.drafted(form) == nil {
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
		return
	}
	// The coin is the shop's -ticker for now; the form names it so that
	// a choice among several coins (CreateOptions.Tickers) fits here.
	if coin := r.PostForm.Get("coin"); coin != "" && coin != s.opts.ticker {
		s.problem(w, r, http.StatusUnprocessableEntity, "This coin is not accepted",
			"Please choose one of the coins on the checkout page.")
		return
	}
	o := s.orders.draft(form, lines, s.now())
	inv, err := s.create(r.Context(), o)
	if err != nil {
		s.checkoutFailed(w, r, o, err)
		return
	}
	s.orders.keep(o)
	if fromCart {
		saveCart(w, nil)
	}
	rememberOrder(w, r, o)
	http.Redirect(w, r, "/pay/"+inv.ID, http.StatusSeeOther)
}

// create makes the order's invoice. An order has one open invoice: the
// Desk returns the open one to a repeated Create, and makes a new one
// once the last has ended.
//
// Coin choice plugs in here: with CreateOptions.Tickers (the coins
// offered) and Destinations (each coin's wallet) instead of Ticker and
// Address, the invoice starts without an address and the payment page
// asks the customer to choose (Desk.Choose).
func (s *shop) create(ctx context.Context, o *order) (*invoice.Invoice, error) {
	return s.desk.Create(ctx, &invoice.CreateOptions{
		OrderID:     o.ID,
		Description: o.Lines.Description(),
		Ticker:      s.opts.ticker,
		Price:       o.Total,
		Currency:    "USD",
		Callback:    s.opts.publicURL + "/callback",
		Address:     s.opts.destination,
		ExpiresIn:   30 * time.Minute,
		MultiToken:  s.opts.fake != nil, // lets the panel pay in the wrong coin
	})
}

// checkoutFailed tells the customer why there is no payment page, in
// words, and logs the reason for the merchant.
func (s *shop) checkoutFailed(w http.ResponseWriter, r *http.Request, o *order, err error) {
	var below *cryptapi.BelowMinimumError
	if errors.As(err, &below) && below.Amount.IsPositive() {
		// What the smallest payment is worth, at this quote's rate.
		least := o.Total.Mul(below.Minimum).Div(below.Amount).RoundCeil(2)
		coin := coinName(below.Ticker)
		s.problem(w, r, http.StatusUnprocessableEntity, "This order is too small to pay in "+coin,
			fmt.Sprintf("Your order (%s) comes to %s USD, but the smallest %s payment the network accepts is worth about %s USD. Please add something to your cart.",
				o.Lines.Description(), o.Total.StringFixed(2), coin, least.StringFixed(2)))
		return
	}
	s.logger().ErrorContext(r.Context(), "checkout: no invoice", "order", o.ID, "error", err)
	s.problem(w, r, http.StatusServiceUnavailable, "Payments are not available right now",
		"We could not prepare your payment, and nothing was charged. Please try again in a moment.")
}

func (s *shop) notForSale(w http.ResponseWriter, r *http.Request) {
	s.problem(w, r, http.StatusNotFound, "This product is not for sale",
		"It may be sold out, or the link was wrong. Please choose one of the shop's products.")
}
