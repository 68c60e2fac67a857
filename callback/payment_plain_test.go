package callback

import (
	"errors"
	"maps"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/fields"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// plainPayment is what the plain parser reads: every field of a Payment,
// the amount maps, Custom and Raw built as maps.
type plainPayment struct {
	Payment
	ValueCoinConvert          map[string]decimal.Decimal
	ValueForwardedCoinConvert map[string]decimal.Decimal
	Custom                    url.Values
	Raw                       url.Values
}

// amountMap reads JSON text holding a map of code to amount; an absent or
// empty field is nil.
func (r *fieldReader) amountMap(name string) map[string]decimal.Decimal {
	s := strings.TrimSpace(r.str(name))
	if s == "" || s == "null" {
		return nil
	}
	m, err := wire.ParseAmountMapText(s)
	if err != nil {
		r.fail(name, "not a JSON object of amounts")
		return nil
	}
	return m
}

// parsePaymentPlain is the plain parser parsePayment must agree with: the
// fields read as url.Values (message.source, callbackurl.ParseQuery and
// parseBody), then looked up by name with a fieldReader, every map built.
func parsePaymentPlain(m *message) (*plainPayment, error) {
	src, err := m.source()
	if err != nil {
		return nil, err
	}
	r := &fieldReader{v: src.fields}
	r.require(requiredPaymentFields...)
	p := &plainPayment{
		Payment: Payment{
			UUID:               r.str("uuid"),
			AddressIn:          r.str("address_in"),
			AddressOut:         r.str("address_out"),
			TxIDIn:             r.str("txid_in"),
			TxIDOut:            r.str("txid_out"),
			Coin:               r.str("coin"),
			Pending:            r.flag("pending"),
			Confirmations:      r.integer("confirmations"),
			Price:              r.dec("price"),
			ValueCoin:          r.dec("value_coin"),
			ValueForwardedCoin: r.dec("value_forwarded_coin"),
			FeeCoin:            r.dec("fee_coin"),
			Value:              r.dec("value"),
			ValueForwarded:     r.dec("value_forwarded"),
			Fee:                r.dec("fee"),
		},
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

// checkSameAsPlain fails unless parsePayment and parsePaymentPlain agree
// on m: the same error (same text), or payments equal in every field, the
// maps and Raw included, decimals with the same coefficient and exponent.
func checkSameAsPlain(t *testing.T, m *message) {
	t.Helper()
	// Each parser gets its own copy of the body, as each request would.
	m1, m2 := *m, *m
	m1.body = append([]byte(nil), m.body...)
	m2.body = append([]byte(nil), m.body...)
	got, err := parsePayment(&m1)
	want, wantErr := parsePaymentPlain(&m2)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("error %v, plain parser %v", err, wantErr)
	}
	if err != nil {
		if !errors.Is(err, ErrMalformed) || got != nil {
			t.Fatalf("error %v with payment %v", err, got != nil)
		}
		return
	}
	g, w := *got, want.Payment
	for _, d := range []struct {
		name string
		g, w decimal.Decimal
	}{
		{"Price", g.Price, w.Price}, {"ValueCoin", g.ValueCoin, w.ValueCoin},
		{"ValueForwardedCoin", g.ValueForwardedCoin, w.ValueForwardedCoin}, {"FeeCoin", g.FeeCoin, w.FeeCoin},
		{"Value", g.Value, w.Value}, {"ValueForwarded", g.ValueForwarded, w.ValueForwarded}, {"Fee", g.Fee, w.Fee},
	} {
		if !sameDecimal(d.g, d.w) {
			t.Fatalf("%s %v, plain parser %v", d.name, d.g, d.w)
		}
	}
	g.Price, g.ValueCoin, g.ValueForwardedCoin, g.FeeCoin, g.Value, g.ValueForwarded, g.Fee = w.Price, w.ValueCoin, w.ValueForwardedCoin, w.FeeCoin, w.Value, w.ValueForwarded, w.Fee
	g.raw, g.custom, g.convert, g.convertForwarded = rawFields{}, customFields{}, pair{}, pair{}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("payment %+v, plain parser %+v", g, w)
	}
	sameAmountMaps(t, "ValueCoinConvert", got.ValueCoinConvert(), want.ValueCoinConvert)
	sameAmountMaps(t, "ValueForwardedCoinConvert", got.ValueForwardedCoinConvert(), want.ValueForwardedCoinConvert)
	if c := got.Custom(); !reflect.DeepEqual(c, want.Custom) {
		t.Fatalf("Custom %v, plain parser %v", c, want.Custom)
	}
	if raw := got.Raw(); !reflect.DeepEqual(raw, want.Raw) {
		t.Fatalf("Raw %v, plain parser %v", raw, want.Raw)
	}
}

func sameDecimal(a, b decimal.Decimal) bool {
	return a.Exponent() == b.Exponent() && a.Coefficient().Cmp(b.Coefficient()) == 0
}

func sameAmountMaps(t *testing.T, name string, got, want map[string]decimal.Decimal) {
	t.Helper()
	if (got == nil) != (want == nil) || !maps.EqualFunc(got, want, sameDecimal) {
		t.Fatalf("%s %v, plain parser %v", name, got, want)
	}
}
