package callback

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewVerifierOptions(t *testing.T) {
	a, _ := testKeys(t)
	tests := []struct {
		name string
		opts []VerifierOption
		ok   bool
	}{
		{"defaults", nil, true},
		{"nil options skipped", []VerifierOption{nil, WithPublicURL("https://shop.example"), nil}, true},
		{"public URL with path", []VerifierOption{WithPublicURL("https://shop.example/app/")}, true},
		{"public URL http", []VerifierOption{WithPublicURL("http://127.0.0.1:8080")}, true},
		{"public URL relative", []VerifierOption{WithPublicURL("/callback")}, false},
		{"public URL empty", []VerifierOption{WithPublicURL("")}, false},
		{"public URL ftp", []VerifierOption{WithPublicURL("ftp://shop.example")}, false},
		{"public URL query", []VerifierOption{WithPublicURL("https://shop.example/?a=1")}, false},
		{"public URL fragment", []VerifierOption{WithPublicURL("https://shop.example/#x")}, false},
		{"public URL credentials", []VerifierOption{WithPublicURL("https://u:p@shop.example")}, false},
		{"public URL space", []VerifierOption{WithPublicURL("https://shop.example/a b")}, false},
		{"nil public key", []VerifierOption{WithPublicKey(nil)}, false},
		{"no pinned keys", []VerifierOption{WithPinnedKeys()}, false},
		{"pinned keys", []VerifierOption{WithPinnedKeys(&a.PublicKey, PublishedKey())}, true},
		{"fingerprint without source", []VerifierOption{WithPinnedFingerprint(PublishedKeyFingerprint)}, false},
		{"bad fingerprint", []VerifierOption{WithPinnedFingerprint("abc")}, false},
		{"trust without source", []VerifierOption{WithTrustFetchedKey()}, false},
		{"nil source", []VerifierOption{WithKeySource(nil)}, false},
		{"zero refetch", []VerifierOption{WithKeyRefetchInterval(0)}, false},
		{"zero body limit", []VerifierOption{WithMaxBodyBytes(0)}, false},
		{"nil clock", []VerifierOption{WithClock(nil)}, false},
		{"nil clock func", []VerifierOption{WithClock(cryptapi.ClockFunc(nil))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVerifier(tt.opts...)
			if tt.ok {
				require.NoError(t, err)
				assert.NotNil(t, v)
				return
			}
			assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
			assert.Nil(t, v)
		})
	}
}

func TestDefaultVerifierPinsPublishedKey(t *testing.T) {
	a, _ := testKeys(t)
	body := fixture(t, "post_form_confirmed.body")

	v, err := NewVerifier()
	require.NoError(t, err)
	_, err = v.Payment(signedPOST(t, a, "/callback", formType, body))
	assert.ErrorIs(t, err, ErrBadSignature)

	v, err = NewVerifier(WithPublicKey(&a.PublicKey))
	require.NoError(t, err)
	p, err := v.Payment(signedPOST(t, a, "/callback", formType, body))
	require.NoError(t, err)
	assert.Equal(t, "0c6e8a2f-1d4b-4e8a-9b3c-5f7a9d1e2b4c", p.UUID)

	// The first explicit key replaced the published one; pinning both
	// accepts both.
	v, err = NewVerifier(WithPinnedKeys(PublishedKey(), &a.PublicKey))
	require.NoError(t, err)
	_, err = v.Payment(signedPOST(t, a, "/callback", formType, body))
	assert.NoError(t, err)
}

func TestVerifierGET(t *testing.T) {
	a, b := testKeys(t)
	target := fixture(t, "get_confirmed.target")
	v := newTestVerifier(t)

	p, err := v.Payment(signedGET(t, a, target))
	require.NoError(t, err)
	assert.False(t, p.Pending)

	_, err = v.Payment(signedGET(t, b, target))
	assert.ErrorIs(t, err, ErrBadSignature)

	_, err = v.Payment(signedGET(t, nil, target))
	assert.ErrorIs(t, err, ErrMissingSignature)

	// The signature covers the query: another value does not verify.
	r := signedGET(t, a, target)
	r.RequestURI = strings.Replace(target, "value_coin=3.2", "value_coin=9.2", 1)
	_, err = v.Payment(r)
	assert.ErrorIs(t, err, ErrBadSignature)
}

func TestVerifierGETNeedsPublicURL(t *testing.T) {
	a, _ := testKeys(t)
	v, err := NewVerifier(WithPublicKey(&a.PublicKey))
	require.NoError(t, err)
	r := signedGET(t, a, fixture(t, "get_confirmed.target"))
	r.Host = "shop.example"
	r.Header.Set("X-Forwarded-Proto", "https")
	_, err = v.Payment(r)
	assert.ErrorIs(t, err, ErrPublicURLRequired)
	assert.Equal(t, http.StatusInternalServerError, StatusCode(err))
}

func TestVerifierIgnoresHostAndForwardedHeaders(t *testing.T) {
	a, _ := testKeys(t)
	target := fixture(t, "get_confirmed.target")
	v := newTestVerifier(t)

	// Signed for another host, and the request claims that host in every
	// header a proxy might set: refused.
	r := httptest.NewRequest(http.MethodGet, "https://evil.example"+target, nil)
	r.RequestURI = target
	r.Header.Set(SignatureHeader, sign(t, a, []byte("https://evil.example"+target)))
	r.Header.Set("X-Forwarded-Host", "evil.example")
	r.Header.Set("X-Forwarded-Proto", "https")
	r.Header.Set("Forwarded", "host=evil.example;proto=https")
	_, err := v.Payment(r)
	assert.ErrorIs(t, err, ErrBadSignature)

	// Signed for the public URL: accepted whatever Host says.
	r = signedGET(t, a, target)
	r.Host = "evil.example"
	r.Header.Set("X-Forwarded-Host", "evil.example")
	_, err = v.Payment(r)
	assert.NoError(t, err)
}

func TestVerifierPublicURLPrefix(t *testing.T) {
	a, _ := testKeys(t)
	// A proxy serves https://shop.example/app/callback as /callback.
	v, err := NewVerifier(WithPublicKey(&a.PublicKey), WithPublicURL("https://shop.example/app/"))
	require.NoError(t, err)
	target := fixture(t, "get_pending.target")
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set(SignatureHeader, sign(t, a, []byte("https://shop.example/app"+target)))
	_, err = v.Payment(r)
	assert.NoError(t, err)
}

func TestVerifierUsesRawRequestTarget(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	// The signature is over the bytes as sent. Middleware that rewrites
	// r.URL (http.StripPrefix, a router) does not change what is verified.
	target := "/shop/callback?order_id=a%2Fb&uuid=u1&address_in=TKrv&address_out=TXQz&txid_in=a217&coin=trc20_usdt&price=1&pending=0&note=%7e"
	r := signedGET(t, a, target)
	r.URL.Path = "/callback"
	r.URL.RawQuery = "uuid=u1&address_in=TKrv&address_out=TXQz&txid_in=a217&coin=trc20_usdt&price=1&pending=0"
	p, err := v.Payment(r)
	require.NoError(t, err)
	assert.Equal(t, "a/b", p.Custom.Get("order_id"))
	assert.Equal(t, "~", p.Custom.Get("note"))

	// Without RequestURI (a request built by a client), the URL stands in.
	r2, err := http.NewRequest(http.MethodGet, "/callback?uuid=u1&address_in=TKrv&address_out=TXQz&txid_in=a217&coin=trc20_usdt&price=1&pending=0", nil)
	require.NoError(t, err)
	r2.Header.Set(SignatureHeader, sign(t, a, []byte(testPublicURL+"/callback?uuid=u1&address_in=TKrv&address_out=TXQz&txid_in=a217&coin=trc20_usdt&price=1&pending=0")))
	_, err = v.Payment(r2)
	assert.NoError(t, err)
}

func TestVerifierEveryByteFlipped(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)

	target := fixture(t, "get_confirmed.target")
	sig := sign(t, a, []byte(testPublicURL+target))
	for i, c := range flips([]byte(target)) {
		r := httptest.NewRequest(http.MethodGet, "/callback", nil)
		r.RequestURI = string(c)
		r.Header.Set(SignatureHeader, sig)
		_, err := v.Payment(r)
		require.ErrorIs(t, err, ErrBadSignature, "GET flip %d", i)
	}

	for _, tc := range []struct{ name, ctype string }{
		{"post_form_confirmed.body", formType},
		{"post_json_confirmed.json", "application/json"},
	} {
		body := fixture(t, tc.name)
		sig := sign(t, a, []byte(body))
		for i, c := range flips([]byte(body)) {
			r := httptest.NewRequest(http.MethodPost, "/callback?order_id=1", bytes.NewReader(c))
			r.Header.Set("Content-Type", tc.ctype)
			r.Header.Set(SignatureHeader, sig)
			_, err := v.Payment(r)
			require.ErrorIs(t, err, ErrBadSignature, "%s flip %d", tc.name, i)
		}
	}
}

func TestVerifierMethodAndBody(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t, WithMaxBodyBytes(1024))

	r := signedPOST(t, a, "/callback", formType, "x")
	r.Method = http.MethodPut
	_, err := v.Payment(r)
	assert.ErrorIs(t, err, ErrMethod)

	big := minimalForm + "&pending=0&pad=" + strings.Repeat("x", 2000)
	_, err = v.Payment(signedPOST(t, a, "/callback", formType, big))
	assert.ErrorIs(t, err, ErrBodyTooLarge)

	// Unknown length (chunked): the limit still holds.
	r = signedPOST(t, a, "/callback", formType, big)
	r.ContentLength = -1
	_, err = v.Payment(r)
	assert.ErrorIs(t, err, ErrBodyTooLarge)

	// The body is put back for later readers.
	body := fixture(t, "post_form_confirmed.body")
	r = signedPOST(t, a, "/callback", formType, body)
	_, err = v.Payment(r)
	require.NoError(t, err)
	again, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	assert.Equal(t, body, string(again))
}

func TestVerifierPOSTCustomIsUnsignedQuery(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	body := fixture(t, "post_form_confirmed.body")
	// The query may say anything: payment fields come from the signed
	// body only.
	r := signedPOST(t, a, "/callback?order_id=9&note=x", formType, body)
	p, err := v.Payment(r)
	require.NoError(t, err)
	assert.Equal(t, "0c6e8a2f-1d4b-4e8a-9b3c-5f7a9d1e2b4c", p.UUID)
	assert.False(t, p.Pending)
	assert.Equal(t, "0.00125", p.ValueCoin.String())
	assert.Equal(t, "9", p.Custom.Get("order_id"))
	assert.Empty(t, p.Raw.Get("order_id"))

	// A callback field in the query of a POST callback is refused rather
	// than handed over as a custom parameter that looks signed.
	for _, q := range []string{"uuid=forged", "pending=1", "value_coin=1000", "Address_In=x"} {
		_, err = v.Payment(signedPOST(t, a, "/callback?order_id=9&"+q, formType, body))
		assert.ErrorIs(t, err, ErrMalformed, q)
	}
}

// secretsIn lists text that must never show in an error, an answer or a
// log line: the signature and pieces of the payloads.
func secretsIn(sigs ...string) []string {
	s := []string{
		"dbfcb40e-5a6b", "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7", "a2174b6ffbd7", "7f3c9a21e0b84d56",
		"0c6e8a2f-1d4b", "bc1q8rheqwtm3d3h576f2rf7vwffk7j4y7yrgw393y", "64210.55",
		"7d2f9c1a-3b5e", "bep20_usdt", "250.05", "qRk2Vn8ZtY4wPc6LsD0hFj",
		"NOT-A-NUMBER", "%zz", "garbage{",
	}
	for _, sig := range sigs {
		s = append(s, sig, sig[:16])
	}
	return s
}

func TestErrorsNeverEchoSignatureOrPayload(t *testing.T) {
	a, b := testKeys(t)
	v := newTestVerifier(t, WithMaxBodyBytes(2048))
	get := fixture(t, "get_confirmed.target")
	form := fixture(t, "post_form_confirmed.body")
	jsonBody := fixture(t, "post_json_confirmed.json")
	badSig := sign(t, b, []byte(form))
	goodSig := sign(t, a, []byte(form))

	withSig := func(r *http.Request, sig string) *http.Request {
		r.Header.Set(SignatureHeader, sig)
		return r
	}
	reqs := map[string]*http.Request{
		"wrong key":       withSig(signedPOST(t, nil, "/cb", formType, form), badSig),
		"not base64":      withSig(signedPOST(t, nil, "/cb", formType, form), "NOT-A-NUMBER"+goodSig[12:]),
		"truncated":       withSig(signedPOST(t, nil, "/cb", formType, form), goodSig[:100]),
		"GET wrong key":   withSig(signedGET(t, nil, get), sign(t, b, []byte(testPublicURL+get))),
		"bad amount":      signedPOST(t, a, "/cb", formType, strings.Replace(form, "value_coin=0.00125", "value_coin=NOT-A-NUMBER", 1)),
		"bad escape":      signedPOST(t, a, "/cb", formType, form+"&x=%zz"),
		"bad query":       signedPOST(t, a, "/cb?x=%zz", formType, form),
		"bad json":        signedPOST(t, a, "/cb", "application/json", jsonBody[:len(jsonBody)-1]+"garbage{"),
		"bad convert":     signedPOST(t, a, "/cb", formType, form+"&value_coin_convert=garbage{NOT-A-NUMBER"),
		"bad pending":     signedPOST(t, a, "/cb", formType, strings.Replace(form, "pending=0", "pending=NOT-A-NUMBER", 1)),
		"too large":       signedPOST(t, a, "/cb", formType, form+"&pad="+strings.Repeat("7f3c9a21e0b84d56", 200)),
		"duplicate field": signedPOST(t, a, "/cb", formType, form+"&uuid=dbfcb40e-5a6b"),
	}
	for name, r := range reqs {
		t.Run(name, func(t *testing.T) {
			_, err := v.Payment(r)
			require.Error(t, err)
			for _, s := range secretsIn(badSig, goodSig) {
				assert.NotContains(t, err.Error(), s)
			}
		})
	}
}
