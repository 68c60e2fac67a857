package callback

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/stretchr/testify/require"
)

// craftedQuery builds a signed GET callback's query from random parts:
// the service's fields in any order, the merchant's parameters before,
// between and after them (repeated, escaped, empty, with '+', "%20",
// "%26", non-UTF-8 escapes), empty parameters, and an amount map that may
// be escaped, padded, null, nested or malformed.
func craftedQuery(rng *rand.Rand, id int) string {
	service := []string{
		"uuid=u-" + fmt.Sprint(id), "address_in=a%31", "address_out=o", "txid_in=t",
		"coin=btc", "price=1.5", "pending=" + []string{"0", "1"}[rng.IntN(2)],
	}
	optional := []string{
		"confirmations=3", "value_coin=0.1", "fee_percent=1", "result=sent", "txid_out=x",
		"value_coin_convert=" + []string{
			"", "null", "%20null%20", "%7B%7D", "%7B%22USD%22%3A%221.5%22%7D",
			"+%7B+%22USD%22+%3A+%221.5%22+%7D+", "%7B%22USD%22%3A%7B%22x%22%3A1%7D%7D",
			"%7B%22USD%22%3A%22x%22%7D", "%7B%22USD%22%3A1.5%7D", "%5B%5D",
			"%7B%22" + strings.Repeat("A", 250) + "%22%3A%221%22%7D",
			"%7B%22" + strings.Repeat("%41", 84) + "%22%3A%221%22%7D",
			"%7B%22USD%22%3A%22" + strings.Repeat("1", 240) + "%22%7D",
		}[rng.IntN(13)],
	}
	keys := []string{"order_id", "tag", "t%61g", "Uuid", "a+b", "a%20b", "x%26y", "%E9", "", "n%3Dm", "value_Coin", "caf%C3%A9"}
	vals := []string{"", "1", "a+b", "a%20b", "%26", "%3D", "%E9", "%FF%FE", "caf%C3%A9", "1=2", "%2B", strings.Repeat("v", 300)}
	merchant := func() string {
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(4) {
		case 0:
			return k // no '='
		default:
			return k + "=" + vals[rng.IntN(len(vals))]
		}
	}
	var parts []string
	parts = append(parts, service...)
	for _, o := range optional {
		if rng.IntN(2) == 0 {
			parts = append(parts, o)
		}
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	// Merchant's parameters: mostly leading, sometimes anywhere.
	for range rng.IntN(6) {
		at := 0
		if rng.IntN(3) == 0 {
			at = rng.IntN(len(parts) + 1)
		}
		parts = append(parts[:at], append([]string{merchant()}, parts[at:]...)...)
	}
	// Empty parameters.
	for range rng.IntN(3) {
		at := rng.IntN(len(parts) + 1)
		parts = append(parts[:at], append([]string{""}, parts[at:]...)...)
	}
	return strings.Join(parts, "&")
}

// wantCallback is what a callback with query q must give, read with the
// standard library alone: ok is false when it must be refused; custom is
// every parameter that is not a callback field, raw every parameter.
func wantCallback(q string) (custom, raw url.Values, ok bool) {
	raw, err := url.ParseQuery(q)
	if err != nil {
		return nil, nil, false
	}
	for _, k := range []string{"value_coin_convert", "value_forwarded_coin_convert"} {
		if vs := raw[k]; len(vs) == 1 {
			s := strings.TrimSpace(vs[0])
			if s != "" && s != "null" {
				if _, err := wire.ParseAmountMapText(s); err != nil {
					return nil, nil, false
				}
			}
		}
	}
	custom = url.Values{}
	for k, vs := range raw {
		if !paymentFields[k] {
			custom[k] = vs
		}
	}
	return custom, raw, true
}

// TestCraftedSignedQueriesGiveCustomAndRawAsTheStandardLibrary sends
// signed GET callbacks with crafted queries through the real handler: one
// refused gets 400 before fn, one accepted has Custom exactly its
// merchant's parameters and Raw exactly its parameters, as url.ParseQuery
// reads them.
func TestCraftedSignedQueriesGiveCustomAndRawAsTheStandardLibrary(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	var (
		mu      sync.Mutex
		gotCust url.Values
		gotRaw  url.Values
		calls   int
	)
	h := newTestHandler(t, v, func(_ context.Context, p *Payment) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		gotCust, gotRaw = p.Custom, p.Raw
		return nil
	})
	accepted := 0
	for i := range n {
		q := craftedQuery(rng, i)
		if i%500 == 0 {
			// Close to the parameter limits.
			q = strings.Repeat("k=1&", 9990-len(strings.Split(q, "&"))) + q
		}
		custom, raw, ok := wantCallback(q)
		mu.Lock()
		calls, gotCust, gotRaw = 0, nil, nil
		mu.Unlock()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, signedGET(t, a, "/cb?"+q))
		mu.Lock()
		c, r, k := gotCust, gotRaw, calls
		mu.Unlock()
		if !ok {
			require.Equal(t, http.StatusBadRequest, w.Code, "query %q", q)
			require.Zero(t, k, "fn ran for a refused callback %q", q)
			continue
		}
		require.Equal(t, http.StatusOK, w.Code, "query %q: %s", q, w.Body)
		require.Equal(t, 1, k)
		accepted++
		if !reflect.DeepEqual(custom, c) {
			t.Fatalf("query %q:\nCustom %q\nwant   %q", q, c, custom)
		}
		if !reflect.DeepEqual(raw, r) {
			t.Fatalf("query %q:\nRaw  %q\nwant %q", q, r, raw)
		}
	}
	t.Logf("%d signed queries, %d accepted", n, accepted)
	require.NotZero(t, accepted)
	require.Less(t, accepted, n)
}

// TestCraftedSignedPOSTCallbacksGiveTheQueryAsCustom sends signed POST
// callbacks, form and JSON, under crafted queries through the real
// handler: Custom is exactly the query as url.ParseQuery reads it, a
// callback field's name in the query (in any case) is refused with 400
// before fn, and Raw is the body's fields.
func TestCraftedSignedPOSTCallbacksGiveTheQueryAsCustom(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	rng := rand.New(rand.NewPCG(5, 6))
	n := 1500
	if testing.Short() {
		n = 150
	}
	var (
		mu      sync.Mutex
		gotCust url.Values
		gotRaw  url.Values
		calls   int
	)
	h := newTestHandler(t, v, func(_ context.Context, p *Payment) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		gotCust, gotRaw = p.Custom, p.Raw
		return nil
	})
	keys := []string{"order_id", "tag", "t%61g", "UUID", "Price", "a+b", "x%26y", "%E9", "", "n%3Dm", "value_Coin", "coin", "fee_percent"}
	vals := []string{"", "1", "a+b", "a%20b", "%26", "%3D", "%E9", "%FF", "caf%C3%A9", "1=2"}
	accepted := 0
	for i := range n {
		var parts []string
		for range rng.IntN(6) {
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(4) == 0 {
				parts = append(parts, k)
			} else {
				parts = append(parts, k+"="+vals[rng.IntN(len(vals))])
			}
		}
		q := strings.Join(parts, "&")
		want, err := url.ParseQuery(q)
		ok := err == nil
		for k := range want {
			if strings.Contains(strings.ToLower(","+strings.Join(fieldNames(), ",")+","), ","+strings.ToLower(k)+",") {
				ok = false
			}
		}
		uuid := fmt.Sprint("p-", i)
		var body, ct string
		var wantRaw url.Values
		if rng.IntN(2) == 0 {
			body = "uuid=" + uuid + "&address_in=a&address_out=o&txid_in=t&coin=btc&price=1&pending=0&extra=%E2%82%AC"
			ct = formType
			wantRaw, _ = url.ParseQuery(body)
		} else {
			conv := []string{`null`, `{}`, `{"USD":"1.5"}`, `{ "USD" : 1.5 }`, `"{\"USD\":\"2\"}"`}[rng.IntN(5)]
			body = `{"uuid":"` + uuid + `","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":1,"pending":0,"value_coin_convert":` + conv + `}`
			ct = "application/json"
			var jerr error
			wantRaw, jerr = parseJSONFields([]byte(body))
			require.NoError(t, jerr)
		}
		target := "/cb"
		if q != "" || rng.IntN(2) == 0 {
			target += "?" + q
		}
		mu.Lock()
		calls, gotCust, gotRaw = 0, nil, nil
		mu.Unlock()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, signedPOST(t, a, target, ct, body))
		mu.Lock()
		c, r, k := gotCust, gotRaw, calls
		mu.Unlock()
		if !ok {
			require.Equal(t, http.StatusBadRequest, w.Code, "query %q", q)
			require.Zero(t, k)
			continue
		}
		require.Equal(t, http.StatusOK, w.Code, "query %q body %s: %s", q, body, w.Body)
		require.Equal(t, 1, k)
		accepted++
		if !reflect.DeepEqual(want, c) {
			t.Fatalf("query %q:\nCustom %q\nwant   %q", q, c, want)
		}
		if !reflect.DeepEqual(wantRaw, r) {
			t.Fatalf("body %s:\nRaw  %q\nwant %q", body, r, wantRaw)
		}
	}
	t.Logf("%d signed POST callbacks, %d accepted", n, accepted)
	require.NotZero(t, accepted)
	require.Less(t, accepted, n)
}

// fieldNames are the callback field names, listed here independently of
// the package's own list.
func fieldNames() []string {
	return []string{"uuid", "address_in", "address_out", "txid_in", "txid_out", "confirmations", "value", "value_coin",
		"value_forwarded", "value_forwarded_coin", "fee", "fee_coin", "fee_percent", "coin", "price", "pending",
		"value_coin_convert", "value_forwarded_coin_convert", "result"}
}

// TestSignedQueryAtTheParameterLimit: a signed GET callback with exactly
// url.ParseQuery's default limit of parameters (empty ones counted, as it
// counts them) is processed with every merchant parameter in Custom; one
// more is refused with 400 before fn.
func TestSignedQueryAtTheParameterLimit(t *testing.T) {
	const maxQueryParams = 10000 // url.ParseQuery's default (GODEBUG urlmaxqueryparams)
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	var custom url.Values
	calls := 0
	h := newTestHandler(t, v, func(_ context.Context, p *Payment) error {
		calls++
		custom = p.Custom
		return nil
	})
	fieldsQ := minimalForm + "&pending=0" // 7 parameters
	for _, tc := range []struct {
		name   string
		query  string
		status int
		ks     int
	}{
		{"limit, fields last", strings.Repeat("k=1&", maxQueryParams-7) + strings.Replace(fieldsQ, "uuid=u", "uuid=l1", 1), http.StatusOK, maxQueryParams - 7},
		{"limit, fields first", strings.Replace(fieldsQ, "uuid=u", "uuid=l2", 1) + strings.Repeat("&k=1", maxQueryParams-7), http.StatusOK, maxQueryParams - 7},
		{"limit, empty ones", strings.Repeat("k=1&&", (maxQueryParams-7)/2) + strings.Replace(fieldsQ, "uuid=u", "uuid=l3", 1) + "&", http.StatusOK, (maxQueryParams - 7) / 2},
		{"one more", strings.Repeat("k=1&", maxQueryParams-6) + strings.Replace(fieldsQ, "uuid=u", "uuid=l4", 1), http.StatusBadRequest, 0},
		{"one more empty", strings.Replace(fieldsQ, "uuid=u", "uuid=l5", 1) + strings.Repeat("&k=1", maxQueryParams-7) + "&", http.StatusBadRequest, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, custom = 0, nil
			w := httptest.NewRecorder()
			h.ServeHTTP(w, signedGET(t, a, "/cb?"+tc.query))
			require.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.status != http.StatusOK {
				require.Zero(t, calls)
				return
			}
			require.Equal(t, 1, calls)
			require.Len(t, custom, 1)
			require.Len(t, custom["k"], tc.ks)
		})
	}
}

// TestAmountMapsAroundTheStackBuffer reads amount maps whose unescaped
// text is around 256 bytes long (the size of a stack buffer an earlier
// parser used), written plain, escaped, padded
// with spaces and '+', valid or cut short: each is accepted with the map
// wire.ParseAmountMapText reads, or refused, as the text says, wherever
// the buffer's end falls.
func TestAmountMapsAroundTheStackBuffer(t *testing.T) {
	const amountMapText = 256
	tried := 0
	for n := amountMapText - 24; n <= amountMapText+8; n++ {
		for _, form := range []string{"plain", "escaped", "padded", "cut"} {
			// {"C00":"1.5",...,"USD":"1.55..."} with its length n.
			var b strings.Builder
			b.WriteString("{")
			for i := 0; b.Len()+len(`"C00":"1.5",`)+len(`"USD":"1.55555"}`) <= n; i++ {
				fmt.Fprintf(&b, `"C%02d":"1.5",`, i)
			}
			b.WriteString(`"USD":"1.`)
			b.WriteString(strings.Repeat("5", n-b.Len()-len(`"}`)))
			b.WriteString(`"}`)
			text := b.String()
			require.Len(t, text, n)
			var val string
			switch form {
			case "plain":
				val = url.QueryEscape(text)
			case "escaped":
				val = strings.ReplaceAll(url.QueryEscape(text), "5", "%35")
			case "padded":
				val = "+%20" + url.QueryEscape(text) + "%0A+"
			case "cut":
				val = url.QueryEscape(text[:len(text)-1])
			}
			q := minimalForm + "&pending=0&value_coin_convert=" + val
			p, err := ParseUnverified(getReq("/cb?" + q))
			want, werr := wire.ParseAmountMapText(text)
			if form == "cut" {
				require.ErrorIs(t, err, ErrMalformed, "length %d", n)
				tried++
				continue
			}
			require.NoError(t, werr)
			require.NoError(t, err, "length %d %s", n, form)
			got := p.ValueCoinConvert
			require.Equal(t, want, got, "length %d %s", n, form)
			require.Greater(t, len(got), 10)
			tried++
		}
	}
	t.Logf("%d amount maps", tried)
}
