package invoice

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
)

// choiceRecord is an invoice of 25 USD the customer pays in btc (60000
// USD) or ltc (80 USD), made as Create makes it: no coin chosen, no
// address.
func choiceRecord(tb testing.TB) *Record {
	tb.Helper()
	q := request{OrderID: "42", Price: dec("25"), Currency: "USD", Callback: "https://shop.example/cb",
		QuoteTTL: Duration{15 * time.Minute}, ExpiresIn: Duration{time.Hour}, MonitorFor: Duration{24 * time.Hour},
		Tickers: []string{"btc", "ltc"}, Destinations: map[string]string{"btc": "bc1qdest", "ltc": "ltc1qdest"}}
	r := reservation(q, t0)
	r.Invoice.ID, r.nonce = "INV", "N"
	n, changed, err := transition(r, event{kind: evCreate, at: t0, created: &created{nonce: "N", coins: []CoinChoice{
		{Ticker: "btc", CoinName: "Bitcoin", Decimals: 8, Minimum: dec("0.0001"), Rate: dec("60000")},
		{Ticker: "ltc", CoinName: "Litecoin", Decimals: 8, Minimum: dec("0.002"), Rate: dec("80")},
	}}})
	require.NoError(tb, err)
	require.True(tb, changed)
	return n
}

// choose is the event of the customer choosing tk at at, with the coin's
// address made now (the service's answer) unless made says it was made
// before.
func choose(tk string, at time.Time, made bool, btc, ltc string) event {
	e := event{kind: evChoose, at: at, ticker: tk, rates: map[string]decimal.Decimal{"btc": dec(btc), "ltc": dec(ltc)}}
	if !made {
		a := map[string]struct{ scheme, addr, min string }{
			"btc": {"bitcoin", "bc1qaddr", "0.0001"}, "ltc": {"litecoin", "ltc1qaddr", "0.002"},
		}[tk]
		e.created = &created{addressIn: a.addr, callbackURL: "https://shop.example/cb?invoice=INV&nonce=N",
			uri: makeURITemplate(a.scheme+":"+a.addr+"?amount=1", dec("1"), 8), minimum: dec(a.min)}
	}
	return e
}

func payTo(addr, coin, uuid, amount string, confirmed bool, at time.Time) event {
	return event{kind: evPayment, at: at, uuid: uuid, txid: "tx-" + uuid, coin: coin, amount: dec(amount), confirmed: confirmed, address: addr}
}

// An invoice that offers coins starts with no coin and no address: it
// asks for nothing yet, and shows what it would ask in each coin.
func TestChoiceStartsWithoutAnAddress(t *testing.T) {
	inv := choiceRecord(t).Invoice
	assert.Equal(t, StatusNew, inv.Status)
	assert.Empty(t, inv.Ticker)
	assert.Empty(t, inv.AddressIn)
	assert.Empty(t, inv.PaymentURI)
	assertDec(t, "0", inv.Due, "nothing due before a coin is chosen")
	assertDec(t, "25", inv.Remaining, "remaining")
	require.Len(t, inv.Coins, 2)
	assertDec(t, "0.00041667", inv.Coins[0].Due, "btc")
	assertDec(t, "0.3125", inv.Coins[1].Due, "ltc")
	for _, c := range inv.Coins {
		assert.Empty(t, c.AddressIn)
	}
	assert.Equal(t, t0.Add(15*time.Minute), inv.QuoteExpiresAt)
	assert.Equal(t, []string{EventCreated}, kinds(&inv))
	assert.Contains(t, inv.Events[0].Note, "btc 60000, ltc 80")
	assert.Equal(t, t0.Add(15*time.Minute), choiceRecord(t).TickAt(), "Tick renews the coins' quotes")
}

// A choice makes the coin the invoice's: its address, its quote (every
// coin quoted again), what it asks in it; a switch keeps the first
// coin's address, and a payment to it counts at its own quote.
func TestChoiceSwitchAndPaymentsInEveryChosenCoin(t *testing.T) {
	min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	r := run(t, choiceRecord(t), choose("btc", min(1), false, "60000", "80"))
	inv := r.Invoice
	assert.Equal(t, "btc", inv.Ticker)
	assert.Equal(t, "bc1qaddr", inv.AddressIn)
	assert.Equal(t, "Bitcoin", inv.CoinName)
	assertDec(t, "0.00041667", inv.Due, "due in btc")
	assert.Equal(t, "bitcoin:bc1qaddr?amount=0.00041667", inv.PaymentURI)
	assert.Equal(t, min(1), inv.QuotedAt)
	assert.Equal(t, min(16), inv.QuoteExpiresAt, "a fresh quote")
	assert.Equal(t, min(1), inv.Coins[0].ChosenAt)
	assert.Equal(t, int64(2), inv.Version)
	assert.Equal(t, EventCoinChosen, inv.Events[1].Kind)

	// The price moved; the customer pays part in btc, then switches.
	r = run(t, r, payTo("bc1qaddr", "btc", "a", "0.0002", true, min(2))) // 12 USD
	r = run(t, r, choose("ltc", min(3), false, "50000", "100"))
	inv = r.Invoice
	assert.Equal(t, "ltc", inv.Ticker)
	assert.Equal(t, "ltc1qaddr", inv.AddressIn)
	assertDec(t, "100", inv.Rate, "the ltc quote")
	assertDec(t, "0.13", inv.Due, "13 USD at 100")
	assertDec(t, "0", inv.Paid, "nothing paid in ltc")
	assertDec(t, "12", inv.PaidFiat, "the btc payment at its quote")
	assert.Equal(t, "litecoin:ltc1qaddr?amount=0.13", inv.PaymentURI)
	assertDec(t, "50000", inv.Coins[0].Rate, "btc quoted again")
	assertDec(t, "0.00026", inv.Coins[0].Due, "13 USD at 50000")
	assert.Equal(t, "bc1qaddr", inv.Coins[0].AddressIn, "the btc address stays")
	assert.Contains(t, inv.Events[len(inv.Events)-1].Note, "instead of btc")

	// A late payment to the btc address counts, at btc's quote in force.
	r = run(t, r, payTo("bc1qaddr", "btc", "b", "0.0001", true, min(4))) // 5 USD at 50000
	inv = r.Invoice
	assertDec(t, "17", inv.PaidFiat, "12 + 5")
	assertDec(t, "50000", inv.Payments[1].Rate, "its coin's quote")
	assert.False(t, inv.Payments[1].WrongCoin)
	assertDec(t, "0.08", inv.Due, "8 USD at 100, in ltc")
	assertDec(t, "0", inv.Paid, "Paid is in the invoice's coin")

	// The rest in ltc settles.
	r = run(t, r, payTo("ltc1qaddr", "ltc", "c", "0.08", true, min(5)))
	inv = r.Invoice
	assert.Equal(t, StatusSettled, inv.Status)
	assert.Equal(t, ExceptionNone, inv.Exception, "paying exactly what was asked is no overpayment")
	assertDec(t, "25", inv.PaidFiat, "12 + 5 + 8")
	assertDec(t, "0.08", inv.Paid, "in ltc")
	for _, c := range inv.Coins {
		assertDec(t, "0", c.Due, c.Ticker+": nothing due once paid")
	}
	_, _, err := transition(r, choose("btc", min(6), true, "1", "1"))
	assert.ErrorIs(t, err, ErrWrongStatus, "no choice on a paid invoice")
}

// Back to a coin chosen before: its address again, no new one.
func TestChoiceBackToACoinKeepsItsAddress(t *testing.T) {
	m := t0.Add(time.Minute)
	r := run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"), choose("ltc", m, false, "60000", "80"),
		choose("btc", m, true, "60000", "80"))
	assert.Equal(t, "bc1qaddr", r.Invoice.AddressIn)
	assert.Equal(t, "btc", r.Invoice.Ticker)
	assertDec(t, "0.00041667", r.Invoice.Due, "due")
	assert.Equal(t, "bitcoin:bc1qaddr?amount=0.00041667", r.Invoice.PaymentURI, "the btc URI form again")

	// The same coin again changes nothing.
	n, changed, err := transition(r, choose("btc", m, true, "1", "1"))
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, r.Invoice.Version, n.Invoice.Version)
}

// What a choice refuses, storing nothing.
func TestChoiceRefusals(t *testing.T) {
	m := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		r    func() *Record
		e    event
		want error
	}{
		{"a coin not offered", func() *Record { return choiceRecord(t) },
			event{kind: evChoose, at: m, ticker: "eth", rates: map[string]decimal.Decimal{"btc": dec("1"), "ltc": dec("1")}}, ErrCoinNotOffered},
		{"another coin than a single-coin invoice's", func() *Record { return btcRecord(t, "25", "USD", "60000") },
			event{kind: evChoose, at: m, ticker: "ltc"}, ErrCoinNotOffered},
		{"after the deadline", func() *Record { return choiceRecord(t) }, choose("btc", t0.Add(time.Hour), false, "1", "1"), ErrWrongStatus},
		{"on an invalidated invoice", func() *Record {
			return run(t, choiceRecord(t), event{kind: evInvalidate, at: m})
		}, choose("btc", m, false, "1", "1"), ErrWrongStatus},
		{"on a processing invoice", func() *Record {
			return run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"), payTo("bc1qaddr", "btc", "a", "0.00041667", false, m))
		}, choose("ltc", m, false, "60000", "80"), ErrWrongStatus},
		{"without the address of a coin never chosen", func() *Record { return choiceRecord(t) }, choose("btc", m, true, "1", "1"), errBadEvent},
		{"without a quote of every coin", func() *Record { return choiceRecord(t) },
			event{kind: evChoose, at: m, ticker: "btc", rates: map[string]decimal.Decimal{"btc": dec("1")},
				created: choose("btc", m, false, "1", "1").created}, errBadEvent},
	} {
		r := tc.r()
		_, _, err := transition(r, tc.e)
		assert.ErrorIs(t, err, tc.want, tc.name)
	}

	// The address of another coin of the invoice, or another address for
	// a coin chosen before: the service's answer is not believed.
	r := run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"))
	e := choose("ltc", m, false, "60000", "80")
	e.created.addressIn = "bc1qaddr"
	_, _, err := transition(r, e)
	assert.ErrorContains(t, err, "address of another coin")
	r = run(t, r, choose("ltc", m, false, "60000", "80"))
	e = choose("btc", m, false, "60000", "80")
	e.created.addressIn = "bc1qother"
	_, _, err = transition(r, e)
	assert.ErrorContains(t, err, "another address")
}

// MaxChoices choices, then no more; a coin set by Create is not one.
func TestChoiceIsBounded(t *testing.T) {
	m := t0.Add(time.Minute)
	r := choiceRecord(t)
	tk := []string{"btc", "ltc"}
	for i := range MaxChoices {
		var err error
		r, _, err = transition(r, choose(tk[i%2], m, i >= 2, "60000", "80"))
		require.NoError(t, err, "choice %d", i+1)
	}
	_, _, err := transition(r, choose(tk[MaxChoices%2], m, true, "60000", "80"))
	assert.ErrorIs(t, err, ErrTooManyChoices)
	n, changed, err := transition(r, choose(r.Invoice.Ticker, m, true, "60000", "80"))
	require.NoError(t, err, "the coin chosen last again is no new choice")
	assert.False(t, changed)
	assert.Equal(t, MaxChoices, choices(&n.Invoice))
}

// A payment in another coin to a chosen coin's address is a wrong coin,
// whatever the coin chosen last; a payment to an address is in that
// address's coin when the callback names none.
func TestChoiceWrongCoinIsJudgedByTheAddressPaid(t *testing.T) {
	m := t0.Add(time.Minute)
	r := run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"), choose("ltc", m, false, "60000", "80"),
		payTo("bc1qaddr", "ltc", "a", "0.1", true, m))
	assert.True(t, r.Invoice.Payments[0].WrongCoin, "ltc to the btc address")
	assert.Equal(t, ExceptionWrongCoin, r.Invoice.Exception)
	r = run(t, r, payTo("bc1qaddr", "btc", "b", "0.0001", true, m))
	assert.False(t, r.Invoice.Payments[1].WrongCoin)
	assertDec(t, "6", r.Invoice.PaidFiat, "0.0001 btc at 60000")
}

// Tick's quote renews every offered coin, chosen or not; a payment in
// flight in any coin holds the quotes.
func TestChoiceRequoteRenewsEveryCoin(t *testing.T) {
	r := run(t, choiceRecord(t), event{kind: evQuote, at: t0.Add(15 * time.Minute),
		rates: map[string]decimal.Decimal{"btc": dec("50000"), "ltc": dec("100")}})
	inv := r.Invoice
	assertDec(t, "50000", inv.Coins[0].Rate, "btc")
	assertDec(t, "0.0005", inv.Coins[0].Due, "btc")
	assertDec(t, "0.25", inv.Coins[1].Due, "ltc")
	assert.Equal(t, t0.Add(30*time.Minute), inv.QuoteExpiresAt)
	assert.Equal(t, EventRequoted, inv.Events[len(inv.Events)-1].Kind)
	assert.Contains(t, inv.Events[len(inv.Events)-1].Note, "btc 50000, ltc 100")
	_, _, err := transition(r, event{kind: evQuote, at: t0.Add(30 * time.Minute), rates: map[string]decimal.Decimal{"btc": dec("1")}})
	assert.ErrorIs(t, err, errBadEvent, "every coin is quoted")

	m := t0.Add(time.Minute)
	r = run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"), choose("ltc", m, false, "60000", "80"),
		payTo("bc1qaddr", "btc", "a", "0.0001", false, m))
	assert.True(t, r.Invoice.PaidPending.IsZero(), "nothing in flight in ltc")
	assert.False(t, quoteDue(&r.Invoice, t0.Add(20*time.Minute)), "but a btc payment is in flight")
	assert.Equal(t, t0.Add(time.Hour), r.TickAt(), "the deadline, not the quote")
}

// An expired choice reopened asks again in the coin chosen last, or
// for a choice, with every coin quoted again.
func TestChoiceReopened(t *testing.T) {
	late := t0.Add(2 * time.Hour)
	rates := map[string]decimal.Decimal{"btc": dec("50000"), "ltc": dec("100")}
	r := run(t, choiceRecord(t), event{kind: evReopen, at: late, expiresIn: time.Hour, rates: rates, note: "asked again"})
	assert.Equal(t, StatusNew, r.Invoice.Status)
	assert.Empty(t, r.Invoice.Ticker)
	assertDec(t, "0.25", r.Invoice.Coins[1].Due, "ltc at the new quote")

	r = run(t, choiceRecord(t), choose("ltc", t0.Add(time.Minute), false, "60000", "80"),
		event{kind: evReopen, at: late, expiresIn: time.Hour, rate: dec("100"), rates: rates})
	assertDec(t, "0.25", r.Invoice.Due, "ltc at the new quote")
	assertDec(t, "100", r.Invoice.Rate, "rate")
}

// The record keeps what the Desk needs of each coin through a store.
func TestChoiceRecordRoundTrip(t *testing.T) {
	r := run(t, choiceRecord(t), choose("btc", t0.Add(time.Minute), false, "60000", "80"))
	r.coins[1].Owner, r.coins[1].Until = "someone", t0.Add(time.Hour)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back Record
	require.NoError(t, json.Unmarshal(b, &back))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(again))
	assert.Equal(t, "someone", back.coins[1].Owner)
	assert.True(t, sameState(r, &back))
	assert.Equal(t, r.req.Tickers, back.req.Tickers)
	assert.Equal(t, r.req.Destinations, back.req.Destinations)

	var w map[string]any
	require.NoError(t, json.Unmarshal(b, &w))
	w["coins"] = []any{}
	b, _ = json.Marshal(w)
	assert.Error(t, json.Unmarshal(b, &back), "coins without their bookkeeping")
}

// A callback without a coin is in the coin of the address it paid, also
// of a coin chosen before; an address that is none of the invoice's is
// none, also while no coin is chosen (no address at all).
func TestChoicePaymentEventOfAnOldAddress(t *testing.T) {
	m := t0.Add(time.Minute)
	r := run(t, choiceRecord(t), choose("btc", m, false, "60000", "80"), choose("ltc", m, false, "60000", "80"))
	inv := &r.Invoice
	e, err := paymentEvent(inv, &callback.Payment{UUID: "u", ValueCoin: dec("1"), AddressIn: "bc1qaddr"})
	require.NoError(t, err)
	assert.Equal(t, "btc", e.coin)
	e, err = paymentEvent(inv, &callback.Payment{UUID: "u", ValueCoin: dec("1"), AddressIn: "ltc1qaddr"})
	require.NoError(t, err)
	assert.Equal(t, "ltc", e.coin)
	assert.True(t, inv.ownsAddress("bc1qaddr"))
	assert.True(t, inv.ownsAddress("ltc1qaddr"))
	assert.False(t, inv.ownsAddress("bc1qother"))
	assert.False(t, inv.ownsAddress(""))
	fresh := choiceRecord(t).Invoice
	assert.False(t, fresh.ownsAddress(""), "no address before a choice: an empty one is none")
	assert.Equal(t, []payAddress{{"btc", "bc1qaddr", "https://shop.example/cb?invoice=INV&nonce=N"},
		{"ltc", "ltc1qaddr", "https://shop.example/cb?invoice=INV&nonce=N"}}, r.addresses(), "Reconcile reads both")
	assert.Empty(t, choiceRecord(t).addresses(), "and nothing before a choice")
}
