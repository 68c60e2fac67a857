package callback

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// checkPayment holds for every payment the parser returns.
func checkPayment(t *testing.T, src source, p *Payment, err error) {
	t.Helper()
	if err != nil {
		if p != nil {
			t.Fatal("payment and error together")
		}
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("error is not ErrMalformed: %v", err)
		}
		return
	}
	if PaymentKey(p) != p.UUID+":pending" && PaymentKey(p) != p.UUID+":confirmed" || p.UUID == "" {
		t.Fatal("accepted a payment not keyed by its uuid")
	}
	for _, name := range []string{"uuid", "address_in", "address_out", "txid_in", "coin", "price"} {
		if strings.TrimSpace(src.fields.Get(name)) == "" {
			t.Fatalf("accepted a payment without %s", name)
		}
	}
	if !src.get {
		for k := range src.fields {
			if !isFieldName(k) {
				t.Fatalf("accepted a body key %q that is not a field name", k)
			}
		}
		for k := range p.Custom {
			if paymentFields[strings.ToLower(k)] {
				t.Fatalf("accepted a POST callback with field %q in its query", k)
			}
		}
	}
	if len(src.fields["pending"]) != 1 {
		t.Fatal("accepted a payment without exactly one pending field")
	}
	if src.get {
		for k := range p.Custom {
			if paymentFields[k] {
				t.Fatalf("callback field %q in Custom", k)
			}
		}
	}
	for _, d := range []interface{ String() string }{p.Price, p.ValueCoin, p.Value, p.FeeCoin} {
		if len(d.String()) > 200 {
			t.Fatal("amount grew beyond its bounds")
		}
	}
}

func addQuerySeeds(f *testing.F) {
	f.Add(fixtureF(f, "get_pending.target"))
	f.Add(fixtureF(f, "get_confirmed.target"))
	f.Add(fixtureF(f, "checkout_ipn.target"))
	f.Add("uuid=u&address_in=a&pending=1&value_coin=1e5")
	f.Add(minimalForm + "&pending=1&value_coin=1e5")
	f.Add("txid_in=t&value_coin=0.1&address_in=a&pending=true&value_coin_convert=%7B%7D")
	f.Add("uuid=u&uuid=v&pending=0")
	f.Add("a=%zz&b=;")
	f.Add("")
}

// fixtureF returns a fixture; of a request target, only its query.
func fixtureF(f *testing.F, name string) string {
	s := fixture(f, name)
	if strings.HasSuffix(name, ".target") {
		return queryOf(s)
	}
	return s
}

// parseChecked parses m as the handler does, and returns the fields (ok
// false when they are refused) with the payment and error.
func parseChecked(t *testing.T, m *message) (src source, ok bool, p *Payment, err error) {
	t.Helper()
	src, serr := m.source()
	if serr != nil {
		if !errors.Is(serr, ErrMalformed) {
			t.Fatal(serr)
		}
		return src, false, nil, serr
	}
	p, err = parsePayment(src)
	return src, true, p, err
}

func FuzzParseQuery(f *testing.F) {
	addQuerySeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		src, ok, p, err := parseChecked(t, &message{get: true, rawQuery: raw})
		if ok {
			checkPayment(t, src, p, err)
		}
	})
}

func FuzzParseForm(f *testing.F) {
	f.Add(fixtureF(f, "post_form_confirmed.body"), "order_id=1")
	f.Add(fixtureF(f, "deposit_ipn_post.body"), "")
	f.Add("uuid=u&address_in=a&pending=0&fee=99999999999999999999999999", "uuid=x")
	f.Add("pending=1&pending=0", "%")
	f.Add(minimalForm+"&pending=0", "order_id=1&Pending=1")
	f.Add(testPublicURL+"/callback?"+minimalForm+"&pending=0", "")
	f.Fuzz(func(t *testing.T, body, query string) {
		src, ok, p, err := parseChecked(t, &message{body: []byte(body), rawQuery: query, contentType: formType})
		if !ok {
			return
		}
		checkPayment(t, src, p, err)
		if err == nil {
			// Payment fields come from the signed body only, and the
			// unsigned query only from Custom.
			if p.UUID != src.fields.Get("uuid") || p.AddressIn != src.fields.Get("address_in") {
				t.Fatal("payment field not taken from the body")
			}
			q, _ := url.ParseQuery(query)
			if len(q) != len(p.Custom) {
				t.Fatal("custom parameters are not the query")
			}
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	f.Add(fixtureF(f, "post_json_confirmed.json"))
	f.Add(`{"uuid":"u","address_in":"a","pending":true,"value_coin_convert":{"USD":1}}`)
	f.Add(`{"uuid":1,"address_in":["a"],"pending":null}`)
	f.Add(`{"uuid":"u","address_in":"a","pending":"1","value":1e99999}`)
	f.Add(`[]`)
	f.Add(`{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":1,"pending":0,"https://x/?a":1}`)
	f.Add(`{"uuid":"u","\u0075uid":"v"}`)
	f.Fuzz(func(t *testing.T, body string) {
		src, ok, p, err := parseChecked(t, &message{body: []byte(body), contentType: "application/json"})
		if !ok {
			return
		}
		// Whatever the body parser accepts, encoding/json reads as the
		// same object, with no key given twice.
		var std map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &std); err != nil || len(std) != len(src.fields) {
			t.Fatalf("accepted a body encoding/json reads otherwise (%v)", err)
		}
		checkPayment(t, src, p, err)
	})
}

func FuzzParseIPN(f *testing.F) {
	addQuerySeeds(f)
	f.Add(fixtureF(f, "deposit_ipn_post.body"))
	f.Add("txid=,,a,,b,&is_paid=done&status=done&value=1.5")
	f.Fuzz(func(t *testing.T, raw string) {
		for _, m := range []*message{
			{get: true, rawQuery: raw},
			{body: []byte(raw), contentType: formType, rawQuery: "order_id=1"},
			{body: []byte(raw), contentType: "application/json"},
		} {
			src, err := m.source()
			if err != nil {
				continue
			}
			c, err := parseCheckoutIPN(src)
			if err == nil {
				for _, id := range c.TxIDs {
					if id == "" || bytes.ContainsRune([]byte(id), ',') {
						t.Fatalf("bad txid item %q", id)
					}
				}
				_ = c.Paid()
				if m.get {
					for k := range c.Custom {
						if checkoutFields[k] {
							t.Fatalf("IPN field %q in Custom", k)
						}
					}
				}
			} else if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			d, err := parseDepositIPN(src)
			if err == nil {
				_ = d.Paid()
			} else if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
		}
	})
}

func FuzzVerifySignature(f *testing.F) {
	a, _ := testKeys(f)
	seed := []byte(testPublicURL + fixture(f, "get_confirmed.target"))
	seedSig := sign(f, a, seed)
	want, _ := base64.StdEncoding.DecodeString(seedSig)
	f.Add(seed, seedSig)
	f.Add([]byte("x"), "")
	f.Add([]byte(""), "====")
	f.Fuzz(func(t *testing.T, signed []byte, sig string) {
		err := VerifySignature(&a.PublicKey, signed, sig)
		if err == nil {
			got, _ := base64.StdEncoding.DecodeString(sig)
			if !bytes.Equal(signed, seed) || !bytes.Equal(got, want) {
				t.Fatal("accepted a signature that was never made")
			}
			return
		}
		if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrMissingSignature) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzOneShapePerSignedMessage checks that the bytes a signature covers
// are read as one shape of callback at most: the signed URL of a GET
// callback (public URL and target) is never accepted as a POST body,
// under any content type; a POST body is accepted under one of the form
// and JSON content types at most; and a payment read from the same fields
// as a GET query and as a form body has the same key.
func FuzzOneShapePerSignedMessage(f *testing.F) {
	addQuerySeeds(f)
	f.Add(minimalForm + "&pending=0")
	f.Add(fixtureF(f, "post_form_confirmed.body"))
	f.Add(fixtureF(f, "post_json_confirmed.json"))
	f.Add(" " + fixtureF(f, "post_json_confirmed.json"))
	f.Fuzz(func(t *testing.T, raw string) {
		parse := func(m *message) (*Payment, bool) {
			_, _, p, err := parseChecked(t, m)
			return p, err == nil
		}
		signedURL := testPublicURL + "/callback?" + raw
		for _, ct := range []string{formType, "application/json", "", "text/plain", formType + "; charset=utf-8"} {
			if _, ok := parse(&message{body: []byte(signedURL), contentType: ct}); ok {
				t.Fatalf("a signed GET URL was accepted as a POST body (%q)", ct)
			}
		}
		_, asForm := parse(&message{body: []byte(raw), contentType: formType})
		_, asJSON := parse(&message{body: []byte(raw), contentType: "application/json"})
		if asForm && asJSON {
			t.Fatal("a body was accepted as a form and as JSON")
		}
		if asForm {
			get, okGet := parse(&message{get: true, rawQuery: raw})
			post, _ := parse(&message{body: []byte(raw), contentType: formType})
			if okGet && PaymentKey(get) != PaymentKey(post) {
				t.Fatal("one payment, two keys")
			}
		}
	})
}

// FuzzParsePayment: for any query, body and content type, in both
// methods, the parser returns a payment that checkPayment accepts or an
// ErrMalformed, and for POST the unsigned query only as Custom.
func FuzzParsePayment(f *testing.F) {
	for _, s := range []string{
		fixtureF(f, "get_confirmed.target"), fixtureF(f, "get_pending.target"),
		minimalForm + "&pending=0&value_coin_convert=%7B%22USD%22%3A%221e3%22%7D",
		minimalForm + "&pending=0&value_coin_convert=%7B%22USD%22%3A%22x%22%7D",
		minimalForm + "&pending=0&tag=a&tag=b&t%61g=c&coin=eth",
		minimalForm + "&pending=0;x",
	} {
		f.Add(true, s, "", uint8(0))
	}
	f.Add(false, "order_id=77", fixtureF(f, "post_form_confirmed.body"), uint8(1))
	f.Add(false, "order_id=5", fixtureF(f, "post_json_confirmed.json"), uint8(2))
	f.Add(false, "Coin=x", minimalForm+"&pending=1", uint8(0))
	f.Add(false, "", `{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":1,"pending":0,"value_coin_convert":{"USD":"1"}}`, uint8(3))
	types := []string{"", formType, "application/json", "text/plain", "application/problem+json", "multipart/form-data; boundary=x"}
	f.Fuzz(func(t *testing.T, get bool, query, body string, ct uint8) {
		m := &message{get: get, rawQuery: query}
		if !get {
			m.body, m.contentType = []byte(body), types[int(ct)%len(types)]
		}
		src, ok, p, err := parseChecked(t, m)
		if !ok {
			return
		}
		checkPayment(t, src, p, err)
		if err == nil && !get {
			q, qerr := url.ParseQuery(query)
			if qerr != nil || len(q) != len(p.Custom) {
				t.Fatalf("the custom parameters of a POST callback are not its query: %v", p.Custom)
			}
		}
	})
}
