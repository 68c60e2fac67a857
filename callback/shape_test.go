package callback

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uuidFirstTarget is a GET callback to a callback URL without custom
// parameters: the service's fields start the query, uuid first.
const uuidFirstTarget = "/callback?uuid=5b1f0e2a-8c3d-4e7f-9a1b-2c3d4e5f6a7b&address_in=TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7" +
	"&address_out=TFzwG8xXcYvxcqwd3DKj1HaVk6c6okZ9na&txid_in=a2174b6ffbd7d8bb4b2b1a4cd0a0a1bdb4a15a7b12b6a1c5ad6f0c4d1e2f3a4b" +
	"&txid_out=5e0c1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6&confirmations=1&value_coin=3.2" +
	"&value_forwarded_coin=3.168&fee_coin=0.032&coin=trc20_usdt&price=1.0003&pending=0"

// TestGETSignatureIsNotAcceptedForAPOSTBody replays a captured GET
// callback (its full URL and its signature) as the body of a POST, with
// every content type: the signature verifies (it signs those bytes), but
// the body is not a callback body, so it is refused before fn and the
// payment is not processed a second time.
func TestGETSignatureIsNotAcceptedForAPOSTBody(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn)
	get := signedGET(t, a, uuidFirstTarget)
	sig := get.Header.Get(SignatureHeader)
	assertOK(t, serve(h, get))
	require.Len(t, s.payments(), 1)

	signedURL := testPublicURL + uuidFirstTarget
	for _, ctype := range []string{formType, "", "text/plain", "application/json", formType + "; charset=utf-8"} {
		for _, target := range []string{"/callback", uuidFirstTarget} {
			r := signedPOST(t, nil, target, ctype, signedURL)
			r.Header.Set(SignatureHeader, sig)
			w := serve(h, r)
			assertNotOK(t, w, http.StatusBadRequest)
		}
	}
	assert.Len(t, s.payments(), 1, "fn ran once")
}

// TestSignatureIsAcceptedOnlyForItsShape replays signed callbacks in other
// shapes than the one they were signed for; each is refused and fn runs
// once per payment.
func TestSignatureIsAcceptedOnlyForItsShape(t *testing.T) {
	a, _ := testKeys(t)
	form := fixture(t, "post_form_confirmed.body")
	jsonBody := fixture(t, "post_json_confirmed.json")
	target := fixture(t, "get_confirmed.target")
	formSig := sign(t, a, []byte(form))
	jsonSig := sign(t, a, []byte(jsonBody))
	getSig := sign(t, a, []byte(testPublicURL+target))
	path, query, _ := strings.Cut(target, "?")
	params := strings.Split(query, "&")
	reordered := append([]string{params[len(params)-1]}, params[:len(params)-1]...)

	post := func(target, ctype, body, sig string) func() *http.Request {
		return func() *http.Request {
			r := signedPOST(t, nil, target, ctype, body)
			r.Header.Set(SignatureHeader, sig)
			return r
		}
	}
	getWith := func(target, sig string) func() *http.Request {
		return func() *http.Request {
			r := signedGET(t, nil, target)
			r.Header.Set(SignatureHeader, sig)
			return r
		}
	}
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"JSON body as a form", post("/callback", formType, jsonBody, jsonSig), http.StatusBadRequest},
		{"form body as JSON", post("/callback", "application/json", form, formSig), http.StatusBadRequest},
		{"form body as JSON+suffix", post("/callback", "application/vnd.x+json", form, formSig), http.StatusBadRequest},
		{"form body as a GET query", getWith("/callback?"+form, formSig), http.StatusForbidden},
		{"JSON body as a GET target", getWith("/callback?"+url.QueryEscape(jsonBody), jsonSig), http.StatusForbidden},
		{"GET with an extra parameter", getWith(target+"&order_id=1", getSig), http.StatusForbidden},
		{"GET with a duplicated parameter", getWith(target+"&"+params[0], getSig), http.StatusForbidden},
		{"GET with a duplicated field", getWith(target+"&pending=0", getSig), http.StatusForbidden},
		{"GET with its parameters reordered", getWith(path+"?"+strings.Join(reordered, "&"), getSig), http.StatusForbidden},
		{"GET to another path", getWith("/admin/callback?"+query, getSig), http.StatusForbidden},
		{"GET with a trailing slash", getWith(path+"/?"+query, getSig), http.StatusForbidden},
		{"GET with a double slash", getWith("/"+target, getSig), http.StatusForbidden},
		{"GET with an escaped path", getWith("/%63allback?"+query, getSig), http.StatusForbidden},
		{"GET URL as a POST body", post("/callback", formType, testPublicURL+target, getSig), http.StatusBadRequest},
		{"GET query as a POST body", post("/callback", formType, query, getSig), http.StatusForbidden},
		{"form body with a field in the query", post("/callback?pending=1", formType, form, formSig), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sink
			w := serve(newTestHandler(t, newTestVerifier(t), s.fn), tt.req())
			assertNotOK(t, w, tt.status)
			assert.Empty(t, s.payments())
		})
	}
}

// TestOnePaymentHasOneKeyHoweverItArrives delivers one payment as GET, as
// a POST form and as a POST JSON body, and replays it as Reconcile would
// from the logs: fn runs once. A delivery of the same payment without its
// uuid (which would have been keyed by txid_in) is refused, not processed
// again.
func TestOnePaymentHasOneKeyHoweverItArrives(t *testing.T) {
	a, _ := testKeys(t)
	store := NewMemoryStore()
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn, WithStore(store))

	q, err := url.ParseQuery(queryOf(uuidFirstTarget))
	require.NoError(t, err)
	uuid := q.Get("uuid")
	form := q.Encode()
	obj := map[string]string{}
	for k := range q {
		obj[k] = q.Get(k)
	}
	jsonBody, err := json.Marshal(obj)
	require.NoError(t, err)

	assertOK(t, serve(h, signedGET(t, a, uuidFirstTarget)))
	assertOK(t, serve(h, signedPOST(t, a, "/callback", formType, form)))
	assertOK(t, serve(h, signedPOST(t, a, "/callback", "application/json", string(jsonBody))))
	assertOK(t, serve(h, signedPOST(t, a, "/callback", "", string(jsonBody))))
	o, err := Process(context.Background(), store, 0, s.fn, &Payment{UUID: uuid, AddressIn: q.Get("address_in"), TxIDIn: q.Get("txid_in")})
	require.NoError(t, err)
	assert.Equal(t, AlreadyDone, o)

	// The same payment without its uuid.
	q.Del("uuid")
	assertNotOK(t, serve(h, signedPOST(t, a, "/callback", formType, q.Encode())), http.StatusBadRequest)
	assertNotOK(t, serve(h, signedGET(t, a, "/callback?"+q.Encode())), http.StatusBadRequest)
	_, err = Process(context.Background(), store, 0, s.fn, &Payment{AddressIn: q.Get("address_in"), TxIDIn: q.Get("txid_in")})
	assert.ErrorIs(t, err, ErrNoPaymentKey)

	got := s.payments()
	require.Len(t, got, 1, "fn ran once")
	assert.Equal(t, uuid+":confirmed", PaymentKey(got[0]))
}

// TestJSONBodyWithAKeyGivenTwiceIsRefused: a JSON body that names a field
// twice (in any spelling) is refused, as a form body is, rather than read
// as whichever value a parser keeps.
func TestJSONBodyWithAKeyGivenTwiceIsRefused(t *testing.T) {
	base := `"address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":0`
	for _, body := range []string{
		`{"uuid":"u",` + base + `,"uuid":"v"}`,
		`{"uuid":"u",` + base + `,"\u0075uid":"v"}`,
		`{"uuid":"u",` + base + `,"pending":1}`,
		`{"uuid":"u",` + base + `} {}`,
		`{"uuid":"u",` + base + `}]`,
	} {
		_, err := ParseUnverified(postReq("/cb", "application/json", body))
		assert.ErrorIs(t, err, ErrMalformed, body)
	}
	p, err := ParseUnverified(postReq("/cb", "application/json", " {\"uuid\":\"u\","+base+"}\n"))
	require.NoError(t, err)
	assert.Equal(t, "u", p.UUID)
}
