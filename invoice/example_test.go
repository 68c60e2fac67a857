package invoice_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// A shop takes an order: an invoice, its callbacks, a customer who pays
// part, then the rest. Against the in-process fake of the service; in
// production, cryptapi.New() and callback.NewVerifier with the
// published key (the default) and your public URL.
func Example() {
	ctx := context.Background()
	srv := cryptapitest.NewServer() // the service
	defer srv.Close()
	client, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	if err != nil {
		log.Fatal(err)
	}

	// The Desk keeps invoices in a store and tells the shop of every
	// change, once: update the order here.
	desk, err := invoice.New(client, invoice.NewMemoryStore(),
		invoice.WithOnChange(func(_ context.Context, inv *invoice.Invoice) error {
			fmt.Printf("order %s: %s %q paid %s pending %s due %s\n", inv.OrderID, inv.Status, inv.Exception, inv.Paid, inv.PaidPending, inv.Due)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}

	// The shop's server receives the callbacks at /callback. The verifier
	// checks each one's signature against the URL the service called,
	// rebuilt from the shop's public URL (never from the Host header).
	shop := httptest.NewUnstartedServer(nil)
	publicURL := "http://" + shop.Listener.Addr().String()
	verifier, err := callback.NewVerifier(
		callback.WithPublicKey(srv.PublicKey()), // the fake's key; by default, the service's published one
		callback.WithPublicURL(publicURL),
	)
	if err != nil {
		log.Fatal(err)
	}
	callbacks, err := desk.Handler(verifier)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/callback", callbacks)
	shop.Config.Handler = mux
	shop.Start()
	defer shop.Close()

	inv, err := desk.Create(ctx, &invoice.CreateOptions{
		OrderID:     "1001",
		Description: "2 × Coffee mug",
		Ticker:      "btc",
		Price:       decimal.RequireFromString("25"),
		Currency:    "USD",
		Callback:    publicURL + "/callback",
		Address:     "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", // your wallet
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pay", inv.Due, "btc at", inv.Rate, inv.Currency, "- at least", inv.Minimum)

	// The customer pays part, then the rest (the fake's blockchain).
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

// Nobody watches an invoice: Tick, which Run calls on every replica,
// renews its quote when it lapses and expires it at its deadline, and
// onChange hears it. Get only reads; AsOf shows what the clock makes of
// an invoice before Tick stores it.
func ExampleDesk_Tick() {
	ctx := context.Background()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(), invoice.WithClock(clock),
		invoice.WithOnChange(func(_ context.Context, inv *invoice.Invoice) error {
			last := inv.Events[len(inv.Events)-1]
			fmt.Printf("order %s: %s, due %s (%s: %s)\n", inv.OrderID, inv.Status, inv.Due, last.Kind, last.Note)
			return nil
		}))
	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1002", Ticker: "btc", Price: decimal.RequireFromString("25"), Currency: "USD",
		Callback: "https://shop.example/callback", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		QuoteTTL: 15 * time.Minute, ExpiresIn: 30 * time.Minute,
	})

	_ = srv.SetPrice("btc", "USD", decimal.RequireFromString("50000"))
	clock.Advance(15 * time.Minute)
	_, _ = desk.Tick(ctx) // the quote lapsed: 25 USD at the new price

	clock.Advance(15 * time.Minute)
	inv, _ = desk.Get(ctx, inv.ID)
	fmt.Println("stored:", inv.Status, "- as of now:", inv.AsOf(clock.Now()).Status)
	changed, _ := desk.Tick(ctx)
	fmt.Println("changed:", changed)
	// Output:
	// order 1002: new, due 0.0005 (requoted: rate 60000 → 50000 USD per btc)
	// stored: new - as of now: expired
	// order 1002: expired, due 0 (expired: not paid in full by the deadline)
	// changed: 1
}

// Callbacks that never arrived (the shop was down and the service gave
// up) are recovered from the service's logs, through the same path and
// the same onChange as the handler.
func ExampleDesk_Reconcile() {
	ctx := context.Background()
	srv := cryptapitest.NewServer(cryptapitest.WithRetrySchedule(nil)) // one delivery, no retries
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(),
		invoice.WithOnChange(func(_ context.Context, inv *invoice.Invoice) error {
			fmt.Printf("order %s: %s paid %s\n", inv.OrderID, inv.Status, inv.Paid)
			return nil
		}))
	down := httptest.NewServer(http.NotFoundHandler()) // the shop, down
	down.Close()
	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1003", Ticker: "btc", Price: decimal.RequireFromString("0.001"),
		Callback: down.URL + "/callback", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})
	tx, _ := srv.Pay("btc", inv.AddressIn, decimal.RequireFromString("0.001"))
	_ = srv.Confirm(tx, 1)
	_ = srv.Flush(ctx)

	inv, err := desk.Reconcile(ctx, inv.ID)
	fmt.Println(inv.Status, inv.Paid, err)
	// Output:
	// order 1003: settled paid 0.001
	// settled 0.001 <nil>
}

// What the rules cannot decide, the merchant does: accept an underpayment
// (an exchange kept its fee), give a customer more time, find the
// invoices of an order, and hand the books to an accountant.
func ExampleDesk_MarkSettled() {
	ctx := context.Background()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule(nil))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(), invoice.WithClock(clock),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	create := func(order string) *invoice.Invoice {
		inv, err := desk.Create(ctx, &invoice.CreateOptions{
			OrderID: order, Ticker: "btc", Price: decimal.RequireFromString("25"), Currency: "USD",
			Callback: "http://127.0.0.1:1/callback", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		})
		if err != nil {
			log.Fatal(err)
		}
		return inv
	}
	pay := func(inv *invoice.Invoice, amount string) {
		tx, _ := srv.Pay("btc", inv.AddressIn, decimal.RequireFromString(amount))
		_ = srv.Confirm(tx, 1)
		_ = srv.Flush(ctx)
		_, _ = desk.Reconcile(ctx, inv.ID) // here from the logs; normally from the callbacks
	}

	short := create("2001")
	pay(short, "0.0004") // 24 of 25 USD
	inv, _ := desk.MarkSettled(ctx, short.ID, "the exchange kept 1 USD; accepted")
	fmt.Println("2001:", inv.Status, inv.Exception)

	slow := create("2002")
	clock.Advance(time.Hour)
	_, _ = desk.Tick(ctx)
	inv, _ = desk.Reopen(ctx, slow.ID, &invoice.ReopenOptions{ExpiresIn: 30 * time.Minute, Reason: "the customer asked"})
	fmt.Println("2002:", inv.Status, "due", inv.Due, "to the same address:", inv.AddressIn == slow.AddressIn)

	invs, _ := desk.ByOrderID(ctx, "2001")
	fmt.Println("invoices of order 2001:", len(invs))
	for inv, err := range desk.List(ctx, &invoice.ListOptions{Status: []invoice.Status{invoice.StatusNew}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("open:", inv.OrderID)
	}
	var books bytes.Buffer
	_ = desk.ExportCSV(ctx, &books, &invoice.ListOptions{OrderID: "2001"})
	rows, _ := csv.NewReader(&books).ReadAll()
	for _, r := range rows { // some of the columns
		fmt.Println(r[1], r[3], r[4], r[5], r[6], r[7], r[11], r[12], r[17])
	}
	// Output:
	// 2001: settled marked
	// 2002: new due 0.00041667 to the same address: true
	// invoices of order 2001: 1
	// open: 2002
	// order_id status exception price currency ticker amount fiat_value confirmed
	// 2001 settled marked 25 USD btc 0.0004 24 true
}

// The customer's payment page, mounted under /pay: the invoice's ID opens
// it, its status and its QR codes; the order ID opens nothing. The page
// speaks the customer's language; an unchanged status costs a 304.
func ExampleDesk_Page() {
	ctx := context.Background()
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	desk, _ := invoice.New(client, invoice.NewMemoryStore(),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	inv, _ := desk.Create(ctx, &invoice.CreateOptions{
		OrderID: "1004", Description: "Coffee beans, 2 × 250 g", Ticker: "btc",
		Price: decimal.RequireFromString("25"), Currency: "USD",
		Callback: "https://shop.example/callback", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
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
