package callback

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/url"
	"slices"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// source is where a callback's fields are: the signed fields as text, and
// the query string. For GET both are the query; for POST the fields are
// the body and the query holds only the merchant's custom parameters. Both
// are parsed afresh for each request and share nothing with it.
type source struct {
	get    bool
	fields url.Values
	query  url.Values
}

// custom returns the merchant's parameters: for POST the whole query, for
// GET the query parameters that are not in known. The map is a copy.
func (s source) custom(known map[string]bool) url.Values {
	out := url.Values{}
	for k, vs := range s.query {
		if !(s.get && known[k]) {
			out[k] = slices.Clone(vs)
		}
	}
	return out
}

// source parses what m carries: the query, and for POST the body.
func (m *message) source() (source, error) {
	q, err := callbackurl.ParseQuery(m.rawQuery)
	if err != nil {
		return source{}, malformed("query", "not a valid URL-encoded query")
	}
	if m.get {
		return source{get: true, fields: q, query: q}, nil
	}
	f, err := parseBody(m.body, m.contentType)
	if err != nil {
		return source{}, err
	}
	return source{fields: f, query: q}, nil
}

// A POST body has one shape, decided by its own bytes, which the
// signature covers: JSON when its first non-space byte is '{', a form
// otherwise. The Content-Type header is not signed; when it names a shape
// (form or JSON), it must agree with the body's, so that a body signed for
// one shape is never read as another.
const (
	shapeForm = "form"
	shapeJSON = "JSON"
)

// bodyShape returns the shape of a body by its bytes.
func bodyShape(body []byte) string {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return shapeJSON
	}
	return shapeForm
}

// declaredShape returns the shape a content type names, or "".
func declaredShape(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return shapeJSON
	case mt == "application/x-www-form-urlencoded":
		return shapeForm
	}
	return ""
}

// parseBody turns a form or JSON body into fields as text. The body must
// be a well-formed callback body of its shape: a form or a JSON object
// whose every key is a field name (isFieldName), so that text signed as
// something else (a GET callback's URL) is never read as a body.
func parseBody(body []byte, contentType string) (url.Values, error) {
	shape := bodyShape(body)
	if d := declaredShape(contentType); d != "" && d != shape {
		return nil, malformed("body", "a "+shape+" body under a "+d+" content type")
	}
	var v url.Values
	if shape == shapeJSON {
		var err error
		if v, err = parseJSONFields(body); err != nil {
			return nil, err
		}
	} else {
		var err error
		if v, err = callbackurl.ParseQuery(string(body)); err != nil {
			return nil, malformed("body", "not a valid URL-encoded form")
		}
	}
	for k := range v {
		if !isFieldName(k) {
			return nil, malformed("body", "a key that is not a field name")
		}
	}
	return v, nil
}

// isFieldName reports whether k has the form of the service's field
// names: ASCII letters, digits and underscores, 1 to 64 of them.
func isFieldName(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseJSONFields reads a JSON object into fields: strings as their
// contents, numbers and booleans as their literal text, null as "", and
// objects or arrays (a convert map sent as an object) as compact JSON text.
// A key given twice is refused, as in a form: the body would be read
// differently by different parsers.
func parseJSONFields(body []byte) (url.Values, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, malformed("body", "not a JSON object")
	}
	out := url.Values{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed("body", "not valid JSON")
		}
		k, ok := tok.(string)
		if !ok {
			return nil, malformed("body", "not valid JSON")
		}
		if _, dup := out[k]; dup {
			return nil, malformed("body", "a key given twice")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, malformed("body", "not valid JSON")
		}
		v = bytes.TrimSpace(v)
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, malformed("body", "not valid JSON")
			}
			out[k] = []string{b.String()}
			continue
		}
		s, err := wire.DecodeString(v)
		if err != nil {
			return nil, malformed("body", "not valid JSON")
		}
		out[k] = []string{s}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, malformed("body", "not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, malformed("body", "data after the JSON object")
	}
	return out, nil
}

// fieldReader reads typed fields, remembering the first error.
type fieldReader struct {
	v   url.Values
	err error
}

func (r *fieldReader) fail(field, reason string) {
	if r.err == nil {
		r.err = malformed(field, reason)
	}
}

// str returns the field's only value; a field given twice is an error, as
// it would be ambiguous.
func (r *fieldReader) str(name string) string {
	vs := r.v[name]
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	r.fail(name, "appears more than once")
	return ""
}

func (r *fieldReader) dec(name string) decimal.Decimal {
	d, err := wire.ParseDecimal(r.str(name))
	if err != nil {
		r.fail(name, "not a decimal amount")
	}
	return d
}

// integer reads a count: a whole number, not negative.
func (r *fieldReader) integer(name string) int {
	n, err := wire.ParseInt(r.str(name))
	if err != nil || n < 0 {
		r.fail(name, "not a whole number")
	}
	return n
}

// require fails for the first of names that is absent or blank.
func (r *fieldReader) require(names ...string) {
	for _, n := range names {
		if strings.TrimSpace(r.str(n)) == "" {
			r.fail(n, "missing")
			return
		}
	}
}

// flag reads a required 1/0/true/false field. An absent or empty value is
// an error rather than false, so that a pending callback can never be read
// as a confirmed one.
func (r *fieldReader) flag(name string) bool {
	s := strings.TrimSpace(r.str(name))
	if s == "" || strings.EqualFold(s, "null") {
		r.fail(name, "missing")
		return false
	}
	b, err := wire.ParseBool(s)
	if err != nil {
		r.fail(name, "not a flag")
	}
	return b
}

// amountMap reads a JSON object of amounts held in a field's text, as
// value_coin_convert carries it: nil when the field is absent, blank or
// null.
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

// list splits a comma-separated field, dropping empty items.
func (r *fieldReader) list(name string) []string {
	s := r.str(name)
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
