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

// btcRecord is a 25 USD invoice in btc at 60000 USD, minimum 0.0001,
// quote 15 minutes, expiry 1 hour, as Create makes it.
func btcRecord(tb testing.TB, price, currency, rate string) *Record {
	tb.Helper()
	r := &Record{
		Invoice: Invoice{
			ID: "INV", OrderID: "42", Ticker: "btc", Currency: currency, Price: dec(price), Rate: dec(rate),
			AddressIn: "bc1qaddr", Status: StatusNew, Minimum: dec("0.0001"), Decimals: 8,
			QuoteTTL: Duration{15 * time.Minute}, CreatedAt: t0, QuoteExpiresAt: t0.Add(15 * time.Minute),
			ExpiresAt: t0.Add(time.Hour), UpdatedAt: t0, Version: 1,
		},
		nonce: "N",
	}
	if currency == "" {
		r.Invoice.QuoteExpiresAt = time.Time{}
	}
	due := ceilDiv(r.Invoice.Price, r.Invoice.Rate, 8)
	r.uri = makeURITemplate("bitcoin:bc1qaddr?amount="+due.String(), due, 8)
	settle(&r.Invoice, r.uri)
	return r
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
	assert.Equal(t, "bitcoin:bc1qaddr?amount=0.00041667", inv.PaymentURI)
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
			uri: "bitcoin:bc1qaddr?amount=0.00021667"},
		{name: "partial then top-up settles",
			events: []event{pay("a", "0.0002", true, min1), pay("b", "0.00021667", true, min1)},
			status: StatusSettled, due: "0", paid: "0.00041667", pending: "0"},
		{name: "remainder below the minimum asks for the minimum",
			events: []event{pay("a", "0.0004", true, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.0001", paid: "0.0004", pending: "0",
			uri: "bitcoin:bc1qaddr?amount=0.0001"},
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
			uri: "bitcoin:bc1qaddr?amount=0.00041667"},
		{name: "wrong coin stays flagged after the invoice is paid",
			events: []event{
				{kind: evPayment, at: min1, uuid: "w", coin: "ltc", amount: dec("1"), confirmed: true},
				pay("a", "0.00041667", true, min1)},
			status: StatusSettled, exception: ExceptionWrongCoin, due: "0", paid: "0.00041667", pending: "0"},
		{name: "price in the coin", price: "0.01", currency: "",
			events: []event{pay("a", "0.004", true, min1)},
			status: StatusNew, exception: ExceptionPaidPartial, due: "0.006", paid: "0.004", pending: "0",
			uri: "bitcoin:bc1qaddr?amount=0.006"},
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
				settle(&r.Invoice, r.uri)
			}
			inv := run(t, r, tc.events...).Invoice
			assert.Equal(t, tc.status, inv.Status)
			assert.Equal(t, tc.exception, inv.Exception)
			assertDec(t, tc.due, inv.Due, "due")
			assertDec(t, tc.paid, inv.Paid, "paid")
			assertDec(t, tc.pending, inv.PaidPending, "pending")
			wantURI := ""
			if inv.Due.IsPositive() {
				wantURI = "bitcoin:bc1qaddr?amount=" + dec(tc.due).String()
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
	assert.Equal(t, "bitcoin:bc1qaddr?amount=0.00026", inv.PaymentURI)
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
	assert.ErrorIs(t, err, ErrSettled)
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
