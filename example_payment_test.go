package cryptapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// A payment request in a fiat currency: converted at the service's rate,
// checked against the coin's minimum before any address is created.
func ExampleClient_RequestPayment() {
	srv := cryptapitest.NewServer() // the in-process fake service
	defer srv.Close()
	client, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	req := &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback: "https://shop.example/paid",
			Params:   url.Values{"order_id": {"42"}},
			Address:  "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",
		},
		Amount:   decimal.RequireFromString("30"),
		Currency: "USD",
	}
	pr, err := client.RequestPayment(ctx, "btc", req)
	if err != nil {
		panic(err)
	}
	fmt.Println("pay", pr.AmountCoin, pr.Ticker, "- minimum", pr.Minimum)
	fmt.Println("callback", pr.Address.CallbackURL)

	// Three dollars is below the minimum: the customer's coins would be
	// lost, so no address is created.
	req.Amount = decimal.RequireFromString("3")
	_, err = client.RequestPayment(ctx, "btc", req)
	var below *cryptapi.BelowMinimumError
	if errors.As(err, &below) {
		fmt.Println("refused:", below.Amount, "<", below.Minimum)
	}
	// Output:
	// pay 0.0005 btc - minimum 0.0001
	// callback https://shop.example/paid?order_id=42
	// refused: 0.00005 < 0.0001
}
