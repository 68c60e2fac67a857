package cryptapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// ConvertOptions are the parameters of Convert.
type ConvertOptions struct {
	// Value is the amount to convert, in From. Required, positive.
	Value decimal.Decimal `url:"-"`
	// From is the fiat code ("USD", "EUR") or coin ticker of Value. Required.
	From string `url:"from"`
}

// Conversion is the answer of Convert.
type Conversion struct {
	// ValueCoin is the converted amount in the ticker's coin.
	ValueCoin decimal.Decimal
	// ExchangeRate is the rate used.
	ExchangeRate decimal.Decimal
	// Status is "success".
	Status string
}

// UnmarshalJSON decodes the convert answer.
func (cv *Conversion) UnmarshalJSON(b []byte) error {
	var w struct {
		ValueCoin    wire.Amount `json:"value_coin"`
		ExchangeRate wire.Amount `json:"exchange_rate"`
		Status       wire.String `json:"status"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*cv = Conversion{ValueCoin: w.ValueCoin.D(), ExchangeRate: w.ExchangeRate.D(), Status: string(w.Status)}
	return nil
}

func (cv *Conversion) apiStatus() string { return cv.Status }

// Convert converts o.Value from o.From (a fiat currency or a coin) into the
// coin of ticker, at the service's current rate.
func (c *Client) Convert(ctx context.Context, ticker string, o *ConvertOptions) (*Conversion, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if o == nil || !o.Value.IsPositive() {
		return nil, ErrInvalidValue
	}
	if !validCode(o.From) {
		return nil, fmt.Errorf("%w: from must be a currency code or ticker", ErrInvalidOption)
	}
	return call[Conversion](ctx, c, &request{
		op:    "convert",
		path:  t.Path() + "/convert/",
		opts:  o,
		query: url.Values{"value": {o.Value.String()}},
		retry: true,
	})
}

// validCode accepts currency codes and tickers: letters, digits, "_", "-"
// and ".", at most 32 characters.
func validCode(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789_-.") == ""
}

// ConvertAny converts o.Value from o.From into to, at the service's current
// rate, with the ticker-less form of the operation (/convert/?from=&to=),
// the one the shop plugins use: to and o.From may each be a fiat code
// ("USD") or a coin ticker ("btc", "trc20_usdt"), so it converts fiat to
// any coin and coin to coin. ValueCoin is the amount in to.
func (c *Client) ConvertAny(ctx context.Context, to string, o *ConvertOptions) (*Conversion, error) {
	if !validCode(to) {
		return nil, fmt.Errorf("%w: to must be a currency code or ticker", ErrInvalidOption)
	}
	if o == nil || !o.Value.IsPositive() {
		return nil, ErrInvalidValue
	}
	if !validCode(o.From) {
		return nil, fmt.Errorf("%w: from must be a currency code or ticker", ErrInvalidOption)
	}
	return call[Conversion](ctx, c, &request{
		op:    "convert",
		path:  "convert/",
		opts:  o,
		query: url.Values{"value": {o.Value.String()}, "to": {to}},
		retry: true,
	})
}
