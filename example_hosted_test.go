package cryptapi_test

import (
	"context"
	"fmt"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

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
