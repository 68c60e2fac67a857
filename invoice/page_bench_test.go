package invoice_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// BenchmarkPageStatus measures what an open payment page costs the
// merchant's server per poll, handler only (no network), on the memory
// store, for a partly paid invoice in German: "changed" is a status
// answered in full (something shown changed, or the page's first poll),
// "unchanged" a 304 Not Modified to the page's own tag (nothing changed:
// almost every poll). Each request reads the invoice once.
// BenchmarkPageRender measures the page itself against the full status:
// the script fetches the page once after each change.
func BenchmarkPageStatus(b *testing.B) { benchPage(b, false) }

func BenchmarkPageRender(b *testing.B) { benchPage(b, true) }

func benchPage(b *testing.B, render bool) {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	desk, callbackURL, stop := benchShop(srv, clock)
	defer stop()
	ctx := context.Background()
	inv, err := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1001", Description: "Ethiopia Yirgacheffe, 2 × 250 g", Ticker: "trc20_usdt",
		Price: decimal.RequireFromString("25"), Currency: "USD", Callback: callbackURL, Address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.Pay("trc20_usdt", inv.AddressIn, decimal.RequireFromString("10")); err != nil {
		b.Fatal(err)
	}
	if err := srv.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	h := desk.Page(invoice.WithMerchantName("Northwind Coffee Roasters"))
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	status := httptest.NewRequest(http.MethodGet, "/"+inv.ID+"/status?lang=de", nil)
	first := serve(status)
	if first.Code != http.StatusOK || first.Header().Get("ETag") == "" {
		b.Fatalf("status: %d", first.Code)
	}
	tagged := httptest.NewRequest(http.MethodGet, "/"+inv.ID+"/status?lang=de", nil)
	tagged.Header.Set("If-None-Match", first.Header().Get("ETag"))
	if w := serve(tagged); w.Code != http.StatusNotModified {
		b.Fatalf("tagged status: %d", w.Code)
	}
	page := httptest.NewRequest(http.MethodGet, "/"+inv.ID+"?lang=de", nil)
	if w := serve(page); w.Code != http.StatusOK {
		b.Fatalf("page: %d", w.Code)
	}
	run := func(r *http.Request) func(int) {
		return func(n int) {
			for range n {
				serve(r)
			}
		}
	}
	b.ReportAllocs()
	second := benchcmp.Contender{Name: "unchanged", Op: run(tagged)}
	if render {
		second = benchcmp.Contender{Name: "page", Op: run(page)}
	}
	benchcmp.Run(b, 200, benchcmp.Contender{Name: "changed", Op: run(status)}, second)
}

// benchShop is a merchant's server on the fake service that takes every
// change quietly.
func benchShop(srv *cryptapitest.Server, clock invoice.Clock) (*invoice.Desk, string, func()) {
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(), invoice.WithClock(clock),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	ts := httptest.NewUnstartedServer(nil)
	v, _ := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL("http://"+ts.Listener.Addr().String()))
	ts.Config.Handler, _ = desk.Handler(v)
	ts.Start()
	return desk, ts.URL + "/callback", ts.Close
}
