package callback

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceFields is what the service appends to a callback URL's query: a
// confirmed callback's fields, without the fixture's own parameters.
func serviceFields(tb testing.TB) string {
	tb.Helper()
	_, f, ok := strings.Cut(fixture(tb, "get_confirmed.target"), "nonce=7f3c9a21e0b84d56&")
	require.True(tb, ok)
	return f
}

// deliverTo builds the GET and the form POST callbacks the service sends
// to callback URL cb, signed by the test key, as the service builds them:
// the fields appended to the query (GET) or in the body (POST), the URL's
// own query kept in both.
func deliverTo(tb testing.TB, cb, fields string) (get, post *http.Request) {
	tb.Helper()
	u, err := url.Parse(cb)
	require.NoError(tb, err)
	target := strings.TrimRight(u.RequestURI(), "?&")
	getTarget := target + "?" + fields
	if strings.Contains(target, "?") {
		getTarget = target + "&" + fields
	}
	a, _ := testKeys(tb)
	get = httptest.NewRequest(http.MethodGet, getTarget, nil)
	get.Header.Set(SignatureHeader, sign(tb, a, []byte(testPublicURL+getTarget)))
	post = httptest.NewRequest(http.MethodPost, u.RequestURI(), strings.NewReader(fields))
	post.Header.Set("Content-Type", formType)
	post.Header.Set(SignatureHeader, sign(tb, a, []byte(fields)))
	return get, post
}

// checkRoundTrip: a callback URL that cryptapi.CallbackURL accepts is one
// whose callbacks the handler's verifier parses, with exactly the URL's
// parameters as Custom, by GET and by POST.
func checkRoundTrip(t *testing.T, v *Verifier, fields, base string, params url.Values) {
	t.Helper()
	cb, err := cryptapi.CallbackURL(base, params)
	if err != nil {
		return
	}
	u, err := url.Parse(cb)
	require.NoError(t, err, "%q accepted but not a URL", cb)
	want, err := url.ParseQuery(u.RawQuery)
	require.NoError(t, err, "%q accepted but its query does not parse", cb)
	for k, vs := range params {
		require.Equal(t, vs, want[k][len(want[k])-len(vs):], "%q: parameter %q", cb, k)
	}
	get, post := deliverTo(t, cb, fields)
	for _, r := range []*http.Request{get, post} {
		p, err := v.Payment(r)
		require.NoError(t, err, "%s callback to %q, accepted by CallbackURL, is refused", r.Method, cb)
		if len(want) == 0 {
			assert.Empty(t, p.Custom, "%s %q", r.Method, cb)
		} else {
			assert.Equal(t, want, p.Custom, "%s %q", r.Method, cb)
		}
		assert.Equal(t, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2", p.UUID)
	}
}

var roundTripSeeds = []struct {
	base, key, value string
}{
	{"https://shop.example/callback", "order_id", "1001"},
	{"https://shop.example/callback?order_id=1001&nonce=3f9c", "", ""},
	{"https://shop.example/callback?", "order_id", "1;lang=en"},
	{"https://shop.example/callback?a=1&", "b", "50%off"},
	{"https://shop.example/callback?a=1&&b=&c", "x y", "é&=?#"},
	{"https://shop.example/callback?k=v=w&a+b=c+d&%41=%2B", "tag", "a"},
	{"https://shop.example/callback?tag=a&tag=b", "tag", "c"},
	{"http://127.0.0.1:8080/cb?x=%252F", "id", "%2F"},
	{"https://shop.example/callback?order_id=1;lang=en", "", ""},
	{"https://shop.example/callback?order_id=50%off", "", ""},
	{"https://shop.example/callback?=x", "", ""},
	{"https://shop.example/callback?UUID=1", "", ""},
	{"https://shop.example/caf\u00e9?a=1", "", ""},
	{"https://shop.example/cb?a=%zz", "", ""},
}

func TestCallbackURLsTheClientAcceptsRoundTrip(t *testing.T) {
	v := newTestVerifier(t)
	fields := serviceFields(t)
	accepted := 0
	for _, s := range roundTripSeeds {
		var params url.Values
		if s.key != "" {
			params = url.Values{s.key: {s.value}}
		}
		if _, err := cryptapi.CallbackURL(s.base, params); err == nil {
			accepted++
		}
		checkRoundTrip(t, v, fields, s.base, params)
	}
	assert.Equal(t, 8, accepted, "the seeds the client accepts")
}

// TestCallbackURLsTheHandlerRefusesAreRefusedAtCreation: a callback URL
// whose query the handler cannot parse (a ';' separator, a '%' that is not
// an escape) would have every callback refused with 400 forever, and the
// payment never credited. The handler refuses such callbacks, and
// CallbackURL (and so CreateAddress and RequestPayment) refuses the URL.
func TestCallbackURLsTheHandlerRefusesAreRefusedAtCreation(t *testing.T) {
	v := newTestVerifier(t)
	fields := serviceFields(t)
	for _, cb := range []string{
		"https://shop.example/callback?order_id=1;lang=en",
		"https://shop.example/callback?order_id=50%off",
		"https://shop.example/callback?order_id=1&note=100%",
	} {
		get, post := deliverTo(t, cb, fields)
		for _, r := range []*http.Request{get, post} {
			_, err := v.Payment(r)
			require.ErrorIs(t, err, ErrMalformed, "%s to %q", r.Method, cb)
		}
		_, err := cryptapi.CallbackURL(cb, nil)
		assert.ErrorIs(t, err, cryptapi.ErrInvalidCallback, cb)
		_, err = cryptapi.CallbackURL(cb, url.Values{"nonce": {"3f9c"}})
		assert.ErrorIs(t, err, cryptapi.ErrInvalidCallback, cb)
	}
}

// FuzzCallbackURLRoundTrip: any callback URL that CallbackURL accepts,
// from any base and custom parameter, round-trips through the handler's
// parser to the same parameters, by GET and by POST.
func FuzzCallbackURLRoundTrip(f *testing.F) {
	for _, s := range roundTripSeeds {
		f.Add(s.base, s.key, s.value)
	}
	v := newTestVerifier(f)
	fields := serviceFields(f)
	f.Fuzz(func(t *testing.T, base, key, value string) {
		var params url.Values
		if key != "" || value != "" {
			params = url.Values{key: {value}}
		}
		checkRoundTrip(t, v, fields, base, params)
	})
}
