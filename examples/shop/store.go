package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

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
	}{s.products, accepted(s.opts.coins), added, rand.Text()})
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
// and the coins to pay with: the shop's one coin, or those the customer
// chooses from on the payment page (none below its minimum).
func (s *shop) showCheckout(w http.ResponseWriter, r *http.Request) {
	c := s.cartOf(r)
	if len(c) == 0 {
		http.Redirect(w, r, "/cart", http.StatusSeeOther)
		return
	}
	coins, err := s.offered(r.Context(), c.Total())
	var below *cryptapi.BelowMinimumError
	if err != nil && !errors.As(err, &below) {
		// The list is the service's: the page says the coin is chosen
		// next, and the checkout itself says what went wrong.
		s.logger().WarnContext(r.Context(), "checkout page: coins not read", "error", err)
	}
	s.page(w, r, "checkout.html", "Checkout", struct {
		Cart   cart
		Choice bool
		Coins  []string
		Below  string // the smallest payment in USD, when the cart is under every coin's
		Form   string
	}{c, s.choice(), coins, belowText(c.Total(), below), rand.Text()})
}

// belowText is what the smallest payment of below is worth, for an order
// of total USD ("15.00 USD"); "" for none.
func belowText(total decimal.Decimal, below *cryptapi.BelowMinimumError) string {
	if below == nil || !below.Amount.IsPositive() {
		return ""
	}
	return total.Mul(below.Minimum).Div(below.Amount).RoundCeil(2).StringFixed(2) + " USD"
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
	// A form may name the coin ("coin"): the shop's own, or one of
	// those offered, which the invoice then starts in (the customer may
	// still switch on the payment page). Without it the customer chooses
	// on the payment page.
	coin := strings.TrimSpace(r.PostForm.Get("coin"))
	if coin != "" && !slices.Contains(s.opts.coins, coin) {
		s.problem(w, r, http.StatusUnprocessableEntity, "This coin is not accepted",
			"Please choose one of the coins on the checkout page.")
		return
	}
	o := s.orders.draft(form, lines, s.now())
	inv, err := s.create(r.Context(), o, coin)
	if errors.Is(err, invoice.ErrOrderOpen) {
		// The same checkout posted again with another coin: the order
		// has its invoice already, and its page leads to it.
		http.Redirect(w, r, o.Path(), http.StatusSeeOther)
		return
	}
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

// create makes the order's invoice, in coin if the checkout named one
// (one of s.opts.coins), else in the coin the customer chooses on the
// payment page among those offered for the order's total. An order has
// one open invoice: the Desk returns the open one to a repeated Create,
// and makes a new one once the last has ended.
//
// With CreateOptions.Tickers (the coins offered) and Destinations (each
// coin's wallet) instead of Ticker and Address, the invoice starts
// without an address and the payment page asks the customer to choose
// (Desk.Choose). A coin whose minimum the service's price moved above
// the total since its coin list was read is dropped, and the invoice
// asked again.
func (s *shop) create(ctx context.Context, o *order, coin string) (*invoice.Invoice, error) {
	coins, err := s.offered(ctx, o.Total)
	if err != nil {
		return nil, err
	}
	if coin != "" && !slices.Contains(coins, coin) {
		return nil, errNotOffered
	}
	for {
		inv, err := s.desk.Create(ctx, s.createOptions(o, coins, coin))
		var below *cryptapi.BelowMinimumError
		if !s.choice() || !errors.As(err, &below) || below.Ticker == coin || len(coins) < 2 {
			return inv, err
		}
		n := len(coins)
		coins = slices.DeleteFunc(slices.Clone(coins), func(tk string) bool { return tk == below.Ticker })
		if len(coins) == n {
			return nil, err
		}
	}
}

// checkoutFailed tells the customer why there is no payment page, in
// words, and logs the reason for the merchant.
func (s *shop) checkoutFailed(w http.ResponseWriter, r *http.Request, o *order, err error) {
	var below *cryptapi.BelowMinimumError
	if least := ""; errors.As(err, &below) {
		// What the smallest payment is worth, at this quote's rate.
		if least = belowText(o.Total, below); least == "" {
			least = "more"
		}
		coin := coinName(below.Ticker)
		title := "This order is too small to pay in " + coin
		msg := fmt.Sprintf("Your order (%s) comes to %s USD, but the smallest %s payment the network accepts is worth about %s. Please add something to your cart.",
			o.Lines.Description(), o.Total.StringFixed(2), coin, least)
		if s.choice() {
			title = "This order is too small to pay in crypto"
			msg = fmt.Sprintf("Your order (%s) comes to %s USD, but the smallest payment any coin we accept can take is worth about %s (in %s). Please add something to your cart.",
				o.Lines.Description(), o.Total.StringFixed(2), least, coin)
		}
		s.problem(w, r, http.StatusUnprocessableEntity, title, msg)
		return
	}
	if errors.Is(err, errNotOffered) {
		s.problem(w, r, http.StatusUnprocessableEntity, "This coin is not offered for this order",
			"The smallest payment in it is worth more than your order. Please go back to the checkout and pay on the next page in one of the coins it lists.")
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
