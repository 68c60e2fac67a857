package callback_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/forwardpay/cryptapi-go/callback"
)

// DepositIPN verifies and parses the notification of one deposit made on a
// hosted deposit page. The shop's own parameters of the notify URL come
// back in Custom.
func ExampleVerifier_DepositIPN() {
	v, err := callback.NewVerifier(callback.WithPublicKey(&serviceKey.PublicKey), callback.WithPublicURL("https://shop.example"))
	if err != nil {
		panic(err)
	}
	target := "/deposit?customer=7&paid_amount=0.002&paid_coin=btc&txid=cc33&status=done" +
		"&address=bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set(callback.SignatureHeader, signLikeTheService("https://shop.example"+target))

	d, err := v.DepositIPN(r)
	if err != nil {
		fmt.Println("refused:", callback.StatusCode(err))
		return
	}
	fmt.Println(d.Custom.Get("customer"), d.Paid(), d.PaidAmount, d.PaidCoin, d.TxIDs)

	// The same notification with another amount no longer matches its
	// signature.
	forged := httptest.NewRequest(http.MethodGet, "/deposit?customer=7&paid_amount=2&paid_coin=btc&txid=cc33&status=done"+
		"&address=bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", nil)
	forged.Header.Set(callback.SignatureHeader, r.Header.Get(callback.SignatureHeader))
	_, err = v.DepositIPN(forged)
	fmt.Println("forged:", callback.StatusCode(err))
	// Output:
	// 7 true 0.002 btc [cc33]
	// forged: 403
}
