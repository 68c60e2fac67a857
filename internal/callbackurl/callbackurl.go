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
	"strconv"
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
	// separator, a '%' that is not an escape, or more parameters than
	// url.ParseQuery reads.
	ErrQuery = errors.New("the query is not a valid URL-encoded query")
	// ErrFieldName is a query parameter named like a field the service
	// adds to every callback.
	ErrFieldName = errors.New("a query parameter is named like a callback field")
	// ErrEmptyName is a query parameter without a name ("=x").
	ErrEmptyName = errors.New("a query parameter has no name")
)

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
	q, err := ParseQuery(u.RawQuery)
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

// ParseQuery parses a query string as url.ParseQuery does, but fails on
// the whole text where url.ParseQuery would skip a malformed part: a
// callback whose query has a ';' separator, a bad escape or more
// parameters than url.ParseQuery reads is refused, not read without some
// of its parameters. The error does not quote the text.
func ParseQuery(raw string) (url.Values, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, ErrQuery
	}
	return v, nil
}

// Query returns the parameters of the query of the URL text u, parsed by
// ParseQuery. A URL whose query does not parse has none, and ok is false.
func Query(u string) (q url.Values, ok bool) {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	_, raw, _ := strings.Cut(u, "?")
	v, err := ParseQuery(raw)
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
	bq, err := ParseQuery(b.RawQuery)
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
		if p[i] == '%' && i+2 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+3], 16, 8); err == nil {
				if c := byte(n); unreserved(c) {
					b.WriteByte(c)
				} else {
					b.WriteByte('%')
					b.WriteString(strings.ToUpper(p[i+1 : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
