package cryptapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// ErrMinimumUnknown is returned by RequestPayment when the service's info
// for the coin carries no positive minimum transaction: without it a
// payment could be below the minimum and lost, so no request is made.
var ErrMinimumUnknown = errors.New("cryptapi: the service gave no minimum transaction for this coin")

// ErrBelowMinimum is matched (errors.Is) by a *BelowMinimumError.
var ErrBelowMinimum = errors.New("cryptapi: amount is below the minimum transaction")

// BelowMinimumError is returned by RequestPayment when the amount is below
// the coin's effective minimum: the service would ignore such a payment
// and the customer's funds would be lost. No address is created.
type BelowMinimumError struct {
	// Ticker is the coin, in "trc20_usdt" form.
	Ticker string
	// Amount is the requested amount in coin units.
	Amount decimal.Decimal
	// Minimum is the effective minimum in coin units for the number of
	// outputs.
	Minimum decimal.Decimal
}

// Error implements error.
func (e *BelowMinimumError) Error() string {
	return fmt.Sprintf("cryptapi: %s amount %s is below the minimum transaction %s", e.Ticker, e.Amount, e.Minimum)
}

// Is makes errors.Is(err, ErrBelowMinimum) true.
func (e *BelowMinimumError) Is(target error) bool { return target == ErrBelowMinimum }

// PaymentRequestOptions are the parameters of RequestPayment: the create
// options of the address plus the amount to ask for.
type PaymentRequestOptions struct {
	CreateOptions
	// Amount is what the customer must pay, in Currency. Required.
	Amount decimal.Decimal
	// Currency is a fiat code ("USD") converted at the service's rate, or
	// "" for an amount already in the coin.
	Currency string
	// QRCode asks for the QR code image too.
	QRCode bool
	// QRSize is the QR code's size in pixels; 0 means DefaultQRSize.
	QRSize int
}

// PaymentRequest is what to show the customer.
type PaymentRequest struct {
	// Ticker is the coin, in "trc20_usdt" form.
	Ticker string
	// Address is the created address; Address.AddressIn is where to pay.
	Address *Address
	// AmountCoin is the exact amount to pay, in coin units.
	AmountCoin decimal.Decimal
	// Amount is the amount as asked, in Currency.
	Amount decimal.Decimal
	// Currency is the currency of Amount as asked; "" for the coin itself.
	Currency string
	// ExchangeRate is the rate used to convert Amount (1 for coin amounts).
	ExchangeRate decimal.Decimal
	// Minimum is the effective minimum that AmountCoin was checked against.
	Minimum decimal.Decimal
	// PaymentURI is the service's payment URI for the address and amount.
	PaymentURI string
	// QRCode is the image, when asked for.
	QRCode *QRCode
}

// EffectiveMinimum applies the service's rule that the minimum transaction
// grows with the number of destinations: minimum × (1 + (n−1)/3), rounded
// up at 18 decimal places so that a payment at the result is never below
// the service's own figure. n below 1 counts as 1.
func EffectiveMinimum(minimum decimal.Decimal, n int) decimal.Decimal {
	if n <= 1 {
		return minimum
	}
	q, r := minimum.Mul(decimal.NewFromInt(int64(n)+2)).QuoRem(decimal.NewFromInt(3), 18)
	if !r.IsZero() {
		q = q.Add(decimal.New(1, -18))
	}
	return q
}

// RequestPayment prepares a payment request that cannot lose the
// customer's money to the minimum-transaction rule. In order, it:
//
//  1. validates every parameter (nothing is sent if one is wrong);
//  2. converts Amount to the coin with Convert when Currency is set;
//  3. reads the coin's minimum with Info, cached per ticker (see
//     WithInfoCacheTTL), and applies EffectiveMinimum for the number of
//     outputs;
//  4. rounds the amount and the minimum up to the coin's precision (a
//     wallet sends whole smallest units) and refuses an amount below the
//     minimum with a *BelowMinimumError before any address exists; a coin
//     whose info has no minimum is refused with ErrMinimumUnknown;
//  5. creates the address, checks the amount against the minimum the
//     create answer states (if any), then asks for the payment URI (and
//     the QR code if requested) for the exact amount.
//
// With the API-key form and no destination in the options, the dashboard's
// destinations are used; the SDK cannot see how many there are, so the
// minimum is computed for one unless the create answer states it.
//
// Errors from convert, info, create and QR code are returned as they are.
func (c *Client) RequestPayment(ctx context.Context, ticker string, o *PaymentRequestOptions) (*PaymentRequest, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, ErrCallbackRequired
	}
	if !o.Amount.IsPositive() {
		return nil, ErrInvalidValue
	}
	if o.Currency != "" && !validCode(o.Currency) {
		return nil, fmt.Errorf("%w: currency must be a currency code", ErrInvalidOption)
	}
	if o.QRSize != 0 && (o.QRSize < MinQRSize || o.QRSize > MaxQRSize) {
		return nil, ErrInvalidQRSize
	}
	// Everything CreateAddress would refuse is refused now, before the
	// convert and info calls.
	if _, _, err := c.createParams(t, &o.CreateOptions); err != nil {
		return nil, err
	}
	outputs := len(o.Outputs)
	if outputs == 0 {
		outputs = 1
	}

	pr := &PaymentRequest{
		Ticker:       t.Key(),
		Amount:       o.Amount,
		Currency:     o.Currency,
		AmountCoin:   o.Amount,
		ExchangeRate: decimal.NewFromInt(1),
	}
	if o.Currency != "" && !strings.EqualFold(o.Currency, t.Coin) && !strings.EqualFold(o.Currency, t.Key()) {
		conv, err := c.Convert(ctx, t.Key(), &ConvertOptions{Value: o.Amount, From: o.Currency})
		if err != nil {
			return nil, err
		}
		if !conv.ValueCoin.IsPositive() {
			return nil, &DecodeError{Op: "convert", StatusCode: 200, Err: errors.New("conversion answered no positive value_coin")}
		}
		pr.AmountCoin, pr.ExchangeRate = conv.ValueCoin, conv.ExchangeRate
	}

	info, err := c.cachedInfo(ctx, t.Key())
	if err != nil {
		return nil, err
	}
	if !info.MinimumTransactionCoin.IsPositive() {
		return nil, fmt.Errorf("%w (%s)", ErrMinimumUnknown, t.Key())
	}
	pr.Minimum = EffectiveMinimum(info.MinimumTransactionCoin, outputs)
	// A wallet can only send whole smallest units: the amount asked for and
	// the minimum are rounded up to the coin's precision, never down.
	if places, ok := coinDecimals(info); ok {
		pr.AmountCoin = pr.AmountCoin.RoundUp(places)
		pr.Minimum = pr.Minimum.RoundUp(places)
	}
	if pr.AmountCoin.LessThan(pr.Minimum) {
		return nil, &BelowMinimumError{Ticker: t.Key(), Amount: pr.AmountCoin, Minimum: pr.Minimum}
	}

	addr, err := c.CreateAddress(ctx, t.Key(), &o.CreateOptions)
	if err != nil {
		return nil, err
	}
	pr.Address = addr
	// The address's own minimum, where the service states one, is the last
	// word (it may know of destinations set in the dashboard).
	if m := addr.MinimumTransactionCoin; m.IsPositive() && pr.AmountCoin.LessThan(m) {
		return nil, &BelowMinimumError{Ticker: t.Key(), Amount: pr.AmountCoin, Minimum: m}
	}

	// The QR answer carries the service's payment URI for this coin; a
	// smallest image is asked for when only the URI is wanted.
	size := o.QRSize
	if !o.QRCode {
		size = MinQRSize
	}
	qr, err := c.QRCode(ctx, t.Key(), &QRCodeOptions{Address: addr.AddressIn, Value: pr.AmountCoin, Size: size})
	if err != nil {
		return nil, err
	}
	pr.PaymentURI = qr.PaymentURI
	if o.QRCode {
		pr.QRCode = qr
	}
	return pr, nil
}

// Decimals returns the coin's precision in decimal places, derived from
// its minimum in smallest units and in coin units (10000 and 0.0001 give
// 8), the precision RequestPayment rounds to. It reports false when the
// two do not give a whole power of ten.
func (i *CoinInfo) Decimals() (int32, bool) {
	if i == nil {
		return 0, false
	}
	return coinDecimals(i)
}

// coinDecimals derives the coin's number of decimal places from its
// minimum in smallest units and in coin units (10000 and 0.0001 give 8).
// It reports false when the two do not give a whole power of ten.
func coinDecimals(info *CoinInfo) (int32, bool) {
	units, coin := info.MinimumTransaction, info.MinimumTransactionCoin
	if !units.IsPositive() || !coin.IsPositive() {
		return 0, false
	}
	ratio := units.DivRound(coin, 40)
	if !ratio.IsInteger() {
		return 0, false
	}
	digits := ratio.Truncate(0).String()
	if len(digits) > 31 || strings.Trim(digits[1:], "0") != "" || digits[0] != '1' {
		return 0, false
	}
	return int32(len(digits) - 1), true
}

// cachedInfo returns the info of ticker (key form) without prices, which
// the minimum does not need, kept for the info cache TTL.
func (c *Client) cachedInfo(ctx context.Context, key string) (*CoinInfo, error) {
	return cachedRead(ctx, c, "info", "info "+key, func(ctx context.Context) (*CoinInfo, error) {
		return c.Info(ctx, key, &InfoOptions{NoPrices: true})
	})
}
