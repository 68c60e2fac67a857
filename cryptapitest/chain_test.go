package cryptapitest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPaymentEndToEndGET(t *testing.T) {
	ctx := ctxT(t)
	clock := cryptapitest.NewFakeClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	s := newServer(t, cryptapitest.WithClock(clock))
	c := newClient(t, s)
	shop := newMerchant(t)

	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/paid?order=42&nonce=a%20b",
		Address:  btcDest,
		Pending:  true,
	})
	require.NoError(t, err)
	assert.Regexp(t, `^bc1q[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{38}$`, addr.AddressIn)
	assert.Equal(t, btcDest, addr.AddressOut)
	assert.Equal(t, "default", addr.Priority)
	assert.True(t, addr.MinimumTransactionCoin.Equal(dec("0.0001")), addr.MinimumTransactionCoin.String())

	txid, err := s.Pay("btc", addr.AddressIn, dec("0.01"))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}$`, txid)
	require.NoError(t, s.Flush(ctx))

	pub, err := c.PublicKey(ctx)
	require.NoError(t, err)
	got := shop.received()
	require.Len(t, got, 1, "the pending callback")
	p := got[0]
	assert.Equal(t, http.MethodGet, p.Method)
	verify(t, pub, []byte(p.URL), p.Header.Get("x-ca-signature"))
	assert.True(t, strings.HasPrefix(p.URL, shop.URL+"/paid?order=42&nonce=a%20b&"), p.URL)
	assert.Equal(t, "42", p.Query.Get("order"))
	assert.Equal(t, "a b", p.Query.Get("nonce"))
	assert.Equal(t, "1", p.Query.Get("pending"))
	assert.Equal(t, txid, p.Query.Get("txid_in"))
	assert.Equal(t, addr.AddressIn, p.Query.Get("address_in"))
	assert.Equal(t, btcDest, p.Query.Get("address_out"))
	assert.Equal(t, "btc", p.Query.Get("coin"))
	assert.Equal(t, "0.01", p.Query.Get("value_coin"))
	assert.Equal(t, "1000000", p.Query.Get("value"))
	assert.Equal(t, "60000", p.Query.Get("price"))
	assert.Equal(t, "0", p.Query.Get("confirmations"))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, p.Query.Get("uuid"))
	assert.False(t, p.Query.Has("txid_out"), "no forwarding yet")

	logs, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	require.Len(t, logs.Callbacks, 1)
	assert.Equal(t, cryptapi.ResultPending, logs.Callbacks[0].Result)
	assert.False(t, logs.Callbacks[0].Confirmed())
	assert.Empty(t, logs.Callbacks[0].TxIDOut)

	clock.Advance(10 * time.Minute)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	got = shop.received()
	require.Len(t, got, 2, "pending then confirmed")
	cf := got[1]
	verify(t, pub, []byte(cf.URL), cf.Header.Get("x-ca-signature"))
	q := cf.Query
	assert.Equal(t, "0", q.Get("pending"))
	assert.Equal(t, "42", q.Get("order"))
	assert.Equal(t, p.Query.Get("uuid"), q.Get("uuid"), "one uuid per payment")
	assert.Equal(t, "1", q.Get("confirmations"))
	// 1% of 0.01 is 0.0001, above the 0.00001 minimum fee.
	assert.Equal(t, "0.0001", q.Get("fee_coin"))
	assert.Equal(t, "10000", q.Get("fee"))
	assert.Equal(t, "0.0099", q.Get("value_forwarded_coin"))
	assert.Equal(t, "990000", q.Get("value_forwarded"))
	assert.Regexp(t, `^[0-9a-f]{64}$`, q.Get("txid_out"))
	assert.False(t, q.Has("value_coin_convert"), "only with convert=1")

	logs, err = c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	assert.Equal(t, addr.AddressIn, logs.AddressIn)
	assert.Equal(t, btcDest, logs.AddressOut)
	assert.Equal(t, addr.CallbackURL, logs.CallbackURL)
	assert.True(t, logs.NotifyPending)
	assert.Equal(t, 1, logs.NotifyConfirmations)
	require.Len(t, logs.Callbacks, 1)
	item := logs.Callbacks[0]
	assert.Equal(t, cryptapi.ResultDone, item.Result)
	assert.True(t, item.Confirmed())
	assert.Equal(t, q.Get("uuid"), item.UUID)
	assert.Equal(t, txid, item.TxIDIn)
	assert.Equal(t, q.Get("txid_out"), item.TxIDOut)
	assert.True(t, item.ValueCoin.Equal(dec("0.01")))
	assert.True(t, item.ValueForwardedCoin.Equal(dec("0.0099")))
	assert.True(t, item.FeeCoin.Equal(dec("0.0001")))
	assert.True(t, item.FeePercent.Equal(dec("1")))
	assert.True(t, item.Price.Equal(dec("60000")))
	assert.Equal(t, 1, item.Confirmations)
	assert.Equal(t, time.Date(2026, 3, 4, 5, 16, 7, 0, time.UTC), item.LastUpdate)
	require.Len(t, item.Logs, 2)
	assert.True(t, item.Logs[0].Pending)
	assert.False(t, item.Logs[0].Confirmed)
	assert.True(t, item.Logs[1].Confirmed)
	assert.Equal(t, cf.URL, item.Logs[1].RequestURL)
	assert.Equal(t, "*ok*", item.Logs[1].Responses)
	assert.Equal(t, "200", item.Logs[1].ResponseStatus)
	assert.True(t, item.Logs[1].NextTry.IsZero())
	assert.Equal(t, url.Values{"order": {"42"}, "nonce": {"a b"}}, item.Logs[1].CustomParams())

	pays := s.Payments()
	require.Len(t, pays, 1)
	assert.Equal(t, "done", pays[0].Result)
	require.Len(t, pays[0].Outputs, 1)
	assert.Equal(t, btcDest, pays[0].Outputs[0].Address)
	assert.True(t, pays[0].Outputs[0].Value.Equal(dec("0.0099")))

	// More confirmations update the count and send nothing more.
	require.NoError(t, s.Confirm(txid, 3))
	require.NoError(t, s.Flush(ctx))
	assert.Len(t, shop.received(), 2)
	assert.Equal(t, 3, s.Payments()[0].Confirmations)
}

func TestPaymentWithoutPendingSendsOnlyConfirmed(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "trc20_usdt", &cryptapi.CreateOptions{
		Callback: shop.URL + "/cb", Address: trxDest, Confirmations: 3,
	})
	require.NoError(t, err)
	assert.Regexp(t, `^T[1-9A-HJ-NP-Za-km-z]{33}$`, addr.AddressIn)
	txid, err := s.Pay("trc20/usdt", addr.AddressIn, dec("10"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 2))
	require.NoError(t, s.Flush(ctx))
	assert.Empty(t, shop.received(), "neither pending (not asked) nor confirmed (2 < 3)")

	logs, err := c.Logs(ctx, "trc20_usdt", addr.CallbackURL)
	require.NoError(t, err)
	require.Len(t, logs.Callbacks, 1)
	assert.Equal(t, cryptapi.ResultPending, logs.Callbacks[0].Result)
	assert.Equal(t, 2, logs.Callbacks[0].Confirmations)

	require.NoError(t, s.Confirm(txid, 3))
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 1)
	q := got[0].Query
	assert.Equal(t, "trc20_usdt", q.Get("coin"))
	assert.Equal(t, "3", q.Get("confirmations"))
	// 1% of 10 is 0.1, below the 1 USDT minimum fee.
	assert.Equal(t, "1", q.Get("fee_coin"))
	assert.Equal(t, "9", q.Get("value_forwarded_coin"))
	assert.Equal(t, "10000000", q.Get("value"))
}

func TestPostFormAndJSONCallbacks(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		name := map[bool]string{false: "form", true: "json"}[asJSON]
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			s := newServer(t)
			c := newClient(t, s)
			shop := newMerchant(t)
			addr, err := c.CreateAddress(ctx, "eth", &cryptapi.CreateOptions{
				Callback: shop.URL + "/cb?order=7",
				Params:   url.Values{"nonce": {"n1"}},
				Address:  ethDest, Pending: true, Post: true, JSON: asJSON, Convert: true,
			})
			require.NoError(t, err)
			assert.Regexp(t, `^0x[0-9a-fA-F]{40}$`, addr.AddressIn)
			txid, err := s.Pay("eth", addr.AddressIn, dec("0.5"))
			require.NoError(t, err)
			require.NoError(t, s.Confirm(txid, 1))
			require.NoError(t, s.Flush(ctx))
			assert.Regexp(t, `^0x[0-9a-f]{64}$`, txid)

			got := shop.received()
			require.Len(t, got, 2)
			for i, r := range got {
				assert.Equal(t, http.MethodPost, r.Method)
				assert.Equal(t, shop.URL+"/cb?order=7&nonce=n1", r.URL, "custom parameters stay in the query, and only they")
				verify(t, s.PublicKey(), r.Body, r.Header.Get("x-ca-signature"))
				fields := map[string]string{}
				if asJSON {
					assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
					var m map[string]json.RawMessage
					require.NoError(t, json.Unmarshal(r.Body, &m))
					for k, v := range m {
						s, err := wire.DecodeString(v)
						require.NoError(t, err)
						fields[k] = s
					}
					// Numbers are JSON numbers, convert fields JSON text in a string.
					assert.Equal(t, "0.5", string(m["value_coin"]))
					assert.Equal(t, map[int]string{0: "1", 1: "0"}[i], string(m["pending"]))
					assert.Equal(t, byte('"'), m["value_coin_convert"][0])
				} else {
					assert.Equal(t, "application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
					form, err := url.ParseQuery(string(r.Body))
					require.NoError(t, err)
					for k := range form {
						fields[k] = form.Get(k)
					}
				}
				assert.NotContains(t, fields, "order")
				assert.Equal(t, "0.5", fields["value_coin"])
				assert.Equal(t, "500000000000000000", fields["value"], "wei")
				conv, err := wire.ParseAmountMapText(fields["value_coin_convert"])
				require.NoError(t, err)
				assert.True(t, conv["USD"].Equal(dec("1500")), "0.5 ETH at 3000 USD")
				assert.True(t, conv["EUR"].Equal(dec("1380")))
				if i == 1 {
					fwd, err := wire.ParseAmountMapText(fields["value_forwarded_coin_convert"])
					require.NoError(t, err)
					assert.True(t, fwd["USD"].Equal(dec("1485")), "0.495 ETH forwarded")
					assert.Equal(t, "0.495", fields["value_forwarded_coin"])
					assert.Equal(t, "eth", fields["coin"])
				}
			}
		})
	}
}

func TestCreateIsIdempotentByCallback(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	cb := "https://shop.example/cb?order=1"
	a1, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: cb, Address: btcDest})
	require.NoError(t, err)
	again, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: cb, Address: btcDest})
	require.NoError(t, err)
	assert.Equal(t, a1.AddressIn, again.AddressIn)

	// The destination is bound to the callback URL: the client refuses the
	// answer of a create with another one.
	a2, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: cb, Address: btcDest2})
	assert.Nil(t, a2)
	var dm *cryptapi.DestinationMismatchError
	require.ErrorAs(t, err, &dm)
	assert.Equal(t, btcDest, dm.BoundAddressOut, "the destination is bound to the callback URL")

	a3, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: cb + "&v=2", Address: btcDest2})
	require.NoError(t, err)
	assert.NotEqual(t, a1.AddressIn, a3.AddressIn)
	assert.Equal(t, btcDest2, a3.AddressOut)

	// Another coin with the same callback URL is another setup.
	a4, err := c.CreateAddress(ctx, "ltc", &cryptapi.CreateOptions{Callback: cb, Address: ltcDest})
	require.NoError(t, err)
	assert.Regexp(t, `^ltc1q[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{38}$`, a4.AddressIn)
}

// TestFirstDestinationWinsForACallbackURL: the fake binds a callback URL
// to the first destination it was created with, as the service does: a
// later create with the same URL and other destinations (one or several,
// from the same or another caller) answers the first setup unchanged.
func TestFirstDestinationWinsForACallbackURL(t *testing.T) {
	s := newServer(t)
	cb := "https://shop.example/callback?order_id=1001"
	create := func(address string) map[string]any {
		t.Helper()
		q := url.Values{"callback": {cb}, "address": {address}}
		resp, err := http.Get(s.URL() + "/btc/create/?" + q.Encode())
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var a map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		return a
	}
	first := create(btcDest)
	assert.Equal(t, btcDest, first["address_out"])
	for _, other := range []string{btcDest2, "0.5@" + btcDest2 + "|0.5@" + btcDest3, "0.5@" + btcDest + "|0.5@" + btcDest2} {
		a := create(other)
		assert.Equal(t, first["address_in"], a["address_in"], other)
		assert.Equal(t, btcDest, a["address_out"], "the first destination wins over %s", other)
		assert.Equal(t, cb, a["callback_url"])
	}
}

func TestMultipleOutputs(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shop.URL + "/cb",
		Outputs: []cryptapi.Output{
			{Address: btcDest, Share: dec("0.5")},
			{Address: btcDest2, Share: dec("0.3")},
			{Address: btcDest3, Share: dec("0.2")},
		},
	})
	require.NoError(t, err)
	assert.Equal(t, `{"`+btcDest+`": 0.5, "`+btcDest2+`": 0.3, "`+btcDest3+`": 0.2}`, addr.AddressOut)
	require.Len(t, addr.Outputs, 3)
	assert.True(t, addr.Outputs[1].Share.Equal(dec("0.3")))
	// 0.0001 x (1 + 2/3), rounded up to satoshis.
	assert.True(t, addr.MinimumTransactionCoin.Equal(dec("0.00016667")), addr.MinimumTransactionCoin.String())

	_, err = s.Pay("btc", addr.AddressIn, dec("0.00015"))
	assert.ErrorIs(t, err, cryptapitest.ErrBelowMinimum, "above the one-output minimum, below the three-output one")

	txid, err := s.Pay("btc", addr.AddressIn, dec("0.00123457"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 1)
	assert.Equal(t, addr.AddressOut, got[0].Query.Get("address_out"))

	p := s.Payments()[0]
	// fee: 1% = 0.0000123457 -> 0.00001235; forwarded 0.00122222.
	assert.Equal(t, "0.00001235", p.Fee.String())
	assert.Equal(t, "0.00122222", p.Forwarded.String())
	require.Len(t, p.Outputs, 3)
	assert.Equal(t, "0.00061111", p.Outputs[0].Value.String())
	assert.Equal(t, "0.00036666", p.Outputs[1].Value.String())
	assert.Equal(t, "0.00024445", p.Outputs[2].Value.String(), "the last output takes the remainder")
	sum := p.Outputs[0].Value.Add(p.Outputs[1].Value).Add(p.Outputs[2].Value)
	assert.True(t, sum.Equal(p.Forwarded))
}

func TestBelowMinimumIsIgnored(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: btcDest, Pending: true})
	require.NoError(t, err)

	txid, err := s.Pay("btc", addr.AddressIn, dec("0.00009999"))
	require.ErrorIs(t, err, cryptapitest.ErrBelowMinimum)
	assert.NotEmpty(t, txid, "the transaction exists on the chain all the same")
	require.NoError(t, s.Confirm(txid, 6), "confirming it is harmless")
	require.NoError(t, s.Flush(ctx))
	assert.Empty(t, shop.received())
	assert.Empty(t, s.Payments())

	empty, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err, "a known address without payments")
	assert.Empty(t, empty.Callbacks)
	assert.Equal(t, addr.AddressIn, empty.AddressIn)

	// Exactly the minimum is accepted.
	_, err = s.Pay("btc", addr.AddressIn, dec("0.0001"))
	require.NoError(t, err)
	require.NoError(t, s.Flush(ctx))
	assert.Len(t, shop.received(), 1)
	logs, err := c.Logs(ctx, "btc", addr.CallbackURL)
	require.NoError(t, err)
	assert.Len(t, logs.Callbacks, 1, "only the accepted payment")
}

func TestPayAndConfirmErrors(t *testing.T) {
	s := newServer(t)
	_, err := s.Pay("btc", "bc1q39atpkv0z4jevp767vnqgvjyhugc5sj9qqstjs", dec("1"))
	assert.ErrorIs(t, err, cryptapitest.ErrUnknownAddress)
	_, err = s.Pay("doge", "D123", dec("1"))
	assert.Error(t, err)
	assert.ErrorIs(t, s.Confirm("ff", 1), cryptapitest.ErrUnknownTx)
	assert.Error(t, s.Confirm("ff", -1))

	s.Close()
	_, err = s.Pay("btc", "x", dec("1"))
	assert.ErrorIs(t, err, cryptapitest.ErrClosed)
	assert.ErrorIs(t, s.Flush(ctxT(t)), cryptapitest.ErrClosed)
}

func TestSeveralPaymentsToOneAddress(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	addr, err := c.CreateAddress(ctx, "ltc", &cryptapi.CreateOptions{Callback: shop.URL + "/cb", Address: ltcDest})
	require.NoError(t, err)
	t1, err := s.Pay("ltc", addr.AddressIn, dec("0.1"))
	require.NoError(t, err)
	t2, err := s.Pay("ltc", addr.AddressIn, dec("0.2"))
	require.NoError(t, err)
	require.NoError(t, s.Confirm(t2, 1))
	require.NoError(t, s.Confirm(t1, 1))
	require.NoError(t, s.Flush(ctx))
	got := shop.received()
	require.Len(t, got, 2)
	assert.NotEqual(t, got[0].Query.Get("uuid"), got[1].Query.Get("uuid"))
	logs, err := c.Logs(ctx, "ltc", addr.CallbackURL)
	require.NoError(t, err)
	require.Len(t, logs.Callbacks, 2)
	assert.Equal(t, t1, logs.Callbacks[0].TxIDIn)
	assert.Equal(t, t2, logs.Callbacks[1].TxIDIn)
	for _, cb := range logs.Callbacks {
		assert.Equal(t, cryptapi.ResultDone, cb.Result)
	}
}

func TestGeneratedAddressesAreValid(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	dests := map[string]string{
		"btc": btcDest, "eth": ethDest, "ltc": ltcDest, "bch": bchDest, "trx": trxDest,
		"trc20_usdt": trxDest, "erc20_usdt": ethDest, "bep20_usdt": ethDest, "polygon_usdt": ethDest,
	}
	patterns := map[string]string{
		"btc": `^bc1q[a-z0-9]{38}$`, "ltc": `^ltc1q[a-z0-9]{38}$`, "bch": `^bitcoincash:q[a-z0-9]{41}$`,
		"eth": `^0x[0-9a-fA-F]{40}$`, "erc20_usdt": `^0x[0-9a-fA-F]{40}$`, "bep20_usdt": `^0x[0-9a-fA-F]{40}$`,
		"polygon_usdt": `^0x[0-9a-fA-F]{40}$`, "trx": `^T[1-9A-HJ-NP-Za-km-z]{33}$`, "trc20_usdt": `^T[1-9A-HJ-NP-Za-km-z]{33}$`,
	}
	assert.ElementsMatch(t, s.Tickers(), []string{"btc", "eth", "ltc", "bch", "trx", "trc20_usdt", "erc20_usdt", "bep20_usdt", "polygon_usdt"})
	for tk, dest := range dests {
		require.True(t, s.ValidAddress(tk, dest), "%s destination %s", tk, dest)
		addr, err := c.CreateAddress(ctx, tk, &cryptapi.CreateOptions{Callback: "https://shop.example/" + tk, Address: dest})
		require.NoError(t, err, tk)
		assert.Regexp(t, patterns[tk], addr.AddressIn, tk)
		assert.True(t, s.ValidAddress(tk, addr.AddressIn), tk)
		assert.NoError(t, cryptapi.ValidateAddress(tk, addr.AddressIn), "%s: checksum and all", tk)
	}
}

func TestDeterministicAddresses(t *testing.T) {
	ctx := ctxT(t)
	first := func(opts ...cryptapitest.Option) string {
		s := newServer(t, opts...)
		addr, err := newClient(t, s).CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: "https://shop.example/cb", Address: btcDest})
		require.NoError(t, err)
		return addr.AddressIn
	}
	assert.Equal(t, first(), first())
	assert.NotEqual(t, first(), first(cryptapitest.WithSeed(7)))
}

func TestWithCoin(t *testing.T) {
	ctx := ctxT(t)
	btc := cryptapitest.DefaultCoins()["btc"]
	btc.MinimumTransaction = dec("0.001")
	btc.FeePercent = dec("2")
	s := newServer(t,
		cryptapitest.WithCoin("btc", btc),
		cryptapitest.WithCoin("bep20/usdc", cryptapitest.Coin{Name: "USD Coin", Decimals: 18, MinimumTransaction: dec("1"),
			Prices: map[string]decimal.Decimal{"usd": dec("1")}}),
	)
	c := newClient(t, s)
	info, err := c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	assert.True(t, info.MinimumTransactionCoin.Equal(dec("0.001")))
	assert.True(t, info.FeePercent.Equal(dec("2")))
	usdc, err := c.Info(ctx, "bep20_usdc", nil)
	require.NoError(t, err)
	assert.Equal(t, "USD Coin", usdc.Coin)
	assert.True(t, usdc.Prices["USD"].Equal(dec("1")))
	addr, err := c.CreateAddress(ctx, "bep20/usdc", &cryptapi.CreateOptions{Callback: "https://shop.example/cb", Address: ethDest})
	require.NoError(t, err)
	assert.Regexp(t, `^0x[0-9a-fA-F]{40}$`, addr.AddressIn)

	assert.Panics(t, func() { cryptapitest.NewServer(cryptapitest.WithCoin("new", cryptapitest.Coin{})) }, "no chain")
	assert.Panics(t, func() { cryptapitest.NewServer(cryptapitest.WithAPIKey("")) })
}

func TestRequestPaymentAgainstTheFake(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t)
	c := newClient(t, s)
	shop := newMerchant(t)
	pr, err := c.RequestPayment(ctx, "btc", &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{Callback: shop.URL + "/cb?order=3", Address: btcDest},
		Amount:        dec("30"),
		Currency:      "USD",
		QRCode:        true,
	})
	require.NoError(t, err)
	assert.Equal(t, "0.0005", pr.AmountCoin.String())
	assert.Equal(t, "bitcoin:"+pr.Address.AddressIn+"?amount=0.0005", pr.PaymentURI)
	png, err := pr.QRCode.PNG()
	require.NoError(t, err)
	text, _ := decodeQR(t, png)
	assert.Equal(t, pr.PaymentURI, text)

	_, err = c.RequestPayment(ctx, "btc", &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{Callback: shop.URL + "/cb?order=4", Address: btcDest},
		Amount:        dec("5"),
		Currency:      "USD",
	})
	assert.ErrorIs(t, err, cryptapi.ErrBelowMinimum, "5 USD is below the 0.0001 BTC minimum")

	txid, err := s.Pay("btc", pr.Address.AddressIn, pr.AmountCoin)
	require.NoError(t, err)
	require.NoError(t, s.Confirm(txid, 1))
	require.NoError(t, s.Flush(ctx))
	require.Len(t, shop.received(), 1)
}
