// Package callbackurl decides what a valid callback URL is, and parses the
// query of a callback. The client uses it to refuse a callback URL before
// it is sent, and the callback package to read every callback's query, so
// that a URL the client accepts is one whose callbacks the handler can
// parse, to the same custom parameters.
package callbackurl

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/fields"
)

// Reasons a callback URL is refused. Parse wraps them with detail.
var (
	// ErrNotHTTP is an URL that is not an absolute http(s) URL with a host.
	ErrNotHTTP = errors.New("not an absolute http(s) URL")
	// ErrCharacters is an URL holding white space, control characters or
	// characters outside ASCII.
	ErrCharacters = errors.New("white space, control or non-ASCII characters (percent-encode them)")
	// ErrFragment is an URL with a '#' fragment, which is never sent.
	ErrFragment = errors.New("a fragment ('#') is never sent to the server")
	// ErrQuery is an URL whose query no callback handler can parse: a ';'
	// separator, a '%' that is not an escape, or too many parameters.
	ErrQuery = errors.New("the query is not a valid URL-encoded query")
	// ErrFieldName is a query parameter named like a field the service
	// adds to every callback.
	ErrFieldName = errors.New("a query parameter is named like a callback field")
	// ErrEmptyName is a query parameter without a name ("=x").
	ErrEmptyName = errors.New("a query parameter has no name")
)

// MaxQueryParams is url.ParseQuery's default limit on the number of
// parameters (GODEBUG urlmaxqueryparams). A query with more goes to
// url.ParseQuery, which applies the limit in force.
const MaxQueryParams = 10000

// Parse checks that s is a valid callback URL and returns it parsed, with
// its query parameters. Valid means: an absolute http or https URL with a
// host, only printable ASCII characters, no fragment, and a query that
// ParseQuery accepts whose parameters all have a name and none is named
// like a callback field (in any case). Everything the service appends to
// such a URL can then be told apart from the merchant's own parameters.
func Parse(s string) (*url.URL, url.Values, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return nil, nil, ErrCharacters
		}
	}
	if strings.IndexByte(s, '#') >= 0 {
		return nil, nil, ErrFragment
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, nil, ErrNotHTTP
	}
	q, _, err := ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, err
	}
	for k := range q {
		if k == "" {
			return nil, nil, ErrEmptyName
		}
		if fields.IsCallback(k) {
			return nil, nil, fmt.Errorf("%w: %q", ErrFieldName, k)
		}
	}
	return u, q, nil
}

// Validate accepts and refuses what Parse accepts and refuses, with the
// same errors, and returns the URL parsed, without building the map of
// its parameters: it is the check a client makes before sending a
// callback URL. When several parameters have a bad name, Parse names one
// of them (in the map's order) and Validate the first in the text.
// FuzzValidateMatchesParse checks it against Parse.
func Validate(s string) (*url.URL, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return nil, ErrCharacters
		}
	}
	if strings.IndexByte(s, '#') >= 0 {
		return nil, ErrFragment
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, ErrNotHTTP
	}
	if err := validateQuery(u.RawQuery); err != nil {
		return nil, err
	}
	return u, nil
}

// validateQuery returns the error Parse returns for a URL with query raw:
// ErrQuery when ParseQuery refuses it, else a name error for the first
// parameter without a name or named like a callback field. It walks the
// text and unescapes only names that hold escapes; a query with a ';' or
// more than MaxQueryParams parameters goes to ParseQuery.
func validateQuery(raw string) error {
	if strings.Count(raw, "&") >= MaxQueryParams || strings.IndexByte(raw, ';') >= 0 {
		q, _, err := ParseQuery(raw)
		if err != nil {
			return err
		}
		for k := range q {
			if err := checkName(k); err != nil {
				return err
			}
		}
		return nil
	}
	var nameErr error
	for start := 0; start <= len(raw); {
		end := nextByte(raw, start, '&')
		seg := raw[start:end]
		start = end + 1
		if seg == "" {
			continue
		}
		key, value, _ := strings.Cut(seg, "=")
		if !validEscapes(value) || !validEscapes(key) {
			return ErrQuery
		}
		if nameErr != nil {
			continue // a bad escape further on is ErrQuery all the same
		}
		if strings.IndexByte(key, '%') >= 0 || strings.IndexByte(key, '+') >= 0 {
			var err error
			if key, err = url.QueryUnescape(key); err != nil {
				return ErrQuery
			}
		}
		nameErr = checkName(key)
	}
	return nameErr
}

// checkName refuses a parameter name that Parse refuses.
func checkName(k string) error {
	if k == "" {
		return ErrEmptyName
	}
	if fields.IsCallback(k) {
		return fmt.Errorf("%w: %q", ErrFieldName, k)
	}
	return nil
}

// validEscapes reports whether every '%' in s starts an escape of two
// hexadecimal digits, which is when url.QueryUnescape accepts s.
func validEscapes(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; {
		if i+2 >= len(s) || !IsHex(s[i+1]) || !IsHex(s[i+2]) {
			return false
		}
		j := strings.IndexByte(s[i+3:], '%')
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return true
}

// ParseQuery parses a query string as url.ParseQuery does, but fails on
// the whole text where url.ParseQuery would skip a malformed part: a
// callback whose query has a ';' separator or a bad escape is refused, not
// read without some of its parameters. It returns the keys in order, each
// once, when its fast path recorded them (else nil). The error does not
// quote the text.
func ParseQuery(raw string) (url.Values, []string, error) {
	if v, keys, ok := parseFast(raw); ok {
		return v, keys, nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, nil, ErrQuery
	}
	return v, nil, nil
}

// parseFast returns what url.ParseQuery returns for raw, in the common
// case: no semicolon, no malformed escape, no key given twice, no more
// than MaxQueryParams parameters. ok is false otherwise, and url.ParseQuery
// decides. It builds the map with fewer allocations: the map is sized
// once and the one-value slices share a backing array (each with its
// capacity cut to its length, so appending to one copies it). It also
// returns the keys in order.
func parseFast(raw string) (m url.Values, keys []string, ok bool) {
	n := strings.Count(raw, "&") + 1
	if n > MaxQueryParams || strings.IndexByte(raw, ';') >= 0 {
		return nil, nil, false
	}
	m = make(url.Values, n)
	// One allocation for the values (first half) and the keys.
	strs := make([]string, 2*n)
	vals, keys := strs[:n:n], strs[n:]
	used := 0
	// pct and plus are the offsets of the next '%' and '+' at or after
	// the current parameter, or len(raw): a parameter needs unescaping
	// only if one of them falls inside it.
	pct, plus := nextByte(raw, 0, '%'), nextByte(raw, 0, '+')
	for start := 0; start < len(raw); {
		end := nextByte(raw, start, '&')
		seg := raw[start:end]
		escaped := pct < end || plus < end
		if pct < end {
			pct = nextByte(raw, end, '%')
		}
		if plus < end {
			plus = nextByte(raw, end, '+')
		}
		start = end + 1
		if seg == "" {
			continue
		}
		key, value, _ := strings.Cut(seg, "=")
		if escaped {
			var err error
			if key, err = url.QueryUnescape(key); err != nil {
				return nil, nil, false
			}
			if value, err = url.QueryUnescape(value); err != nil {
				return nil, nil, false
			}
		}
		vals[used] = value
		before := len(m)
		m[key] = vals[used : used+1 : used+1]
		if len(m) == before {
			return nil, nil, false // a repeated key: url.ParseQuery keeps both
		}
		keys[used] = key
		used++
	}
	return m, keys[:used:used], true
}

// nextByte returns the offset of the first c in s at or after from, or
// len(s).
func nextByte(s string, from int, c byte) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return len(s)
}

// Query returns the parameters of the query of the URL text u, parsed by
// ParseQuery. A URL whose query does not parse has none, and ok is false.
func Query(u string) (q url.Values, ok bool) {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	_, raw, _ := strings.Cut(u, "?")
	v, _, err := ParseQuery(raw)
	if err != nil {
		return url.Values{}, false
	}
	return v, true
}

// Custom returns the merchant's parameters in the query of the URL text u:
// those that are not callback fields. A URL whose query does not parse
// has none, as the callback handler would refuse its callbacks.
func Custom(u string) url.Values {
	q, _ := Query(u)
	return fields.Custom(q)
}

// Same reports whether bound names the same callback endpoint as asked,
// with the same parameters: the same scheme and host (in any ASCII case:
// a letter outside ASCII, such as the Kelvin sign U+212A that Unicode
// folds to "k", is compared byte for byte), the
// same port (a default port written or not), the same user information,
// the same path (percent-escapes compared in any hex case, an escaped
// unreserved character equal to itself, an empty path equal to "/"), and the same parameters with
// the same values in the same order per name, however the query text is
// encoded or ordered. It is how a client compares the callback URL it
// sent with the one the service stored, which the service may re-encode.
// asked must be valid for Parse; bound is parsed as sent back.
func Same(asked, bound string) bool {
	a, aq, err := Parse(asked)
	if err != nil {
		return false
	}
	b, err := url.Parse(bound)
	if err != nil || strings.IndexByte(bound, '#') >= 0 {
		return false
	}
	bq, _, err := ParseQuery(b.RawQuery)
	if err != nil {
		return false
	}
	if !EqualFoldASCII(a.Scheme, b.Scheme) || !EqualFoldASCII(a.Hostname(), b.Hostname()) ||
		port(a) != port(b) || a.User.String() != b.User.String() || b.Opaque != "" {
		return false
	}
	if normalPath(httpPath(a)) != normalPath(httpPath(b)) {
		return false
	}
	return sameValues(aq, bq)
}

// EqualFoldASCII reports whether a and b are equal with ASCII letters
// compared in any case and every other byte as it is: how schemes and
// host names compare. strings.EqualFold also folds Unicode letters, and
// would take "\u017fhop.example" (long s) for "shop.example": a host name
// whose meaning depends on the IDNA processing of whoever resolves it.
func EqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func sameValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !reflect.DeepEqual(av, bv) {
			return false
		}
	}
	return true
}

// httpPath returns u's escaped path, "/" for an empty one: both are the
// same request target (RFC 3986 section 6.2.3).
func httpPath(u *url.URL) string {
	if p := u.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// port returns u's port, or the scheme's default port when none is given.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// normalPath writes an escaped path in the normal form of RFC 3986
// section 6.2.2: percent-escapes in upper case, and unreserved characters
// unescaped. An escaped reserved character ("%2F") stays escaped, so it
// never equals the character itself.
func normalPath(p string) string {
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) && IsHex(p[i+1]) && IsHex(p[i+2]) {
			c := Unhex(p[i+1])<<4 | Unhex(p[i+2])
			if unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(p[i+1 : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Unhex returns the value of the hexadecimal digit c (IsHex(c) must hold).
func Unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
