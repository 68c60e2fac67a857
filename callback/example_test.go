package callback_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
)

// serviceKey stands in for the service's signing key. Real callbacks are
// verified with the published key, the default.
var serviceKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		panic(err)
	}
	return k
}()

// signLikeTheService returns the x-ca-signature header for data.
func signLikeTheService(data string) string {
	sum := sha256.Sum256([]byte(data))
	sig, err := rsa.SignPKCS1v15(rand.Reader, serviceKey, crypto.SHA256, sum[:])
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func ExampleNewHandler() {
	v, err := callback.NewVerifier(
		callback.WithPublicKey(&serviceKey.PublicKey), // omit to use the published key
		callback.WithPublicURL("https://shop.example"),
	)
	if err != nil {
		panic(err)
	}
	// The addresses this shop created (CreateAddress), stored with their
	// orders: a callback for any other address is refused.
	mine := map[string]bool{"TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7": true}
	known := func(_ context.Context, addressIn string) (bool, error) { return mine[addressIn], nil }
	h, err := callback.NewHandler(v, func(ctx context.Context, p *callback.Payment) error {
		if p.Pending {
			fmt.Println("order", p.Custom.Get("order_id"), "seen:", p.ValueCoin, p.Coin)
			return nil
		}
		fmt.Println("order", p.Custom.Get("order_id"), "paid:", p.ValueCoin, p.Coin, p.ValueCoinConvert["USD"], "USD")
		return nil
	}, callback.WithAddressCheck(known))
	if err != nil {
		panic(err)
	}

	deliver := func(target string) {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set(callback.SignatureHeader, signLikeTheService("https://shop.example"+target))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Body.String())
	}
	common := "/callback?order_id=1042&uuid=dbfcb40e&address_in=TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7" +
		"&address_out=TFzwG8xXcYvxcqwd3DKj1HaVk6c6okZ9na&txid_in=a2174b6f&coin=trc20_usdt&price=1.0003" +
		"&value_coin=3.2&value_coin_convert=%7B%22USD%22%3A+%223.20%22%7D"
	deliver(common + "&pending=1")
	deliver(common + "&pending=0&confirmations=1")
	deliver(common + "&pending=0&confirmations=1") // redelivered: acknowledged, not passed on

	// A forged callback is refused.
	r := httptest.NewRequest(http.MethodGet, common+"&pending=0", nil)
	r.Header.Set(callback.SignatureHeader, signLikeTheService("https://evil.example/"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code)

	// A signed callback for an address someone else created with this
	// callback URL (forwarding to them) is refused too.
	theirs := strings.Replace(common, "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7", "THpCJUt2dPJAeaGmT5kKy5aY6vrK3kAnrm", 1) + "&pending=0"
	deliver(theirs)
	// Output:
	// order 1042 seen: 3.2 trc20_usdt
	// 200 *ok*
	// order 1042 paid: 3.2 trc20_usdt 3.2 USD
	// 200 *ok*
	// 200 *ok*
	// 403
	// 403 Forbidden
}

func ExampleVerifier_Payment() {
	v, err := callback.NewVerifier(callback.WithPublicKey(&serviceKey.PublicKey))
	if err != nil {
		panic(err)
	}
	body := `{"uuid":"7d2f9c1a","address_in":"0x7a3b","address_out":"0x1f2e","txid_in":"0x4b6d","coin":"bep20_usdt",` +
		`"price":"1.0002","pending":0,"value_coin":"250.0","value":250000000000000000000}`
	r := httptest.NewRequest(http.MethodPost, "/callback?order_id=77", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(callback.SignatureHeader, signLikeTheService(body))

	p, err := v.Payment(r)
	if err != nil {
		fmt.Println("refused:", err, callback.StatusCode(err))
		return
	}
	fmt.Println(p.UUID, p.Confirmed(), p.ValueCoin, p.Value, p.Custom.Get("order_id"), callback.PaymentKey(p))
	// Output: 7d2f9c1a true 250 250000000000000000000 77 7d2f9c1a:confirmed
}

func ExampleVerifySignature() {
	url := "https://shop.example/callback?uuid=1&pending=0"
	sig := signLikeTheService(url)
	fmt.Println(callback.VerifySignature(&serviceKey.PublicKey, []byte(url), sig))
	err := callback.VerifySignature(&serviceKey.PublicKey, []byte(url+"&value_coin=1000"), sig)
	fmt.Println(errors.Is(err, callback.ErrBadSignature))
	err = callback.VerifySignature(callback.PublishedKey(), []byte(url), sig)
	fmt.Println(errors.Is(err, callback.ErrBadSignature))
	// Output:
	// <nil>
	// true
	// true
}

func ExampleVerifier_CheckoutIPN() {
	v, err := callback.NewVerifier(callback.WithPublicKey(&serviceKey.PublicKey), callback.WithPublicURL("https://shop.example"))
	if err != nil {
		panic(err)
	}
	target := "/ipn?order_id=A-77&value=49.90&currency=usd&success_token=tok-A77&is_paid=1&status=done" +
		"&paid_amount=49.93&paid_coin=trc20_usdt&txid=aa11,bb22"
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set(callback.SignatureHeader, signLikeTheService("https://shop.example"+target))

	ipn, err := v.CheckoutIPN(r)
	if err != nil {
		fmt.Println("refused:", callback.StatusCode(err))
		return
	}
	fmt.Println(ipn.Custom.Get("order_id"), ipn.Paid(), ipn.TokenMatches("tok-A77"), ipn.PaidAmount, ipn.PaidCoin, ipn.TxIDs)
	// Output: A-77 true true 49.93 trc20_usdt [aa11 bb22]
}

func ExampleProcess() {
	// Payments obtained another way (for example from the service's logs)
	// go through the same store as the handler's callbacks.
	store := callback.NewMemoryStore()
	record := func(ctx context.Context, p *callback.Payment) error {
		fmt.Println("recording", callback.PaymentKey(p))
		return nil
	}
	p := &callback.Payment{UUID: "dbfcb40e", AddressIn: "TKrv", Coin: "trc20_usdt"}
	for i := 0; i < 2; i++ {
		o, err := callback.Process(context.Background(), store, time.Minute, record, p)
		fmt.Println(o, o.Acknowledge(), err)
	}
	late := &callback.Payment{UUID: "dbfcb40e", AddressIn: "TKrv", Pending: true}
	o, _ := callback.Process(context.Background(), store, time.Minute, record, late)
	fmt.Println(o)
	// Output:
	// recording dbfcb40e:confirmed
	// processed true <nil>
	// already done true <nil>
	// superseded
}

func ExampleMemoryStore_Renew() {
	// Process renews its claims while fn runs; a store's Renew extends a
	// claim that is still running, and refuses one that is not.
	ctx := context.Background()
	store := callback.NewMemoryStore()
	c, _ := store.Claim(ctx, "dbfcb40e:confirmed", time.Minute)
	fmt.Println(c, store.Renew(ctx, "dbfcb40e:confirmed", time.Minute))
	_ = store.Complete(ctx, "dbfcb40e:confirmed")
	fmt.Println(store.Renew(ctx, "dbfcb40e:confirmed", time.Minute))
	fmt.Println(errors.Is(store.Renew(ctx, "other:confirmed", time.Minute), callback.ErrNotClaimed))
	// Output:
	// claimed <nil>
	// <nil>
	// true
}

func ExampleProcess_unrecorded() {
	// When fn succeeded but the store cannot record it (Complete is tried
	// until the lease runs out), the callback is not acknowledged.
	store := &brokenComplete{Store: callback.NewMemoryStore()}
	p := &callback.Payment{UUID: "dbfcb40e", AddressIn: "TKrv"}
	fn := func(context.Context, *callback.Payment) error { return nil }
	o, err := callback.Process(context.Background(), store, 50*time.Millisecond, fn, p)
	fmt.Println(o, o.Acknowledge(), errors.Is(err, callback.ErrNotRecorded))
	// Output: failed false true
}

// brokenComplete is a store whose Complete always fails.
type brokenComplete struct{ callback.Store }

func (brokenComplete) Complete(context.Context, string) error { return errors.New("database down") }
