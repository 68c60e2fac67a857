package invoice

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// btcRecord is an invoice of price in currency, in btc at rate, minimum
// 0.0001, quote 15 minutes, expiry 1 hour, monitoring 24 hours, made as
// Create makes it: a reservation filled by the service's answer.
func btcRecord(tb testing.TB, price, currency, rate string) *Record {
	tb.Helper()
	q := request{OrderID: "42", Ticker: "btc", Currency: currency, Price: dec(price), Callback: "https://shop.example/cb",
		Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", QuoteTTL: Duration{15 * time.Minute}, ExpiresIn: Duration{time.Hour}, MonitorFor: Duration{24 * time.Hour}}
	r := reservation(q, t0)
	r.Invoice.ID, r.nonce = "INV", "N"
	due := ceilDiv(dec(price), dec(rate), 8)
	n, changed, err := transition(r, event{kind: evCreate, at: t0, rate: dec(rate), created: &created{
		nonce: "N", addressIn: "bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs", callbackURL: "https://shop.example/cb?invoice=INV&nonce=N",
		uri: makeURITemplate("bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount="+due.String(), due, 8), minimum: dec("0.0001"),
		decimals: 8, coinName: "Bitcoin"}})
	require.NoError(tb, err)
	require.True(tb, changed)
	return n
}

func pay(uuid, amount string, confirmed bool, at time.Time) event {
	return event{kind: evPayment, at: at, uuid: uuid, txid: "tx-" + uuid, coin: "btc", amount: dec(amount), confirmed: confirmed}
}

// run applies events in order and returns the last invoice.
func run(tb testing.TB, r *Record, evs ...event) *Record {
	tb.Helper()
	for _, e := range evs {
		n, _, err := transition(r, e)
		require.NoError(tb, err)
		r = n
	}
	return r
}

func assertDec(tb testing.TB, want string, got decimal.Decimal, what string) {
	tb.Helper()
	assert.True(tb, dec(want).Equal(got), "%s: want %s, got %s", what, want, got)
}

func TestCreatedInvoiceAsksForThePrice(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	inv := r.Invoice
	assert.Equal(t, StatusNew, inv.Status)
	assert.Equal(t, ExceptionNone, inv.Exception)
	assertDec(t, "0.00041667", inv.Due, "due") // 25/60000 = 0.000416666… rounded up
	assertDec(t, "25", inv.Remaining, "remaining")
	assert.Equal(t, "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.00041667", inv.PaymentURI)
}

func TestTransitionTable(t *testing.T) {
	min1 := t0.Add(time.Minute)
	cases := []struct {
		name      string
		price     string
		currency  string
		tolerance string
		events    []event
		status    Status
		exception Exception
		due       string
		paid      string
		pending   string
		uri       string
	}{
		{name: "exact payment pending is processing",
			events: []event{pay("a", "0.00041667", false, min1)},
			status: StatusProcessing, due: "0", paid: "0", pending: "0.00041667"},
		{name: "exact payment confirmed settles without exception",
			events: []event{pay("a", "0.00041667", false, min1), pay("a", "0.00041667", true, min1)},
			status: StatusSettled, due: "0", paid: "0.00041667", pending: "0"},
		{name: "confirmed without pending settles",
			events: []event{pay("a", "0.00041667", true, min1)},
			status: StatusSettled, due: "0", paid: "0.00041667", pending: "0"},
		{name: "partial asks for the whole remainder",
			events: []event{pay("a", "0.0002", true, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.00021667", paid: "0.0002", pending: "0",
			uri: "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.00021667"},
		{name: "partial then top-up settles",
			events: []event{pay("a", "0.0002", true, min1), pay("b", "0.00021667", true, min1)},
			status: StatusSettled, due: "0", paid: "0.00041667", pending: "0"},
		{name: "remainder below the minimum asks for the minimum",
			events: []event{pay("a", "0.0004", true, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.0001", paid: "0.0004", pending: "0",
			uri: "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.0001"},
		{name: "paying the raised minimum settles with no exception",
			events: []event{pay("a", "0.0004", true, min1), pay("b", "0.0001", true, min1)},
			status: StatusSettled, due: "0", paid: "0.0005", pending: "0"},
		{name: "paying more than the raised minimum is an overpayment",
			events: []event{pay("a", "0.0004", true, min1), pay("b", "0.00010001", true, min1)},
			status: StatusSettled, exception: ExceptionPaidOver, due: "0", paid: "0.00050001", pending: "0"},
		{name: "overpayment in one go",
			events: []event{pay("a", "0.001", true, min1)},
			status: StatusSettled, exception: ExceptionPaidOver, due: "0", paid: "0.001", pending: "0"},
		{name: "a payment after settling is an overpayment and settled stays",
			events: []event{pay("a", "0.00041667", true, min1), pay("b", "0.0001", false, min1)},
			status: StatusSettled, exception: ExceptionPaidOver, due: "0", paid: "0.00041667", pending: "0.0001"},
		{name: "within tolerance settles", tolerance: "0.01",
			events: []event{pay("a", "0.00041300", true, min1)}, // 24.78 USD, 0.88% short
			status: StatusSettled, due: "0", paid: "0.000413", pending: "0"},
		{name: "beyond tolerance is partial and asks for the whole remainder", tolerance: "0.01",
			events: []event{pay("a", "0.0004", true, min1)}, // 24 USD, 4% short
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.0001", paid: "0.0004", pending: "0"},
		{name: "duplicate pending changes nothing",
			events: []event{pay("a", "0.0002", false, min1), pay("a", "0.0002", false, min1.Add(time.Second))},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.00021667", paid: "0", pending: "0.0002"},
		{name: "late pending after its confirmation changes nothing",
			events: []event{pay("a", "0.0002", true, min1), pay("a", "0.0002", false, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.00021667", paid: "0.0002", pending: "0"},
		{name: "expiry without payment",
			events: []event{{kind: evClock, at: t0.Add(time.Hour)}},
			status: StatusExpired, due: "0", paid: "0", pending: "0"},
		{name: "expiry with a partial payment",
			events: []event{pay("a", "0.0002", true, min1), {kind: evClock, at: t0.Add(time.Hour)}},
			status: StatusExpired, exception: ExceptionPaidPartial, due: "0", paid: "0.0002", pending: "0"},
		{name: "late payment is recorded, status stays expired",
			events: []event{pay("a", "0.00041667", true, t0.Add(2*time.Hour))},
			status: StatusExpired, exception: ExceptionPaidLate, due: "0", paid: "0.00041667", pending: "0"},
		{name: "seen before expiry, confirmed after, settles",
			events: []event{pay("a", "0.00041667", false, min1), pay("a", "0.00041667", true, t0.Add(2*time.Hour))},
			status: StatusSettled, due: "0", paid: "0.00041667", pending: "0"},
		{name: "wrong coin is recorded, not counted",
			events: []event{{kind: evPayment, at: min1, uuid: "w", coin: "ltc", amount: dec("1"), confirmed: true}},
			status: StatusNew, exception: ExceptionWrongCoin, due: "0.00041667", paid: "0", pending: "0",
			uri: "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.00041667"},
		{name: "wrong coin stays flagged after the invoice is paid",
			events: []event{
				{kind: evPayment, at: min1, uuid: "w", coin: "ltc", amount: dec("1"), confirmed: true},
				pay("a", "0.00041667", true, min1)},
			status: StatusSettled, exception: ExceptionWrongCoin, due: "0", paid: "0.00041667", pending: "0"},
		{name: "price in the coin", price: "0.01", currency: "",
			events: []event{pay("a", "0.004", true, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.006", paid: "0.004", pending: "0",
			uri: "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.006"},
		{name: "invalidated, then paid: late",
			events: []event{{kind: evInvalidate, at: min1}, pay("a", "0.00041667", true, min1)},
			status: StatusInvalid, exception: ExceptionPaidLate, due: "0", paid: "0.00041667", pending: "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			price, cur, rate := "25", "USD", "60000"
			if tc.price != "" {
				price, cur, rate = tc.price, tc.currency, "1"
			}
			r := btcRecord(t, price, cur, rate)
			if tc.tolerance != "" {
				r.Invoice.Tolerance = dec(tc.tolerance)
				settle(r)
			}
			inv := run(t, r, tc.events...).Invoice
			assert.Equal(t, tc.status, inv.Status)
			assert.Equal(t, tc.exception, inv.Exception)
			assertDec(t, tc.due, inv.Due, "due")
			assertDec(t, tc.paid, inv.Paid, "paid")
			assertDec(t, tc.pending, inv.PaidPending, "pending")
			wantURI := ""
			if inv.Due.IsPositive() {
				wantURI = "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=" + dec(tc.due).String()
			}
			assert.Equal(t, wantURI, inv.PaymentURI)
			if tc.uri != "" {
				assert.Equal(t, tc.uri, inv.PaymentURI)
			}
		})
	}
}

func TestRequoteConvertsOnlyTheUnpaidFiatRemainder(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	// 0.0002 btc at 60000 = 12 USD paid; 13 USD remain.
	r = run(t, r, pay("a", "0.0002", true, t0.Add(time.Minute)))
	assertDec(t, "13", r.Invoice.Remaining, "remaining")

	// Not lapsed yet: the quote is not replaced.
	n, changed, err := transition(r, event{kind: evQuote, at: t0.Add(14 * time.Minute), rate: dec("50000")})
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, r.Invoice, n.Invoice)

	// Lapsed: 13 USD at 50000 = 0.00026 btc. The first payment keeps 60000.
	at := t0.Add(15 * time.Minute)
	n, changed, err = transition(r, event{kind: evQuote, at: at, rate: dec("50000")})
	require.NoError(t, err)
	require.True(t, changed)
	inv := n.Invoice
	assertDec(t, "50000", inv.Rate, "rate")
	assertDec(t, "0.00026", inv.Due, "due")
	assert.Equal(t, "bitcoin:bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs?amount=0.00026", inv.PaymentURI)
	assert.Equal(t, at.Add(15*time.Minute), inv.QuoteExpiresAt)
	assertDec(t, "60000", inv.Payments[0].Rate, "first payment's rate")
	assertDec(t, "12", inv.Payments[0].FiatValue, "first payment's value")
	assert.Equal(t, int64(r.Invoice.Version+1), inv.Version)

	// Paying the new Due settles with no exception.
	inv = run(t, n, pay("b", "0.00026", true, at.Add(time.Minute))).Invoice
	assert.Equal(t, StatusSettled, inv.Status)
	assert.Equal(t, ExceptionNone, inv.Exception)
	assertDec(t, "25", inv.PaidFiat, "paid fiat")
}

func TestNoRequoteWithAPaymentInFlight(t *testing.T) {
	r := run(t, btcRecord(t, "25", "USD", "60000"), pay("a", "0.0002", false, t0.Add(time.Minute)))
	_, changed, err := transition(r, event{kind: evQuote, at: t0.Add(20 * time.Minute), rate: dec("50000")})
	require.NoError(t, err)
	assert.False(t, changed, "a pending payment keeps the quote")
}

func TestNoRequoteForAPriceInTheCoin(t *testing.T) {
	r := btcRecord(t, "0.01", "", "1")
	_, changed, err := transition(r, event{kind: evQuote, at: t0.Add(20 * time.Minute), rate: dec("2")})
	require.NoError(t, err)
	assert.False(t, changed)
}

func TestQuoteNeverOutlivesTheInvoice(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	n, changed, err := transition(r, event{kind: evQuote, at: t0.Add(50 * time.Minute), rate: dec("50000")})
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, r.Invoice.ExpiresAt, n.Invoice.QuoteExpiresAt)
}

func TestSettledCannotBeInvalidated(t *testing.T) {
	r := run(t, btcRecord(t, "25", "USD", "60000"), pay("a", "0.00041667", true, t0.Add(time.Minute)))
	_, _, err := transition(r, event{kind: evInvalidate, at: t0.Add(2 * time.Minute)})
	assert.ErrorIs(t, err, ErrWrongStatus)
}

func TestTransitionRefusesBadEvents(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	for name, e := range map[string]event{
		"no time":         {kind: evClock},
		"no uuid":         {kind: evPayment, at: t0, amount: dec("1"), coin: "btc"},
		"zero amount":     {kind: evPayment, at: t0, uuid: "u", coin: "btc"},
		"negative amount": {kind: evPayment, at: t0, uuid: "u", amount: dec("-1"), coin: "btc"},
		"zero rate":       {kind: evQuote, at: t0},
		"unknown kind":    {kind: 99, at: t0},
	} {
		_, _, err := transition(r, e)
		assert.ErrorIs(t, err, errBadEvent, name)
	}
}

func TestTransitionDoesNotModifyItsInput(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	before := r.clone()
	_, _, err := transition(r, pay("a", "0.0002", true, t0.Add(time.Minute)))
	require.NoError(t, err)
	assert.Equal(t, before, r)
}

func TestOverpaymentDoesNotDependOnArrivalOrder(t *testing.T) {
	// 0.0004 + 0.0001: either order, the second fits what would have
	// been asked after the first (the minimum); no exception.
	a, b := pay("a", "0.0004", true, t0.Add(time.Minute)), pay("b", "0.0001", true, t0.Add(time.Minute))
	x := run(t, btcRecord(t, "25", "USD", "60000"), a, b).Invoice
	y := run(t, btcRecord(t, "25", "USD", "60000"), b, a).Invoice
	assert.Equal(t, ExceptionNone, x.Exception)
	assert.Equal(t, ExceptionNone, y.Exception)
	assert.Equal(t, StatusSettled, y.Status)
}

func TestURITemplateForms(t *testing.T) {
	amt := dec("0.5")
	for _, tc := range []struct{ uri, next string }{
		{"bitcoin:bc1q?amount=0.5", "bitcoin:bc1q?amount=0.25"},
		{"ethereum:0xabc?value=500000000000000000&x=1", "ethereum:0xabc?value=250000000000000000&x=1"},
		{"tron:T?label=a&amount=0.50", "tron:T?label=a&amount=0.25"},
		{"bitcoin:bc1q", ""},
		{"weird:thing?amount=7", ""},
	} {
		tm := makeURITemplate(tc.uri, amt, 18)
		assert.Equal(t, tc.next, tm.render(dec("0.25")), tc.uri)
		assert.Equal(t, tc.uri, tm.render(amt), "the given amount gives the given URI")
	}
}

// Coins compare in ASCII case only: a coin equal to the invoice's only
// under Unicode case folding (long s for s, the Kelvin sign for k) is
// another coin, recorded and never counted.
func TestWrongCoinComparesInASCIICaseOnly(t *testing.T) {
	for _, tc := range []struct {
		ticker, coin string
		wrong        bool
	}{
		{"trc20_usdt", "trc20_usdt", false},
		{"trc20_usdt", "TRC20_USDT", false},
		{"trc20_usdt", "trc20_u\u017fdt", true}, // long s
		{"bep20_link", "bep20_lin\u212a", true}, // Kelvin sign
		{"trc20_usdt", "trc20_usdc", true},
	} {
		r := btcRecord(t, "25", "USD", "60000")
		r.Invoice.Ticker = tc.ticker
		n, _, err := transition(r, event{kind: evPayment, at: t0.Add(time.Minute), uuid: "u", coin: tc.coin, amount: dec("1"), confirmed: true})
		require.NoError(t, err)
		assert.Equal(t, tc.wrong, n.Invoice.Payments[0].WrongCoin, "%q", tc.coin)
		assert.Equal(t, tc.wrong, n.Invoice.Exception == ExceptionWrongCoin, "%q", tc.coin)
	}
	assert.Equal(t, "trc20_u\u017fdt", normCoin(" trc20_u\u017fdt "), "kept, never folded into the invoice's coin")
	assert.Equal(t, "trc20_usdt", normCoin("TRC20/USDT"))
}

func kinds(inv *Invoice) []string {
	var k []string
	for _, e := range inv.Events {
		k = append(k, e.Kind)
	}
	return k
}

// The lifecycle's rules, one event sequence each: what the invoice ends
// as, and the history it keeps.
func TestLifecycleTable(t *testing.T) {
	min1 := t0.Add(time.Minute)
	deadline := t0.Add(time.Hour)
	monitorEnd := deadline.Add(24 * time.Hour)
	for _, tc := range []struct {
		name      string
		events    []event
		err       error // of the last event
		status    Status
		exception Exception
		due       string
		kinds     []string
	}{
		{name: "nobody pays: expired at the deadline",
			events: []event{{kind: evClock, at: deadline.Add(time.Minute)}},
			status: StatusExpired, due: "0", kinds: []string{EventCreated, EventExpired}},
		{name: "paid in full, never confirmed: processing until the end of monitoring",
			events: []event{pay("a", "0.00041667", false, min1), {kind: evClock, at: monitorEnd.Add(-time.Second)}},
			status: StatusProcessing, due: "0", kinds: []string{EventCreated, EventPaymentSeen}},
		{name: "paid in full, never confirmed: expired at the end of monitoring, nothing received",
			events: []event{pay("a", "0.00041667", false, min1), {kind: evClock, at: monitorEnd}},
			status: StatusExpired, due: "0", kinds: []string{EventCreated, EventPaymentSeen, EventExpired}},
		{name: "part confirmed, the rest dropped: expired, paid_partial",
			events: []event{pay("a", "0.0002", true, min1), pay("b", "0.00021667", false, min1), {kind: evClock, at: monitorEnd}},
			status: StatusExpired, exception: ExceptionPaidPartial, due: "0",
			kinds: []string{EventCreated, EventPaymentConfirmed, EventPaymentSeen, EventExpired}},
		{name: "the dropped payment confirms after all: late",
			events: []event{pay("a", "0.00041667", false, min1), {kind: evClock, at: monitorEnd}, pay("a", "0.00041667", true, monitorEnd.Add(time.Hour))},
			status: StatusExpired, exception: ExceptionPaidLate, due: "0",
			kinds: []string{EventCreated, EventPaymentSeen, EventExpired, EventPaymentConfirmed}},
		{name: "confirmed within monitoring: settled",
			events: []event{pay("a", "0.00041667", false, min1), pay("a", "0.00041667", true, monitorEnd.Add(-time.Second))},
			status: StatusSettled, due: "0", kinds: []string{EventCreated, EventPaymentSeen, EventPaymentConfirmed}},
		{name: "a processing invoice cannot be invalidated",
			events: []event{pay("a", "0.00041667", false, min1), {kind: evInvalidate, at: min1}},
			err:    ErrWrongStatus, status: StatusProcessing, due: "0"},
		{name: "invalidated with a payment in flight that then confirms: late",
			events: []event{pay("a", "0.0002", false, min1), {kind: evInvalidate, at: min1, note: "out of stock"}, pay("a", "0.0002", true, min1.Add(time.Minute))},
			status: StatusInvalid, exception: ExceptionPaidLate, due: "0",
			kinds: []string{EventCreated, EventPaymentSeen, EventInvalidated, EventPaymentConfirmed}},
		{name: "invalidated after a confirmed partial payment: paid_partial",
			events: []event{pay("a", "0.0002", true, min1), {kind: evInvalidate, at: min1}},
			status: StatusInvalid, exception: ExceptionPaidPartial, due: "0",
			kinds: []string{EventCreated, EventPaymentConfirmed, EventInvalidated}},
		{name: "marked: an underpayment accepted",
			events: []event{pay("a", "0.0004", true, min1), {kind: evMark, at: min1, note: "1 USD short, fine"}},
			status: StatusSettled, exception: ExceptionMarked, due: "0",
			kinds: []string{EventCreated, EventPaymentConfirmed, EventMarked}},
		{name: "marked: a late payment accepted",
			events: []event{pay("a", "0.00041667", true, deadline.Add(time.Minute)), {kind: evMark, at: deadline.Add(time.Hour), note: "late, fine"}},
			status: StatusSettled, exception: ExceptionMarked, due: "0",
			kinds: []string{EventCreated, EventExpired, EventPaymentConfirmed, EventMarked}},
		{name: "marked: a processing invoice",
			events: []event{pay("a", "0.00041667", false, min1), {kind: evMark, at: min1, note: "trusted customer"}},
			status: StatusSettled, exception: ExceptionMarked, due: "0",
			kinds: []string{EventCreated, EventPaymentSeen, EventMarked}},
		{name: "a settled invoice cannot be marked",
			events: []event{pay("a", "0.00041667", true, min1), {kind: evMark, at: min1, note: "x"}},
			err:    ErrWrongStatus, status: StatusSettled, due: "0"},
		{name: "an invalid invoice cannot be marked",
			events: []event{{kind: evInvalidate, at: min1}, {kind: evMark, at: min1, note: "x"}},
			err:    ErrWrongStatus, status: StatusInvalid, due: "0"},
		{name: "a new invoice cannot be reopened",
			events: []event{{kind: evReopen, at: min1, rate: dec("50000"), expiresIn: time.Hour}},
			err:    ErrWrongStatus, status: StatusNew, due: "0.00041667"},
		{name: "reopened: the rest at the new rate, with a new deadline",
			events: []event{pay("a", "0.0002", true, min1), {kind: evClock, at: deadline},
				{kind: evReopen, at: deadline.Add(time.Hour), rate: dec("50000"), expiresIn: 30 * time.Minute, note: "customer asked"}},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.00026", // 13 USD at 50000
			kinds: []string{EventCreated, EventPaymentConfirmed, EventExpired, EventReopened}},
		{name: "reopened after a late payment: it counts",
			events: []event{{kind: evClock, at: deadline}, pay("a", "0.0002", true, deadline.Add(time.Minute)),
				{kind: evReopen, at: deadline.Add(time.Hour), rate: dec("50000"), expiresIn: 30 * time.Minute}},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.00026",
			kinds: []string{EventCreated, EventExpired, EventPaymentConfirmed, EventReopened}},
		{name: "reopened, then its new deadline passes",
			events: []event{{kind: evClock, at: deadline}, {kind: evReopen, at: deadline.Add(time.Hour), rate: dec("50000"), expiresIn: 30 * time.Minute},
				{kind: evClock, at: deadline.Add(90 * time.Minute)}},
			status: StatusExpired, due: "0",
			kinds: []string{EventCreated, EventExpired, EventReopened, EventExpired}},
		{name: "re-quoted",
			events: []event{{kind: evQuote, at: t0.Add(15 * time.Minute), rate: dec("50000")}},
			status: StatusNew, due: "0.0005", kinds: []string{EventCreated, EventRequoted}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := btcRecord(t, "25", "USD", "60000")
			var err error
			for i, e := range tc.events {
				var n *Record
				n, _, err = transition(r, e)
				if err != nil {
					require.Equal(t, len(tc.events)-1, i, "only the last event may fail: %v", err)
					break
				}
				r = n
			}
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.kinds, kinds(&r.Invoice))
			}
			assert.Equal(t, tc.status, r.Invoice.Status)
			assert.Equal(t, tc.exception, r.Invoice.Exception)
			assertDec(t, tc.due, r.Invoice.Due, "due")
		})
	}
}

// An expiry is dated at the deadline that passed, whenever it is applied;
// every event says what happened.
func TestEventsSayWhatHappened(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	r = run(t, r, pay("a", "0.0002", true, t0.Add(time.Minute)), event{kind: evClock, at: t0.Add(5 * time.Hour)},
		event{kind: evReopen, at: t0.Add(6 * time.Hour), rate: dec("50000"), expiresIn: time.Hour, note: "customer asked"})
	ev := r.Invoice.Events
	require.Len(t, ev, 4)
	assert.Equal(t, Event{At: t0, Kind: EventCreated, Note: "25 USD at 60000 USD per btc: 0.00041667 btc due by 2026-11-23T13:00:00Z"}, ev[0])
	assert.Equal(t, "0.0002 btc seen confirmed, txid tx-a", ev[1].Note)
	assert.Equal(t, t0.Add(time.Hour), ev[2].At, "the deadline, not when it was noticed")
	assert.Equal(t, "not paid in full by the deadline", ev[2].Note)
	assert.Equal(t, "customer asked; 0.00026 btc due by 2026-11-23T19:00:00Z", ev[3].Note)
	assert.Equal(t, t0.Add(6*time.Hour), r.Invoice.UpdatedAt)
	r = run(t, r, pay("b", "0.00026", false, t0.Add(6*time.Hour+time.Minute)))
	assert.Equal(t, "0.00026 btc seen, txid tx-b; now processing", r.Invoice.Events[4].Note)
}

// TickAt is when the clock next changes an invoice: the quote's end while
// it can be renewed, the deadline, the end of monitoring; never for an
// invoice time cannot change.
func TestTickAt(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	assert.Equal(t, t0.Add(15*time.Minute), r.TickAt(), "the quote lapses first")
	assert.Equal(t, t0.Add(time.Hour), btcRecord(t, "0.01", "", "1").TickAt(), "a price in the coin has no quote")
	pending := run(t, r, pay("a", "0.0002", false, t0.Add(time.Minute)))
	assert.Equal(t, t0.Add(time.Hour), pending.TickAt(), "no re-quote with a payment in flight")
	processing := run(t, r, pay("a", "0.00041667", false, t0.Add(time.Minute)))
	assert.Equal(t, t0.Add(25*time.Hour), processing.TickAt(), "the end of monitoring")
	for _, n := range []*Record{
		run(t, r, pay("a", "0.00041667", true, t0.Add(time.Minute))),
		run(t, r, event{kind: evClock, at: t0.Add(time.Hour)}),
		run(t, r, event{kind: evInvalidate, at: t0.Add(time.Minute)}),
		reservation(r.req, t0),
	} {
		assert.True(t, n.TickAt().IsZero(), "%s", n.Invoice.Status)
	}
}

// AsOf shows what the clock makes of an invoice, without changing it.
func TestAsOf(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	inv := r.Invoice.Clone()
	same := inv.AsOf(t0.Add(59 * time.Minute))
	assert.Equal(t, inv, same, "nothing due: the invoice as it is, its payment URI too")
	late := inv.AsOf(t0.Add(time.Hour))
	assert.Equal(t, StatusExpired, late.Status)
	assert.True(t, late.Due.IsZero())
	assert.Empty(t, late.PaymentURI, "an expired deadline never asks for payment")
	assert.Equal(t, StatusNew, inv.Status, "the invoice itself is unchanged")
	assert.Equal(t, inv, r.Invoice.Clone())

	processing := run(t, r, pay("a", "0.00041667", false, t0.Add(time.Minute))).Invoice
	assert.Equal(t, StatusProcessing, processing.AsOf(t0.Add(25*time.Hour-time.Second)).Status)
	assert.Equal(t, StatusExpired, processing.AsOf(t0.Add(25*time.Hour)).Status)
	var none *Invoice
	assert.Nil(t, none.AsOf(t0))
}

// Reopening an invoice that what arrived meanwhile pays in full settles
// it, and the event says so.
func TestReopenSettledByWhatArrivedMeanwhile(t *testing.T) {
	r := run(t, btcRecord(t, "25", "USD", "60000"),
		event{kind: evClock, at: t0.Add(time.Hour)},
		pay("a", "0.00041667", true, t0.Add(2*time.Hour)), // late: paid_late
		event{kind: evReopen, at: t0.Add(3 * time.Hour), rate: dec("50000"), expiresIn: time.Hour, note: "counts after all"})
	assert.Equal(t, StatusSettled, r.Invoice.Status)
	assert.Equal(t, ExceptionNone, r.Invoice.Exception, "no longer late: the reopened invoice counts it")
	assert.Equal(t, "counts after all; now settled by what arrived meanwhile", r.Invoice.Events[len(r.Invoice.Events)-1].Note)
	assert.True(t, r.TickAt().IsZero())
}

// A week-long invoice re-quoted every 15 minutes keeps one re-quote
// event between other events, not 672.
func TestConsecutiveRequotesKeepOneEvent(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	r.Invoice.ExpiresAt = t0.Add(7 * 24 * time.Hour)
	at := t0
	for i := range 100 {
		at = at.Add(15 * time.Minute)
		r = run(t, r, event{kind: evQuote, at: at, rate: decimal.NewFromInt(60000 + int64(i))})
	}
	assert.Equal(t, []string{EventCreated, EventRequoted}, kinds(&r.Invoice))
	assert.Equal(t, at, r.Invoice.Events[1].At, "the latest")
	assert.Equal(t, "rate 60098 → 60099 USD per btc", r.Invoice.Events[1].Note)
	r = run(t, r, pay("a", "0.0001", true, at.Add(time.Minute)))
	at = at.Add(15 * time.Minute)
	r = run(t, r, event{kind: evQuote, at: at, rate: dec("50000")})
	assert.Equal(t, []string{EventCreated, EventRequoted, EventPaymentConfirmed, EventRequoted}, kinds(&r.Invoice),
		"a payment between re-quotes keeps both")
	assertDec(t, "60099", r.Invoice.Payments[0].Rate, "the payment keeps its quote")
}

// AsOf computes what Tick stores, version and events included.
func TestAsOfIsWhatTickStores(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	at := t0.Add(2 * time.Hour)
	view := r.Invoice.AsOf(at)
	ticked, changed, err := transition(r, event{kind: evClock, at: at})
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, ticked.Invoice.Version, view.Version)
	assert.Equal(t, ticked.Invoice.Events, view.Events)
	assert.Equal(t, ticked.Invoice.UpdatedAt, view.UpdatedAt)
	assert.Equal(t, ticked.Invoice.Status, view.Status)
}
