package callback_test

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// Recovering a payment whose confirmed callback never arrived: the shop
// was unreachable, the service gave up, and Reconcile replays the payment
// from the logs through the same store and function as the handler.
func ExampleReconcile() {
	srv := cryptapitest.NewServer(cryptapitest.WithRetrySchedule(nil)) // no retries
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	ctx := context.Background()

	// A callback URL where nothing listens: every delivery fails.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String() + "/paid"
	ln.Close()

	addr, _ := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: down,
		Params:   url.Values{"order_id": {"42"}},
		Address:  "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",
	})
	txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.002"))
	_ = srv.Confirm(txid, 1)
	_ = srv.Flush(ctx)

	// The store the callback handler uses (a shared one, such as
	// callback/pgstore, when several servers receive callbacks).
	store := callback.NewMemoryStore()
	// The addresses this shop created, as its order records hold them.
	mine := map[string]bool{addr.AddressIn: true}
	known := func(_ context.Context, addressIn string) (bool, error) { return mine[addressIn], nil }
	paid := func(_ context.Context, p *callback.Payment) error {
		fmt.Println("order", p.Custom.Get("order_id"), "paid", p.ValueCoin, p.Coin)
		return nil
	}
	report, err := callback.Reconcile(ctx, client, "btc", addr.CallbackURL, paid, callback.WithStore(store), callback.WithAddressCheck(known))
	if err != nil {
		panic(err)
	}
	fmt.Println(report)

	// Running it again finds nothing new.
	report, _ = callback.Reconcile(ctx, client, "btc", addr.CallbackURL, paid, callback.WithStore(store), callback.WithAddressCheck(known))
	fmt.Println(report)
	// Output:
	// order 42 paid 0.002 btc
	// seen 1: processed 1, already done 0, acknowledged 0, superseded 0, busy 0, not ready 0, failed 0
	// seen 1: processed 0, already done 1, acknowledged 0, superseded 0, busy 0, not ready 0, failed 0
}
