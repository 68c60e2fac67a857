package invoicesuite

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
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

// The rules of refunds (issue 21), each a scenario run with every store.

// Refund addresses of the customers, valid for their networks.
const (
	CustomerBTC = "bc1q56mj3gna7kq0057de42ww2rjxwzeh9amkncq5e"
	CustomerTRX = "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7"
)

// RefundScenarios are the refund scenarios of both forms (keyless ones
// get a keyless Env, keyed ones a keyed Env).
var RefundScenarios = []struct {
	Name  string
	Keyed bool
	Fn    func(*testing.T, *Env)
}{
	{"RefundOverpaidThenAll", false, RefundOverpaidThenAll},
	{"NeverMoreThanReceived", false, NeverMoreThanReceived},
	{"BadRefundsStoreNothing", false, BadRefundsStoreNothing},
	{"WrongCoinIsRefundedInItsCoin", false, WrongCoinIsRefundedInItsCoin},
	{"RefundRates", false, RefundRates},
	{"RefundsRaceOnFourReplicas", false, RefundsRaceOnFourReplicas},
	{"RefundsRaceDecisionsAndPayments", false, RefundsRaceDecisionsAndPayments},
	{"ClaimAndMarkSentKeyless", false, ClaimAndMarkSentKeyless},
	{"ClaimLinksExpire", false, ClaimLinksExpire},
	{"SendRefundFromThePayoutWallet", true, SendRefundFromThePayoutWallet},
	{"SendRefundRacesOnFourReplicas", true, SendRefundRacesOnFourReplicas},
	{"FailedPayoutSentAgainOrCancelled", true, FailedPayoutSentAgainOrCancelled},
	{"PayoutOutcomeUnknownAtEveryCall", true, PayoutOutcomeUnknownAtEveryCall},
	{"BooksWithRefunds", true, BooksWithRefunds},
	{"BookkeepingIsNotAChange", false, BookkeepingIsNotAChange},
	{"RetriedRefundWithAKey", false, RetriedRefundWithAKey},
	{"OneCustomerTwoRefundsUnknownOutcomes", true, OneCustomerTwoRefundsUnknownOutcomes},
	{"RefusedQueueKeepsThePayout", true, RefusedQueueKeepsThePayout},
	{"RateNowValuesTheExcessAtItsQuotes", false, RateNowValuesTheExcessAtItsQuotes},
	{"RefundChangesHeardOnceWhenOnChangeFails", true, RefundChangesHeardOnceWhenOnChangeFails},
	{"RefundsOfEveryKindRaceOnFourReplicas", false, RefundsOfEveryKindRaceOnFourReplicas},
	{"RefundInACoinNeverReceived", false, RefundInACoinNeverReceived},
	{"PayoutAnswersThatAreNotTheServices", true, PayoutAnswersThatAreNotTheServices},
	{"SendRefundCallerGivesUpMidway", true, SendRefundCallerGivesUpMidway},
	{"ChosenCoinsRefundedEachInItsCoin", false, ChosenCoinsRefundedEachInItsCoin},
	{"OldCoinAloneIsRefundedInIt", false, OldCoinAloneIsRefundedInIt},
	{"ChosenCoinSentFromThePayoutWallet", true, ChosenCoinSentFromThePayoutWallet},
	{"RateNowLeavesAStrayPaymentWhole", false, RateNowLeavesAStrayPaymentWhole},
	{"TwoChosenCoinsSentOnFourReplicas", true, TwoChosenCoinsSentOnFourReplicas},
	{"SwitchRacesExpiryAndARefund", false, SwitchRacesExpiryAndARefund},
	{"RefundOfAnInvoiceNoCoinWasChosenFor", false, RefundOfAnInvoiceNoCoinWasChosenFor},
	{"TwoChosenCoinsAtTodaysPrices", false, TwoChosenCoinsAtTodaysPrices},
	{"TwoChosenCoinsRefundsRaceOnFourReplicas", false, TwoChosenCoinsRefundsRaceOnFourReplicas},
}

// RunRefunds runs every refund scenario with stores from newStore.
func RunRefunds(t *testing.T, newStore func(t *testing.T) invoice.Store) {
	for _, sc := range RefundScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Keyed {
				sc.Fn(t, NewKeyedEnv(t, newStore(t), invoice.WithLease(10*time.Second)))
				return
			}
			sc.Fn(t, NewEnv(t, newStore(t)))
		})
	}
}

// Overpaid pays inv 0.001 btc (60 USD for 25), confirmed.
func (e *Env) overpaid(order string) *invoice.Invoice {
	e.T.Helper()
	inv := e.Create(invoice.CreateOptions{OrderID: order, Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.001"))
	got := e.Get(inv.ID)
	require.Equal(e.T, invoice.StatusSettled, got.Status)
	require.Equal(e.T, invoice.ExceptionPaidOver, got.Exception)
	return got
}

// RefundOverpaidThenAll: the excess of an overpaid invoice is refunded in
// its coin, at the quote it was received at; RefundAll then gives back
// the rest; each refund is a change onChange hears once, with an event.
func RefundOverpaidThenAll(t *testing.T, e *Env) {
	inv := e.overpaid("r1")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Reason: "sent too much"})
	require.NoError(t, err)
	eq(t, "0.00058333", rf.Amount, "35 USD at 60000, rounded down")
	assert.Equal(t, inv.ID+"-R1", rf.ID)
	assert.Equal(t, inv.ID, rf.InvoiceID)
	assert.Equal(t, "btc", rf.Ticker)
	assert.Equal(t, invoice.RefundAwaitingAddress, rf.Status)
	assert.Equal(t, invoice.RefundOverpaid, rf.Of)
	assert.Equal(t, invoice.RateThen, rf.Rate, "an empty Rate is RateThen")
	assert.Equal(t, "sent too much", rf.Reason)
	assert.Equal(t, T0, rf.CreatedAt)
	assert.Equal(t, T0.Add(invoice.DefaultClaimFor), rf.ClaimExpiresAt)
	token, ok := strings.CutPrefix(rf.ClaimPath, invoice.PageClaimPath+"/")
	require.True(t, ok, rf.ClaimPath)
	assert.Len(t, token, 26, "130 random bits")
	assert.NotContains(t, rf.ClaimPath, inv.ID)
	assert.NotContains(t, rf.ClaimPath, inv.OrderID)

	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 1)
	assert.Equal(t, *rf, got.Refunds[0])
	last := got.Events[len(got.Events)-1]
	assert.Equal(t, invoice.EventRefundCreated, last.Kind)
	assert.Contains(t, last.Note, "sent too much")
	assert.Contains(t, last.Note, "0.00058333 btc")
	eq(t, "0.00041667", got.Refundable(""), "what is left")
	assert.Equal(t, invoice.StatusSettled, got.Status, "a refund changes no payment")
	eq(t, "0.001", got.Paid, "Paid is what was received")

	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "the excess is refunded already")
	all, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Rate: invoice.RateThen})
	require.NoError(t, err)
	eq(t, "0.00041667", all.Amount, "the rest")
	assert.Equal(t, inv.ID+"-R2", all.ID)
	assert.NotEqual(t, rf.ClaimPath, all.ClaimPath)
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable)

	refunds, err := e.Desk.Refunds(e.Ctx, inv.ID)
	require.NoError(t, err)
	require.Len(t, refunds, 2)
	assert.Equal(t, rf.ID, refunds[0].ID)
	byID, err := e.Desk.GetRefund(e.Ctx, all.ID)
	require.NoError(t, err)
	assert.Equal(t, all, byID)
	_, err = e.Desk.GetRefund(e.Ctx, inv.ID+"-R3")
	assert.ErrorIs(t, err, invoice.ErrRefundNotFound)

	// The store finds the invoice by each claim token.
	for _, r := range refunds {
		rec, err := e.Store.LoadByKey(e.Ctx, strings.TrimPrefix(r.ClaimPath, invoice.PageClaimPath+"/"))
		require.NoError(t, err)
		assert.Equal(t, inv.ID, rec.ID())
	}
	_, err = e.Store.LoadByKey(e.Ctx, "AAAAAAAAAAAAAAAAAAAAAAAAAA")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	e.AssertOnePerChange(e.Get(inv.ID))
}

// NeverMoreThanReceived: refunds are counted in the coin against the
// confirmed payments; unconfirmed ones cannot be refunded yet; failed
// and cancelled refunds do not count.
func NeverMoreThanReceived(t *testing.T, e *Env) {
	unpaid := e.Create(invoice.CreateOptions{OrderID: "n1", Price: D("25"), Currency: "USD", ExpiresIn: time.Hour})
	_, err := e.Desk.Refund(e.Ctx, unpaid.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "an unpaid invoice")
	assert.ErrorContains(t, err, "nothing confirmed was received")

	partial := e.Create(invoice.CreateOptions{OrderID: "n2", Price: D("25"), Currency: "USD", ExpiresIn: time.Hour})
	e.Confirm(e.Pay("btc", partial.AddressIn, "0.0002"))
	_, err = e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "a new invoice still waits for payment")
	_, err = e.Desk.Invalidate(e.Ctx, partial.ID, "the customer gave up")
	require.NoError(t, err)
	tx := e.Pay("btc", partial.AddressIn, "0.0003") // late, unconfirmed
	rf, err := e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	eq(t, "0.0002", rf.Amount, "the confirmed part only")
	_, err = e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable)
	assert.ErrorContains(t, err, "0.0003 btc is not confirmed yet")
	e.Confirm(tx)
	second, err := e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0003")})
	require.NoError(t, err, "once confirmed")
	_, err = e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.00000001")})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "not a satoshi more")

	// A cancelled refund no longer counts.
	_, err = e.Desk.CancelRefund(e.Ctx, second.ID, "the customer prefers store credit")
	require.NoError(t, err)
	third, err := e.Desk.Refund(e.Ctx, partial.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.00029999")})
	require.NoError(t, err)
	eq(t, "0.00000001", e.Get(partial.ID).Refundable(""), "left")
	got := e.Get(partial.ID)
	sum := decimal.Zero
	for _, r := range got.Refunds {
		if r.Status != invoice.RefundCancelled && r.Status != invoice.RefundFailed {
			sum = sum.Add(r.Amount)
		}
	}
	assert.True(t, sum.LessThanOrEqual(got.Paid), "%s refunded of %s received", sum, got.Paid)
	last := got.Events[len(got.Events)-2]
	assert.Equal(t, invoice.EventRefundCancelled, last.Kind)
	assert.Contains(t, last.Note, "store credit")
	assert.Equal(t, invoice.RefundAwaitingAddress, third.Status)

	// Refunds keep the invoice from being reopened or marked settled.
	_, err = e.Desk.MarkSettled(e.Ctx, partial.ID, "accepted")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus)
	e.AssertOnePerChange(e.Get(partial.ID))
}

// BadRefundsStoreNothing: unusable options and arguments are clear errors
// before anything is read, stored or sent.
func BadRefundsStoreNothing(t *testing.T, e *Env) {
	inv := e.overpaid("b1")
	before := e.Get(inv.ID).Version
	requests := e.Requests()
	for name, o := range map[string]*invoice.RefundOptions{
		"nil":                       nil,
		"no Of":                     {},
		"unknown Of":                {Of: "half"},
		"negative amount":           {Of: invoice.RefundCustom, Amount: D("-0.0001")},
		"zero amount":               {Of: invoice.RefundCustom},
		"finer than a satoshi":      {Of: invoice.RefundCustom, Amount: D("0.000000001")},
		"finer than 18 places":      {Of: invoice.RefundCustom, Amount: D("0.0000000000000000001")},
		"amount with RefundAll":     {Of: invoice.RefundAll, Amount: D("0.0001")},
		"rate with a custom amount": {Of: invoice.RefundCustom, Amount: D("0.0001"), Rate: invoice.RateNow},
		"unknown rate":              {Of: invoice.RefundAll, Rate: "yesterday"},
		"reason with a NUL":         {Of: invoice.RefundAll, Reason: "a\x00b"},
		"reason too long":           {Of: invoice.RefundAll, Reason: strings.Repeat("x", invoice.MaxReasonLen+1)},
		"not a ticker":              {Of: invoice.RefundAll, Ticker: "../btc"},
		"claim for a second":        {Of: invoice.RefundAll, ClaimFor: time.Second},
		"claim for two years":       {Of: invoice.RefundAll, ClaimFor: 2 * invoice.MaxClaimFor},
	} {
		_, err := e.Desk.Refund(e.Ctx, inv.ID, o)
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, name)
	}
	_, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0011")})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "above what was received")
	assert.ErrorContains(t, err, "0.001 btc is left to refund")
	_, err = e.Desk.Refund(e.Ctx, "AAAAAAAAAAAAAAAAAAAAAAAAAA", &invoice.RefundOptions{Of: invoice.RefundAll})
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	assert.Equal(t, before, e.Get(inv.ID).Version, "nothing stored")
	assert.Equal(t, requests, e.Requests(), "nothing sent")

	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"another network":        CustomerTRX,
		"a mistyped character":   CustomerBTC[:10] + "q" + CustomerBTC[11:],
		"a look-alike character": strings.Replace(CustomerBTC, "a", "\u0430", 1),
		"white space inside":     CustomerBTC[:8] + " " + CustomerBTC[8:],
		"nothing":                " ",
	} {
		_, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, bad)
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, name)
		assert.ErrorIs(t, err, cryptapi.ErrInvalidAddress, name)
	}
	for _, id := range []string{"", "x", inv.ID, inv.ID + "-R", inv.ID + "-R0", inv.ID + "-R01", inv.ID + "-R2", "AAAAAAAAAAAAAAAAAAAAAAAAAA-R1", inv.ID + "-R1/../x"} {
		_, err := e.Desk.SetRefundAddress(e.Ctx, id, CustomerBTC)
		assert.ErrorIs(t, err, invoice.ErrRefundNotFound, id)
		_, err = e.Desk.CancelRefund(e.Ctx, id, "")
		assert.ErrorIs(t, err, invoice.ErrRefundNotFound, id)
	}
	_, err = e.Desk.MarkRefundSent(e.Ctx, rf.ID, " ")
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "no txid")
	assert.Equal(t, invoice.RefundAwaitingAddress, e.Get(inv.ID).Refunds[0].Status)
	// An address with surrounding white space (a paste) is taken trimmed.
	set, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, " "+CustomerBTC+"\n")
	require.NoError(t, err)
	assert.Equal(t, CustomerBTC, set.Address)
}

// WrongCoinIsRefundedInItsCoin: a payment in another token is refunded in
// the coin that was paid, all of it excess; it has no fiat value for
// RateNow.
func WrongCoinIsRefundedInItsCoin(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Ticker: "trc20_usdt", Address: TRXDest, Price: D("30"), Currency: "USD",
		MultiToken: true, ExpiresIn: time.Hour})
	e.Confirm(e.Pay("trx", inv.AddressIn, "250"))
	_, err := e.Desk.Invalidate(e.Ctx, inv.ID, "paid in the wrong coin")
	require.NoError(t, err)
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Rate: invoice.RateNow})
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "another coin has no fiat value")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "trc20_usdt"})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "no usdt was received")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	assert.Equal(t, "trx", rf.Ticker, "the coin paid")
	eq(t, "250", rf.Amount, "all of it: none counted toward the price")
	_, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidAddress, "a Bitcoin address for trx")
	got, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerTRX)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundReady, got.Status)
	assert.ErrorIs(t, func() error {
		_, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0000001"), Ticker: "trx"})
		return err
	}(), invoice.ErrInvalidOptions, "finer than trx's 6 places")
	e.AssertOnePerChange(e.Get(inv.ID))
}

// RefundRates: RateNow converts the fiat value received at today's price,
// never more coin than was received; for a price in the coin it is
// RateThen.
func RefundRates(t *testing.T, e *Env) {
	inv := e.overpaid("q1") // 0.001 btc = 60 USD at 60000
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("120000")))
	e.Clock.Advance(2 * time.Minute) // the Desk reads prices at most once a minute
	half, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Rate: invoice.RateNow})
	require.NoError(t, err)
	eq(t, "0.00029166", half.Amount, "35 USD at 120000, rounded down")
	eq(t, "120000", half.Quote, "the price it was converted at")
	eq(t, "34.9992", half.FiatValue, "its value at that price")
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("30000")))
	e.Clock.Advance(2 * time.Minute)
	rest, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Rate: invoice.RateNow})
	require.NoError(t, err)
	eq(t, "0.00070834", rest.Amount, "twice the coin is more than is left: what is left")

	coin := e.Create(invoice.CreateOptions{OrderID: "q2", Price: D("0.001")})
	e.Confirm(e.Pay("btc", coin.AddressIn, "0.0015"))
	now, err := e.Desk.Refund(e.Ctx, coin.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Rate: invoice.RateNow})
	require.NoError(t, err)
	eq(t, "0.0005", now.Amount, "a price in the coin: the coin's excess")
	assert.True(t, now.Quote.IsZero())
}

// RefundsRaceOnFourReplicas: ten Refund calls for the whole amount across
// four Desks on one store create one refund; the others fail with
// ErrNotRefundable and store nothing.
func RefundsRaceOnFourReplicas(t *testing.T, e *Env) {
	inv := e.overpaid("race")
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() {
			<-start
			o := &invoice.RefundOptions{Of: invoice.RefundAll}
			if i%2 == 1 {
				o = &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.001")}
			}
			_, errs[i] = desks[i%4].Refund(e.Ctx, inv.ID, o)
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		assert.ErrorIs(t, err, invoice.ErrNotRefundable)
	}
	assert.Equal(t, 1, ok, "one refund")
	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 1)
	eq(t, "0.001", got.Refunds[0].Amount, "the whole amount")
	e.AssertOnePerChange(got)
}

// RefundsRaceDecisionsAndPayments: refunds race a late payment's
// confirmation, MarkSettled, Reopen and Tick on other replicas; every
// refund is decided on the invoice as it stands, and the sum never
// passes what was received.
func RefundsRaceDecisionsAndPayments(t *testing.T, e *Env) {
	other := e.NewDesk()
	for round := range 4 {
		inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
		e.Confirm(e.Pay("btc", inv.AddressIn, "0.0002"))
		e.Clock.Advance(31 * time.Minute)
		e.Tick()
		e.Down.Store(true)
		tx := e.Pay("btc", inv.AddressIn, "0.0001")
		require.NoError(t, e.Srv.Confirm(tx, 1))
		e.Flush()
		e.Down.Store(false)
		deliveries := append(e.Deliveries(inv.AddressIn, true), e.Deliveries(inv.AddressIn, false)...)
		var wg sync.WaitGroup
		start := make(chan struct{})
		var marked, reopened error
		refunds := make([]error, 4)
		wg.Go(func() {
			<-start
			for _, d := range deliveries {
				e.Resend(d)
			}
		})
		for i := range refunds {
			wg.Go(func() {
				<-start
				_, refunds[i] = []*invoice.Desk{e.Desk, other}[i%2].Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
			})
		}
		wg.Go(func() { <-start; _, marked = other.MarkSettled(e.Ctx, inv.ID, "accepted") })
		wg.Go(func() { <-start; _, reopened = e.Desk.Reopen(e.Ctx, inv.ID, nil) })
		wg.Go(func() { <-start; _, _ = other.Tick(e.Ctx) })
		close(start)
		wg.Wait()
		e.Flush()
		_, err := e.Desk.Tick(e.Ctx)
		require.NoError(t, err)
		got := e.Get(inv.ID)
		sum := decimal.Zero
		for _, r := range got.Refunds {
			sum = sum.Add(r.Amount)
		}
		assert.True(t, sum.LessThanOrEqual(got.Paid), "round %d: %s refunded of %s", round, sum, got.Paid)
		for i, err := range refunds {
			if err != nil {
				assert.True(t, errors.Is(err, invoice.ErrNotRefundable) || errors.Is(err, invoice.ErrWrongStatus), "round %d refund %d: %v", round, i, err)
			}
		}
		// Whatever the order they were applied in: no refund while the
		// reopened invoice waited for payment, and no marking or
		// reopening once it had a refund.
		open, refunded := false, false
		for _, ev := range got.Events {
			switch ev.Kind {
			case invoice.EventReopened:
				assert.False(t, refunded, "round %d: reopened after a refund", round)
				open = true
			case invoice.EventMarked:
				assert.False(t, refunded, "round %d: marked after a refund", round)
				open = false
			case invoice.EventExpired, invoice.EventInvalidated:
				open = false
			case invoice.EventRefundCreated:
				assert.False(t, open, "round %d: a refund while the invoice waited for payment", round)
				refunded = true
			}
		}
		for name, err := range map[string]error{"mark": marked, "reopen": reopened} {
			if err != nil {
				assert.ErrorIs(t, err, invoice.ErrWrongStatus, "round %d: %s", round, name)
			}
		}
		e.AssertOnePerChange(got)
	}
}

// ClaimAndMarkSentKeyless: the customer's address is checked for the
// coin's network and set once; in the keyless form SendRefund names
// MarkRefundSent, which works on a ready refund only; a sent refund
// cannot be cancelled.
func ClaimAndMarkSentKeyless(t *testing.T, e *Env) {
	inv := e.overpaid("k1")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	_, err = e.Desk.MarkRefundSent(e.Ctx, rf.ID, "deadbeef")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "no address yet")
	_, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.ErrorIs(t, err, cryptapi.ErrAPIKeyRequired)
	assert.ErrorContains(t, err, "MarkRefundSent")

	set, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundReady, set.Status)
	again, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	require.NoError(t, err, "the same address again (a form sent twice) changes nothing")
	assert.Equal(t, set.UpdatedAt, again.UpdatedAt)
	_, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, BTCDest)
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "a second address is refused")
	assert.Equal(t, CustomerBTC, e.Get(inv.ID).Refunds[0].Address)

	sent, err := e.Desk.MarkRefundSent(e.Ctx, rf.ID, "deadbeef01")
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, sent.Status)
	assert.Equal(t, "deadbeef01", sent.TxID)
	_, err = e.Desk.MarkRefundSent(e.Ctx, rf.ID, "deadbeef01")
	require.NoError(t, err, "recorded already")
	_, err = e.Desk.MarkRefundSent(e.Ctx, rf.ID, "another")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus)
	_, err = e.Desk.CancelRefund(e.Ctx, rf.ID, "too late")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus)
	got := e.Get(inv.ID)
	eq(t, "0.00058333", got.Refunded, "sent")
	assert.Equal(t, invoice.EventRefundSent, got.Events[len(got.Events)-1].Kind)
	assert.Contains(t, got.Events[len(got.Events)-1].Note, "by the merchant")
	e.AssertOnePerChange(got)
}

// ClaimLinksExpire: an unclaimed refund is cancelled by Tick when its
// link expires (its amount counts no more); reads show it until then.
func ClaimLinksExpire(t *testing.T, e *Env) {
	inv := e.overpaid("x1")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, ClaimFor: time.Hour})
	require.NoError(t, err)
	assert.Zero(t, e.Tick())
	e.Clock.Advance(time.Hour)
	assert.Equal(t, invoice.RefundAwaitingAddress, e.Get(inv.ID).Refunds[0].Status, "Get is a read")
	assert.Equal(t, invoice.RefundCancelled, e.Get(inv.ID).AsOf(e.Clock.Now()).Refunds[0].Status, "AsOf shows it expired")
	_, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "too late")
	assert.Equal(t, 1, e.Tick())
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.RefundCancelled, got.Refunds[0].Status)
	eq(t, "0.001", got.Refundable(""), "counts no more")
	assert.Contains(t, got.Events[len(got.Events)-1].Note, "expired")
	assert.Zero(t, e.Tick(), "once")
	e.AssertOnePerChange(got)
}

// claimed creates a refund of inv and sets the customer's address.
func (e *Env) claimed(inv *invoice.Invoice, o *invoice.RefundOptions) *invoice.Refund {
	e.T.Helper()
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, o)
	require.NoError(e.T, err)
	rf, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	require.NoError(e.T, err)
	return rf
}

// settlePayouts lets the fake's payouts complete and Tick follow them.
func (e *Env) settlePayouts() {
	e.T.Helper()
	e.Clock.Advance(cryptapitest.PayoutSettleTime + invoice.RefundCheckEvery)
	_, err := e.Desk.Tick(e.Ctx)
	require.NoError(e.T, err)
}

// SendRefundFromThePayoutWallet: the API-key form sends a ready refund
// as one payout; it is sending until the fake's payout completes, then
// sent with its transaction ID, followed by Tick.
func SendRefundFromThePayoutWallet(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv := e.overpaid("s1")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.NoError(t, err)
	_, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "no address yet")
	assert.Zero(t, e.PayoutCalls("/"))
	rf, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerBTC)
	require.NoError(t, err)
	sending, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSending, sending.Status)
	require.Len(t, e.Srv.Payouts(), 1)
	assert.Equal(t, CustomerBTC, e.Srv.Payouts()[0].Address)
	assert.True(t, e.Srv.Payouts()[0].Value.Equal(D("0.00058333")))
	batches := e.Srv.PayoutBatches()
	require.Len(t, batches, 1)
	assert.Equal(t, "Processing", batches[0].Status)
	again, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err, "a retry gets the refund as it stands")
	assert.Equal(t, invoice.RefundSending, again.Status)
	assert.Len(t, e.Srv.Payouts(), 1, "and asks for nothing")
	assert.Zero(t, e.Tick(), "not due yet")

	e.settlePayouts()
	got := e.Get(inv.ID)
	require.Len(t, got.Refunds, 1)
	done := got.Refunds[0]
	assert.Equal(t, invoice.RefundSent, done.Status)
	batches = e.Srv.PayoutBatches()
	require.Len(t, batches, 1)
	assert.Equal(t, batches[0].TxID, done.TxID)
	assert.NotEmpty(t, done.TxID)
	assert.Equal(t, batches[0].ID, done.PayoutID)
	eq(t, "0.00058333", got.Refunded, "sent")
	_, bal, err := e.Srv.PayoutWallet("btc")
	require.NoError(t, err)
	assert.True(t, bal.LessThan(D("0.01").Sub(D("0.00058333"))), "paid from the wallet, with the fee")
	var kinds []string
	for _, ev := range got.Events {
		if strings.HasPrefix(ev.Kind, "refund_") {
			kinds = append(kinds, ev.Kind)
		}
	}
	assert.Equal(t, []string{invoice.EventRefundCreated, invoice.EventRefundAddress, invoice.EventRefundSending, invoice.EventRefundSent}, kinds)
	assert.Zero(t, e.Tick(), "nothing left to follow")
	_, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Len(t, e.Srv.Payouts(), 1, "a sent refund is never sent again")
	e.AssertOnePerChange(got)
}

// SendRefundRacesOnFourReplicas: ten SendRefund calls on four Desks, and
// their Ticks, ask for one payout.
func SendRefundRacesOnFourReplicas(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv := e.overpaid("s2")
	rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundAll})
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 14 {
		wg.Go(func() {
			<-start
			if i >= 10 {
				_, _ = desks[i%4].Tick(e.Ctx)
				return
			}
			got, err := desks[i%4].SendRefund(e.Ctx, rf.ID)
			if assert.NoError(t, err) {
				assert.Contains(t, []invoice.RefundStatus{invoice.RefundSending, invoice.RefundSent}, got.Status)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.Len(t, e.Srv.Payouts(), 1, "one payout request")
	assert.Len(t, e.Srv.PayoutBatches(), 1, "one payout")
	e.settlePayouts()
	for _, d := range desks {
		_, err := d.Tick(e.Ctx)
		require.NoError(t, err)
	}
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.RefundSent, got.Refunds[0].Status)
	assert.Len(t, e.Srv.PayoutBatches(), 1)
	e.AssertOnePerChange(got)
}

// FailedPayoutSentAgainOrCancelled: a payout the wallet cannot pay fails
// with the service's reason; once funded, SendRefund sends it again (one
// new payout); a failed refund can be cancelled; a refused payout request
// fails the refund with the service's message.
func FailedPayoutSentAgainOrCancelled(t *testing.T, e *Env) {
	inv := e.overpaid("f1")
	rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	got, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	if got.Status == invoice.RefundSending {
		e.settlePayouts()
		got, err = e.Desk.GetRefund(e.Ctx, rf.ID)
		require.NoError(t, err)
	}
	assert.Equal(t, invoice.RefundFailed, got.Status, "the wallet is empty")
	assert.Contains(t, got.Failure, "Insufficient balance")
	assert.NotEmpty(t, got.PayoutID)
	eq(t, "0.001", e.Get(inv.ID).Refundable(""), "a failed refund does not count")

	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	got, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSending, got.Status)
	assert.Empty(t, got.Failure)
	e.settlePayouts()
	got, err = e.Desk.GetRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, got.Status)
	assert.Len(t, e.Srv.PayoutBatches(), 2, "the failed payout and the one that paid")

	// A refused payout request: failed with the service's message; then
	// cancelled.
	other := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
	e.FaultOn("/payout/request/bulk/", Refuse, 1)
	got, err = e.Desk.SendRefund(e.Ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundFailed, got.Status)
	assert.Contains(t, got.Failure, "Payout refused by the test")
	// Meanwhile the rest is refunded: the failed one cannot be sent again
	// beyond what is received.
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	_, err = e.Desk.SendRefund(e.Ctx, other.ID)
	assert.ErrorIs(t, err, invoice.ErrNotRefundable)
	cancelled, err := e.Desk.CancelRefund(e.Ctx, other.ID, "refunded otherwise")
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundCancelled, cancelled.Status)
	e.AssertOnePerChange(e.Get(inv.ID))
}

// PayoutOutcomeUnknownAtEveryCall: each payout call in turn is lost on
// the way back (the service did it), hangs, or is dropped before the
// service (it did nothing): SendRefund returns an error matching
// cryptapi.ErrOutcomeUnknown, or as it stands, the refund stays sending,
// and Tick finds out what happened and carries on. In the end the refund
// is sent by exactly one payout of exactly one payout request.
func PayoutOutcomeUnknownAtEveryCall(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("1")))
	lease := 10 * time.Second // the Env's Desk lease
	for _, call := range []string{"/payout/request/bulk/", "payout/create/", "payout/process/"} {
		for _, f := range []Fault{LoseAnswer, Hang, Drop} {
			name := fmt.Sprintf("%s %d", call, f)
			inv := e.overpaid("u-" + name)
			rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
			reqs, batches := len(e.Srv.Payouts()), len(e.Srv.PayoutBatches())
			e.FaultOn(call, f, 1)
			calls := e.PayoutCalls(call)
			got, err := e.Desk.SendRefund(e.Ctx, rf.ID)
			assert.Equal(t, calls+1, e.PayoutCalls(call), "%s: the faulty call was made", name)
			assert.ErrorIs(t, err, cryptapi.ErrOutcomeUnknown, name)
			require.NotNil(t, got, name)
			assert.Equal(t, invoice.RefundSending, got.Status, name)
			again, err := e.Desk.SendRefund(e.Ctx, rf.ID)
			require.NoError(t, err, name)
			assert.Equal(t, invoice.RefundSending, again.Status, name)
			e.tickUntilSent(t, name, rf.ID, lease+invoice.RefundCheckEvery, reqs, batches, e.Desk)
			e.AssertOnePerChange(e.Get(inv.ID))
		}
	}
}

// BooksWithRefunds: ExportCSV writes refunds being sent and sent as
// negative rows with their transaction IDs; the confirmed rows of an
// invoice in its coin add up to Paid - Refunded.
func BooksWithRefunds(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv := e.overpaid("c1")
	sent := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Reason: "excess"})
	_, err := e.Desk.SendRefund(e.Ctx, sent.ID)
	require.NoError(t, err)
	e.settlePayouts()
	marked := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.00000007")})
	_, err = e.Desk.MarkRefundSent(e.Ctx, marked.ID, "merchanttx")
	require.NoError(t, err)
	sending := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
	_, err = e.Desk.SendRefund(e.Ctx, sending.ID)
	require.NoError(t, err)
	awaiting, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
	require.NoError(t, err)

	var buf bytes.Buffer
	require.NoError(t, e.Desk.ExportCSV(e.Ctx, &buf, nil))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	got := e.Get(inv.ID)
	byRef := map[string][]string{}
	total := decimal.Zero
	for _, r := range rows[1:] {
		if r[col["invoice_id"]] != inv.ID {
			continue
		}
		byRef[r[col["payment_uuid"]]] = r
		assert.NotContains(t, r[col["amount"]], "e", "no exponent form")
		if r[col["confirmed"]] == "true" && r[col["ticker"]] == got.Ticker {
			total = total.Add(D(r[col["amount"]]))
		}
	}
	eq(t, got.Paid.Sub(got.Refunded).String(), total, "the rows add up to Paid - Refunded")
	eq(t, "0.0004166", got.Paid.Sub(got.Refunded), "0.001 - 0.00058333 - 0.00000007")
	row := byRef[sent.ID]
	require.NotNil(t, row, "the sent refund has a row")
	assert.Equal(t, "-0.00058333", row[col["amount"]])
	assert.Equal(t, got.Refunds[0].TxID, row[col["txid_out"]])
	assert.Equal(t, "true", row[col["confirmed"]])
	assert.Equal(t, "-0.00000007", byRef[marked.ID][col["amount"]])
	assert.Equal(t, "merchanttx", byRef[marked.ID][col["txid_out"]])
	require.NotNil(t, byRef[sending.ID], "a refund being sent has a row")
	assert.Equal(t, "false", byRef[sending.ID][col["confirmed"]])
	assert.Equal(t, "-0.0001", byRef[sending.ID][col["amount"]])
	assert.Nil(t, byRef[awaiting.ID], "a refund not sent has none")
	for _, r := range byRef {
		require.Len(t, r, len(invoice.CSVHeader))
	}
}

// BookkeepingIsNotAChange: the store keeps an Update that keeps the
// Version (the Desk's bookkeeping) but offers no change for it; one that
// raises the Version is a change, offered once.
func BookkeepingIsNotAChange(t *testing.T, e *Env) {
	inv := e.overpaid("bk")
	offered := e.Offered(inv.ID)
	_, err := e.Store.Update(e.Ctx, inv.ID, "", func(r *invoice.Record) (*invoice.Record, error) {
		r.Invoice.Description = "bookkeeping"
		return r, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "bookkeeping", e.Stored(inv.ID).Description, "stored")
	require.NoError(t, e.Store.Notify(e.Ctx, inv.ID, func(context.Context, *invoice.Invoice) error {
		t.Error("bookkeeping is no change")
		return nil
	}))
	_, err = e.Store.Update(e.Ctx, inv.ID, "", func(r *invoice.Record) (*invoice.Record, error) {
		r.Invoice.Version++
		return r, nil
	})
	require.NoError(t, err)
	var got []int64
	require.NoError(t, e.Store.Notify(e.Ctx, inv.ID, func(_ context.Context, c *invoice.Invoice) error {
		got = append(got, c.Version)
		return nil
	}))
	assert.Equal(t, []int64{inv.Version + 1}, got, "a new version is a change, offered once")
	assert.Equal(t, offered, e.Offered(inv.ID))
}

// RetriedRefundWithAKey: a Refund retried with its Key (after a timeout,
// on another replica, at the same moment) returns the refund made the
// first time and makes no other; with other options it is refused.
func RetriedRefundWithAKey(t *testing.T, e *Env) {
	inv := e.overpaid("key")
	o := &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001"), Key: "ticket-7"}
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk(), e.NewDesk()}
	var wg sync.WaitGroup
	start := make(chan struct{})
	got := make([]*invoice.Refund, 8)
	for i := range got {
		wg.Go(func() {
			<-start
			rf, err := desks[i%4].Refund(e.Ctx, inv.ID, o)
			if assert.NoError(t, err) {
				got[i] = rf
			}
		})
	}
	close(start)
	wg.Wait()
	for _, rf := range got {
		require.NotNil(t, rf)
		assert.Equal(t, got[0].ID, rf.ID, "one refund")
		assert.Equal(t, "ticket-7", rf.Key)
	}
	require.Len(t, e.Get(inv.ID).Refunds, 1)
	_, err := e.Desk.CancelRefund(e.Ctx, got[0].ID, "")
	require.NoError(t, err)
	again, err := e.Desk.Refund(e.Ctx, inv.ID, o)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundCancelled, again.Status, "the refund of the key, whatever became of it")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0002"), Key: "ticket-7"})
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "the key with other options")
	other, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Amount: D("0.0001")})
	require.NoError(t, err)
	assert.NotEqual(t, got[0].ID, other.ID, "without a key, another refund")
	e.AssertOnePerChange(e.Get(inv.ID))
}

// OneCustomerTwoRefundsUnknownOutcomes: two invoices refund the same
// amount to the same customer, and both payout requests have an unknown
// outcome: the first reached the service, the second did not. Reading
// the service, both find the one request; the store lets one refund use
// it (a payout request is a key of one invoice), and the other asks for
// its own. Each refund is sent once, by a payout of its own.
func OneCustomerTwoRefundsUnknownOutcomes(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("1")))
	a, b := e.overpaid("two-a"), e.overpaid("two-b")
	ra := e.claimed(a, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	rb := e.claimed(b, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	require.True(t, ra.Amount.Equal(rb.Amount))
	e.FaultOn("/payout/request/bulk/", LoseAnswer, 1)
	_, err := e.Desk.SendRefund(e.Ctx, ra.ID)
	assert.ErrorIs(t, err, cryptapi.ErrOutcomeUnknown)
	e.FaultOn("/payout/request/bulk/", Drop, 1)
	_, err = e.Desk.SendRefund(e.Ctx, rb.ID)
	assert.ErrorIs(t, err, cryptapi.ErrOutcomeUnknown)
	require.Len(t, e.Srv.Payouts(), 1, "one request reached the service")
	other := e.NewDesk()
	for range 6 {
		e.Clock.Advance(10*time.Second + invoice.RefundCheckEvery)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = e.Desk.Tick(e.Ctx) })
		wg.Go(func() { _, _ = other.Tick(e.Ctx) })
		wg.Wait()
	}
	ga, err := e.Desk.GetRefund(e.Ctx, ra.ID)
	require.NoError(t, err)
	gb, err := e.Desk.GetRefund(e.Ctx, rb.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, ga.Status)
	assert.Equal(t, invoice.RefundSent, gb.Status)
	assert.NotEqual(t, ga.PayoutID, gb.PayoutID, "a payout each")
	assert.NotEqual(t, ga.TxID, gb.TxID)
	assert.Len(t, e.Srv.Payouts(), 2, "two requests")
	assert.Len(t, e.Srv.PayoutBatches(), 2, "two payouts")
	e.AssertOnePerChange(e.Get(a.ID))
	e.AssertOnePerChange(e.Get(b.ID))
}

// RefusedQueueKeepsThePayout: the service refuses to queue the refund's
// payout, which stays created: the refund fails with the service's
// reason and keeps its payout, and the next SendRefund queues that one,
// never a second.
func RefusedQueueKeepsThePayout(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("btc", D("0.01")))
	inv := e.overpaid("q-refused")
	rf := e.claimed(inv, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	e.FaultOn("payout/process/", Refuse, 1)
	got, err := e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundFailed, got.Status)
	assert.Contains(t, got.Failure, "Payout refused by the test")
	require.Len(t, e.Srv.PayoutBatches(), 1)
	assert.Equal(t, "Created", e.Srv.PayoutBatches()[0].Status)
	got, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSending, got.Status)
	e.settlePayouts()
	got, err = e.Desk.GetRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, got.Status)
	assert.Len(t, e.Srv.PayoutBatches(), 1, "the same payout")
	assert.Len(t, e.Srv.Payouts(), 1, "the same request")
	assert.Equal(t, e.Srv.PayoutBatches()[0].TxID, got.TxID)
	e.AssertOnePerChange(e.Get(inv.ID))
}

// CustomerLTC is a customer's Litecoin refund address.
const CustomerLTC = "ltc1qpsmknn08v4v46f609nycpd3dwqqyqk5gux8d40"

// ChosenCoinsRefundedEachInItsCoin: an invoice the customer paid in two
// coins they chose (part in ltc, a switch, the rest in btc, then more
// ltc to the old address) is refunded in each coin, never more of a coin
// than arrived in it: the coin's own payments, its own excess over the
// price, RateNow at the coin's own quotes.
func ChosenCoinsRefundedEachInItsCoin(t *testing.T, e *Env) {
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("cr1")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125")) // 10 USD at 80
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	e.Clock.Advance(time.Minute)
	btc := e.Choose(inv.ID, "btc").AddressIn
	e.Confirm(e.Pay("btc", btc, "0.0003")) // 15 USD at 50000: paid in full
	e.Confirm(e.Pay("ltc", ltc, "0.0625")) // 5 USD more, to the old address
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusSettled, got.Status)
	require.Equal(t, invoice.ExceptionPaidOver, got.Exception)
	eq(t, "0.0003", got.Refundable(""), "the invoice's coin: its own payments only")
	eq(t, "0.0003", got.Refundable("btc"), "the same")
	eq(t, "0.1875", got.Refundable("ltc"), "the coin chosen before: both of its payments")
	eq(t, "0", got.Refundable("trc20_usdt"), "a coin offered, never chosen")

	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "the btc payment brought no excess")
	over, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundOverpaid, Ticker: "ltc"})
	require.NoError(t, err)
	assert.Equal(t, "ltc", over.Ticker)
	eq(t, "0.0625", over.Amount, "the excess came in ltc: 5 USD at 80")

	require.NoError(t, e.Srv.SetPrice("ltc", "USD", D("160")))
	e.Clock.Advance(2 * time.Minute)
	now, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "ltc", Rate: invoice.RateNow})
	require.NoError(t, err, "a coin the customer chose was valued: RateNow applies")
	eq(t, "0.0625", now.Amount, "the 0.125 ltc left was worth 10 USD at 80; 10 USD at 160")
	eq(t, "160", now.Quote, "ltc's price today")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Ticker: "ltc", Amount: D("0.06250001")})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "not a litoshi more than arrived in ltc")
	assert.ErrorContains(t, err, "0.0625 ltc is left to refund")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll, Ticker: "trc20_usdt"})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "nothing arrived in USDT")

	all, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	assert.Equal(t, "btc", all.Ticker)
	eq(t, "0.0003", all.Amount, "all the btc, none of the ltc")
	_, err = e.Desk.SetRefundAddress(e.Ctx, over.ID, CustomerBTC)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidAddress, "a Bitcoin address for an ltc refund")
	set, err := e.Desk.SetRefundAddress(e.Ctx, over.ID, CustomerLTC)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundReady, set.Status)
	_, err = e.Desk.MarkRefundSent(e.Ctx, over.ID, "ltc-refund-tx")
	require.NoError(t, err)

	got = e.Get(inv.ID)
	eq(t, "0.0625", got.Refundable("ltc"), "0.1875 less the two ltc refunds")
	eq(t, "0", got.Refundable(""), "the btc is being refunded")
	eq(t, "0", got.Refunded, "Refunded is in the invoice's coin (btc): nothing sent in it")
	e.AssertOnePerChange(got)
}

// OldCoinAloneIsRefundedInIt: a customer who paid part in one coin,
// switched, paid nothing in the new one, and let the invoice expire, is
// refunded in the coin they paid (the default), never in the new one.
func OldCoinAloneIsRefundedInIt(t *testing.T, e *Env) {
	o := e.ChoiceOptions("cr2")
	o.ExpiresIn = time.Hour
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125"))
	e.Clock.Advance(time.Minute)
	e.Choose(inv.ID, "btc")
	e.Clock.Advance(time.Hour)
	e.Tick()
	got := e.Get(inv.ID)
	require.Equal(t, invoice.StatusExpired, got.Status)
	require.Equal(t, "btc", got.Ticker)
	eq(t, "0", got.Refundable(""), "nothing arrived in btc")
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	assert.Equal(t, "ltc", rf.Ticker, "the one coin paid")
	eq(t, "0.125", rf.Amount, "what arrived in it")
	_, err = e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundCustom, Ticker: "btc", Amount: D("0.0001")})
	assert.ErrorIs(t, err, invoice.ErrNotRefundable, "no btc arrived")
	e.AssertOnePerChange(e.Get(inv.ID))
}

// ChosenCoinSentFromThePayoutWallet: a refund of a payment to the
// address of a coin the customer chose before switching is sent from
// that coin's payout wallet, once, to the customer's address of that
// coin.
func ChosenCoinSentFromThePayoutWallet(t *testing.T, e *Env) {
	require.NoError(t, e.Srv.FundPayoutWallet("ltc", D("10")))
	inv, err := e.Desk.Create(e.Ctx, ptr(e.ChoiceOptions("cr3")))
	require.NoError(t, err)
	ltc := e.Choose(inv.ID, "ltc").AddressIn
	e.Confirm(e.Pay("ltc", ltc, "0.125"))
	e.Clock.Advance(time.Minute)
	e.Choose(inv.ID, "btc")
	_, err = e.Desk.Invalidate(e.Ctx, inv.ID, "out of stock")
	require.NoError(t, err)
	rf, err := e.Desk.Refund(e.Ctx, inv.ID, &invoice.RefundOptions{Of: invoice.RefundAll})
	require.NoError(t, err)
	require.Equal(t, "ltc", rf.Ticker)
	_, err = e.Desk.SetRefundAddress(e.Ctx, rf.ID, CustomerLTC)
	require.NoError(t, err)
	_, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	require.Len(t, e.Srv.Payouts(), 1)
	assert.Equal(t, CustomerLTC, e.Srv.Payouts()[0].Address)
	eq(t, "0.125", e.Srv.Payouts()[0].Value, "the ltc received")
	e.settlePayouts()
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.RefundSent, got.Refunds[0].Status)
	assert.NotEmpty(t, got.Refunds[0].TxID)
	eq(t, "0", got.Refundable("ltc"), "all of it")
	_, err = e.Desk.SendRefund(e.Ctx, rf.ID)
	require.NoError(t, err)
	assert.Len(t, e.Srv.Payouts(), 1, "sent once")
	e.AssertOnePerChange(got)
}

// tickUntilSent advances the clock by step and ticks every desk at once,
// up to six times, until the refund is no longer sending; the refund must
// then be sent, with one payout request and one payout more than reqs and
// batches.
func (e *Env) tickUntilSent(t *testing.T, name, refundID string, step time.Duration, reqs, batches int, desks ...*invoice.Desk) {
	t.Helper()
	for range 6 {
		e.Clock.Advance(step)
		var wg sync.WaitGroup
		for _, d := range desks {
			wg.Go(func() { _, _ = d.Tick(e.Ctx) })
		}
		wg.Wait()
		if cur, _ := e.Desk.GetRefund(e.Ctx, refundID); cur.Status != invoice.RefundSending {
			break
		}
	}
	cur, err := e.Desk.GetRefund(e.Ctx, refundID)
	require.NoError(t, err)
	assert.Equal(t, invoice.RefundSent, cur.Status, name)
	assert.Len(t, e.Srv.Payouts(), reqs+1, "%s: one payout request", name)
	assert.Len(t, e.Srv.PayoutBatches(), batches+1, "%s: one payout", name)
}
