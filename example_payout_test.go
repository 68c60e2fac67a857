package cryptapi_test

import (
	"context"
	"fmt"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
)

// Destinations of the payout examples.
const (
	supplierBTC = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
	partnerBTC  = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
)

// payoutFake is an API-key fake on a fake clock, and a client for it.
func payoutFake() (*cryptapitest.Server, *cryptapitest.FakeClock, *cryptapi.Client) {
	clock := cryptapitest.NewFakeClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("k"), cryptapitest.WithClock(clock))
	client, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("k"))
	if err != nil {
		panic(err)
	}
	return srv, clock, client
}

// CreatePayouts records payout requests; they are paid by a payout made
// of them (CreatePayoutFromRequests) once it is processed (ProcessPayout).
func ExampleClient_CreatePayouts() {
	srv, _, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()

	reqs, err := client.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{
		supplierBTC: decimal.RequireFromString("0.01"),
		partnerBTC:  decimal.RequireFromString("0.02"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(reqs.RequestIDs), "requests")

	p, err := client.CreatePayoutFromRequests(ctx, reqs.RequestIDs)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Status, p.TotalRequested, p.TotalWithFee)
	// Output:
	// 2 requests
	// created 0.03 0.0303
}

// SendPayouts requests and sends at once, from the payout wallet; a
// payout the balance does not cover ends in error.
func ExampleClient_SendPayouts() {
	srv, clock, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()
	_ = srv.FundPayoutWallet("btc", decimal.RequireFromString("0.05"))

	err := client.SendPayouts(ctx, "btc", map[string]decimal.Decimal{supplierBTC: decimal.RequireFromString("0.04")})
	fmt.Println(err)
	err = client.SendPayouts(ctx, "btc", map[string]decimal.Decimal{partnerBTC: decimal.RequireFromString("0.04")})
	fmt.Println(err)

	clock.Advance(cryptapitest.PayoutSettleTime)
	for p, err := range client.ListPayouts(ctx, "btc", nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(p.ID, p.Status, p.TotalWithFee)
	}
	// Output:
	// <nil>
	// <nil>
	// 2 error 0.0404
	// 1 done 0.0404
}

// PayoutStatus follows a payout from created to done, with its
// transaction.
func ExampleClient_PayoutStatus() {
	srv, clock, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()
	_ = srv.FundPayoutWallet("btc", decimal.RequireFromString("1"))

	reqs, _ := client.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{supplierBTC: decimal.RequireFromString("0.1")})
	p, _ := client.CreatePayoutFromRequests(ctx, reqs.RequestIDs)
	if err := client.ProcessPayout(ctx, p.ID); err != nil {
		panic(err)
	}
	st, _ := client.PayoutStatus(ctx, p.ID)
	fmt.Println(st.Status, st.TxID == "")
	clock.Advance(cryptapitest.PayoutSettleTime)
	st, _ = client.PayoutStatus(ctx, p.ID)
	fmt.Println(st.Status, len(st.TxID))
	// Output:
	// processing true
	// done 64
}

// ListPayoutRequests goes through the requests, reading a page of 50 when
// the loop reaches it.
func ExampleClient_ListPayoutRequests() {
	srv, _, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()
	_, _ = client.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{supplierBTC: decimal.RequireFromString("0.01")})

	for r, err := range client.ListPayoutRequests(ctx, "btc", &cryptapi.ListPayoutsOptions{Status: "pending"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Address, r.Status, r.Value)
	}
	// Output:
	// bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh pending 0.01
}

// PayoutWallet gives the address to fund; PayoutBalance what it holds.
func ExampleClient_PayoutWallet() {
	srv, _, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()

	w, err := client.PayoutWallet(ctx, "btc")
	if err != nil {
		panic(err)
	}
	_, _ = srv.Pay("btc", w.Address, decimal.RequireFromString("0.25")) // a deposit to the wallet
	bal, err := client.PayoutBalance(ctx, "btc")
	if err != nil {
		panic(err)
	}
	fmt.Println(srv.ValidAddress("btc", w.Address), bal)
	// Output:
	// true 0.25
}

// CheckoutLogs shows a checkout payment's state: partly paid here, with
// what is still due in each coin.
func ExampleClient_CheckoutLogs() {
	srv, _, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()

	co, err := client.CreateCheckout(ctx, &cryptapi.CheckoutOptions{
		RedirectURL: "https://shop.example/thanks?order=5", Value: decimal.RequireFromString("120"), Currency: "usd",
		ExpiresIn: 2 * time.Hour,
	})
	if err != nil {
		panic(err)
	}
	_ = srv.PayCheckout(co.PaymentID, "btc", decimal.RequireFromString("0.001"))

	logs, err := client.CheckoutLogs(ctx, co.PaymentID)
	if err != nil {
		panic(err)
	}
	fmt.Println("paid:", logs.IsPaid, "partial:", logs.IsPartial, "expired:", logs.IsExpired)
	for _, d := range logs.PaymentData {
		if d.Coin == "btc" {
			fmt.Println(d.Coin, d.Value, d.ValuePaid, d.ValueOutstanding, len(d.TxIDs))
		}
	}
	// Output:
	// paid: false partial: true expired: false
	// btc 0.002 0.001 0.001 1
}

// DepositLogs lists the deposits to a deposit page and their total.
func ExampleClient_DepositLogs() {
	srv, _, client := payoutFake()
	defer srv.Close()
	ctx := context.Background()

	dep, err := client.CreateDeposit(ctx, &cryptapi.DepositOptions{NotifyURL: "https://shop.example/deposit?user=5"})
	if err != nil {
		panic(err)
	}
	_ = srv.PayDeposit(dep.PaymentID, "trc20_usdt", decimal.RequireFromString("25"))
	_ = srv.PayDeposit(dep.PaymentID, "trc20_usdt", decimal.RequireFromString("5"))

	logs, err := client.DepositLogs(ctx, dep.PaymentID)
	if err != nil {
		panic(err)
	}
	for _, d := range logs.Deposits {
		fmt.Println(d.Coin, d.Amount, d.Value)
	}
	fmt.Println("total:", logs.TotalDeposited, logs.Currency)
	// Output:
	// trc20_usdt 25 25
	// trc20_usdt 5 5
	// total: 30 USD
}
