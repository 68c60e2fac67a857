package cryptapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

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

	// An unguessable nonce, stored with the order: the callback URL binds
	// its destination for good, so no one else may be able to guess it.
	nonce := cryptapi.NewNonce()
	req := &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback: "https://shop.example/paid",
			Params:   url.Values{"order_id": {"42"}, "nonce": {nonce}},
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
	fmt.Println("callback", strings.Replace(pr.Address.CallbackURL, nonce, "<nonce>", 1))

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
	// callback https://shop.example/paid?nonce=<nonce>&order_id=42
	// refused: 0.00005 < 0.0001
}

// Someone registered the shop's callback URL first, with their own
// wallet: the service keeps the first destination of a callback URL, so
// the shop's create is refused instead of handing out an address that
// forwards to them.
func ExampleDestinationMismatchError() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	ctx := context.Background()
	guessable := "https://shop.example/paid?order_id=1001"

	// The attacker, first.
	_, _ = client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: guessable, Address: "bc1qqu3cew50zusdwpjlxkqts3n6vue0y83enflln5"})

	// The shop.
	addr, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: guessable, Address: "bc1q76al2kqp4eqlmxwnk6ft806ec8vkcaxdnuwrlz"})
	var dm *cryptapi.DestinationMismatchError
	if errors.As(err, &dm) {
		fmt.Println("address:", addr)
		fmt.Println("asked:", dm.AskedOutputs[0].Address)
		fmt.Println("bound:", dm.BoundAddressOut)
	}

	// A fresh nonce makes a URL no one else has registered.
	addr, err = client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: "https://shop.example/paid",
		Params:   url.Values{"order_id": {"1001"}, "nonce": {cryptapi.NewNonce()}},
		Address:  "bc1q76al2kqp4eqlmxwnk6ft806ec8vkcaxdnuwrlz",
	})
	fmt.Println(err, addr.AddressOut)
	// Output:
	// address: <nil>
	// asked: bc1q76al2kqp4eqlmxwnk6ft806ec8vkcaxdnuwrlz
	// bound: bc1qqu3cew50zusdwpjlxkqts3n6vue0y83enflln5
	// <nil> bc1q76al2kqp4eqlmxwnk6ft806ec8vkcaxdnuwrlz
}

// NewNonce gives 128 random bits for a callback URL.
func ExampleNewNonce() {
	nonce := cryptapi.NewNonce()
	cb, _ := cryptapi.CallbackURL("https://shop.example/paid", url.Values{"order_id": {"42"}, "nonce": {nonce}})
	fmt.Println(len(nonce), strings.Replace(cb, nonce, "<nonce>", 1))
	// Output:
	// 32 https://shop.example/paid?nonce=<nonce>&order_id=42
}
