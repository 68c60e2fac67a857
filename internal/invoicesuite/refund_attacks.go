package invoicesuite

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
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

// RefundChangesHeardOnceWhenOnChangeFails: onChange fails at every refund
// change (made, claimed, sending, sent, cancelled); each call still
// returns the refund as stored, with an error matching ErrNotNotified
// where it reports the failure, and Tick offers every change again:
// onChange accepts each once, in order, and hears every refund status.
func RefundChangesHeardOnceWhenOnChangeFails(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv := e.overpaid("fail-onchange")
	redeliver := func(what string) {
		t.Helper()
		assert.Zero(t, e.FailChanges.Load(), "%s: onChange was offered the change", what)
		e.Tick()
	}
	e.FailChanges.Store(1)
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, rf)
	assert.Equal(t, invoice.RefundAwaitingAddress, rf.Status)
	redeliver("made")

	e.FailChanges.Store(1)
	rf, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, rf)
	assert.Equal(t, invoice.RefundReady, rf.Status)
	redeliver("claimed")

	e.FailChanges.Store(2) // the sending change, offered twice by SendRefund
	rf, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, rf)
	assert.Equal(t, invoice.RefundSending, rf.Status)
	redeliver("sending")

	e.FailChanges.Store(1)
	e.Clock.Advance(time.Hour)
	_, err = e.Desk.Tick(e.Ctx)
	assert.Error(t, err, "the sent change was not accepted")
	redeliver("sent")
	got, err := e.Desk.GetRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, got.Status)

	other, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	e.FailChanges.Store(1)
	cancelled, err := e.Desk.CancelRefund(e.Ctx, other.ID, "store credit instead")
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, cancelled)
	assert.Equal(t, invoice.RefundCancelled, cancelled.Status)
	redeliver("cancelled")

	final := e.Get(inv.ID)
	e.AssertOnePerChange(final)
	var heard []invoice.RefundStatus
	for _, c := range e.Changes(inv.ID) {
		if len(c.Refunds) > 0 && (len(heard) == 0 || heard[len(heard)-1] != c.Refunds[0].Status) {
			heard = append(heard, c.Refunds[0].Status)
		}
	}
	assert.Equal(t, []invoice.RefundStatus{invoice.RefundAwaitingAddress, invoice.RefundReady, invoice.RefundSending, invoice.RefundSent}, heard)
	last := final.Events[len(final.Events)-1]
	assert.Equal(t, invoice.EventRefundCancelled, last.Kind)
	assert.Contains(t, last.Note, "store credit instead")
}

// RefundsOfEveryKindRaceOnFourReplicas: RefundOverpaid, RefundAll,
// RefundCustom (at the coin's last decimal place), RateNow, a retried
// Key and cancellations race on four replicas: the refunds that count
// never pass what was received, every Key makes one refund, and every
// refused call is ErrNotRefundable.
func RefundsOfEveryKindRaceOnFourReplicas(t *testing.T, e *Env) {
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	for round := range 3 {
		inv := e.overpaid(fmt.Sprintf("every-%d", round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		opts := []invoice.RefundOptions{
			{Of: invoice.RefundOverpaid},
			{Of: invoice.RefundOverpaid, Rate: invoice.RateNow},
			{Of: invoice.RefundAll},
			{Of: invoice.RefundCustom, Amount: D("0.00000001")},
			{Of: invoice.RefundCustom, Amount: D("0.00033333")},
			{Of: invoice.RefundCustom, Amount: D("0.001")},
			{Of: invoice.RefundAll, Key: "k"},
			{Of: invoice.RefundAll, Key: "k"},
		}
		keyed := make(chan string, len(opts)*2)
		for i := range 2 * len(opts) {
			wg.Go(func() {
				<-start
				o := opts[i%len(opts)]
				rf, err := desks[i%4].Refund(e.Ctx, inv.ID, &o)
				switch {
				case err != nil:
					assert.ErrorIs(t, err, invoice.ErrNotRefundable, "%+v", o)
				case o.Key != "":
					keyed <- rf.ID
				case i%3 == 0:
					_, err := desks[(i+1)%4].CancelRefund(e.Ctx, rf.ID, "race")
					assert.NoError(t, err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(keyed)
		var keyIDs []string
		for id := range keyed {
			keyIDs = append(keyIDs, id)
		}
		for _, id := range keyIDs {
			assert.Equal(t, keyIDs[0], id, "one refund per Key")
		}
		got := e.Get(inv.ID)
		counted := D("0")
		for _, rf := range got.Refunds {
			if rf.Status != invoice.RefundCancelled {
				counted = counted.Add(rf.Amount)
			}
		}
		assert.True(t, counted.LessThanOrEqual(got.Paid), "round %d: %s counted of %s received", round, counted, got.Paid)
		assert.True(t, got.Refundable("").Equal(got.Paid.Sub(counted)))
		e.AssertOnePerChange(got)
	}
}

// RefundInACoinNeverReceived: a refund in a coin the invoice never
// received (one the service does not list, a token of another network)
// is ErrNotRefundable, saying so, before anything is asked of the
// service or stored.
func RefundInACoinNeverReceived(t *testing.T, e *Env) {
	inv := e.overpaid("never-received")
	before, requests := e.Get(inv.ID).Version, e.Requests()
	for _, tk := range []string{"sol", "bep20_usdt", "trc20/usdt", "ltc"} {
		_, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: tk})
		assert.ErrorIs(t, err, invoice.ErrNotRefundable, tk)
		assert.ErrorContains(t, err, "nothing confirmed was received in", tk)
	}
	assert.Equal(t, requests, e.Requests(), "nothing asked of the service")
	assert.Equal(t, before, e.Get(inv.ID).Version, "nothing stored")
}

// PayoutAnswersThatAreNotTheServices: each payout call in turn reaches
// the service and does its work, but what comes back is a proxy's 502
// page or a 200 HTML page: SendRefund reports the outcome unknown, the
// refund stays sending, and Tick finds what the service did: one payout
// request, one payout, sent.
func PayoutAnswersThatAreNotTheServices(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("1")))
	for _, call := range []string{"/payout/request/bulk/", "payout/create/", "payout/process/", "payout/status/"} {
		for _, f := range []Fault{BadGateway, HTMLPage} {
			name := fmt.Sprintf("%s %d", call, f)
			inv := e.overpaid("page-" + name)
			rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
			reqs, batches := len(e.Srv.Payouts()), len(e.Srv.PayoutBatches())
			e.FaultOn(call, f, 1)
			got, err := e.Desk.SendRefund(e.Ctx, rf.ID)
			if call != "payout/status/" {
				assert.ErrorIs(t, err, cryptapi.ErrOutcomeUnknown, name)
			}
			require.NotNil(t, got, "%s: %v", name, err)
			assert.Equal(t, invoice.RefundSending, got.Status, name)
			e.tickUntilSent(t, name, rf.ID, 10*time.Second+invoice.RefundCheckEvery+cryptapitest.PayoutSettleTime, reqs, batches, e.Desk)
			e.AssertOnePerChange(e.Get(inv.ID))
		}
	}
}

// SendRefundCallerGivesUpMidway: the caller's context ends while each
// payout call in turn hangs; at once SendRefund is retried on three other
// replicas, with their Ticks: they return the refund as it stands and ask
// for nothing, and Ticks carry the send to one payout, sent.
func SendRefundCallerGivesUpMidway(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("1")))
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	for _, call := range []string{"/payout/request/bulk/", "payout/create/", "payout/process/"} {
		inv := e.overpaid("midway-" + call)
		rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
		reqs, batches := len(e.Srv.Payouts()), len(e.Srv.PayoutBatches())
		e.FaultOn(call, Hang, 1)
		ctx, cancel := context.WithTimeout(e.Ctx, 300*time.Millisecond)
		got, err := e.Desk.SendRefund(ctx, rf.ID)
		cancel()
		assert.Error(t, err, call)
		if got != nil {
			assert.Equal(t, invoice.RefundSending, got.Status, call)
		}
		calls := e.PayoutCalls("payout/")
		var wg sync.WaitGroup
		for i, d := range desks[1:] {
			wg.Go(func() {
				again, err := d.SendRefund(e.Ctx, rf.ID)
				if assert.NoError(t, err, call) {
					assert.Equal(t, invoice.RefundSending, again.Status, call)
				}
				if i == 0 {
					_, _ = d.Tick(e.Ctx)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, calls, e.PayoutCalls("payout/"), "%s: the retries asked for nothing while the claim holds", call)
		e.tickUntilSent(t, call, rf.ID, 10*time.Second+invoice.RefundCheckEvery+cryptapitest.PayoutSettleTime, reqs, batches, desks...)
		e.AssertOnePerChange(e.Get(inv.ID))
	}
}

// RateNowLeavesAStrayPaymentWhole: a customer pays part in trx (chosen),
// switches to USDT on Tron, pays the rest, and then sends trx to the
// USDT address (a wrong coin there: not valued). The stray trx is all
// excess with no fiat value: RateNow gives it back whole, as RateThen
// does, at any price; only the valued trx is converted at today's price.
func RateNowLeavesAStrayPaymentWhole(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, &invoice.CreateOptions{
		OrderID: "stray", Price: D("30"), Currency: "USD", Callback: e.CallbackURL(), MultiToken: true,
		Tickers:      []string{"trx", "trc20_usdt"},
		Destinations: map[string]string{"trx": TRXDest, "trc20_usdt": TRXDest},
	})
	require.NoError(t, err)
	trx := e.Choose(inv.ID, "trx").AddressIn
	e.Confirm(e.Pay("trx", trx, "100")) // 12 USD at 0.12
	e.Clock.Advance(time.Minute)
	usdt := e.Choose(inv.ID, "trc20_usdt").AddressIn
	e.Confirm(e.Pay("trc20_usdt", usdt, "18")) // the rest: settled
	e.Confirm(e.Pay("trx", usdt, "50"))        // trx to the USDT address
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusSettled, got.Status)
	require.True(t, got.Payments[2].WrongCoin)
	eq(t, "150", got.Refundable("trx"), "both trx payments")

	for _, c := range []struct{ price, over, all, what string }{
		{"0.12", "50", "150", "an unchanged price: what RateThen gives"},
		{"0.24", "50", "100", "the price doubled: the stray trx whole, the 12 USD of trx at 0.24"},
		{"0.06", "50", "150", "the price halved: never more than arrived"},
	} {
		require.NoError(t, e.Srv.SetPrice("trx", "USD", D(c.price)))
		e.Clock.Advance(2 * time.Minute)
		over, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: "trx", Rate: invoice.RateNow})
		require.NoError(t, err, c.what)
		eq(t, c.over, over.Amount, "overpaid: "+c.what)
		_, err = e.Desk.CancelRefund(e.Ctx, over.ID, "recomputed")
		require.NoError(t, err)
		all, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "trx", Rate: invoice.RateNow})
		require.NoError(t, err, c.what)
		eq(t, c.all, all.Amount, "all: "+c.what)
		_, err = e.Desk.CancelRefund(e.Ctx, all.ID, "recomputed")
		require.NoError(t, err)
	}

	// The stray trx given back first (it is the excess): what is left is
	// the valued trx alone, converted at today's price.
	stray, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: "trx"})
	require.NoError(t, err)
	eq(t, "50", stray.Amount, "the stray trx")
	require.NoError(t, e.Srv.SetPrice("trx", "USD", D("0.24")))
	e.Clock.Advance(2 * time.Minute)
	rest, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "trx", Rate: invoice.RateNow})
	require.NoError(t, err)
	eq(t, "50", rest.Amount, "the 12 USD of valued trx at 0.24; the stray is refunded already")
	e.AssertOnePerChange(e.Get(inv.ID))
}

// TwoChosenCoinsSentOnFourReplicas: an invoice overpaid in both coins
// the customer chose (ltc, a switch, btc, then ltc again to the old
// address) is refunded in each coin; four replicas send both refunds at
// once, with Ticks beside them: one payout per refund, each from its
// coin's payout wallet to the customer's address of that coin, and the
// books' negative rows add up per coin to what was sent.
func TwoChosenCoinsSentOnFourReplicas(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("ltc", D("10")))
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("two-sent")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125")) // 10 USD at 80
	e.Clock.Advance(time.Minute)
	btc := e.Choose(inv.ID, "btc").AddressIn
	e.Confirm(e.Pay("btc", btc, "0.0005")) // 30 USD at 60000: 15 USD over
	e.Confirm(e.Pay("ltc", ltc, "0.0625")) // 5 USD more in ltc: all excess
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusSettled, got.Status)

	overBTC, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	eq(t, "0.00025", overBTC.Amount, "15 USD at 60000, in btc")
	overLTC, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: "ltc"})
	require.NoError(t, err)
	eq(t, "0.0625", overLTC.Amount, "the ltc after the price was paid")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: "ltc"})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "the ltc excess is being refunded")
	for rf, addr := range map[*invoice.Refund]string{overBTC: CustomerBTC, overLTC: CustomerLTC} {
		_, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, addr)
		require.NoError(t, err)
	}

	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 16 {
		wg.Go(func() {
			<-start
			if i >= 12 {
				_, _ = desks[i%4].Tick(e.Ctx)
				return
			}
			id := []string{overBTC.ID, overLTC.ID}[i%2]
			got, err := desks[i%4].SendRefund(e.Ctx, id)
			if assert.NoError(t, err) {
				assert.Contains(t, []invoice.RefundStatus{invoice.RefundSending, invoice.RefundSent}, got.Status)
			}
		})
	}
	close(start)
	wg.Wait()
	payouts := e.Srv.Payouts()
	require.Len(t, payouts, 2, "one payout request per refund")
	byCoin := map[string]cryptapitest.Payout{}
	for _, p := range payouts {
		byCoin[p.Ticker] = p
	}
	assert.Equal(t, CustomerBTC, byCoin["btc"].Address)
	eq(t, "0.00025", byCoin["btc"].Value, "btc")
	assert.Equal(t, CustomerLTC, byCoin["ltc"].Address)
	eq(t, "0.0625", byCoin["ltc"].Value, "ltc")
	e.settlePayouts()
	got = e.Get(inv.ID)
	for _, rf := range got.Refunds {
		assert.Equal(t, invoice.RefundSent, rf.Status, rf.ID)
		assert.NotEmpty(t, rf.TxID, rf.ID)
	}
	eq(t, "0.00025", got.Refundable("btc"), "what paid the price in btc")
	eq(t, "0.125", got.Refundable("ltc"), "what paid the price in ltc")

	var buf bytes.Buffer
	require.NoError(t, e.Desk.ExportCSV(e.Ctx, &buf, &invoice.ListOptions{OrderID: "two-sent"}))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	sums := map[string]decimal.Decimal{}
	for _, r := range rows[1:] {
		if r[col["confirmed"]] == "true" {
			sums[r[col["ticker"]]] = sums[r[col["ticker"]]].Add(D(r[col["amount"]]))
		}
	}
	eq(t, "0.00025", sums["btc"], "the btc rows add up to what is left")
	eq(t, "0.125", sums["ltc"], "the ltc rows add up to what is left")
	e.AssertOnePerChange(got)
}

// SwitchRacesExpiryAndARefund: the customer paid part in ltc and
// switches to btc; while the Desk asks the service for the btc address,
// the invoice expires (Tick on another replica) and the merchant refunds
// the ltc (a third replica). The switch is refused and leaves the
// invoice in ltc; the refund gives back the ltc that arrived, in ltc,
// and nothing in btc; a second refund finds nothing left.
func SwitchRacesExpiryAndARefund(t *testing.T, e *Env) {
	o := e.ChoiceOptions("switch-refund")
	o.ExpiresIn = time.Hour
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125"))
	e.Clock.Advance(time.Minute)
	tick, merchant := e.NewDesk(), e.NewDesk()
	var rf *invoice.Refund
	var tickErr, refundErr error
	e.OnCreate(func() {
		e.OnCreate(nil)
		e.Clock.Advance(time.Hour)
		_, tickErr = tick.Tick(e.Ctx)
		rf, refundErr = merchant.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Rate: invoice.RateNow})
	})
	_, err = e.NewDesk(invoice.WithLease(24*time.Hour)).Choose(e.Ctx, inv.ID, "btc")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "expired while the address was made")
	require.NoError(t, tickErr)
	require.NoError(t, refundErr)
	assert.Equal(t, "ltc", rf.Ticker)
	eq(t, "0.125", rf.Amount, "the ltc that arrived, at an unchanged price")
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, "ltc", got.Ticker, "the switch did not happen")
	assert.Equal(t, ltc, got.AddressIn)
	eq(t, "0", got.Refundable("ltc"), "all of it is being refunded")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable)
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "btc"})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "nothing arrived in btc")
	e.AssertOnePerChange(got)
}

// RefundOfAnInvoiceNoCoinWasChosenFor: an invoice offering coins that
// expired before the customer chose one received nothing: a refund of any
// kind is ErrNotRefundable saying so in words, before the service is
// asked anything and with nothing stored.
func RefundOfAnInvoiceNoCoinWasChosenFor(t *testing.T, e *Env) {
	o := e.ChoiceOptions("never-chosen")
	o.ExpiresIn = time.Hour
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	e.Clock.Advance(2 * time.Hour)
	e.Tick()
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusExpired, got.Status)
	before, requests := got.Version, e.Requests()
	for _, q := range []invoice.RefundOptions{
		{Of: invoice.RefundAll}, {Of: invoice.RefundOverpaid}, {Of: invoice.RefundAll, Rate: invoice.RateNow},
		{Of: invoice.RefundCustom, Amount: D("0.1")},
	} {
		_, err := e.Desk.Refund(e.Ctx, inv.ID, &q)
		assert.ErrorIs(t, err, invoice.ErrNotRefundable, q.Of)
		assert.ErrorContains(t, err, "nothing confirmed was received: the customer chose no coin", q.Of)
	}
	assert.Equal(t, requests, e.Requests(), "nothing asked of the service")
	assert.Equal(t, before, e.Get(inv.ID).Version, "nothing stored")
}

// TwoChosenCoinsAtTodaysPrices: part in ltc, a switch, a btc payment
// that brings the rest and more, then ltc again to the old address after
// the invoice settled: the excess is in btc (what the btc brought beyond
// the price) and in ltc (all of the late ltc), each refunded at RateThen
// and at RateNow with its own coin's price up and down, never more of a
// coin than arrived in it.
func TwoChosenCoinsAtTodaysPrices(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("two-prices")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.25")) // 20 USD at 80
	e.Clock.Advance(time.Minute)
	btc := e.Choose(inv.ID, "btc").AddressIn
	e.Confirm(e.Pay("btc", btc, "0.0005")) // 30 USD at 60000: 25 USD over
	require.Equal(t, invoice.StatusSettled, e.Get(inv.ID).Status)
	e.Confirm(e.Pay("ltc", ltc, "0.0625")) // 5 USD after it settled
	got := e.Get(inv.ID)
	require.Equal(t, invoice.ExceptionPaidOver, got.Exception)

	price := func(coin, p string) {
		require.NoError(t, e.Srv.SetPrice(coin, "USD", D(p)))
		e.Clock.Advance(2 * time.Minute)
	}
	for _, c := range []struct {
		coin, price string
		of          invoice.RefundOf
		rate        invoice.RefundRate
		want, what  string
	}{
		{"btc", "60000", invoice.RefundOverpaid, invoice.RateThen, "0.00041666", "25 USD of btc at its quote"},
		{"btc", "120000", invoice.RefundOverpaid, invoice.RateNow, "0.00020833", "btc up: 24.9996 USD at 120000"},
		{"btc", "30000", invoice.RefundOverpaid, invoice.RateNow, "0.00041666", "btc down: never more than its excess"},
		{"ltc", "80", invoice.RefundOverpaid, invoice.RateThen, "0.0625", "the ltc after the price was paid"},
		{"ltc", "160", invoice.RefundOverpaid, invoice.RateNow, "0.03125", "ltc up: 5 USD at 160"},
		{"ltc", "40", invoice.RefundOverpaid, invoice.RateNow, "0.0625", "ltc down: never more than its excess"},
		{"ltc", "160", invoice.RefundAll, invoice.RateNow, "0.15625", "all ltc, 25 USD, at 160"},
		{"ltc", "40", invoice.RefundAll, invoice.RateNow, "0.3125", "all ltc at 40: never more than arrived"},
		{"btc", "120000", invoice.RefundAll, invoice.RateNow, "0.00025", "all btc, 30 USD, at 120000"},
	} {
		price(c.coin, c.price)
		rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: c.of, Rate: c.rate, Ticker: c.coin})
		require.NoError(t, err, c.what)
		assert.Equal(t, c.coin, rf.Ticker, c.what)
		eq(t, c.want, rf.Amount, c.what)
		_, err = e.Desk.CancelRefund(e.Ctx, rf.ID, "recomputed")
		require.NoError(t, err)
	}

	// Every coin to the last unit, and not one more.
	for _, coin := range []string{"ltc", "btc"} {
		_, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: coin})
		require.NoError(t, err)
		_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: coin})
		require.NoError(t, err)
		_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Ticker: coin, Amount: D("0.00000001")})
		assert.ErrorIs(t, err, invoice.ErrNotRefundable, coin)
	}
	got = e.Get(inv.ID)
	sums := map[string]decimal.Decimal{}
	for _, rf := range got.Refunds {
		if rf.Status != invoice.RefundCancelled {
			sums[rf.Ticker] = sums[rf.Ticker].Add(rf.Amount)
		}
	}
	eq(t, "0.3125", sums["ltc"], "all the ltc that arrived")
	eq(t, "0.0005", sums["btc"], "all the btc that arrived")
	eq(t, "0", got.Refundable("ltc"), "ltc")
	eq(t, "0", got.Refundable("btc"), "btc")
	e.AssertOnePerChange(got)
}

// TwoChosenCoinsRefundsRaceOnFourReplicas: twenty refunds of everything,
// half in each coin the customer paid, on four replicas at once: one per
// coin is made, for all of that coin, and the others fail with
// ErrNotRefundable.
func TwoChosenCoinsRefundsRaceOnFourReplicas(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("two-race")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125"))
	e.Clock.Advance(time.Minute)
	btc := e.Choose(inv.ID, "btc").AddressIn
	e.Confirm(e.Pay("btc", btc, "0.00025"))
	require.Equal(t, invoice.StatusSettled, e.Get(inv.ID).Status)
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	var wg sync.WaitGroup
	var made sync.Map
	start := make(chan struct{})
	for i := range 20 {
		wg.Go(func() {
			<-start
			coin := []string{"ltc", "btc"}[i%2]
			rf, err := desks[i%4].Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: coin})
			if err != nil {
				assert.ErrorIs(t, err, invoice.ErrNotRefundable, coin)
				return
			}
			_, dup := made.LoadOrStore(coin, rf)
			assert.False(t, dup, "a second refund of all the %s", coin)
		})
	}
	close(start)
	wg.Wait()
	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 2)
	for _, rf := range got.Refunds {
		want := map[string]string{"ltc": "0.125", "btc": "0.00025"}[rf.Ticker]
		eq(t, want, rf.Amount, rf.Ticker)
		eq(t, "0", got.Refundable(rf.Ticker), rf.Ticker)
	}
	e.AssertOnePerChange(got)
}
