package cryptapitest_test

import (
	"fmt"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistoryLimitBoundsEveryTable(t *testing.T) {
	ctx := ctxT(t)
	const limit, addrs, perAddr = 7, 12, 5
	s := newServer(t, cryptapitest.WithHistoryLimit(limit), cryptapitest.WithClock(cryptapitest.NewFakeClock(t0)))
	c := newClient(t, s)
	shop := newMerchant(t)
	var txids []string
	var first, last *cryptapi.Address
	for a := 0; a < addrs; a++ {
		addr, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
			Callback: fmt.Sprintf("%s/cb?order=%d", shop.URL, a), Address: btcDest, Pending: true,
		})
		require.NoError(t, err)
		last = addr
		if first == nil {
			first = addr
		}
		for i := 0; i < perAddr; i++ {
			txid, err := s.Pay("btc", addr.AddressIn, dec("0.001"))
			require.NoError(t, err)
			require.NoError(t, s.Confirm(txid, 1))
			txids = append(txids, txid)
			_, err = s.Pay("btc", addr.AddressIn, dec("0.00000001"))
			require.ErrorIs(t, err, cryptapitest.ErrBelowMinimum)
		}
		require.NoError(t, s.Flush(ctx))
	}
	assert.Len(t, shop.received(), 2*addrs*perAddr, "every payment's pending and confirmed callback went out")

	sizes := s.Sizes()
	for _, k := range []string{"txs", "ignored", "setups", "byAddress", "setupPayments", "payments", "deliveries", "requests"} {
		assert.LessOrEqual(t, sizes[k], limit, k)
		assert.Positive(t, sizes[k], k)
	}
	assert.Zero(t, sizes["queue"], "nothing left to deliver")
	assert.Zero(t, sizes["groups"], "finished deliveries are forgotten")

	// The most recent records stay readable, in order.
	ps := s.Payments()
	require.Len(t, ps, limit)
	for i, p := range ps {
		assert.Equal(t, txids[len(txids)-limit+i], p.TxIDIn)
		assert.Equal(t, "done", p.Result)
	}
	ds := s.Deliveries()
	require.Len(t, ds, limit)
	for _, d := range ds {
		assert.Contains(t, d.URL, fmt.Sprintf("order=%d&", addrs-1), "the most recent deliveries are kept")
	}
	logs, err := c.Logs(ctx, "btc", last.CallbackURL)
	require.NoError(t, err)
	assert.Len(t, logs.Callbacks, perAddr)

	// What was trimmed is forgotten, with the documented answers.
	assert.ErrorIs(t, s.Confirm(txids[0], 2), cryptapitest.ErrUnknownTx)
	assert.Len(t, s.Requests(), limit)
	_, err = s.Pay("btc", first.AddressIn, dec("0.001"))
	assert.ErrorIs(t, err, cryptapitest.ErrUnknownAddress)
	_, err = c.Logs(ctx, "btc", first.CallbackURL)
	assert.ErrorIs(t, err, cryptapi.ErrNoLogs, "the logs of a forgotten address are the service's nothing found")
}

func TestHistoryLimitRejectsNegative(t *testing.T) {
	assert.PanicsWithValue(t, "cryptapitest: WithHistoryLimit: negative limit", func() {
		cryptapitest.NewServer(cryptapitest.WithHistoryLimit(-1))
	})
}
