package invoicesuite

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// The customer's choice of coin (issue 22), each rule a scenario run
// with every store.

// More destinations valid for their coins.
const (
	LTCDest = "ltc1q2jfahyd0alplfsuvw2mqt56mqvs58u0vrv5z08"
	ETHDest = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
)

// ChoiceOptions are the options of an invoice of 25 USD the customer pays
// in btc, ltc or USDT on Tron, as the page lists them.
func (e *Env) ChoiceOptions(order string) invoice.CreateOptions {
	return invoice.CreateOptions{
		OrderID: order, Price: D("25"), Currency: "USD", Callback: e.CallbackURL(), Description: "2 × Mug",
		Tickers:      []string{"btc", "ltc", "trc20/usdt"},
		Destinations: map[string]string{"btc": BTCDest, "ltc": LTCDest, "trc20_usdt": TRXDest},
	}
}

// Choose chooses a coin through the Desk.
func (e *Env) Choose(id, coin string) *invoice.Invoice {
	e.T.Helper()
	inv, err := e.Desk.Choose(e.Ctx, id, coin)
	require.NoError(e.T, err)
	return inv
}

// CustomerChoosesTheCoin: an invoice offering coins starts without an
// address, and asks the service for nothing but the coins' info; the
// coin the customer chooses gets its address, and only it; a switch gets
// a new one; a payment in the first coin after the switch still counts,
// at its own quote, and the invoice settles on the rest in the second.
func CustomerChoosesTheCoin(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c1")))
	require.NoError(t, err)
	assert.Zero(t, e.Creates(), "no address before a choice")
	assert.Empty(t, inv.AddressIn)
	assert.Empty(t, inv.Ticker)
	eq(t, "0", inv.Due, "nothing asked yet")
	require.Len(t, inv.Coins, 3)
	for i, want := range []struct{ ticker, name, network, due string }{
		{"btc", "Bitcoin", "", "0.00041667"},
		{"ltc", "Litecoin", "", "0.3125"},
		{"trc20_usdt", "Tether USD (TRC-20)", "trc20", "25"},
	} {
		c := inv.Coins[i]
		assert.Equal(t, want.ticker, c.Ticker)
		assert.Equal(t, want.name, c.CoinName, "the service's name")
		assert.Equal(t, want.network, c.Network)
		eq(t, want.due, c.Due, want.ticker+": the price in the coin")
		assert.Empty(t, c.AddressIn)
	}

	got := e.Choose(inv.ID, "ltc")
	assert.Equal(t, 1, e.Creates(), "one address, for the coin chosen")
	assert.Equal(t, "ltc", got.Ticker)
	assert.Equal(t, "Litecoin", got.CoinName)
	assert.NotEmpty(t, got.AddressIn)
	assert.True(t, e.Srv.ValidAddress("ltc", got.AddressIn))
	eq(t, "0.3125", got.Due, "25 USD at 80")
	assert.Equal(t, "litecoin:"+got.AddressIn+"?amount=0.3125", got.PaymentURI)
	ltcAddr := got.AddressIn
	again := e.Choose(inv.ID, "LTC")
	assert.Equal(t, got.Version, again.Version, "the same coin again changes nothing")
	assert.Equal(t, 1, e.Creates())

	// Part in ltc, then the customer switches to btc.
	e.Confirm(e.Pay("ltc", ltcAddr, "0.125")) // 10 USD
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	e.Clock.Advance(time.Minute) // the Desk reads a price at most once a minute
	got = e.Choose(inv.ID, "btc")
	assert.Equal(t, 2, e.Creates(), "a new address for the new coin")
	assert.NotEqual(t, ltcAddr, got.AddressIn)
	eq(t, "0.0003", got.Due, "15 USD at 50000")
	eq(t, "10", got.PaidFiat, "the ltc payment")
	assert.Equal(t, ltcAddr, got.Coins[1].AddressIn, "the ltc address stays the invoice's")

	// The customer's wallet had sent more ltc before the switch: it still
	// counts, at ltc's quote.
	e.Confirm(e.Pay("ltc", ltcAddr, "0.0625")) // 5 USD
	got = e.Get(inv.ID)
	eq(t, "15", got.PaidFiat, "both ltc payments")
	eq(t, "0.0002", got.Due, "10 USD at 50000, in btc")
	assert.Equal(t, invoice.ExceptionPaidPartial, got.Exception)
	e.Confirm(e.Pay("btc", got.AddressIn, "0.0002"))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	eq(t, "25", got.PaidFiat, "10 + 5 USD in ltc, 10 in btc")
	eq(t, "0.0002", got.Paid, "Paid is in the coin chosen last")
	require.Len(t, got.Payments, 3)
	for i, want := range []struct{ coin, rate string }{{"ltc", "80"}, {"ltc", "80"}, {"btc", "50000"}} {
		assert.Equal(t, want.coin, got.Payments[i].Coin)
		eq(t, want.rate, got.Payments[i].Rate, "payment %d at its coin's quote")
	}
	assert.Equal(t, 2, e.Creates(), "no address beyond the coins chosen")
	seenAndConfirmed := []string{invoice.EventPaymentSeen, invoice.EventPaymentConfirmed}
	assert.Equal(t, slices.Concat([]string{invoice.EventCreated, invoice.EventCoinChosen}, seenAndConfirmed,
		[]string{invoice.EventCoinChosen}, seenAndConfirmed, seenAndConfirmed), kindsOf(got.Events))
	e.AssertOnePerChange(got)

	// The books: a row per payment, each in its coin at its quote; their
	// fiat values add up to PaidFiat.
	var buf bytes.Buffer
	require.NoError(t, e.Desk.ExportCSV(e.Ctx, &buf, &invoice.ListOptions{OrderID: "c1"}))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	fiat := D("0")
	for i, r := range rows[1:] {
		assert.Equal(t, got.Payments[i].Coin, r[col["ticker"]])
		assert.Equal(t, got.Payments[i].Rate.String(), r[col["rate"]])
		fiat = fiat.Add(D(r[col["fiat_value"]]))
	}
	eq(t, got.PaidFiat.String(), fiat, "the rows add up")
}

func ptr[T any](v T) *T { return &v }

// ChoiceSetByCreate: Ticker among Tickers starts the invoice in that
// coin, with its address; the customer may still switch.
func ChoiceSetByCreate(t *testing.T, e *Env) {
	o := e.ChoiceOptions("c2")
	o.Ticker = "trc20_usdt"
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	assert.Equal(t, 1, e.Creates())
	assert.Equal(t, "trc20_usdt", inv.Ticker)
	assert.True(t, e.Srv.ValidAddress("trc20_usdt", inv.AddressIn))
	eq(t, "25", inv.Due, "25 USDT")
	assert.Equal(t, inv.AddressIn, inv.Coins[2].AddressIn)

	same, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err, "the same request again")
	assert.Equal(t, inv.ID, same.ID)
	o.Destinations = map[string]string{"btc": BTCDest, "ltc": LTCDest, "trc20_usdt": "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"}
	_, err = e.Desk.Create(e.Ctx, &o)
	assert.ErrorIs(t, err, invoice.ErrOrderOpen, "another destination is another request")

	got := e.Choose(inv.ID, "btc")
	assert.Equal(t, 2, e.Creates())
	assert.Equal(t, "btc", got.Ticker)
	e.AssertOnePerChange(got)
}

// ChoiceRefusals: bad options and bad choices are refused with a clear
// error before anything is sent or stored.
func ChoiceRefusals(t *testing.T, e *Env) {
	before := e.Requests()
	for _, tc := range []struct {
		name  string
		edit  func(*invoice.CreateOptions)
		field string
	}{
		{"Ticker not among Tickers", func(o *invoice.CreateOptions) { o.Ticker = "eth" }, "Ticker"},
		{"a destination for a coin not offered", func(o *invoice.CreateOptions) { o.Destinations["eth"] = ETHDest }, "Destinations"},
		{"a destination that is no ticker", func(o *invoice.CreateOptions) { o.Destinations["../btc"] = BTCDest }, "Destinations"},
		{"a coin without destination", func(o *invoice.CreateOptions) { delete(o.Destinations, "ltc") }, "Destinations"},
		{"an empty destination", func(o *invoice.CreateOptions) { o.Destinations["ltc"] = " " }, "Destinations"},
		{"a destination no address has", func(o *invoice.CreateOptions) { o.Destinations["ltc"] = "ltc1q&amount=1" }, "ltc"},
		{"a destination twice", func(o *invoice.CreateOptions) {
			o.Destinations["trc20_usdt"] = TRXDest
			o.Destinations["TRC20/USDT"] = TRXDest
		}, "Destinations"},
		{"Address with Tickers", func(o *invoice.CreateOptions) { o.Address = BTCDest }, "Address"},
		{"Outputs with Tickers", func(o *invoice.CreateOptions) {
			o.Outputs = []cryptapi.Output{{Address: BTCDest, Share: D("1")}}
		}, "Address"},
		{"Destinations without Tickers", func(o *invoice.CreateOptions) { o.Tickers, o.Ticker = nil, "btc" }, "Destinations"},
		{"a coin twice", func(o *invoice.CreateOptions) { o.Tickers = append(o.Tickers, "TRC20_USDT") }, "Tickers"},
		{"a coin that is no ticker", func(o *invoice.CreateOptions) { o.Tickers = append(o.Tickers, "btc?x=1") }, "Tickers"},
		{"too many coins", func(o *invoice.CreateOptions) {
			for i := range invoice.MaxTickers {
				o.Tickers = append(o.Tickers, "c"+strings.Repeat("x", i+1))
			}
		}, "Tickers"},
		{"a price in a coin", func(o *invoice.CreateOptions) { o.Currency = "BTC" }, "Currency"},
		{"a price without currency", func(o *invoice.CreateOptions) { o.Currency = "" }, "Currency"},
	} {
		o := e.ChoiceOptions("refused")
		tc.edit(&o)
		_, err := e.Desk.Create(e.Ctx, &o)
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, tc.name)
		assert.ErrorContains(t, err, tc.field, tc.name)
	}
	assert.Equal(t, before, e.Requests(), "nothing sent")
	got, err := e.Desk.ByOrderID(e.Ctx, "refused")
	require.NoError(t, err)
	assert.Empty(t, got, "nothing stored")

	// A coin whose minimum is above the price is refused when created.
	o := e.ChoiceOptions("small")
	o.Price = D("5.5")
	_, err = e.Desk.Create(e.Ctx, &o)
	var below *cryptapi.BelowMinimumError
	require.ErrorAs(t, err, &below, "5.50 USD is below the minimum of btc (0.0001 btc, 6 USD)")
	assert.Equal(t, "btc", below.Ticker)
	assert.Zero(t, e.Creates())

	// Choices the invoice does not allow.
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c3")))
	require.NoError(t, err)
	before = e.Requests()
	for _, coin := range []string{"eth", "trc20_usdc", "", "btc/../ltc", "<script>"} {
		_, err = e.Desk.Choose(e.Ctx, inv.ID, coin)
		assert.ErrorIs(t, err, invoice.ErrCoinNotOffered, "%q", coin)
	}
	_, err = e.Desk.Choose(e.Ctx, "AAAAAAAAAAAAAAAAAAAAAAAAAA", "btc")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	assert.Equal(t, before, e.Requests(), "nothing sent")
	single := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	before = e.Requests()
	_, err = e.Desk.Choose(e.Ctx, single.ID, "ltc")
	assert.ErrorIs(t, err, invoice.ErrCoinNotOffered, "an invoice in one coin offers no other")
	same, err := e.Desk.Choose(e.Ctx, single.ID, "btc")
	require.NoError(t, err, "its own coin is no change")
	assert.Equal(t, single.Version, same.Version)
	assert.Equal(t, before, e.Requests(), "nothing sent")

	// After the deadline, before Tick stored it: refused, nothing made.
	e.Clock.Advance(time.Hour)
	before = e.Requests()
	_, err = e.Desk.Choose(e.Ctx, inv.ID, "btc")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus)
	assert.Equal(t, before, e.Requests(), "no address for an expired invoice")
	e.Tick()
	assert.Equal(t, invoice.StatusExpired, e.Get(inv.ID).Status)
}

// ChoicesAreBounded: a customer (or a forged form) switching back and
// forth makes at most one address per coin and MaxChoices choices.
func ChoicesAreBounded(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c4")))
	require.NoError(t, err)
	coins := []string{"btc", "ltc", "trc20_usdt"}
	n := 0
	for ; n < 3*invoice.MaxChoices; n++ {
		if _, err = e.Desk.Choose(e.Ctx, inv.ID, coins[n%3]); err != nil {
			break
		}
	}
	assert.ErrorIs(t, err, invoice.ErrTooManyChoices)
	assert.Equal(t, invoice.MaxChoices, n)
	assert.Equal(t, 3, e.Creates(), "one address per coin")
	got := e.Get(inv.ID)
	assert.Equal(t, int64(1+invoice.MaxChoices), got.Version)
	_, err = e.Desk.Choose(e.Ctx, inv.ID, got.Ticker)
	assert.NoError(t, err, "the coin chosen last stays choosable")
	e.Pay(got.Ticker, got.AddressIn, got.Due.String())
	assert.Equal(t, invoice.StatusProcessing, e.Get(inv.ID).Status, "and payable")
}

// RacingChoices: the same choice on several replicas at once (a double
// click, two tabs, a retry) makes one address with one call to the
// service; every caller gets it.
func RacingChoices(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c5")))
	require.NoError(t, err)
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	// The service answers slowly, so that every call waits on the first.
	e.OnCreate(func() { time.Sleep(50 * time.Millisecond) })
	defer e.OnCreate(nil)
	addrs := make([]string, 12)
	errs := make([]error, len(addrs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range addrs {
		wg.Go(func() {
			<-start
			got, err := desks[i%len(desks)].Choose(e.Ctx, inv.ID, "ltc")
			errs[i] = err
			if err == nil {
				addrs[i] = got.AddressIn
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "choice %d", i)
		assert.Equal(t, addrs[0], addrs[i], "choice %d", i)
	}
	assert.Equal(t, 1, e.Creates(), "one service call")
	got := e.Get(inv.ID)
	assert.Equal(t, int64(2), got.Version, "one change")
	e.AssertOnePerChange(got)

	// Different coins at once: each its own address, one chosen last.
	wg = sync.WaitGroup{}
	for i, coin := range []string{"btc", "trc20_usdt", "btc", "trc20_usdt"} {
		wg.Go(func() {
			_, err := desks[i].Choose(e.Ctx, inv.ID, coin)
			assert.NoError(t, err, coin)
		})
	}
	wg.Wait()
	assert.Equal(t, 3, e.Creates(), "one address per coin")
	got = e.Get(inv.ID)
	assert.Contains(t, []string{"btc", "trc20_usdt"}, got.Ticker)
	for _, c := range got.Coins {
		assert.NotEmpty(t, c.AddressIn, c.Ticker)
	}
}

// ChoiceAfterACrash: a Choose whose process died while the service made
// the address holds the coin until its claim lapses; then the next
// choice takes over and gets the same address (the service binds the
// callback URL).
func ChoiceAfterACrash(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c6")))
	require.NoError(t, err)
	// The service makes the address, and the Desk's process dies before
	// storing it (or releasing its claim).
	var dead atomic.Bool
	crashed := e.NewDeskOn(&dyingStore{Store: e.Store, dead: &dead}, invoice.WithLease(time.Minute))
	e.OnCreate(func() { dead.Store(true) })
	_, err = crashed.Choose(e.Ctx, inv.ID, "ltc")
	require.ErrorIs(t, err, errDead)
	e.OnCreate(nil)
	assert.Equal(t, 1, e.Creates())
	assert.Empty(t, e.Get(inv.ID).AddressIn, "not stored")

	ctx, cancel := context.WithTimeout(e.Ctx, 300*time.Millisecond)
	_, err = e.NewDesk(invoice.WithLease(time.Minute)).Choose(ctx, inv.ID, "ltc")
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the claim holds the coin")
	e.Clock.Advance(time.Minute)
	got := e.Choose(inv.ID, "ltc")
	assert.Equal(t, 2, e.Creates(), "asked again")
	assert.Equal(t, e.createCallback(t, 0), e.createCallback(t, 1), "with the same callback URL, so the same address")
	assert.True(t, e.Srv.ValidAddress("ltc", got.AddressIn))
	e.Confirm(e.Pay("ltc", got.AddressIn, got.Due.String()))
	assert.Equal(t, invoice.StatusSettled, e.Get(inv.ID).Status, "the one address gets the money")
}

// SwitchRacesPayment: a payment to the first coin's address and a
// switch to another coin at the same moment: whichever goes first, the
// payment counts once at a quote in force, and a switch after a payment
// in full is refused.
func SwitchRacesPayment(t *testing.T, e *Env) {
	for round := range 6 {
		inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("race"+string(rune('a'+round)))))
		require.NoError(t, err)
		first := e.Choose(inv.ID, "btc")
		full := round%2 == 0
		amount := first.Due
		if !full {
			amount = D("0.0002")
		}
		var wg sync.WaitGroup
		var chooseErr error
		wg.Go(func() {
			_, chooseErr = e.NewDesk().Choose(e.Ctx, inv.ID, "ltc")
		})
		wg.Go(func() { e.Pay("btc", first.AddressIn, amount.String()) })
		wg.Wait()
		got := e.Get(inv.ID)
		require.Len(t, got.Payments, 1)
		assert.Equal(t, "btc", got.Payments[0].Coin)
		assert.False(t, got.Payments[0].WrongCoin)
		eq(t, amount.Mul(D("60000")).String(), got.PaidPendingFiat, "at btc's quote")
		switch {
		case chooseErr != nil:
			assert.ErrorIs(t, chooseErr, invoice.ErrWrongStatus)
			assert.True(t, full, "only a payment in full stops a switch")
			assert.Equal(t, "btc", got.Ticker)
		case full:
			assert.Equal(t, invoice.StatusProcessing, got.Status, "the switch first, then the payment in full")
		default:
			assert.Equal(t, "ltc", got.Ticker)
			eq(t, "0.1625", got.Due, "13 USD at 80, in ltc")
		}
		e.AssertOnePerChange(got)
	}
}

// ChoiceReconciled: callbacks that never arrived, to the first coin's
// address and to the second's, are recovered from the logs of both.
func ChoiceReconciled(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c7")))
	require.NoError(t, err)
	untouched, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err, "no address: nothing to read")
	assert.Equal(t, inv.Version, untouched.Version)
	btc := e.Choose(inv.ID, "btc")
	ltc := e.Choose(inv.ID, "ltc")
	e.Down.Store(true)
	e.Confirm(e.Pay("btc", btc.AddressIn, "0.0002")) // 12 USD
	e.Confirm(e.Pay("ltc", ltc.AddressIn, "0.1625")) // 13 USD
	assert.Equal(t, ltc.Version, e.Stored(inv.ID).Version, "the shop saw nothing")
	got, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	eq(t, "25", got.PaidFiat, "both coins")
	e.Down.Store(false)
	e.Clock.Advance(time.Second)
	e.Flush()
	assert.Equal(t, got.Version, e.Stored(inv.ID).Version, "the service's retries change nothing")
	e.AssertOnePerChange(got)
}

// ChoiceWithNobodyWatching: Tick renews the quotes of every coin of an
// invoice waiting for a choice, and expires it at its deadline; Reopen
// asks again, for a choice.
func ChoiceWithNobodyWatching(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c8")))
	require.NoError(t, err)
	require.NoError(t, e.Srv.SetPrice("ltc", "USD", D("100")))
	e.Clock.Advance(15 * time.Minute)
	assert.Equal(t, 1, e.Tick())
	got := e.Get(inv.ID)
	eq(t, "0.25", got.Coins[1].Due, "25 USD at 100")
	eq(t, "100", got.Coins[1].Rate, "ltc quoted again")
	e.Clock.Advance(45 * time.Minute)
	e.Tick()
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	for _, c := range got.Coins {
		eq(t, "0", c.Due, c.Ticker+": nothing asked")
	}
	got, err = e.Desk.Reopen(e.Ctx, inv.ID, &invoice.ReopenOptions{Reason: "the customer asked"})
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Empty(t, got.Ticker)
	got = e.Choose(inv.ID, "ltc")
	eq(t, "0.25", got.Due, "due")
	e.AssertOnePerChange(got)
}

// ChoiceCallbacksForOtherAddresses: a signed callback naming the
// invoice with its nonce but an address the invoice never had, or one
// made for a choice that was never stored, touches nothing.
func ChoiceCallbacksForOtherAddresses(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("c9")))
	require.NoError(t, err)
	btc := e.Choose(inv.ID, "btc")
	e.Pay("btc", btc.AddressIn, "0.0001")
	ds := e.Deliveries(btc.AddressIn, true)
	require.Len(t, ds, 1)
	target := strings.Replace(ds[0].URL, "address_in="+btc.AddressIn, "address_in=", 1)
	h := http.Header{}
	h.Set("x-ca-signature", e.Srv.Sign([]byte(target)))
	before := e.Stored(inv.ID).Version
	status, _ := e.Send(http.MethodGet, target, h, nil)
	assert.Contains(t, []int{http.StatusBadRequest, http.StatusForbidden}, status, "an empty address is none of the invoice's")
	target = strings.Replace(ds[0].URL, "address_in="+btc.AddressIn, "address_in="+LTCDest, 1)
	h.Set("x-ca-signature", e.Srv.Sign([]byte(target)))
	status, _ = e.Send(http.MethodGet, target, h, nil)
	assert.Equal(t, http.StatusForbidden, status, "an address never made for the invoice")
	assert.Equal(t, before, e.Stored(inv.ID).Version)
}

// ChoiceRacesExpiry: while the service makes the address of a choice,
// the deadline passes and another replica's Tick expires the invoice.
// The invoice stays expired without an address (the one made was never
// shown), Choose says it no longer waits for payment, and the coin is
// free at once: after Reopen a choice of it needs no wait for the first
// claim to lapse, and gets the same address.
func ChoiceRacesExpiry(t *testing.T, e *Env) {
	o := e.ChoiceOptions("c10")
	o.ExpiresIn = time.Hour
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	tick := e.NewDesk()
	var tickErr error
	var ticked int
	e.OnCreate(func() {
		e.Clock.Advance(time.Hour)
		ticked, tickErr = tick.Tick(e.Ctx)
	})
	_, err = e.NewDesk(invoice.WithLease(24*time.Hour)).Choose(e.Ctx, inv.ID, "ltc")
	e.OnCreate(nil)
	require.NoError(t, tickErr)
	assert.Equal(t, 1, ticked, "Tick expired it")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus)
	assert.Equal(t, 1, e.Creates())
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Empty(t, got.Ticker)
	assert.Empty(t, got.AddressIn)
	for _, c := range got.Coins {
		assert.Empty(t, c.AddressIn, c.Ticker)
	}
	e.AssertOnePerChange(got)

	_, err = e.Desk.Reopen(e.Ctx, inv.ID, &invoice.ReopenOptions{Reason: "the customer came back"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Second)
	defer cancel()
	got, err = e.NewDesk(invoice.WithLease(24*time.Hour)).Choose(ctx, inv.ID, "ltc")
	require.NoError(t, err, "the failed choice released its claim")
	assert.Equal(t, 2, e.Creates())
	assert.Equal(t, e.createCallback(t, 0), e.createCallback(t, 1), "the same callback URL, so the same address")
	e.Confirm(e.Pay("ltc", got.AddressIn, got.Due.String()))
	assert.Equal(t, invoice.StatusSettled, e.Get(inv.ID).Status)
}

// SwitchRacesConfirmation: the confirmation of a partial payment to the
// first coin's address arrives while the customer switches coin: the
// payment counts once, confirmed, at the quote it was first seen at,
// whichever goes first, and the new coin asks for the rest.
func SwitchRacesConfirmation(t *testing.T, e *Env) {
	for round := range 4 {
		inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("confirm"+string(rune('a'+round)))))
		require.NoError(t, err)
		first := e.Choose(inv.ID, "btc")
		tx := e.Pay("btc", first.AddressIn, "0.0002") // 12 USD, unconfirmed
		var wg sync.WaitGroup
		var chooseErr error
		wg.Go(func() { _, chooseErr = e.NewDesk().Choose(e.Ctx, inv.ID, "ltc") })
		wg.Go(func() { e.Confirm(tx) })
		wg.Wait()
		require.NoError(t, chooseErr, "a partial payment does not stop a switch")
		got := e.Get(inv.ID)
		require.Len(t, got.Payments, 1)
		rc := got.Payments[0]
		assert.True(t, rc.Confirmed)
		assert.Equal(t, "btc", rc.Coin)
		eq(t, "60000", rc.Rate, "its first quote")
		eq(t, "12", got.PaidFiat, "counted once")
		eq(t, "0", got.PaidPendingFiat, "")
		assert.Equal(t, "ltc", got.Ticker)
		eq(t, "0.1625", got.Due, "13 USD at 80")
		assert.Equal(t, invoice.ExceptionPaidPartial, got.Exception)
		e.AssertOnePerChange(got)
	}
}
