package invoice

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/shopspring/decimal"
)

// Record is what a Store keeps of one invoice: the Invoice, and what only
// the Desk may see (the callback URL with the invoice's nonce, and how to
// write payment URIs). Stores persist it with MarshalJSON and
// UnmarshalJSON and never look inside; it must never be shown to a
// customer.
type Record struct {
	// Invoice is the invoice as it stands.
	Invoice Invoice

	nonce       string
	callbackURL string
	uri         uriTemplate
}

// ID returns the invoice's ID.
func (r *Record) ID() string { return r.Invoice.ID }

// Version returns the invoice's version.
func (r *Record) Version() int64 { return r.Invoice.Version }

func (r *Record) clone() *Record {
	c := *r
	c.Invoice = *r.Invoice.Clone()
	return &c
}

// recordJSON is the stored form of a Record.
type recordJSON struct {
	Invoice     Invoice     `json:"invoice"`
	Nonce       string      `json:"nonce"`
	CallbackURL string      `json:"callback_url"`
	URI         uriTemplate `json:"uri"`
}

// MarshalJSON encodes the whole record, secrets included, for a Store.
func (r *Record) MarshalJSON() ([]byte, error) {
	return json.Marshal(recordJSON{Invoice: r.Invoice, Nonce: r.nonce, CallbackURL: r.callbackURL, URI: r.uri})
}

// UnmarshalJSON decodes what MarshalJSON encoded.
func (r *Record) UnmarshalJSON(b []byte) error {
	var w recordJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Invoice.ID == "" || w.Nonce == "" {
		return errors.New("invoice: stored record without ID or nonce")
	}
	*r = Record{Invoice: w.Invoice, nonce: w.Nonce, callbackURL: w.CallbackURL, uri: w.URI}
	return nil
}

// uriTemplate writes the service's payment URI for another amount: the
// URI the service gave for one amount, split around that amount's query
// value. Known is false when the amount was not found in the URI.
type uriTemplate struct {
	Known    bool   `json:"known"`
	Prefix   string `json:"prefix"`
	Suffix   string `json:"suffix"`
	Smallest int32  `json:"smallest"` // decimal shift: 0 for coin units, the coin's decimals for smallest units
	// Given is the URI the service gave for GivenAmount, used for that
	// amount when the form is unknown.
	Given       string          `json:"given"`
	GivenAmount decimal.Decimal `json:"given_amount"`
}

// makeURITemplate finds amount among the query values of uri, in coin
// units or in smallest units (decimals places).
func makeURITemplate(uri string, amount decimal.Decimal, decimals int32) uriTemplate {
	t := findAmount(uri, amount, decimals)
	t.Given, t.GivenAmount = uri, amount
	return t
}

func findAmount(uri string, amount decimal.Decimal, decimals int32) uriTemplate {
	q := strings.IndexByte(uri, '?')
	if q < 0 {
		return uriTemplate{}
	}
	pos := q + 1
	for _, part := range strings.Split(uri[q+1:], "&") {
		_, v, ok := strings.Cut(part, "=")
		if ok && v != "" {
			start := pos + len(part) - len(v)
			if d, err := decimal.NewFromString(v); err == nil && !strings.ContainsAny(v, "eE") {
				switch {
				case d.Equal(amount):
					return uriTemplate{Known: true, Prefix: uri[:start], Suffix: uri[start+len(v):]}
				case decimals > 0 && d.Equal(amount.Shift(decimals)):
					return uriTemplate{Known: true, Prefix: uri[:start], Suffix: uri[start+len(v):], Smallest: decimals}
				}
			}
		}
		pos += len(part) + 1
	}
	return uriTemplate{}
}

// render writes the URI asking for amount, or "" when the form is unknown.
func (t uriTemplate) render(amount decimal.Decimal) string {
	if t.Given != "" && amount.Equal(t.GivenAmount) {
		return t.Given
	}
	if !t.Known {
		return ""
	}
	return t.Prefix + amount.Shift(t.Smallest).String() + t.Suffix
}
