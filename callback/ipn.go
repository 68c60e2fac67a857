package callback

import (
	"crypto/subtle"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"
)

// CheckoutIPN is the payment notification of a hosted checkout payment,
// sent to the notify_url once the payment is confirmed by the network.
// Answer it with "*ok*" (WriteOK) after recording the order as paid.
type CheckoutIPN struct {
	// PaymentURL is the checkout page where the payment was made.
	PaymentURL string
	// RedirectURL is the redirect_url given at creation.
	RedirectURL string
	// Value is the order value as given at creation, in Currency.
	Value decimal.Decimal
	// SuccessToken is the token issued at creation. Compare it with the one
	// stored for the order (TokenMatches) before trusting the IPN's order.
	SuccessToken string
	// Currency is the fiat currency of Value, a lowercase code.
	Currency string
	// IsPaid is the payment state text as sent (see Paid).
	IsPaid string
	// PaidAmount is the amount paid, in PaidCoin.
	PaidAmount decimal.Decimal
	// PaidCoin is the coin used, a lowercase ticker.
	PaidCoin string
	// ExchangeRate is the rate at payment time.
	ExchangeRate decimal.Decimal
	// TxIDs are the transaction hashes (the comma-separated txid field).
	TxIDs []string
	// Address is the address that received the payment.
	Address string
	// Status is the transaction status text as sent.
	Status string
	// PaymentID is the payment's id, as CreateCheckout returned it.
	PaymentID string
	// PaidAmountFiat is the amount paid so far, in Currency.
	PaidAmountFiat decimal.Decimal
	// ReceivedAmount is the amount received in this notification's
	// transaction, in PaidCoin.
	ReceivedAmount decimal.Decimal
	// ReceivedAmountFiat is ReceivedAmount in Currency.
	ReceivedAmountFiat decimal.Decimal
	// Type is the kind of notification as sent (for example "payment").
	Type string
	// Custom holds the merchant's own query parameters of the notify_url,
	// as for Payment.Custom: signed for GET, unsigned for POST.
	Custom url.Values
	// Raw holds every signed field as received, as text, also the ones
	// this type does not name.
	Raw url.Values
}

// String describes the notification without its success token, which is
// a secret of the merchant's systems; Raw is left out for the same reason.
func (c CheckoutIPN) String() string {
	return fmt.Sprintf("callback.CheckoutIPN{PaymentURL: %q, Value: %s %s, IsPaid: %q, PaidAmount: %s %s, TxIDs: %q, Status: %q, SuccessToken: REDACTED}",
		c.PaymentURL, c.Value, c.Currency, c.IsPaid, c.PaidAmount, c.PaidCoin, c.TxIDs, c.Status)
}

// Format implements fmt.Formatter so that no verb prints the token,
// whether a CheckoutIPN or a *CheckoutIPN is printed.
func (c CheckoutIPN) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// checkoutFields are the checkout IPN's field names.
var checkoutFields = map[string]bool{
	"payment_url": true, "redirect_url": true, "value": true,
	"success_token": true, "currency": true, "is_paid": true,
	"paid_amount": true, "paid_coin": true, "exchange_rate": true,
	"txid": true, "address": true, "status": true,
	"payment_id": true, "paid_amount_fiat": true, "received_amount": true,
	"received_amount_fiat": true, "type": true,
}

func parseCheckoutIPN(src source) (*CheckoutIPN, error) {
	return parseIPN(src, checkoutFields)
}

// parseIPN reads the fields of known (checkoutFields or depositFields)
// into a CheckoutIPN; a field that known does not hold is left empty and
// counts as the merchant's own.
func parseIPN(src source, known map[string]bool) (*CheckoutIPN, error) {
	r := &fieldReader{v: src.fields}
	str := func(name string) string {
		if !known[name] {
			return ""
		}
		return r.str(name)
	}
	c := &CheckoutIPN{
		PaymentURL:   r.str("payment_url"),
		RedirectURL:  str("redirect_url"),
		Value:        r.dec("value"),
		SuccessToken: str("success_token"),
		Currency:     r.str("currency"),
		IsPaid:       r.str("is_paid"),
		PaidAmount:   r.dec("paid_amount"),
		PaidCoin:     r.str("paid_coin"),
		ExchangeRate: r.dec("exchange_rate"),
		TxIDs:        r.list("txid"),
		Address:      r.str("address"),
		Status:       r.str("status"),

		PaymentID:          r.str("payment_id"),
		PaidAmountFiat:     r.dec("paid_amount_fiat"),
		ReceivedAmount:     r.dec("received_amount"),
		ReceivedAmountFiat: r.dec("received_amount_fiat"),
		Type:               r.str("type"),
	}
	if r.err != nil {
		return nil, r.err
	}
	c.Custom = src.custom(known)
	c.Raw = src.fields
	return c, nil
}

// paidText reports whether an is_paid value says paid: "1", "true" or
// "done", in any case.
func paidText(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "done":
		return true
	}
	return false
}

// statusDone reports whether a status value is absent or "done", the only
// value the specification names.
func statusDone(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.EqualFold(s, "done")
}

// Paid reports whether the notification says the order is paid: IsPaid is
// "1", "true" or "done" (any case) and Status, when present, is "done". The
// specification names no other values, so anything else counts as not
// paid: look at IsPaid and Status yourself before acting on a value this
// method does not know. Paid does not check the amount or the token.
func (c *CheckoutIPN) Paid() bool { return paidText(c.IsPaid) && statusDone(c.Status) }

// TokenMatches reports, in constant time, whether the IPN carries want as
// its success_token. An empty want never matches.
func (c *CheckoutIPN) TokenMatches(want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(c.SuccessToken), []byte(want)) == 1
}

// DepositIPN is the notification of a checkout deposit (any amount), sent
// to the notify_url once the deposit is confirmed. The specification does
// not list its fields; this type models it on the checkout IPN, and Raw
// keeps every field as sent, so that nothing is lost if the service sends
// others. The fields the API-key service's plugins read (payment_id, the
// fiat amounts, type) are named.
type DepositIPN struct {
	// PaymentURL is the deposit page where the payment was made.
	PaymentURL string
	// Value is the value field if sent (deposits have no order value).
	Value decimal.Decimal
	// Currency is the currency field if sent.
	Currency string
	// IsPaid is the payment state text as sent, if any.
	IsPaid string
	// PaidAmount is the amount paid, in PaidCoin.
	PaidAmount decimal.Decimal
	// PaidCoin is the coin used, a lowercase ticker.
	PaidCoin string
	// ExchangeRate is the rate at payment time.
	ExchangeRate decimal.Decimal
	// TxIDs are the transaction hashes (the comma-separated txid field).
	TxIDs []string
	// Address is the address that received the deposit.
	Address string
	// Status is the status text as sent.
	Status string
	// PaymentID is the deposit page's id, as CreateDeposit returned it.
	PaymentID string
	// PaidAmountFiat is the amount paid, in Currency.
	PaidAmountFiat decimal.Decimal
	// ReceivedAmount is the amount received, in PaidCoin.
	ReceivedAmount decimal.Decimal
	// ReceivedAmountFiat is ReceivedAmount in Currency.
	ReceivedAmountFiat decimal.Decimal
	// Type is the kind of notification as sent (for example "deposit").
	Type string
	// Custom holds the merchant's own query parameters of the notify_url,
	// as for Payment.Custom: signed for GET, unsigned for POST.
	Custom url.Values
	// Raw holds the signed fields as received, as text.
	Raw url.Values
}

// depositFields are the deposit IPN's field names (assumed, see
// DepositIPN): the checkout IPN's without redirect_url and success_token.
var depositFields = func() map[string]bool {
	m := maps.Clone(checkoutFields)
	delete(m, "redirect_url")
	delete(m, "success_token")
	return m
}()

func parseDepositIPN(src source) (*DepositIPN, error) {
	c, err := parseIPN(src, depositFields)
	if err != nil {
		return nil, err
	}
	return &DepositIPN{
		PaymentURL: c.PaymentURL, Value: c.Value, Currency: c.Currency, IsPaid: c.IsPaid,
		PaidAmount: c.PaidAmount, PaidCoin: c.PaidCoin, ExchangeRate: c.ExchangeRate, TxIDs: c.TxIDs,
		Address: c.Address, Status: c.Status, PaymentID: c.PaymentID, PaidAmountFiat: c.PaidAmountFiat,
		ReceivedAmount: c.ReceivedAmount, ReceivedAmountFiat: c.ReceivedAmountFiat, Type: c.Type,
		Custom: c.Custom, Raw: c.Raw,
	}, nil
}

// Paid reports whether the notification says the deposit is paid, with
// the rules of CheckoutIPN.Paid; an IPN without is_paid counts as paid when
// its status is "done", since the service sends deposit IPNs only once the
// deposit is confirmed.
func (d *DepositIPN) Paid() bool {
	if strings.TrimSpace(d.IsPaid) == "" {
		return strings.EqualFold(strings.TrimSpace(d.Status), "done")
	}
	return paidText(d.IsPaid) && statusDone(d.Status)
}
