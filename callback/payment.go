package callback

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/fields"
	"github.com/forwardpay/cryptapi-go/internal/wire"

	"github.com/shopspring/decimal"
)

// Payment is one payment callback, pending or confirmed. The service sends
// the same UUID twice when the address was created with pending=1: first
// with Pending true, then with Pending false once the transaction has the
// requested confirmations. Only a confirmed callback (Pending false) means
// the funds were forwarded.
//
// The merchant's parameters (Custom), the fields as received (Raw) and the
// fiat amounts (ValueCoinConvert, ValueForwardedCoinConvert) are methods
// that build their maps when called, from the text the callback carried:
// most callbacks never need them. They were checked when the callback was
// parsed, like every field here; a callback with a malformed one is
// refused then, before any handler sees it.
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
	// custom is where Custom reads the merchant's parameters from.
	custom customFields
	// raw is what the signed fields were read from; Raw reads it again.
	raw rawFields
	// convert and convertForwarded are the texts of value_coin_convert
	// and value_forwarded_coin_convert as received, checked when the
	// callback was parsed; ValueCoinConvert and ValueForwardedCoinConvert
	// read them.
	convert, convertForwarded pair
}

// rawFields is the text a callback's signed fields were read from: a
// query or form (GET, POST form), or a JSON object (POST JSON). The zero
// value holds no fields.
type rawFields struct {
	text string
	json bool
}

// values returns the fields of f, each value as text (see Raw).
func (f rawFields) values() url.Values {
	if f.text == "" {
		return nil
	}
	if f.json {
		v, err := parseJSONFields([]byte(f.text))
		if err != nil {
			return nil // not reached: the text was parsed before
		}
		return v
	}
	v, _, err := callbackurl.ParseQuery(f.text)
	if err != nil {
		return nil // not reached: the text was parsed before
	}
	return v
}

// customFields is the text Custom reads the merchant's parameters from.
// The zero value holds none.
type customFields struct {
	text string
	kind uint8
}

// The kinds of customFields.
const (
	customNone = iota
	customGET  // text is a GET callback's query: its parameters that are not payment fields
	customPOST // text is a POST callback's query: all its parameters
	customURL  // text is a callback URL, as logged: callbackurl.Custom
)

// Custom returns the merchant's own query parameters of the callback URL
// (an order id, a nonce). For a GET callback they are the query
// parameters that are not callback fields, covered by the signature. For
// a POST callback they are the whole query string, which the signature
// does NOT cover: treat them as hints to look up your own records, and
// check them against the signed fields (AddressIn). For a payment that
// Reconcile rebuilds from the logs they come from the URL the service
// called (or the stored callback URL). A Payment built by hand has none.
//
// Each call reads the query afresh and returns a new, non-nil map, which
// the caller may keep and modify; a Payment is not changed by it, so
// Custom is safe for concurrent use. Call it once per payment where the
// cost matters.
func (p *Payment) Custom() url.Values {
	switch p.custom.kind {
	case customGET, customPOST:
		var buf [stackPairs]pair
		q, ok := scanQuery(p.custom.text, buf[:0])
		if !ok {
			return url.Values{} // not reached: the query was parsed before
		}
		return customOf(q, p.custom.kind == customGET)
	case customURL:
		return callbackurl.Custom(p.custom.text)
	}
	return url.Values{}
}

// Raw returns the signed fields as received, as text, including any the
// service adds that this type does not model. For GET it is the whole
// query, custom parameters included. A JSON value that is an object or an
// array is given as compact JSON text. Raw is nil for a Payment that was
// not parsed from a callback (one that Reconcile rebuilds, or one built by
// hand).
//
// Each call reads the fields afresh and returns a new map, which the
// caller may keep and modify; a Payment is not changed by it, so Raw is
// safe for concurrent use. Parsing a callback checks every field it
// models but does not build this map.
func (p *Payment) Raw() url.Values { return p.raw.values() }

// ValueCoinConvert returns ValueCoin in fiat currencies, keyed by code
// such as "USD"; nil unless the address was created with convert=1, and
// for a Payment not parsed from a callback. The text was checked when the
// callback was parsed (a malformed map is refused then); each call builds
// a new map, which the caller may keep and modify, so it is safe for
// concurrent use.
func (p *Payment) ValueCoinConvert() map[string]decimal.Decimal {
	return amountMapOf(p.convert)
}

// ValueForwardedCoinConvert returns ValueForwardedCoin in fiat
// currencies, like ValueCoinConvert; nil unless convert=1.
func (p *Payment) ValueForwardedCoinConvert() map[string]decimal.Decimal {
	return amountMapOf(p.convertForwarded)
}

// paymentFields are the names the service uses in payment callbacks (the
// same list the client refuses as custom parameter names); for GET
// callbacks every other query parameter is custom.
var paymentFields = fields.Names()

// requiredPaymentFields are the fields the specification lists as common
// to pending and confirmed callbacks (pending is read as a flag, which is
// required too). A callback without any of them is refused as malformed.
var requiredPaymentFields = []string{"uuid", "address_in", "address_out", "txid_in", "coin", "price"}

// parsePayment reads a payment from the fields m carries: the query for
// GET, the body for POST. Required: every field of
// requiredPaymentFields, and pending. For a POST callback, the query holds
// the merchant's parameters only: a callback field name there is refused.
// Unknown fields are ignored; a known field given twice is an error.
//
// Every field is checked here, the amount maps too; only the maps
// themselves and Raw are built later, on demand, from the text kept. The
// query and a form body are read into pairs on the stack, and each field
// is found by one pass over them, so that no map of the fields is built.
// Errors are the ones, in the same order, that reading the fields as
// url.Values with a fieldReader gives (see the tests).
func parsePayment(m *message) (*Payment, error) {
	var buf [stackPairs]pair
	f, ok := scanQuery(m.rawQuery, buf[:0])
	if !ok {
		return nil, malformed("query", "not a valid URL-encoded query")
	}
	raw := rawFields{text: m.rawQuery}
	fieldInQuery := false
	if !m.get {
		for _, q := range f {
			if fields.IsCallback(q.key) {
				fieldInQuery = true // refused below, after the fields are read
				break
			}
		}
		// The body's pairs take the place of the query's, not needed now.
		var err error
		if f, raw, err = bodyFields(m.body, m.contentType, buf[:0]); err != nil {
			return nil, err
		}
	}
	var r slotReader
	r.index(f)
	r.require(f, slotUUID, slotAddressIn, slotAddressOut, slotTxIDIn, slotCoin, slotPrice)
	p := &Payment{
		UUID:               r.str(f, slotUUID),
		AddressIn:          r.str(f, slotAddressIn),
		AddressOut:         r.str(f, slotAddressOut),
		TxIDIn:             r.str(f, slotTxIDIn),
		TxIDOut:            r.str(f, slotTxIDOut),
		Coin:               r.str(f, slotCoin),
		Pending:            r.flag(f, slotPending),
		Confirmations:      r.integer(f, slotConfirmations),
		Price:              r.dec(f, slotPrice),
		ValueCoin:          r.dec(f, slotValueCoin),
		ValueForwardedCoin: r.dec(f, slotValueForwardedCoin),
		FeeCoin:            r.dec(f, slotFeeCoin),
		Value:              r.dec(f, slotValue),
		ValueForwarded:     r.dec(f, slotValueForwarded),
		Fee:                r.dec(f, slotFee),
		convert:            r.amountMap(f, slotConvert),
		convertForwarded:   r.amountMap(f, slotConvertForwarded),
		raw:                raw,
	}
	if r.err != nil {
		return nil, r.err
	}
	if fieldInQuery {
		return nil, malformed("query", "a callback field in the query of a POST callback")
	}
	p.custom = customFields{text: m.rawQuery, kind: customPOST}
	if m.get {
		p.custom.kind = customGET
		if !r.scattered {
			// The service appends its fields to the callback URL's own
			// query, so the merchant's parameters usually come first:
			// Custom then reads only them.
			p.custom.text = leadingParams(m.rawQuery, r.lead)
		}
	}
	return p, nil
}

// leadingParams returns the text of the first n parameters of the query
// raw (empty parameters, between two '&', are not counted).
func leadingParams(raw string, n int) string {
	for start := 0; n > 0 && start < len(raw); {
		end := nextByte(raw, start, '&')
		if end > start {
			if n--; n == 0 {
				return raw[:end]
			}
		}
		start = end + 1
	}
	return ""
}

// bodyFields reads a POST body's fields into dst, as parseBody does, and
// returns them with the body's text.
func bodyFields(body []byte, contentType string, dst []pair) ([]pair, rawFields, error) {
	shape := bodyShape(body)
	if d := declaredShape(contentType); d != "" && d != shape {
		return nil, rawFields{}, malformed("body", "a "+shape+" body under a "+d+" content type")
	}
	if shape == shapeJSON {
		v, err := parseJSONFields(body)
		if err != nil {
			return nil, rawFields{}, err
		}
		for k, vs := range v {
			if !isFieldName(k) {
				return nil, rawFields{}, malformed("body", "a key that is not a field name")
			}
			dst = append(dst, pair{key: k, val: vs[0]})
		}
		return dst, rawFields{text: string(body), json: true}, nil
	}
	text := string(body)
	dst, ok := scanQuery(text, dst)
	if !ok {
		return nil, rawFields{}, malformed("body", "not a valid URL-encoded form")
	}
	for _, p := range dst {
		if !isFieldName(p.key) {
			return nil, rawFields{}, malformed("body", "a key that is not a field name")
		}
	}
	return dst, rawFields{text: text}, nil
}

// customOf returns the merchant's parameters in query: for POST all of
// them, for GET those that are not payment fields (paymentFields). The
// values are copies in one backing array, each with its capacity cut to
// its length, so that appending to one never reaches another.
func customOf(query []pair, get bool) url.Values {
	n := 0
	for _, q := range query {
		if !get || paymentSlot(q.key) == slotNone {
			n++
		}
	}
	out := make(url.Values, n)
	if n == 0 {
		return out
	}
	buf := make([]string, 0, n)
	for _, q := range query {
		if get && paymentSlot(q.key) != slotNone {
			continue
		}
		if vs, seen := out[q.key]; seen {
			out[q.key] = append(vs, q.text()) // capacity cut: a new array
			continue
		}
		buf = append(buf, q.text())
		out[q.key] = buf[len(buf)-1 : len(buf) : len(buf)]
	}
	return out
}

// The payment fields parsePayment reads, by slot. slotOther is a payment
// field it does not read (one of paymentFields); slotNone is any other
// key.
const (
	slotUUID = iota
	slotAddressIn
	slotAddressOut
	slotTxIDIn
	slotTxIDOut
	slotCoin
	slotPending
	slotConfirmations
	slotPrice
	slotValueCoin
	slotValueForwardedCoin
	slotFeeCoin
	slotValue
	slotValueForwarded
	slotFee
	slotConvert
	slotConvertForwarded
	numSlots
	slotOther = numSlots
	slotNone  = -1
)

// slotNames are the field names of the slots.
var slotNames = [numSlots]string{
	"uuid", "address_in", "address_out", "txid_in", "txid_out", "coin",
	"pending", "confirmations", "price", "value_coin",
	"value_forwarded_coin", "fee_coin", "value", "value_forwarded", "fee",
	"value_coin_convert", "value_forwarded_coin_convert",
}

// paymentSlot returns the slot of a key: a field parsePayment reads,
// slotOther for another payment field, slotNone for any other key. Keys
// are compared exactly, as in paymentFields.
func paymentSlot(k string) int {
	switch k {
	case "uuid":
		return slotUUID
	case "address_in":
		return slotAddressIn
	case "address_out":
		return slotAddressOut
	case "txid_in":
		return slotTxIDIn
	case "txid_out":
		return slotTxIDOut
	case "coin":
		return slotCoin
	case "pending":
		return slotPending
	case "confirmations":
		return slotConfirmations
	case "price":
		return slotPrice
	case "value_coin":
		return slotValueCoin
	case "value_forwarded_coin":
		return slotValueForwardedCoin
	case "fee_coin":
		return slotFeeCoin
	case "value":
		return slotValue
	case "value_forwarded":
		return slotValueForwarded
	case "fee":
		return slotFee
	case "value_coin_convert":
		return slotConvert
	case "value_forwarded_coin_convert":
		return slotConvertForwarded
	case "fee_percent", "result":
		return slotOther
	}
	return slotNone
}

// slotReader is fieldReader over pairs: it reads the payment fields by
// slot, remembering the first error, with the same rules and errors. It
// holds where each field is in the pairs, not the pairs, which each
// method is given: a struct holding the slice, whose error is returned,
// would move the parser's array of pairs to the heap.
type slotReader struct {
	at  [numSlots]int32 // index of the field's pair, or slotAbsent, or slotTwice
	err error
	// lead is the number of pairs before the first payment field;
	// scattered is set when a pair that is not a payment field follows
	// one that is.
	lead      int
	scattered bool
}

const (
	slotAbsent = 0 // so that the zero slotReader has every field absent
	slotTwice  = -1
)

// index finds each slot's pair in one pass over f. at holds the index
// plus one.
func (r *slotReader) index(f []pair) {
	for i, p := range f {
		s := paymentSlot(p.key)
		if s == slotNone {
			if i == r.lead {
				r.lead++
			} else {
				r.scattered = true
			}
			continue
		}
		if s == slotOther {
			continue
		}
		if r.at[s] == slotAbsent {
			r.at[s] = int32(i + 1)
		} else {
			r.at[s] = slotTwice
		}
	}
}

func (r *slotReader) fail(s int, reason string) {
	if r.err == nil {
		r.err = malformed(slotNames[s], reason)
	}
}

// pair returns the slot's only pair; ok is false when the field is
// absent or given twice (an error, as it would be ambiguous).
func (r *slotReader) pair(f []pair, s int) (pair, bool) {
	switch i := r.at[s]; i {
	case slotAbsent:
		return pair{}, false
	case slotTwice:
		r.fail(s, "appears more than once")
		return pair{}, false
	default:
		return f[i-1], true
	}
}

func (r *slotReader) str(f []pair, s int) string {
	p, ok := r.pair(f, s)
	if !ok {
		return ""
	}
	return p.text()
}

func (r *slotReader) require(f []pair, slots ...int) {
	for _, s := range slots {
		if strings.TrimSpace(r.str(f, s)) == "" {
			r.fail(s, "missing")
			return
		}
	}
}

func (r *slotReader) dec(f []pair, s int) decimal.Decimal {
	d, ok := decText(r.str(f, s))
	if !ok {
		r.fail(s, "not a decimal amount")
	}
	return d
}

func (r *slotReader) integer(f []pair, s int) int {
	n, ok := intText(r.str(f, s))
	if !ok {
		r.fail(s, "not a whole number")
	}
	return n
}

func (r *slotReader) flag(f []pair, s int) bool {
	b, reason := flagText(r.str(f, s))
	if reason != "" {
		r.fail(s, reason)
	}
	return b
}

// amountMapText is the most text amountMap checks in a buffer on the
// stack; longer text is unescaped on the heap.
const amountMapText = 256

// amountMap checks the slot's text as amountMapOf would read it, without
// building the map, and returns its pair (the zero pair when the field is
// absent, blank or null).
func (r *slotReader) amountMap(f []pair, s int) pair {
	p, ok := r.pair(f, s)
	if !ok {
		return pair{}
	}
	var buf [amountMapText]byte
	t := bytes.TrimSpace(p.appendText(buf[:0]))
	if len(t) == 0 || string(t) == "null" {
		return pair{}
	}
	if !wire.ValidAmountMapText(t) {
		r.fail(s, "not a JSON object of amounts")
		return pair{}
	}
	return p
}

// amountMapOf reads the text of an amount map field, as fieldReader's
// amountMap does: nil when it is blank or null.
func amountMapOf(p pair) map[string]decimal.Decimal {
	s := strings.TrimSpace(p.text())
	if s == "" || s == "null" {
		return nil
	}
	m, err := wire.ParseAmountMapText(s)
	if err != nil {
		return nil // not reached: slotReader.amountMap checked the text
	}
	return m
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
	kp, kc := paymentKeys(p)
	if p != nil && p.Pending {
		return kp
	}
	return kc
}

// paymentKeys returns the pending and the confirmed key of p's payment.
func paymentKeys(p *Payment) (pending, confirmed string) {
	if p == nil || p.UUID == "" {
		return "", ""
	}
	return p.UUID + ":pending", p.UUID + ":confirmed"
}
