package callback

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/shopspring/decimal"
)

// BenchmarkVerifyParse verifies and parses one GET callback, as
// Verifier.Payment does for every request.
func BenchmarkVerifyParse(b *testing.B) {
	a, _ := testKeys(b)
	v := newTestVerifier(b)
	r := signedGET(b, a, fixture(b, "get_confirmed.target"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Payment(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareRSAVerify is the floor under BenchmarkVerifyParse: the
// cryptographic work every verification has to do, and nothing else. Each
// iteration decodes the base64 signature header, hashes the same signed
// bytes with SHA-256 and calls rsa.VerifyPKCS1v15, as Verifier.Payment
// must.
func BenchmarkBareRSAVerify(b *testing.B) {
	a, _ := testKeys(b)
	signed := []byte(testPublicURL + fixture(b, "get_confirmed.target"))
	sigB64 := sign(b, a, signed)
	b.ReportAllocs()
	for b.Loop() {
		sig, err := base64.StdEncoding.DecodeString(sigB64)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(signed)
		if err := rsa.VerifyPKCS1v15(&a.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
			b.Fatal(err)
		}
	}
}

const benchPool = 2048

var (
	benchOnce sync.Once
	benchReqs []*http.Request
)

// benchRequests returns benchPool signed GET callbacks with distinct
// uuids, signed once per test binary.
func benchRequests(b *testing.B) []*http.Request {
	a, _ := testKeys(b)
	benchOnce.Do(func() {
		base := fixture(b, "get_confirmed.target")
		for i := 0; i < benchPool; i++ {
			target := strings.Replace(base, "uuid=dbfcb40e", fmt.Sprintf("uuid=%08x", i), 1)
			benchReqs = append(benchReqs, signedGET(b, a, target))
		}
	})
	return benchReqs
}

// BenchmarkHandler runs the whole handler (verify, parse, claim, fn,
// complete, answer) with a MemoryStore, a new payment each iteration.
func BenchmarkHandler(b *testing.B) {
	reqs := benchRequests(b)
	v := newTestVerifier(b)
	fn := func(context.Context, *Payment) error { return nil }
	h := newTestHandler(b, v, fn)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%benchPool == 0 {
			b.StopTimer()
			h = newTestHandler(b, v, fn) // a fresh store, so every uuid is new
			b.StartTimer()
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, reqs[i%benchPool])
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// plainOK is the floor the handler's benchmarks compare with: the least a
// callback handler that trusts its input does, reading the callback's
// fields (the query of a GET callback, the form body of a POST one) and
// answering *ok*, without verifying or remembering anything.
func plainOK(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, OK)
}

// BenchmarkPlainOKHandler is the floor under BenchmarkHandler: plainOK,
// which reads the callback's fields and answers *ok*.
func BenchmarkPlainOKHandler(b *testing.B) {
	reqs := benchRequests(b)
	h := http.HandlerFunc(plainOK)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := reqs[i%benchPool]
		r.Form, r.PostForm = nil, nil // parsed again, as a new request would be
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkVerifyParseVsBareRSA runs BenchmarkBareRSAVerify's work (the
// baseline) and BenchmarkVerifyParse's in alternating chunks in one
// process, so that the ratio holds on a noisy machine; see BENCHMARKS.md.
// A third contender also reads the custom parameters (Payment.Custom), as
// most merchants' functions do; a fourth verifies and parses the same
// callback without its two amount maps (an address created without
// convert=1). Two more show the floor of any verify+parse built on the
// standard library's parsers: "query" is the bare verify and
// url.ParseQuery of the query, nothing else; "stdlib" adds what the
// callback's fields need at least, json.Unmarshal of the two amount maps
// into map[string]any and decimal.NewFromString of its eleven amounts.
func BenchmarkVerifyParseVsBareRSA(b *testing.B) {
	a, _ := testKeys(b)
	v := newTestVerifier(b)
	target := fixture(b, "get_confirmed.target")
	r := signedGET(b, a, target)
	var kept []string
	path, query, _ := strings.Cut(target, "?")
	for _, p := range strings.Split(query, "&") {
		if !strings.HasPrefix(p, "value_coin_convert=") && !strings.HasPrefix(p, "value_forwarded_coin_convert=") {
			kept = append(kept, p)
		}
	}
	plain := signedGET(b, a, path+"?"+strings.Join(kept, "&"))
	signed := []byte(testPublicURL + target)
	sigB64 := sign(b, a, signed)
	bareRSA := func() {
		sig, err := base64.StdEncoding.DecodeString(sigB64)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(signed)
		if err := rsa.VerifyPKCS1v15(&a.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
			b.Fatal(err)
		}
	}
	benchcmp.Run(b, 200,
		benchcmp.Contender{Name: "rsa", Op: func(n int) {
			for range n {
				bareRSA()
			}
		}},
		benchcmp.Contender{Name: "verifyparse", Op: func(n int) {
			for range n {
				if _, err := v.Payment(r); err != nil {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "custom", Op: func(n int) {
			for range n {
				p, err := v.Payment(r)
				if err != nil {
					b.Fatal(err)
				}
				if p.Custom.Get("order_id") == "" {
					b.Fatal("no order_id")
				}
			}
		}},
		benchcmp.Contender{Name: "noconvert", Op: func(n int) {
			for range n {
				p, err := v.Payment(plain)
				if err != nil || p.ValueCoinConvert != nil {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "query", Op: func(n int) {
			for range n {
				bareRSA()
				if q, err := url.ParseQuery(query); err != nil || len(q) == 0 {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "stdlib", Op: func(n int) {
			for range n {
				bareRSA()
				q, err := url.ParseQuery(query)
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range []string{"value_coin_convert", "value_forwarded_coin_convert"} {
					var m any
					if err := json.Unmarshal([]byte(q.Get(f)), &m); err != nil {
						b.Fatal(err)
					}
				}
				for _, f := range []string{"price", "value_coin", "value_forwarded_coin", "fee_coin", "value", "value_forwarded", "fee"} {
					if _, err := decimal.NewFromString(q.Get(f)); err != nil {
						b.Fatal(err)
					}
				}
				for _, s := range []string{"3.20", "2.94", "3.17", "2.91"} {
					if _, err := decimal.NewFromString(s); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
	)
}

// BenchmarkProcess is the handler's work after verify+parse: Process with
// a MemoryStore, with a fn that does nothing, for a new payment ("new":
// claim, fn, complete) and for a duplicate ("dup": one claim that finds
// the key done).
func BenchmarkProcess(b *testing.B) {
	const pool = 4096
	ps := make([]*Payment, pool)
	for i := range ps {
		ps[i] = &Payment{UUID: fmt.Sprintf("%08x", i), AddressIn: "a"}
	}
	fn := func(context.Context, *Payment) error { return nil }
	// Under a request's context, as the handler runs it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("new", func(b *testing.B) {
		pr := newProcessor(NewMemoryStore(), 0, realClock{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%pool == 0 && i > 0 {
				b.StopTimer()
				pr = newProcessor(NewMemoryStore(), 0, realClock{})
				b.StartTimer()
			}
			if o, err := pr.process(ctx, fn, ps[i%pool]); o != Processed || err != nil {
				b.Fatal(o, err)
			}
		}
	})
	b.Run("dup", func(b *testing.B) {
		pr := newProcessor(NewMemoryStore(), 0, realClock{})
		for _, p := range ps {
			if o, err := pr.process(ctx, fn, p); o != Processed || err != nil {
				b.Fatal(o, err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if o, err := pr.process(ctx, fn, ps[i%pool]); o != AlreadyDone || err != nil {
				b.Fatal(o, err)
			}
		}
	})
}
