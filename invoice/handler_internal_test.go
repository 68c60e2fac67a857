package invoice

import (
	"testing"

	"github.com/stretchr/testify/assert"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
)

func TestLoggedCoinReadsTheCalledURL(t *testing.T) {
	item := func(urls ...string) *cryptapi.LoggedPayment {
		p := &cryptapi.LoggedPayment{}
		for _, u := range urls {
			p.Logs = append(p.Logs, cryptapi.LogEntry{RequestURL: u})
		}
		return p
	}
	assert.Equal(t, "trc20_usdt", loggedCoin(item("https://shop/cb?invoice=A&nonce=B&coin=trc20_usdt&value_coin=1")))
	assert.Equal(t, "trx", loggedCoin(item("https://shop/cb?coin=trc20_usdt", "https://shop/cb?coin=trx")), "the latest wins")
	assert.Equal(t, "trc20_usdt", loggedCoin(item("https://shop/cb?coin=trc20%2Fusdt")), "either spelling")
	assert.Equal(t, "", loggedCoin(item("https://shop/cb?invoice=A")), "POST callbacks carry no fields in the URL")
	assert.Equal(t, "", loggedCoin(item()))
	assert.Equal(t, "", loggedCoin(item("%zz")))
}

func TestPaymentEventCoin(t *testing.T) {
	inv := &Invoice{Ticker: "trc20_usdt"}
	p := &callback.Payment{UUID: "u", ValueCoin: dec("1"), Coin: ""}
	e, err := paymentEvent(inv, p)
	assert.NoError(t, err)
	assert.Equal(t, "trc20_usdt", e.coin, "no coin on a single-token address is the invoice's")
	inv.MultiToken = true
	e, err = paymentEvent(inv, p)
	assert.NoError(t, err)
	assert.Equal(t, "", e.coin, "no coin on a multi-token address is never taken as the invoice's")
	p.Coin = "TRC20_USDT"
	e, _ = paymentEvent(inv, p)
	assert.Equal(t, "trc20_usdt", e.coin)
	_, err = paymentEvent(inv, &callback.Payment{ValueCoin: dec("1")})
	assert.ErrorIs(t, err, errBadEvent)
	_, err = paymentEvent(inv, &callback.Payment{UUID: "u"})
	assert.ErrorIs(t, err, errBadEvent)
}
