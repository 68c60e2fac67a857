package main

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// errNotOffered is a checkout form that names a coin the shop does not
// offer for the order (a forged or outdated form).
var errNotOffered = errors.New("shop: the coin is not offered for this order")

// choice reports whether the customer chooses the coin (on the payment
// page), rather than the shop (-ticker).
func (s *shop) choice() bool { return len(s.opts.coins) > 1 }

// offered returns the coins the checkout offers for a price of total
// USD: the shop's coins less those whose smallest payment is worth more
// than total at the service's prices (its coin list, which the client
// keeps for a while). A shop of one coin offers it whatever the total:
// the Desk says when the order is too small. When no coin is left, the
// error is a *cryptapi.BelowMinimumError of the coin whose smallest
// payment is worth least.
func (s *shop) offered(ctx context.Context, total decimal.Decimal) ([]string, error) {
	if !s.choice() {
		return s.opts.coins, nil
	}
	info, err := s.opts.client.Coins(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	var least *cryptapi.BelowMinimumError
	leastUSD := decimal.Zero
	for _, tk := range s.opts.coins {
		c := info[tk]
		if c == nil || !c.Prices["USD"].IsPositive() {
			continue // the service does not quote it now
		}
		price := c.Prices["USD"]
		minUSD := c.MinimumTransactionCoin.Mul(price)
		if total.GreaterThanOrEqual(minUSD) {
			out = append(out, tk)
			continue
		}
		if least == nil || minUSD.LessThan(leastUSD) {
			least, leastUSD = &cryptapi.BelowMinimumError{Ticker: tk, Amount: total.Div(price), Minimum: c.MinimumTransactionCoin}, minUSD
		}
	}
	if len(out) == 0 {
		if least == nil {
			return nil, errors.New("shop: the service quotes none of the shop's coins in USD")
		}
		return nil, least
	}
	return out, nil
}

// createOptions are the invoice options of order o in coins, coin chosen
// at checkout ("" for none): the single-coin form (Ticker and Address)
// for a shop of one coin, the customer's choice (Tickers and
// Destinations) otherwise.
func (s *shop) createOptions(o *order, coins []string, coin string) *invoice.CreateOptions {
	opts := &invoice.CreateOptions{
		OrderID:     o.ID,
		Description: o.Lines.Description(),
		Price:       o.Total,
		Currency:    "USD",
		Callback:    s.opts.publicURL + "/callback",
		ExpiresIn:   30 * time.Minute,
		MultiToken:  s.opts.fake != nil, // lets the panel pay in the wrong coin
	}
	if !s.choice() {
		opts.Ticker, opts.Address = coins[0], s.opts.wallets[coins[0]]
		return opts
	}
	opts.Tickers, opts.Ticker = coins, coin
	if len(coins) == 1 {
		opts.Ticker = coins[0] // nothing to choose
	}
	opts.Destinations = make(map[string]string, len(coins))
	for _, tk := range coins {
		opts.Destinations[tk] = s.opts.wallets[tk]
	}
	return opts
}

// accepted writes the coins for a sentence: "USDT (TRC20)", "BTC, ETH or
// LTC", "BTC, ETH, USDT (TRC20) or 6 more coins".
func accepted(coins []string) string {
	names := make([]string, len(coins))
	for i, tk := range coins {
		names[i] = coinName(tk)
	}
	switch {
	case len(names) == 0:
		return "crypto"
	case len(names) == 1:
		return names[0]
	case len(names) <= 4:
		return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	return strings.Join(names[:3], ", ") + " or " + strconv.Itoa(len(names)-3) + " more coins"
}

// received writes what arrived for inv in each coin, confirmed or not,
// wrong coins apart, in the order first paid: "0.001 BTC + 12.5 USDT";
// "" when nothing did.
func received(inv *invoice.Invoice) string {
	var coins []string
	sums := map[string]decimal.Decimal{}
	for _, p := range inv.Payments {
		if p.WrongCoin {
			continue
		}
		if !slices.Contains(coins, p.Coin) {
			coins = append(coins, p.Coin)
		}
		sums[p.Coin] = sums[p.Coin].Add(p.Amount)
	}
	parts := make([]string, len(coins))
	for i, c := range coins {
		parts[i] = sums[c].String() + " " + symbol(c)
	}
	return strings.Join(parts, " + ")
}
