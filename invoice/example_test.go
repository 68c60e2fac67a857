package invoice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// shop is a merchant's server on the fake service: a Desk whose handler
// receives the callbacks, printing every change.
func shop(srv *cryptapitest.Server, clock invoice.Clock) (*invoice.Desk, string, func()) {
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(), invoice.WithClock(clock))
	ts := httptest.NewUnstartedServer(nil)
	v, _ := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL("http://"+ts.Listener.Addr().String()))
	ts.Config.Handler = desk.Handler(v, func(_ context.Context, inv *invoice.Invoice) error {
		fmt.Printf("order %s: %s %q paid %s pending %s due %s\n", inv.OrderID, inv.Status, inv.Exception, inv.Paid, inv.PaidPending, inv.Due)
		return nil
	})
	ts.Start()
	return desk, ts.URL + "/callback", ts.Close
}

// A customer pays part of an invoice, then the remainder.
func Example() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	desk, callbackURL, stop := shop(srv, cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)))
	defer stop()
	ctx := context.Background()

	inv, err := desk.Create(ctx, &invoice.CreateOptions{
		OrderID:  "1001",
		Ticker:   "btc",
		Price:    decimal.RequireFromString("25"),
		Currency: "USD",
		Callback: callbackURL,
		Address:  "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("pay", inv.Due, "btc at", inv.Rate, inv.Currency, "- at least", inv.Minimum)

	tx, _ := srv.Pay("btc", inv.AddressIn, decimal.RequireFromString("0.0002"))
	_ = srv.Flush(ctx)
	_ = srv.Confirm(tx, 1)
	_ = srv.Flush(ctx)

	inv, _ = desk.Get(ctx, inv.ID)
	tx, _ = srv.Pay("btc", inv.AddressIn, inv.Due)
	_ = srv.Flush(ctx)
	_ = srv.Confirm(tx, 1)
	_ = srv.Flush(ctx)
	// Output:
	// pay 0.00041667 btc at 60000 USD - at least 0.0001
	// order 1001: new "paid_partial" paid 0 pending 0.0002 due 0.00021667
	// order 1001: new "paid_partial" paid 0.0002 pending 0 due 0.00021667
	// order 1001: processing "" paid 0.0002 pending 0.00021667 due 0
	// order 1001: settled "" paid 0.00041667 pending 0 due 0
}

// When the quote lapses with nothing in flight, Get converts the unpaid
// fiat remainder at the coin's new price; what was paid keeps its rate.
func ExampleDesk_Get() {
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	defer srv.Close()
	desk, callbackURL, stop := shop(srv, clock)
	defer stop()
	ctx := context.Background()

	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1002", Ticker: "btc", Price: decimal.RequireFromString("25"), Currency: "USD",
		Callback: callbackURL, Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		QuoteTTL: 15 * time.Minute,
	})
	tx, _ := srv.Pay("btc", inv.AddressIn, decimal.RequireFromString("0.0002")) // 12 USD
	_ = srv.Confirm(tx, 1)
	_ = srv.Flush(ctx)

	_ = srv.SetPrice("btc", "USD", decimal.RequireFromString("50000"))
	clock.Advance(15 * time.Minute)
	inv, _ = desk.Get(ctx, inv.ID)
	fmt.Println("remaining", inv.Remaining, inv.Currency, "at", inv.Rate, "=", inv.Due, "btc:", inv.PaymentURI != "")
	fmt.Println("first payment", inv.Payments[0].FiatValue, "USD at", inv.Payments[0].Rate)
	// Output:
	// order 1002: new "paid_partial" paid 0 pending 0.0002 due 0.00021667
	// order 1002: new "paid_partial" paid 0.0002 pending 0 due 0.00021667
	// order 1002: new "paid_partial" paid 0.0002 pending 0 due 0.00026
	// remaining 13 USD at 50000 = 0.00026 btc: true
	// first payment 12 USD at 60000
}

// Callbacks that never arrived (the shop was down and the service gave
// up) are recovered from the service's logs, through the same path and
// the same onChange as the handler.
func ExampleDesk_Reconcile() {
	srv := cryptapitest.NewServer(cryptapitest.WithRetrySchedule(nil)) // no retries
	defer srv.Close()
	desk, callbackURL, stop := shop(srv, cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1003", Ticker: "btc", Price: decimal.RequireFromString("0.001"),
		Callback: callbackURL, Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})
	stop() // the shop goes down

	tx, _ := srv.Pay("btc", inv.AddressIn, decimal.RequireFromString("0.001"))
	_ = srv.Confirm(tx, 1)
	_ = srv.Flush(ctx)

	inv, err := desk.Reconcile(ctx, inv.ID)
	fmt.Println(inv.Status, inv.Paid, err)
	// Output:
	// order 1003: settled "" paid 0.001 pending 0 due 0
	// settled 0.001 <nil>
}

// The customer's payment page, mounted under /pay: the invoice's ID opens
// it, its status and its QR codes; the order ID opens nothing. The page
// speaks the customer's language; an unchanged status costs a 304.
func ExampleDesk_Page() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	desk, callbackURL, stop := shop(srv, clock)
	defer stop()
	ctx := context.Background()
	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1004", Description: "Coffee beans, 2 × 250 g", Ticker: "btc",
		Price: decimal.RequireFromString("25"), Currency: "USD",
		Callback: callbackURL, Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})

	mux := http.NewServeMux()
	mux.Handle("/pay/", http.StripPrefix("/pay", desk.Page(
		invoice.WithMerchantName("Northwind Coffee"),
		invoice.WithReturnURL(func(inv *invoice.Invoice) string { return "/orders/" + inv.OrderID }),
	)))
	pages := httptest.NewServer(mux)
	defer pages.Close()

	resp, _ := http.Get(pages.URL + "/pay/" + inv.ID)
	resp.Body.Close()
	fmt.Println("page:", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Referrer-Policy"))

	req, _ := http.NewRequest(http.MethodGet, pages.URL+"/pay/"+inv.ID+"/status", nil)
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
	resp, _ = http.DefaultClient.Do(req)
	var v invoice.PageView
	_ = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	fmt.Println("status:", v.Lang, v.Phase, v.Title, "-", v.Total, "-", v.Headline, "-", v.DueText, v.Symbol, v.DueFiat, "- copy", v.Due)

	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	fmt.Println("again:", resp.StatusCode)

	resp, _ = http.Get(pages.URL + "/pay/1004")
	resp.Body.Close()
	fmt.Println("order ID:", resp.StatusCode)
	// Output:
	// page: 200 text/html; charset=utf-8 no-referrer
	// status: de pay Zahlung an Northwind Coffee - 25,00 $ - Warten auf Ihre Zahlung - 0,00041667 BTC ≈ 25,00 $ - copy 0.00041667
	// again: 304
	// order ID: 404
}
