package cryptapitest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
)

// A payment end to end: the shop creates an address, the customer pays,
// the chain confirms, the shop is called back and the logs say "done".
func Example() {
	ctx := context.Background()
	srv := cryptapitest.NewServer()
	defer srv.Close()

	// The shop's callback endpoint answers *ok* once it has the payment.
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		fmt.Printf("callback: order=%s pending=%s value_coin=%s\n", q.Get("order"), q.Get("pending"), q.Get("value_coin"))
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()

	client, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	if err != nil {
		panic(err)
	}
	addr, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid?order=42",
		Address:  "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		Pending:  true,
	})
	if err != nil {
		panic(err)
	}

	txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
	_ = srv.Flush(ctx)
	_ = srv.Confirm(txid, 1)
	_ = srv.Flush(ctx)

	logs, err := client.Logs(ctx, "btc", addr.CallbackURL)
	if err != nil {
		panic(err)
	}
	p := logs.Callbacks[0]
	fmt.Println("result:", p.Result, "forwarded:", p.ValueForwardedCoin, "fee:", p.FeeCoin)
	// Output:
	// callback: order=42 pending=1 value_coin=0.01
	// callback: order=42 pending=0 value_coin=0.01
	// result: done forwarded: 0.0099 fee: 0.0001
}

// Retries run on a fake clock: advance it, then Flush.
func ExampleFakeClock() {
	ctx := context.Background()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := cryptapitest.NewServer(
		cryptapitest.WithClock(clock),
		cryptapitest.WithRetrySchedule([]time.Duration{time.Minute}),
	)
	defer srv.Close()

	calls := 0
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			http.Error(w, "database down", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()

	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	addr, _ := client.CreateAddress(ctx, "trc20_usdt", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid", Address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
	})
	txid, _ := srv.Pay("trc20_usdt", addr.AddressIn, decimal.RequireFromString("25"))
	_ = srv.Confirm(txid, 1)
	_ = srv.Flush(ctx)
	logs, _ := client.Logs(ctx, "trc20_usdt", addr.CallbackURL)
	fmt.Println(logs.Callbacks[0].Result, logs.Callbacks[0].Logs[0].NextTry.Format(time.Kitchen))

	clock.Advance(time.Minute)
	_ = srv.Flush(ctx)
	logs, _ = client.Logs(ctx, "trc20_usdt", addr.CallbackURL)
	fmt.Println(logs.Callbacks[0].Result, len(srv.Deliveries()))
	// Output:
	// sent 12:01AM
	// done 2
}

// Watch callbacks as they go out, for example to log them. The hook has
// returned for every delivery Flush waited for.
func ExampleWithDeliveryHook() {
	ctx := context.Background()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()
	srv := cryptapitest.NewServer(cryptapitest.WithDeliveryHook(func(d cryptapitest.Delivery) {
		fmt.Println(d.Kind, d.Method, "pending:", d.Pending, "acknowledged:", d.OK)
	}))
	defer srv.Close()

	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	addr, _ := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", Pending: true,
	})
	txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
	_ = srv.Confirm(txid, 1)
	_ = srv.Flush(ctx)
	fmt.Println("flushed")
	// Output:
	// callback GET pending: true acknowledged: true
	// callback GET pending: false acknowledged: true
	// flushed
}

// WithHistoryLimit keeps a long-running fake's memory bounded: only the
// most recent records of each kind are kept.
func ExampleWithHistoryLimit() {
	ctx := context.Background()
	srv := cryptapitest.NewServer(cryptapitest.WithHistoryLimit(2))
	defer srv.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	addr, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	})
	if err != nil {
		panic(err)
	}
	var first string
	for i := 0; i < 5; i++ {
		txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
		_ = srv.Confirm(txid, 1)
		if i == 0 {
			first = txid
		}
	}
	_ = srv.Flush(ctx)
	fmt.Println(len(srv.Payments()), len(srv.Deliveries()))
	fmt.Println(srv.Confirm(first, 2) != nil)
	// Output:
	// 2 2
	// true
}
