package cryptapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
)

// The merchant's own payout address in the examples.
const merchantBTC = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"

// New without options is a keyless client; WithAPIKey makes it an API-key
// client. The key never shows in formatted output.
func ExampleNew() {
	keyless, err := cryptapi.New()
	if err != nil {
		panic(err)
	}
	fmt.Println(keyless.BaseURL(), keyless.HasAPIKey())

	keyed, err := cryptapi.New(cryptapi.WithAPIKey("my-secret-key"))
	if err != nil {
		panic(err)
	}
	fmt.Println(keyed.BaseURL(), keyed.HasAPIKey())
	fmt.Println(keyed)

	_, err = cryptapi.New(cryptapi.WithAPIKey(""))
	fmt.Println(errors.Is(err, cryptapi.ErrEmptyAPIKey))
	// Output:
	// https://api.cryptapi.io false
	// https://api.blockbee.io true
	// cryptapi.Client{BaseURL: "https://api.blockbee.io", APIKey: REDACTED}
	// true
}

// Read the minimum before asking for a payment: the service ignores
// payments below it.
func ExampleClient_Info() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	info, err := client.Info(context.Background(), "trc20/usdt", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Ticker, "minimum:", info.MinimumTransactionCoin, "fee:", info.FeePercent.String()+"%")
	fmt.Println("USD price:", info.Prices["USD"])
	// Output:
	// trc20_usdt minimum: 5 fee: 1%
	// USD price: 1
}

// Create a payment address with an order id and a nonce riding in the
// callback URL; they come back on every callback.
func ExampleClient_CreateAddress() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	addr, err := client.CreateAddress(context.Background(), "btc", &cryptapi.CreateOptions{
		Callback: "https://shop.example/paid?order=42",
		Params:   url.Values{"nonce": {"k3Q9z"}},
		Address:  merchantBTC,
		Pending:  true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(addr.CallbackURL)
	fmt.Println(addr.AddressOut == merchantBTC, addr.AddressIn != "")
	// Output:
	// https://shop.example/paid?order=42&nonce=k3Q9z
	// true true
}

// Split forwarded funds between two destinations.
func ExampleClient_CreateAddress_outputs() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	addr, err := client.CreateAddress(context.Background(), "btc", &cryptapi.CreateOptions{
		Callback: "https://shop.example/paid?order=43",
		Outputs: []cryptapi.Output{
			{Address: merchantBTC, Share: decimal.RequireFromString("0.7")},
			{Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", Share: decimal.RequireFromString("0.3")},
		},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range addr.Outputs {
		fmt.Println(o.Address, o.Share)
	}
	// Output:
	// bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq 0.7
	// bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh 0.3
}

// Logs show each payment to an address and each callback delivery. A
// payment is confirmed when a confirmed delivery is logged.
func ExampleClient_Logs() {
	ctx := context.Background()
	srv := cryptapitest.NewServer()
	defer srv.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	addr, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid?order=42", Address: merchantBTC,
	})
	if err != nil {
		panic(err)
	}
	txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
	_ = srv.Confirm(txid, 1)
	_ = srv.Flush(ctx)

	logs, err := client.Logs(ctx, "btc", addr.CallbackURL)
	if err != nil {
		panic(err)
	}
	p := logs.Callbacks[0]
	fmt.Println(p.Result, p.Confirmed(), p.ValueCoin, p.ValueForwardedCoin)
	fmt.Println(p.Logs[0].Responses, p.Logs[0].CustomParams().Get("order"))
	// Output:
	// done true 0.01 0.0099
	// *ok* 42
}

// LoggedPayments goes through the payments of an address one at a time, so an
// address with any number of payments needs the memory of a few.
func ExampleClient_LoggedPayments() {
	ctx := context.Background()
	srv := cryptapitest.NewServer()
	defer srv.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	addr, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid?shop=7", Address: merchantBTC,
	})
	if err != nil {
		panic(err)
	}
	for _, amount := range []string{"0.01", "0.02", "0.03"} {
		txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString(amount))
		_ = srv.Confirm(txid, 1)
	}
	_ = srv.Flush(ctx)

	total := decimal.Zero
	for it, err := range client.LoggedPayments(ctx, "btc", addr.CallbackURL) {
		if err != nil {
			panic(err)
		}
		if it.Logs.AddressIn == addr.AddressIn && it.Payment.Confirmed() {
			total = total.Add(it.Payment.ValueCoin)
		}
	}
	fmt.Println(total)
	// Output:
	// 0.06
}

// Coins lists every coin and token, keyed by ticker.
func ExampleClient_Coins() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	coins, err := client.Coins(context.Background(), &cryptapi.InfoOptions{NoPrices: true})
	if err != nil {
		panic(err)
	}
	for _, t := range []string{"btc", "erc20_usdt", "polygon_usdt"} {
		fmt.Println(t, coins[t].MinimumTransactionCoin)
	}
	// Output:
	// btc 0.0001
	// erc20_usdt 20
	// polygon_usdt 2
}

// A QR code for the payment, with the amount in the payment URI.
func ExampleClient_QRCode() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	ctx := context.Background()
	addr, _ := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/paid", Address: merchantBTC})

	qr, err := client.QRCode(ctx, "btc", &cryptapi.QRCodeOptions{
		Address: addr.AddressIn, Value: decimal.RequireFromString("0.0025"), Size: 256,
	})
	if err != nil {
		panic(err)
	}
	img, err := qr.PNG()
	if err != nil {
		panic(err)
	}
	fmt.Println(len(img) > 0, strings.HasPrefix(qr.PaymentURI, "bitcoin:"+addr.AddressIn), strings.Contains(qr.PaymentURI, "0.0025"))
	// Output:
	// true true true
}

// Convert a fiat amount into the coin at the service's rate.
func ExampleClient_Convert() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	cv, err := client.Convert(context.Background(), "btc", &cryptapi.ConvertOptions{
		Value: decimal.RequireFromString("300"), From: "USD",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(cv.ValueCoin)
	// Output:
	// 0.005
}

// The blockchain fee of forwarding, without the service's own fee.
func ExampleClient_Estimate() {
	srv := cryptapitest.NewServer()
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))

	est, err := client.Estimate(context.Background(), "btc", &cryptapi.EstimateOptions{Addresses: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(est.EstimatedCost)
	// Output:
	// 0.00002
}

// Checkout needs an API key; the success token stays out of logs.
func ExampleClient_CreateCheckout() {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))

	co, err := client.CreateCheckout(context.Background(), &cryptapi.CheckoutOptions{
		RedirectURL: "https://shop.example/thanks?order=42",
		NotifyURL:   "https://shop.example/ipn?order=42",
		Value:       decimal.RequireFromString("49.90"),
		ExpireAt:    time.Now().Add(2 * time.Hour),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(co.Status, co.PaymentURL != "", co.SuccessToken != "")
	fmt.Println(strings.Contains(fmt.Sprint(co), co.SuccessToken))

	keyless, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
	_, err = keyless.CreateCheckout(context.Background(), &cryptapi.CheckoutOptions{
		RedirectURL: "https://shop.example/thanks", Value: decimal.RequireFromString("1"),
	})
	fmt.Println(errors.Is(err, cryptapi.ErrAPIKeyRequired))
	// Output:
	// success true true
	// false
	// true
}

// A payout request, finished by the merchant in the dashboard. Payouts are
// never retried automatically.
func ExampleClient_CreatePayout() {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("shop-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("shop-key"))

	p, err := client.CreatePayout(context.Background(), "btc", &cryptapi.PayoutOptions{
		Address: merchantBTC, Value: decimal.RequireFromString("0.05"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Status)
	// Output:
	// success
}

// Validation happens before anything is sent.
func ExampleClient_CreateAddress_validation() {
	client, _ := cryptapi.New()
	_, err := client.CreateAddress(context.Background(), "../admin", &cryptapi.CreateOptions{Callback: "https://shop.example/cb", Address: merchantBTC})
	fmt.Println(errors.Is(err, cryptapi.ErrInvalidTicker))
	_, err = client.CreateAddress(context.Background(), "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/cb"})
	fmt.Println(errors.Is(err, cryptapi.ErrAddressRequired))
	_, err = client.QRCode(context.Background(), "btc", &cryptapi.QRCodeOptions{Address: merchantBTC, Size: 2048})
	fmt.Println(errors.Is(err, cryptapi.ErrInvalidQRSize))
	// Output:
	// true
	// true
	// true
}

// Failures reported by the service are *APIError values.
func ExampleAPIError() {
	srv := cryptapitest.NewServer(cryptapitest.WithAPIKey("the-right-key"))
	defer srv.Close()
	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithAPIKey("a-wrong-key"))

	_, err := client.Info(context.Background(), "btc", nil)
	var apiErr *cryptapi.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Message)
	}
	// Output:
	// 401 Invalid API Key
}

// CallbackURL merges custom data into a callback URL as CreateAddress
// sends it: the existing query is kept byte for byte.
func ExampleCallbackURL() {
	u, err := cryptapi.CallbackURL("https://shop.example/cb?a=%2F&b=1", url.Values{"order": {"a b/c"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(u)
	// Output:
	// https://shop.example/cb?a=%2F&b=1&order=a+b%2Fc
}

// ParseAddressOut reads the service's text map of destinations.
func ExampleParseAddressOut() {
	outs, err := cryptapi.ParseAddressOut(`{"1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP": 0.70, "1PE5U4temq1rFzseHHGE2L8smwHCyRbkx3": 0.30}`)
	if err != nil {
		panic(err)
	}
	for _, o := range outs {
		fmt.Println(o.Address, o.Share)
	}
	// Output:
	// 1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP 0.7
	// 1PE5U4temq1rFzseHHGE2L8smwHCyRbkx3 0.3
}

// ValidateAddress checks an address for a coin's network, checksums
// included, without I/O: before storing a customer's refund address, say.
func ExampleValidateAddress() {
	for _, a := range []string{
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr",
		"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
	} {
		fmt.Println(cryptapi.ValidateAddress("btc", a))
	}
	fmt.Println(errors.Is(cryptapi.ValidateAddress("xmr", "4A..."), cryptapi.ErrAddressFormatUnknown))
	// Output:
	// <nil>
	// cryptapi: not an address of the coin's network (btc): the checksum does not match (a mistyped character?)
	// cryptapi: not an address of the coin's network (btc): this is the form of Tron addresses, not of Bitcoin ones
	// true
}
