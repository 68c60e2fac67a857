package callback

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// source is where a callback's fields are: the signed fields as text, and
// the query string. For GET both are the query; for POST the fields are
// the body and the query holds only the merchant's custom parameters. Both
// are parsed afresh for each request and share nothing with it, so a
// parsed value may keep them (as Raw).
type source struct {
	get    bool
	fields url.Values
	query  url.Values
	// queryKeys are the keys of query in the order they came, each once,
	// when the parser recorded them (nil otherwise): custom walks them
	// rather than the map.
	queryKeys []string
}

// custom returns the merchant's parameters: for POST the whole query, for
// GET the query parameters that are not in known.
func (s source) custom(known map[string]bool) url.Values {
	out := url.Values{}
	var buf []string
	if s.queryKeys != nil {
		for _, k := range s.queryKeys {
			if !(s.get && known[k]) {
				buf = copyValues(out, k, s.query[k], buf)
			}
		}
		return out
	}
	for k, vs := range s.query {
		if !(s.get && known[k]) {
			buf = copyValues(out, k, vs, buf)
		}
	}
	return out
}

// copyValues sets out[k] to a copy of vs kept in buf, and returns buf. The
// copies share buf's backing array, each with its capacity cut to its
// length, so that appending to one never reaches another.
func copyValues(out url.Values, k string, vs, buf []string) []string {
	if buf == nil {
		buf = make([]string, 0, max(4, len(vs)))
	}
	start := len(buf)
	buf = append(buf, vs...)
	out[k] = buf[start:len(buf):len(buf)]
	return buf
}

func (m *message) source() (source, error) {
	q, keys, err := parseQuery(m.rawQuery)
	if err != nil {
		return source{}, err
	}
	if m.get {
		return source{get: true, fields: q, query: q, queryKeys: keys}, nil
	}
	f, err := parseBody(m.body, m.contentType)
	if err != nil {
		return source{}, err
	}
	return source{fields: f, query: q, queryKeys: keys}, nil
}

// parseQuery parses a query string with the parser the client checks
// callback URLs with (callbackurl.ParseQuery), and returns its keys in
// order when its fast path recorded them (else nil). The error does not
// quote the text.
func parseQuery(raw string) (url.Values, []string, error) {
	v, keys, err := callbackurl.ParseQuery(raw)
	if err != nil {
		return nil, nil, malformed("query", "not a valid URL-encoded query")
	}
	return v, keys, nil
}

// maxQueryParams is the parser's limit on the parameters it reads on its
// fast path.
const maxQueryParams = callbackurl.MaxQueryParams

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
		if v, _, err = callbackurl.ParseQuery(string(body)); err != nil {
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
	d, ok := decText(r.str(name))
	if !ok {
		r.fail(name, "not a decimal amount")
	}
	return d
}

func (r *fieldReader) integer(name string) int {
	n, ok := intText(r.str(name))
	if !ok {
		r.fail(name, "not a whole number")
	}
	return n
}

// decText reads an amount field's text.
func decText(s string) (decimal.Decimal, bool) {
	d, err := wire.ParseDecimal(s)
	return d, err == nil
}

// intText reads a count field's text: a whole number, not negative.
func intText(s string) (int, bool) {
	n, err := wire.ParseInt(s)
	return n, err == nil && n >= 0
}

// flagText reads a required 1/0/true/false field's text; reason is the
// error, "" when there is none.
func flagText(s string) (v bool, reason string) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "null") {
		return false, "missing"
	}
	b, err := wire.ParseBool(s)
	if err != nil {
		return b, "not a flag"
	}
	return b, ""
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
	b, reason := flagText(r.str(name))
	if reason != "" {
		r.fail(name, reason)
	}
	return b
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
