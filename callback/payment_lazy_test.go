package callback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The amount maps, Custom and Raw are built on demand, but every field is
// checked when the callback is parsed: a signed callback with a malformed
// amount map is refused with 400 before the merchant's function runs, in
// every shape, whichever parser would find the fault.
func TestMalformedAmountMapRefusedBeforeTheHandlerRuns(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	confirmed := minimalForm + "&pending=0&value_coin=3.2"
	twice := url.QueryEscape(`{"USD":"3.20"}`)
	for _, tt := range []struct {
		name, field string
		text        string // the field's text; "" for a field given twice
	}{
		{"not JSON", "value_coin_convert", `USD:3.20`},
		{"not an amount", "value_coin_convert", `{"USD":"x"}`},
		{"exponent out of range", "value_forwarded_coin_convert", `{"USD":"1e999999"}`},
		{"an array of amounts", "value_forwarded_coin_convert", `["3.20"]`},
		{"unterminated", "value_coin_convert", `{"USD":"3.20"`},
		{"trailing data", "value_coin_convert", `{"USD":"3.20"} x`},
		{"nested", "value_coin_convert", `{"USD":{"v":"3.20"}}`},
		{"given twice", "value_coin_convert", ""},
	} {
		form := confirmed + "&" + tt.field + "=" + url.QueryEscape(tt.text)
		if tt.text == "" {
			form = confirmed + "&" + tt.field + "=" + twice + "&" + tt.field + "=" + twice
		}
		reqs := map[string]func() *http.Request{
			"GET":       func() *http.Request { return signedGET(t, a, "/callback?order_id=1&"+form) },
			"POST form": func() *http.Request { return signedPOST(t, a, "/callback?order_id=1", formType, form) },
		}
		if tt.text != "" {
			jsonBody := `{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":0,` +
				`"value_coin":"3.2","` + tt.field + `":` + jsonString(tt.text) + `}`
			reqs["POST JSON"] = func() *http.Request { return signedPOST(t, a, "/callback", "application/json", jsonBody) }
		}
		for shape, req := range reqs {
			t.Run(tt.name+" "+shape, func(t *testing.T) {
				var calls int
				h := newTestHandler(t, v, func(context.Context, *Payment) error {
					calls++
					return nil
				})
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req())
				assert.Equal(t, http.StatusBadRequest, w.Code)
				assert.Zero(t, calls, "the merchant's function ran for a malformed callback")

				_, err := v.Payment(req())
				require.ErrorIs(t, err, ErrMalformed)
				assert.Contains(t, err.Error(), "field "+tt.field+":")
			})
		}
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Raw, Custom and the amount maps are new maps at each call: changing one
// changes neither the Payment nor what later calls return, and calls from
// several goroutines at once are safe (run with -race).
func TestLazyPartsAreFreshAndSafeForConcurrentUse(t *testing.T) {
	p, err := ParseUnverified(getReq(fixture(t, "get_confirmed.target")))
	require.NoError(t, err)
	c := p.Custom()
	c.Set("order_id", "changed")
	c.Add("nonce", "more")
	raw := p.Raw()
	raw.Set("uuid", "changed")
	m := p.ValueCoinConvert()
	delete(m, "USD")
	assert.Equal(t, url.Values{"order_id": {"1042"}, "nonce": {"7f3c9a21e0b84d56"}}, p.Custom())
	assert.Equal(t, "dbfcb40e-5a6b-4305-9fa2-b0fbda6e3ff2", p.Raw().Get("uuid"))
	assertDec(t, "3.20", p.ValueCoinConvert()["USD"])

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				c := p.Custom()
				c.Set("order_id", "x")
				r := p.Raw()
				r.Del("uuid")
				m := p.ValueForwardedCoinConvert()
				m["USD"] = dec("0")
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, "1042", p.Custom().Get("order_id"))
	assertDec(t, "3.17", p.ValueForwardedCoinConvert()["USD"])
}

// A Payment that was not parsed from a callback has no custom parameters,
// no raw fields and no amount maps; Custom is still a map one can use.
func TestLazyPartsOfAPaymentBuiltByHand(t *testing.T) {
	p := &Payment{UUID: "u"}
	assert.NotNil(t, p.Custom())
	assert.Empty(t, p.Custom())
	assert.Nil(t, p.Raw())
	assert.Nil(t, p.ValueCoinConvert())
	assert.Nil(t, p.ValueForwardedCoinConvert())
}

// Parsing builds none of the maps: a GET callback costs one allocation for
// the Payment and the decimals' own; a POST form one more for its text.
func TestParseAllocations(t *testing.T) {
	m := &message{get: true, rawQuery: queryOf(fixture(t, "get_confirmed.target"))}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := parsePayment(m); err != nil {
			t.Fatal(err)
		}
	})
	// 1 Payment + 7 decimals of 2 allocations each (a big.Int and its
	// word).
	assert.LessOrEqual(t, allocs, 15.0)
}

// The plain parser and parsePayment agree on the fixtures and on the cases
// that take parsePayment's less common paths.
func TestParseSameAsPlain(t *testing.T) {
	long := strings.Repeat("x=1&", maxQueryParams) + minimalForm + "&pending=0"
	for _, m := range []*message{
		{get: true, rawQuery: queryOf(fixture(t, "get_confirmed.target"))},
		{get: true, rawQuery: queryOf(fixture(t, "get_pending.target"))},
		{body: []byte(fixture(t, "post_form_confirmed.body")), rawQuery: "order_id=77", contentType: formType},
		{body: []byte(fixture(t, "post_json_confirmed.json")), rawQuery: "order_id=5", contentType: "application/json"},
		{get: true, rawQuery: "order_id=1&" + minimalForm + "&pending=1&tag=x&tag=y&tag=z&%74ag=w&a+b=c+d"},
		{get: true, rawQuery: minimalForm + "&pending=0&u%75id=v"},
		{get: true, rawQuery: minimalForm + "&pending=0"},
		{get: true, rawQuery: "&&order_id=1&&nonce=%32&" + minimalForm + "&pending=0&fee_percent=1"},
		{get: true, rawQuery: "result=x&order_id=1&" + minimalForm + "&pending=0"},
		{get: true, rawQuery: minimalForm + "&pending=0&order_id=1"},
		{get: true, rawQuery: minimalForm + "&pending=0&value_coin_convert=" + url.QueryEscape(` {"USD": "1e3", "EUR": 2.5} `)},
		{get: true, rawQuery: minimalForm + "&pending=0&value_coin_convert=" + url.QueryEscape(`{"USD":"`+strings.Repeat("1", 600)+`"}`)},
		{get: true, rawQuery: minimalForm + "&pending=0&value_coin_convert=+null+&value_forwarded_coin_convert=%5B%5D"},
		{get: true, rawQuery: minimalForm + "&pending=0;x=1"},
		{get: true, rawQuery: minimalForm + "&pending=0&x=%4"},
		{get: true, rawQuery: long},
		{body: []byte(minimalForm + "&pending=0"), rawQuery: "Pending=1", contentType: formType},
		{body: []byte(minimalForm + "&pending=0&a-b=1"), contentType: formType},
		{body: []byte(minimalForm + "&pending=0"), contentType: "application/json"},
	} {
		checkSameAsPlain(t, m)
	}
}
