package cryptapitest_test

import (
	"sync"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetPriceMovesInfoConvertAndCallbacks(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	m := newMerchant(t)
	ctx := ctxT(t)

	require.NoError(t, s.SetPrice("btc", "usd", dec("50000")))
	info, err := c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	assert.True(t, dec("50000").Equal(info.Prices["USD"]), "info follows: %v", info.Prices)
	assert.True(t, dec("55200").Equal(info.Prices["EUR"]), "other currencies stay")

	conv, err := c.Convert(ctx, "btc", &cryptapi.ConvertOptions{Value: dec("25"), From: "USD"})
	require.NoError(t, err)
	assert.Equal(t, "0.0005", conv.ValueCoin.String(), "25 USD at 50000")

	all, err := c.Coins(ctx, nil)
	require.NoError(t, err)
	assert.True(t, dec("50000").Equal(all["btc"].Prices["USD"]))

	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: m.URL + "/cb", Address: btcDest})
	require.NoError(t, err)
	txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	got := m.received()
	require.Len(t, got, 1)
	assert.Equal(t, "50000", got[0].Query.Get("price"), "the callback carries the new USD price")

	require.NoError(t, s.SetPrice("btc", "CHF", dec("53000")))
	info, err = c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	assert.True(t, dec("53000").Equal(info.Prices["CHF"]), "a new currency is added")
}

func TestSetPriceRefusesBadInput(t *testing.T) {
	s := newServer(t)
	assert.Error(t, s.SetPrice("nope", "USD", dec("1")))
	assert.Error(t, s.SetPrice("btc", "US D", dec("1")))
	assert.Error(t, s.SetPrice("btc", "", dec("1")))
	assert.Error(t, s.SetPrice("btc", "USD", dec("0")))
	assert.Error(t, s.SetPrice("btc", "USD", dec("-5")))
}

// SetPrice races with the handlers reading prices; -race proves the
// locking.
func TestSetPriceIsSafeWhileServing(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			_ = s.SetPrice("btc", "USD", dec("60000").Add(dec("1").Mul(dec("1").Shift(int32(i%3)))))
		}
	})
	for range 2 {
		wg.Go(func() {
			for range 20 {
				_, err := c.Convert(ctx, "btc", &cryptapi.ConvertOptions{Value: dec("1"), From: "USD"})
				assert.NoError(t, err)
				_, err = c.Info(ctx, "btc", nil)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
}

func TestPayAnotherTokenOfTheNetworkWithMultiToken(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	m := newMerchant(t)
	ctx := ctxT(t)

	multi, err := c.CreateAddress(ctx, "trc20_usdt", &cryptapi.CreateOptions{Callback: m.URL + "/multi", Address: trxDest, MultiToken: true})
	require.NoError(t, err)
	single, err := c.CreateAddress(ctx, "trc20_usdt", &cryptapi.CreateOptions{Callback: m.URL + "/single", Address: trxDest})
	require.NoError(t, err)

	_, err = s.Pay("trx", single.AddressIn, dec("100"))
	assert.ErrorIs(t, err, cryptapitest.ErrUnknownAddress, "without multi_token another coin does not reach the address")
	_, err = s.Pay("erc20_usdt", multi.AddressIn, dec("100"))
	assert.ErrorIs(t, err, cryptapitest.ErrUnknownAddress, "another network never does")
	_, err = s.Pay("trx", multi.AddressIn, dec("1"))
	assert.ErrorIs(t, err, cryptapitest.ErrBelowMinimum, "the coin paid has its own minimum (5 trx)")

	txid, err := s.Pay("trx", multi.AddressIn, dec("100"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	got := m.received()
	require.Len(t, got, 1)
	q := got[0].Query
	assert.Equal(t, "trx", q.Get("coin"), "the callback names the token paid")
	assert.Equal(t, multi.AddressIn, q.Get("address_in"))
	assert.Equal(t, "100", q.Get("value_coin"))
	assert.Equal(t, "100000000", q.Get("value"), "smallest units of the coin paid (6 decimals)")
	assert.Equal(t, "0.12", q.Get("price"), "the price of the coin paid")

	ps := s.Payments()
	require.Len(t, ps, 1)
	assert.Equal(t, "trx", ps[0].Ticker)
	assert.Equal(t, multi.CallbackURL, ps[0].CallbackURL)

	logs, err := c.Logs(ctx, "trc20_usdt", multi.CallbackURL)
	require.NoError(t, err)
	require.Len(t, logs.Callbacks, 1, "the payment is in the address's logs")
	assert.Equal(t, "100", logs.Callbacks[0].ValueCoin.String())
}
