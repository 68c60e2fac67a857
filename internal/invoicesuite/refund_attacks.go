package invoicesuite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// RateNowValuesTheExcessAtItsQuotes: an invoice paid in two parts at
// two quotes; RefundOverpaid at RateNow gives back the fiat value of the
// excess (what the payments brought beyond the price, each at its own
// quote) at today's price: at an unchanged price exactly what RateThen
// gives, never more coin than that.
func RateNowValuesTheExcessAtItsQuotes(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{OrderID: "two-quotes", Price: D("25"), Currency: "USD",
		ExpiresIn: time.Hour, QuoteTTL: 10 * time.Minute})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.0002")) // 12 USD at 60000
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("120000")))
	e.Clock.Advance(11 * time.Minute)
	e.Tick() // a fresh quote for the remainder
	require.True(t, e.Get(inv.ID).Rate.Equal(D("120000")), "re-quoted")
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.0005")) // 60 USD at 120000: 47 USD over the price
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusSettled, got.Status)

	for _, c := range []struct{ price, want, what string }{
		{"120000", "0.00039166", "the price did not move: what RateThen gives (47 USD)"},
		{"240000", "0.00019583", "the price doubled: 47 USD at 240000"},
		{"60000", "0.00039166", "the price halved: never more coin than was paid over the price"},
	} {
		require.NoError(t, e.Srv.SetPrice("btc", "USD", D(c.price)))
		e.Clock.Advance(2 * time.Minute)
		rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Rate: invoice.RateNow})
		require.NoError(t, err, c.what)
		eq(t, c.want, rf.Amount, c.what)
		_, err = e.Desk.CancelRefund(e.Ctx, rf.ID, "recomputed")
		require.NoError(t, err)
	}
	then, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	eq(t, "0.00039166", then.Amount, "RateThen")
	assert.True(t, e.Get(inv.ID).Refundable("").Equal(D("0.0007").Sub(then.Amount)))
	e.AssertOnePerChange(e.Get(inv.ID))
}
