package callbackurl

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// FuzzSameMeansSameEndpoint: when Same(asked, bound) holds, net/url reads
// both as the same scheme, host, port and unescaped path with the same
// parameters, the handler reads the same custom parameters from either,
// and Same holds the other way round too when bound is itself valid.
func FuzzSameMeansSameEndpoint(f *testing.F) {
	for _, p := range [][2]string{
		{"https://shop.example/cb?order_id=1&nonce=n", "https://SHOP.example:443/cb?nonce=n&order_id=1"},
		{"https://shop.example/cb?order_id=1", "https://shop.example/%63b?order%5Fid=1&"},
		{"https://shop.example/a%2fb?x=1", "https://shop.example/a%2Fb?x=1"},
		{"http://h", "http://h:80/"},
		{"https://u:p@h/x?a=1", "https://u:p@h/x?a=1#"},
		{"https://h/x?a=1+2", "https://h/x?a=1%202"},
		{"https://h/x?a=%e2%82%ac", "https://h/x?a=%E2%82%AC"},
		{"https://shop.example/cb", "https://\u017fhop.example/cb"},
		{"https://key.example/cb", "https://\u212Aey.example/cb"},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, asked, bound string) {
		if !Same(asked, bound) {
			return
		}
		ua, err := url.Parse(asked)
		if err != nil {
			t.Fatalf("Same(%q, %q) but asked does not parse: %v", asked, bound, err)
		}
		ub, err := url.Parse(bound)
		if err != nil {
			t.Fatalf("Same(%q, %q) but bound does not parse: %v", asked, bound, err)
		}
		if !strings.EqualFold(ua.Scheme, ub.Scheme) || lowerASCII(ua.Hostname()) != lowerASCII(ub.Hostname()) || port(ua) != port(ub) {
			t.Fatalf("Same(%q, %q) on other endpoints", asked, bound)
		}
		if strings.TrimPrefix(ua.Path, "/") != strings.TrimPrefix(ub.Path, "/") {
			t.Fatalf("Same(%q, %q) with paths %q and %q", asked, bound, ua.Path, ub.Path)
		}
		if ua.User.String() != ub.User.String() {
			t.Fatalf("Same(%q, %q) with other user information", asked, bound)
		}
		qa, errA := url.ParseQuery(ua.RawQuery)
		qb, errB := url.ParseQuery(ub.RawQuery)
		if errA != nil || errB != nil || len(qa) != len(qb) || (len(qa) > 0 && !reflect.DeepEqual(qa, qb)) {
			t.Fatalf("Same(%q, %q) with queries %v (%v) and %v (%v)", asked, bound, qa, errA, qb, errB)
		}
		ca, cb := Custom(asked), Custom(bound)
		if len(ca) != len(cb) || (len(ca) > 0 && !reflect.DeepEqual(ca, cb)) {
			t.Fatalf("Same(%q, %q) with custom parameters %v and %v", asked, bound, ca, cb)
		}
		if _, _, err := Parse(bound); err == nil && !Same(bound, asked) {
			t.Fatalf("Same(%q, %q) but not the other way round", asked, bound)
		}
	})
}

// lowerASCII maps the ASCII capitals of s to small letters and keeps
// every other byte: the host comparison Same promises.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
