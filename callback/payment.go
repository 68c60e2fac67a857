package callback

import (
	"net/url"

	"github.com/forwardpay/cryptapi-go/internal/fields"
	"github.com/shopspring/decimal"
)

// Payment is one payment callback, pending or confirmed. The service sends
// the same UUID twice when the address was created with pending=1: first
// with Pending true, then with Pending false once the transaction has the
// requested confirmations. Only a confirmed callback (Pending false) means
// the funds were forwarded.
type Payment struct {
	// UUID identifies the payment, and is its de-duplication key (see
	// PaymentKey). A callback without it is refused as malformed.
	UUID string
	// AddressIn is the payment address the customer paid.
	AddressIn string
	// AddressOut is the destination as the service wrote it: one address,
	// or a text map of address to share such as {"1H6Z...": 0.70, ...}.
	AddressOut string
	// TxIDIn is the customer's transaction hash.
	TxIDIn string
	// TxIDOut is the forwarding transaction hash (confirmed only).
	TxIDOut string
	// Coin is the lowercase ticker, such as "btc" or "trc20_usdt".
	Coin string
	// Pending is true for the unconfirmed notification, false for the
	// confirmed one.
	Pending bool
	// Confirmations is the number of confirmations so far.
	Confirmations int
	// Price is the coin's price in USD when the callback was sent.
	Price decimal.Decimal
	// ValueCoin is the amount received, in coin units, before fees.
	ValueCoin decimal.Decimal
	// ValueForwardedCoin is the amount forwarded after fees (confirmed only).
	ValueForwardedCoin decimal.Decimal
	// FeeCoin is the service fee in coin units (confirmed only).
	FeeCoin decimal.Decimal
	// Value is ValueCoin in the coin's smallest unit.
	//
	// Deprecated: the service deprecates value; use ValueCoin.
	Value decimal.Decimal
	// ValueForwarded is ValueForwardedCoin in the smallest unit.
	//
	// Deprecated: the service deprecates value_forwarded; use
	// ValueForwardedCoin.
	ValueForwarded decimal.Decimal
	// Fee is FeeCoin in the smallest unit.
	//
	// Deprecated: the service deprecates fee; use FeeCoin.
	Fee decimal.Decimal
	// ValueCoinConvert is ValueCoin in fiat currencies, keyed by code such
	// as "USD"; nil unless the address was created with convert=1.
	ValueCoinConvert map[string]decimal.Decimal
	// ValueForwardedCoinConvert is ValueForwardedCoin in fiat currencies;
	// nil unless convert=1.
	ValueForwardedCoinConvert map[string]decimal.Decimal
	// Custom holds the merchant's own query parameters of the callback URL
	// (an order id, a nonce). For a GET callback they are the query
	// parameters that are not callback fields, covered by the signature.
	// For a POST callback they are the whole query string, which the
	// signature does NOT cover: treat them as hints to look up your own
	// records, and check them against the signed fields (AddressIn). For
	// a payment that Reconcile rebuilds from the logs they come from the
	// URL the service called (or the stored callback URL).
	Custom url.Values
	// Raw holds the signed fields as received, as text, including any the
	// service adds that this type does not model. For GET it is the whole
	// query, custom parameters included. A JSON value that is an object or
	// an array is given as compact JSON text. Nil for a payment Reconcile
	// rebuilds from the logs.
	Raw url.Values
}

// paymentFields are the names the service uses in payment callbacks (the
// same list the client refuses as custom parameter names); for GET
// callbacks every other query parameter is custom.
var paymentFields = fields.Names()

// parsePayment reads a payment from the fields src carries: the query for
// GET, the body for POST. Required: uuid, address_in, address_out,
// txid_in, coin and price (the fields the specification lists as common to
// pending and confirmed callbacks), and pending. For a POST callback, the
// query holds the merchant's parameters only: a callback field name there
// is refused. Unknown fields are ignored; a known field given twice is an
// error.
func parsePayment(src source) (*Payment, error) {
	r := &fieldReader{v: src.fields}
	r.require("uuid", "address_in", "address_out", "txid_in", "coin", "price")
	p := &Payment{
		UUID:                      r.str("uuid"),
		AddressIn:                 r.str("address_in"),
		AddressOut:                r.str("address_out"),
		TxIDIn:                    r.str("txid_in"),
		TxIDOut:                   r.str("txid_out"),
		Coin:                      r.str("coin"),
		Pending:                   r.flag("pending"),
		Confirmations:             r.integer("confirmations"),
		Price:                     r.dec("price"),
		ValueCoin:                 r.dec("value_coin"),
		ValueForwardedCoin:        r.dec("value_forwarded_coin"),
		FeeCoin:                   r.dec("fee_coin"),
		Value:                     r.dec("value"),
		ValueForwarded:            r.dec("value_forwarded"),
		Fee:                       r.dec("fee"),
		ValueCoinConvert:          r.amountMap("value_coin_convert"),
		ValueForwardedCoinConvert: r.amountMap("value_forwarded_coin_convert"),
	}
	if r.err != nil {
		return nil, r.err
	}
	if !src.get {
		for k := range src.query {
			if fields.IsCallback(k) {
				return nil, malformed("query", "a callback field in the query of a POST callback")
			}
		}
	}
	p.Custom = src.custom(paymentFields)
	p.Raw = src.fields
	return p, nil
}

// Confirmed reports whether this is the confirmed callback (pending=0).
func (p *Payment) Confirmed() bool { return !p.Pending }

// PaymentKey returns the de-duplication key of a callback: its uuid
// followed by ":pending" or ":confirmed", so that the pending and the
// confirmed callback of one payment are separate keys. A payment has this
// one key however it arrives (GET, POST form, POST JSON, or rebuilt from
// the logs by Reconcile). Without a uuid it is "": such a payment cannot
// be de-duplicated and is refused.
func PaymentKey(p *Payment) string {
	switch {
	case p == nil || p.UUID == "":
		return ""
	case p.Pending:
		return p.UUID + ":pending"
	}
	return p.UUID + ":confirmed"
}

// paymentKeys returns the pending and the confirmed key of p's payment.
func paymentKeys(p *Payment) (pending, confirmed string) {
	if p == nil || p.UUID == "" {
		return "", ""
	}
	return p.UUID + ":pending", p.UUID + ":confirmed"
}
