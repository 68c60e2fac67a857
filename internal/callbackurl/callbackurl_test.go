package callbackurl

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	good := map[string]url.Values{
		"https://shop.example/cb":                           {},
		"http://127.0.0.1:8080/cb?":                         {},
		"https://shop.example/cb?order_id=1001&nonce=ab":    {"order_id": {"1001"}, "nonce": {"ab"}},
		"https://shop.example/cb?a=1&&b=&c&":                {"a": {"1"}, "b": {""}, "c": {""}},
		"https://shop.example/cb?k=v=w&a+b=c+d&%41=%2B":     {"k": {"v=w"}, "a b": {"c d"}, "A": {"+"}},
		"https://shop.example/cb?tag=a&tag=b":               {"tag": {"a", "b"}},
		"https://shop.example/caf%C3%A9?n=%C3%A9":           {"n": {"é"}},
		"HTTPS://shop.example/cb":                           {},
		"https://u:p@shop.example/cb":                       {},
		"https://shop.example":                              {},
		"https://[::1]:8443/cb?x=1":                         {"x": {"1"}},
		"https://shop.example/cb?" + strings.Repeat("a", 5): {"aaaaa": {""}},
	}
	for s, want := range good {
		u, q, err := Parse(s)
		require.NoError(t, err, s)
		assert.NotNil(t, u)
		assert.Equal(t, want, q, s)
	}
	bad := map[string]error{
		"":                                       ErrNotHTTP,
		"/callback":                              ErrNotHTTP,
		"shop.example/cb":                        ErrNotHTTP,
		"ftp://shop.example/cb":                  ErrNotHTTP,
		"mailto:shop@shop.example":               ErrNotHTTP,
		"https:shop.example":                     ErrNotHTTP,
		"https:///cb":                            ErrNotHTTP,
		"https://shop.example/%zz":               ErrNotHTTP,
		"https://shop.example/cb#frag":           ErrFragment,
		"https://shop.example/cb#":               ErrFragment,
		"https://shop.example/c b":               ErrCharacters,
		"https://shop.example/cb?a=1\n":          ErrCharacters,
		"https://shop.example/cb?a=\x00":         ErrCharacters,
		"https://shop.example/café":              ErrCharacters,
		"https://shop.example/cb?a=\x7f":         ErrCharacters,
		"https://shop.example/cb?a=1;b=2":        ErrQuery,
		"https://shop.example/cb?a=50%off":       ErrQuery,
		"https://shop.example/cb?a=%4":           ErrQuery,
		"https://shop.example/cb?%zz=1":          ErrQuery,
		"https://shop.example/cb?=1":             ErrEmptyName,
		"https://shop.example/cb?a=1&=":          ErrEmptyName,
		"https://shop.example/cb?uuid=1":         ErrFieldName,
		"https://shop.example/cb?Pending=1":      ErrFieldName,
		"https://shop.example/cb?value%5Fcoin=1": ErrFieldName,
	}
	for s, want := range bad {
		_, _, err := Parse(s)
		assert.ErrorIs(t, err, want, "%q", s)
		if err != nil {
			assert.NotContains(t, err.Error(), "shop.example", "the error does not quote the URL")
		}
	}
}

func TestSame(t *testing.T) {
	a := "https://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b"
	same := []string{
		a,
		"https://shop.example/pay/cb?tag=a&nonce=3f9c&tag=b&order_id=1001",
		"https://SHOP.EXAMPLE:443/pay/cb?order%5Fid=1001&nonce=%33f9c&tag=a&tag=b",
		"HTTPS://shop.example/p%61y/cb?order_id=1001&nonce=3f9c&tag=a&tag=b&",
		"https://shop.example/pay/cb?order_id=1001&&nonce=3f9c&tag=a&tag=b",
	}
	for _, b := range same {
		assert.True(t, Same(a, b), b)
	}
	differ := []string{
		"",
		"https://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=b&tag=a",
		"https://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a",
		"https://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b&x",
		"https://shop.example/pay/cb?order_id=1001&nonce=3F9C&tag=a&tag=b",
		"https://shop.example/pay/cb?Order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example/Pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example/pay/cb/?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example/pay%2Fcb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example:444/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"http://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example.evil/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://x@shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b#x",
		"https://shop.example/pay/cb?order_id=1001;nonce=3f9c&tag=a&tag=b",
		"https://shop.example/pay/cb?order_id=1001&nonce=3f9c%&tag=a&tag=b",
		"//shop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://\u017fhop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://%C5%BFhop.example/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b",
		"https://SHOP.EXAMPLE/pay/cb?order_id=1001&nonce=3f9c&tag=a&tag=b\u200b",
	}
	for _, b := range differ {
		assert.False(t, Same(a, b), b)
	}
	assert.False(t, Same("https://shop.example/cb?a=1;b=2", "https://shop.example/cb?a=1;b=2"), "an invalid asked URL is never the same")
	assert.True(t, Same("http://shop.example/cb", "http://shop.example:80/cb"))
	assert.True(t, Same("https://shop.example", "https://shop.example"))
	assert.True(t, Same("https://shop.example?a=1", "https://shop.example/?a=1"), "an empty path is the request target /")
	assert.False(t, Same("https://shop.example", "https://shop.example//"))
	assert.False(t, Same("https://key.example/cb", "https://\u212Aey.example/cb"), "the Kelvin sign is not the letter k")
}

func TestCustom(t *testing.T) {
	assert.Equal(t, url.Values{"o": {"1"}}, Custom("https://shop.example/cb?o=1&pending=0&fee_percent=1"))
	assert.Empty(t, Custom("https://shop.example/cb?o=1;pending=0"), "a query the handler refuses has no parameters")
	assert.Empty(t, Custom("%zz"))
	assert.Equal(t, url.Values{"o": {"1"}}, Custom("https://shop.example/cb?o=1#x=2"))
}

var querySeeds = []string{
	"", "&", "&&", "a", "a=", "=", "=b", "a=1&b=2", "a=1&a=2", "a=1&&b=2&", "&a=1",
	"a=%41&b=%zz", "a=%4", "a+b=c+d", "a=1;b=2", "%=1", "a=%7B%22USD%22%3A+%223.20%22%7D",
	"a=1&b=%41&c=3&d=+&e=5", "k=v=w", "é=ü", "a=%00", "order_id=50%off",
}

// checkQuery: ParseQuery gives what url.ParseQuery gives, or fails where
// url.ParseQuery reports an error (url.ParseQuery also returns what it
// could parse then; ParseQuery returns nothing).
func checkQuery(t *testing.T, raw string) {
	t.Helper()
	got, err := ParseQuery(raw)
	want, wantErr := url.ParseQuery(raw)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, url.ParseQuery error %v", raw, err, wantErr)
	}
	if err != nil {
		if !errors.Is(err, ErrQuery) || got != nil {
			t.Fatalf("%q: error %v with %v", raw, err, got)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %v, url.ParseQuery %v", raw, got, want)
	}
}

func TestParseQueryLikeNetURL(t *testing.T) {
	for _, s := range querySeeds {
		checkQuery(t, s)
	}
	checkQuery(t, strings.Repeat("a=1&", maxQueryParams+1))
	checkQuery(t, strings.Repeat("a=1&", maxQueryParams-1))
}

// maxQueryParams is url.ParseQuery's default limit on parameters
// (GODEBUG urlmaxqueryparams).
const maxQueryParams = 10000

// FuzzParseQuery: ParseQuery and url.ParseQuery agree on every input.
func FuzzParseQuery(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkQuery(t, raw)
	})
}

// FuzzParse: a URL Parse accepts is an absolute http(s) URL for net/url,
// whose query url.ParseQuery reads to the same parameters, none of them a
// callback field or nameless; it is the same as itself and as its query
// re-encoded in another order, and never the same as itself on another
// host or with one more parameter.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"https://shop.example/cb?order_id=1001&nonce=3f9c", "https://shop.example/cb?a=1;b=2",
		"https://shop.example/cb?a=50%off", "http://[::1]:80/x%2Fy?k=v=w&a+b=c", "https://u@h/?=1",
		"https://shop.example/cb#x", "https://h?x=%41&X=1&x=2", "https://h?uuid=1&a=%zz", "https://h?=1&b=%",
		"https://h?Pending=1", "https://h?value%5Fcoin=1", "https://h?%41=1&&", "https://h?a+b=%2",
		"https://h/?" + strings.Repeat("a=1&", maxQueryParams), "https://h/?" + strings.Repeat("a=1&", maxQueryParams-1) + "=x",
		"ftp://h/", "https:///x", "https://h/c b", "", "https://h?a=1;uuid=2",

		"https://shop.example/cb?order_id=1001&nonce=3f9c", "https://shop.example/cb?a=1;b=2",
		"https://shop.example/cb?a=50%off", "http://[::1]:80/x%2Fy?k=v=w&a+b=c", "https://u@h/?=1",
		"https://shop.example/cb#x", "https://h?x=%41&X=1&x=2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, q, err := Parse(s)
		if err != nil {
			return
		}
		nu, err := url.Parse(s)
		if err != nil || (nu.Scheme != "http" && nu.Scheme != "https") || nu.Host == "" || nu.Fragment != "" {
			t.Fatalf("%q accepted: %v", s, err)
		}
		want, err := url.ParseQuery(nu.RawQuery)
		if err != nil {
			t.Fatalf("%q accepted with a query url.ParseQuery refuses: %v", s, err)
		}
		if len(want) != len(q) || (len(q) > 0 && !reflect.DeepEqual(want, q)) {
			t.Fatalf("%q: %v, url.ParseQuery %v", s, q, want)
		}
		if !Same(s, s) {
			t.Fatalf("%q is not the same as itself", s)
		}
		re := *u
		re.RawQuery = q.Encode()
		if !Same(s, re.String()) {
			t.Fatalf("%q is not the same as its query re-encoded %q", s, re.String())
		}
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Add("zz_extra", "1")
		re.RawQuery = q2.Encode()
		if Same(s, re.String()) {
			t.Fatalf("%q is the same as %q", s, re.String())
		}
		other := *u
		other.Host = "other.invalid"
		if Same(s, other.String()) {
			t.Fatalf("%q is the same as %q", s, other.String())
		}
	})
}
