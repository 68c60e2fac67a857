package cryptapitest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/shopspring/decimal"
)

// SetPrice moves the price of the coin of ticker in currency (a fiat code
// such as "USD", case-insensitive) to price, from now on: info, the
// all-coins info, convert, estimate, checkout payments and the price in
// callbacks of payments made or confirmed later follow it. A currency the
// coin had no price in is added. The price must be positive.
func (s *Server) SetPrice(ticker, currency string, price decimal.Decimal) error {
	c, err := s.coinFor(ticker)
	if err != nil {
		return err
	}
	code := strings.ToUpper(strings.TrimSpace(currency))
	if len(code) < 2 || len(code) > 10 || strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return fmt.Errorf("cryptapitest: %q is not a currency code", currency)
	}
	if !price.IsPositive() {
		return errors.New("cryptapitest: price must be positive")
	}
	s.priceMu.Lock()
	defer s.priceMu.Unlock()
	// Copy on write: a map handed out by prices is never changed.
	m := make(map[string]decimal.Decimal, len(c.Prices)+1)
	for k, v := range c.Prices {
		m[k] = v
	}
	m[code] = price
	c.Prices = m
	return nil
}

// prices returns the coin's current prices by upper-case fiat code. The
// map must not be modified.
func (s *Server) prices(c *Coin) map[string]decimal.Decimal {
	s.priceMu.RLock()
	defer s.priceMu.RUnlock()
	return c.Prices
}

// setupForPaymentLocked finds the address a payment of coin t to addressIn
// reaches: the address created for t, or one created for another coin of
// the same network with multi_token=1. s.mu must be held.
func (s *Server) setupForPaymentLocked(t ticker.Ticker, addressIn string) (*setup, bool) {
	if st, ok := s.byAddress[t.Key()+"\x00"+addressIn]; ok {
		return st, true
	}
	for _, st := range s.byAddress {
		if st.addressIn == addressIn && st.multiToken && network(st.tickerKey) == network(t.Key()) {
			return st, true
		}
	}
	return nil, false
}

// nativeNetwork names the token network of the native coins that have one.
var nativeNetwork = map[string]string{"eth": "erc20", "trx": "trc20", "bnb": "bep20", "pol": "polygon", "matic": "polygon"}

// network is the network of a ticker key: the token's network, or the
// one a native coin runs, or the coin itself.
func network(key string) string {
	t, err := parseTicker(key)
	if err != nil {
		return key
	}
	if t.Network != "" {
		return t.Network
	}
	if n, ok := nativeNetwork[t.Coin]; ok {
		return n
	}
	return t.Coin
}
