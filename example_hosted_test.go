package cryptapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
)

// ipnReceiver stands in for the shop's notify URL: it acknowledges every
// notification.
func ipnReceiver() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, callback.OK)
	}))
}

// A deposit page takes any number of payments of any amount; each one is
// notified to NotifyURL.
func ExampleClient_CreateDeposit() {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))

	d, err := client.CreateDeposit(context.Background(), &cryptapi.DepositOptions{
		NotifyURL:       "https://shop.example/deposit?customer=7",
		ItemDescription: "Account top-up",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Status, d.PaymentURL != "", d.PaymentID != "")
	// Output:
	// success true true
}

// CheckoutLogs tells whether a hosted checkout was paid, and lists the
// notifications sent for it.
func ExampleClient_CheckoutLogs() {
	shop := ipnReceiver()
	defer shop.Close()
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))
	ctx := context.Background()

	co, err := client.CreateCheckout(ctx, &cryptapi.CheckoutOptions{
		RedirectURL: "https://shop.example/thanks?order=42",
		NotifyURL:   shop.URL + "/ipn?order=42",
		Value:       decimal.RequireFromString("20"),
		ExpireAt:    time.Now().Add(2 * time.Hour),
	})
	if err != nil {
		panic(err)
	}
	before, err := client.CheckoutLogs(ctx, co.PaymentID)
	if err != nil {
		panic(err)
	}
	// The customer pays the order value in BTC on the hosted page.
	if err := srv.PayCheckout(co.PaymentID, "btc", decimal.Zero); err != nil {
		panic(err)
	}
	_ = srv.Flush(ctx)
	after, err := client.CheckoutLogs(ctx, co.PaymentID)
	if err != nil {
		panic(err)
	}
	fmt.Println("before:", before.Paid())
	fmt.Println("after:", after.Paid(), after.PaidCoin, len(after.Notifications))
	// Output:
	// before: false
	// after: true btc 1
}

// DepositLogs lists what was deposited on a deposit page.
func ExampleClient_DepositLogs() {
	shop := ipnReceiver()
	defer shop.Close()
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))
	ctx := context.Background()

	d, err := client.CreateDeposit(ctx, &cryptapi.DepositOptions{NotifyURL: shop.URL + "/deposit?customer=7"})
	if err != nil {
		panic(err)
	}
	if err := srv.PayDeposit(d.PaymentID, "btc", decimal.RequireFromString("0.002")); err != nil {
		panic(err)
	}
	_ = srv.Flush(ctx)
	logs, err := client.DepositLogs(ctx, d.PaymentID)
	if err != nil {
		panic(err)
	}
	fmt.Println(logs.PaidAmount, logs.PaidCoin, len(logs.Notifications))
	// Output:
	// 0.002 btc 1
}

// PublicKey fetches the key callbacks are signed with. The callback
// package pins the published key; the fake signs with a key of its own.
func ExampleClient_PublicKey() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	pub, err := client.PublicKey(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(pub.N.BitLen(), pub.Equal(srv.PublicKey()))
	fmt.Println(callback.Fingerprint(pub) == callback.PublishedKeyFingerprint)
	// Output:
	// 1024 true
	// false
}

// Several payouts in one request; like every payout, it is sent once and
// never retried.
func ExampleClient_CreatePayouts() {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))

	p, err := client.CreatePayouts(context.Background(), "btc", map[string]decimal.Decimal{
		merchantBTC: decimal.RequireFromString("0.05"),
		"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh": decimal.RequireFromString("0.01"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Status, len(srv.Payouts()))
	// Output:
	// success 2
}
