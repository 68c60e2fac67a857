package invoicesuite

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// Run runs every scenario with stores from newStore (a fresh, empty store
// per call).
func Run(t *testing.T, newStore func(t *testing.T) invoice.Store) {
	for _, sc := range []struct {
		name string
		fn   func(*testing.T, *Env)
	}{
		{"PartialThenTopUp", PartialThenTopUp},
		{"BelowMinimumRemainder", BelowMinimumRemainder},
		{"RequoteAfterPriceMove", RequoteAfterPriceMove},
		{"LatePaymentAfterExpiry", LatePaymentAfterExpiry},
		{"LatePaymentWithoutAnyRead", LatePaymentWithoutAnyRead},
		{"Overpayment", Overpayment},
		{"AnotherTokenWithMultiToken", AnotherTokenWithMultiToken},
		{"DuplicateAndReorderedCallbacks", DuplicateAndReorderedCallbacks},
		{"MissedCallbacksRecoveredByReconcile", MissedCallbacksRecoveredByReconcile},
		{"ForeignCallbacksTouchNoInvoice", ForeignCallbacksTouchNoInvoice},
		{"FailedOnChangeIsOfferedAgain", FailedOnChangeIsOfferedAgain},
		{"Invalidate", Invalidate},
		{"OnChangeMayUseTheDesk", OnChangeMayUseTheDesk},
		{"MissedWrongCoinIsNotCountedByReconcile", MissedWrongCoinIsNotCountedByReconcile},
		{"NobodyWatching", NobodyWatching},
		{"DroppedTransaction", DroppedTransaction},
		{"TickOffersRefusedChanges", TickOffersRefusedChanges},
		{"ReadsAreReads", ReadsAreReads},
		{"OneOpenInvoicePerOrder", OneOpenInvoicePerOrder},
		{"RacingCreates", RacingCreates},
		{"CreateAfterACrash", CreateAfterACrash},
		{"MarkedAndReopened", MarkedAndReopened},
		{"ListsAndFilters", ListsAndFilters},
		{"PricesBackOff", PricesBackOff},
		{"Books", Books},
		{"DecisionsRaceCallbacks", DecisionsRaceCallbacks},
		{"CustomerChoosesTheCoin", CustomerChoosesTheCoin},
		{"ChoiceSetByCreate", ChoiceSetByCreate},
		{"ChoiceRefusals", ChoiceRefusals},
		{"ChoicesAreBounded", ChoicesAreBounded},
		{"RacingChoices", RacingChoices},
		{"ChoiceAfterACrash", ChoiceAfterACrash},
		{"SwitchRacesPayment", SwitchRacesPayment},
		{"ChoiceReconciled", ChoiceReconciled},
		{"ChoiceWithNobodyWatching", ChoiceWithNobodyWatching},
		{"ChoiceCallbacksForOtherAddresses", ChoiceCallbacksForOtherAddresses},
		{"ChoiceRacesExpiry", ChoiceRacesExpiry},
		{"SwitchRacesConfirmation", SwitchRacesConfirmation},
	} {
		t.Run(sc.name, func(t *testing.T) {
			sc.fn(t, NewEnv(t, newStore(t)))
		})
	}
}

func eq(t *testing.T, want string, got interface{ String() string }, what string) {
	t.Helper()
	assert.Equal(t, D(want).String(), got.String(), what)
}

// PartialThenTopUp: a partial payment asks for the whole remainder with a
// new payment URI; paying it settles the invoice with no exception.
func PartialThenTopUp(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{OrderID: "1001", Price: D("25"), Currency: "USD"})
	eq(t, "0.00041667", inv.Due, "due")
	assert.Equal(t, "bitcoin:"+inv.AddressIn+"?amount=0.00041667", inv.PaymentURI)
	assert.Equal(t, "Bitcoin", inv.CoinName)
	eq(t, "0.0001", inv.Minimum, "minimum")
	assert.Equal(t, int32(8), inv.Decimals)
	assert.Len(t, inv.ID, 26, "130 random bits")
	assert.NotEqual(t, "1001", inv.ID)

	tx1 := e.Pay("btc", inv.AddressIn, "0.0002")
	got := e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Equal(t, invoice.ExceptionPaidPartial, got.Exception)
	eq(t, "0.0002", got.PaidPending, "pending")
	eq(t, "0.00021667", got.Due, "the whole remainder")
	assert.Equal(t, "bitcoin:"+inv.AddressIn+"?amount=0.00021667", got.PaymentURI)

	e.Confirm(tx1)
	got = e.Stored(inv.ID)
	eq(t, "0.0002", got.Paid, "paid")
	eq(t, "0", got.PaidPending, "pending")

	tx2 := e.Pay("btc", inv.AddressIn, got.Due.String())
	got = e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusProcessing, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	e.Confirm(tx2)
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	eq(t, "0.00041667", got.Paid, "paid")
	eq(t, "0", got.Due, "due")
	assert.Empty(t, got.PaymentURI)
	require.Len(t, got.Payments, 2)
	assert.True(t, got.Payments[0].Confirmed && got.Payments[1].Confirmed)
	e.AssertOnePerChange(got)
	assert.Len(t, e.Changes(inv.ID), 4, "seen, confirmed, seen, confirmed")
}

// BelowMinimumRemainder: a remainder below the coin's minimum is asked as
// the minimum, and paying exactly that settles with no exception.
func BelowMinimumRemainder(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.0004")) // 24 USD
	got := e.Stored(inv.ID)
	eq(t, "1", got.Remaining, "1 USD left")
	eq(t, "0.0001", got.Due, "the minimum, not 0.00001667")
	assert.Equal(t, invoice.ExceptionPaidPartial, got.Exception)
	e.Confirm(e.Pay("btc", inv.AddressIn, got.Due.String()))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	eq(t, "5", got.Excess, "the raise to the minimum")
	e.AssertOnePerChange(got)
}

// RequoteAfterPriceMove: after the quote lapses with nothing in flight,
// the unpaid fiat remainder is converted at the new price; the payment
// already received keeps its rate.
func RequoteAfterPriceMove(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", QuoteTTL: 10 * time.Minute})
	assert.Equal(t, T0.Add(10*time.Minute), inv.QuoteExpiresAt)
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.0002")) // 12 USD at 60000

	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	e.Clock.Advance(9 * time.Minute)
	assert.Zero(t, e.Tick())
	got := e.Get(inv.ID)
	eq(t, "60000", got.Rate, "quote still in force")
	e.Clock.Advance(time.Minute)
	assert.Equal(t, 1, e.Tick())
	got = e.Get(inv.ID)
	eq(t, "50000", got.Rate, "new quote")
	eq(t, "13", got.Remaining, "13 USD unpaid")
	eq(t, "0.00026", got.Due, "13 USD at 50000")
	assert.Equal(t, "bitcoin:"+inv.AddressIn+"?amount=0.00026", got.PaymentURI)
	assert.Equal(t, T0.Add(20*time.Minute), got.QuoteExpiresAt)
	eq(t, "60000", got.Payments[0].Rate, "the first payment keeps its quote")
	eq(t, "12", got.Payments[0].FiatValue, "and its value")

	e.Confirm(e.Pay("btc", inv.AddressIn, "0.00026"))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	eq(t, "25", got.PaidFiat, "12 + 13 USD")
	e.AssertOnePerChange(got)
}

// LatePaymentAfterExpiry: an expired invoice records a later payment as
// paid_late; the status stays expired and Paid includes it.
func LatePaymentAfterExpiry(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Clock.Advance(30 * time.Minute)
	e.Tick()
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	eq(t, "0", got.Due, "nothing asked")
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.00041667"))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, invoice.ExceptionPaidLate, got.Exception)
	eq(t, "0.00041667", got.Paid, "paid includes the late payment")
	require.Len(t, got.Payments, 1)
	assert.True(t, got.Payments[0].Late)
	e.AssertOnePerChange(got)
}

// LatePaymentWithoutAnyRead: the callback itself applies the expiry that
// nobody read.
func LatePaymentWithoutAnyRead(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Clock.Advance(31 * time.Minute)
	e.Pay("btc", inv.AddressIn, "0.00041667")
	got := e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, invoice.ExceptionPaidLate, got.Exception)
	eq(t, "0.00041667", got.PaidPending, "recorded")
	e.AssertOnePerChange(got)
}

// Overpayment: paid_over, with the excess recorded.
func Overpayment(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.001")) // 60 USD
	got := e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionPaidOver, got.Exception)
	eq(t, "35", got.Excess, "60 - 25 USD")
	e.AssertOnePerChange(got)
}

// AnotherTokenWithMultiToken: another token of the network reaches a
// MultiToken address; it is recorded as wrong_coin and never counted.
func AnotherTokenWithMultiToken(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Ticker: "trc20/usdt", Address: TRXDest, Price: D("30"), Currency: "USD", MultiToken: true})
	assert.Equal(t, "trc20_usdt", inv.Ticker)
	assert.Equal(t, "trc20", inv.Network)
	eq(t, "30", inv.Due, "30 USD at 1")
	e.Confirm(e.Pay("trx", inv.AddressIn, "250")) // 250 trx: 30 USD at 0.12, but not usdt
	got := e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Equal(t, invoice.ExceptionWrongCoin, got.Exception)
	eq(t, "0", got.Paid, "not counted at face value")
	eq(t, "30", got.Due, "still due")
	require.Len(t, got.Payments, 1)
	assert.Equal(t, "trx", got.Payments[0].Coin)
	assert.True(t, got.Payments[0].WrongCoin)
	eq(t, "250", got.Payments[0].Amount, "amount recorded in its coin")

	e.Confirm(e.Pay("trc20_usdt", inv.AddressIn, "30"))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionWrongCoin, got.Exception, "the stray payment stays visible")
	eq(t, "30", got.Paid, "paid")
	e.AssertOnePerChange(got)
}

// DuplicateAndReorderedCallbacks: every callback sent again, and a pending
// callback after its confirmation, are acknowledged and change nothing.
func DuplicateAndReorderedCallbacks(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.0002"))
	before := e.Stored(inv.ID)
	changes := len(e.Changes(inv.ID))
	pend, conf := e.Deliveries(inv.AddressIn, true), e.Deliveries(inv.AddressIn, false)
	require.Len(t, pend, 1)
	require.Len(t, conf, 1)
	// Confirmed again, pending after confirmed, and both once more.
	for _, d := range []int{1, 0, 1, 0} {
		dl := [2]string{"pending", "confirmed"}[d]
		status, body := e.Resend([2]cryptapitest.Delivery{pend[0], conf[0]}[d])
		assert.Equal(t, http.StatusOK, status, dl)
		assert.Equal(t, "*ok*", body, dl)
	}
	after := e.Stored(inv.ID)
	assert.Equal(t, before.Version, after.Version, "nothing changed")
	assert.Len(t, e.Changes(inv.ID), changes, "no onChange")

	// A confirmed callback that arrives before its pending one: the
	// payment counts once, confirmed.
	e.Down.Store(true)
	tx := e.Pay("btc", inv.AddressIn, "0.00021667")
	require.NoError(t, e.Srv.Confirm(tx, 1))
	e.Flush()
	e.Down.Store(false)
	pend, conf = e.Deliveries(inv.AddressIn, true), e.Deliveries(inv.AddressIn, false)
	status, _ := e.Resend(conf[len(conf)-1])
	assert.Equal(t, http.StatusOK, status)
	status, _ = e.Resend(pend[len(pend)-1])
	assert.Equal(t, http.StatusOK, status)
	got := e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	eq(t, "0.00041667", got.Paid, "each payment once")
	eq(t, "0", got.PaidPending, "the late pending callback undoes nothing")
	require.Len(t, got.Payments, 2)
	e.AssertOnePerChange(got)
}

// MissedCallbacksRecoveredByReconcile: callbacks the shop never answered
// are applied from the logs, once, through the same path and onChange;
// the service's later retries change nothing.
func MissedCallbacksRecoveredByReconcile(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	untouched, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err, "nothing paid: nothing to do")
	assert.Equal(t, inv.Version, untouched.Version)

	e.Down.Store(true)
	tx1 := e.Pay("btc", inv.AddressIn, "0.0002")
	e.Confirm(tx1)
	tx2 := e.Pay("btc", inv.AddressIn, "0.00021667") // seen, not confirmed
	assert.Equal(t, int64(1), e.Stored(inv.ID).Version, "the shop saw nothing")

	got, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusProcessing, got.Status)
	eq(t, "0.0002", got.Paid, "the confirmed payment")
	eq(t, "0.00021667", got.PaidPending, "the pending one")
	again, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, got.Version, again.Version, "a second reconcile changes nothing")

	e.Down.Store(false)
	e.Clock.Advance(time.Second) // the service retries what failed
	e.Flush()
	assert.Equal(t, got.Version, e.Stored(inv.ID).Version, "retried callbacks change nothing")
	e.Confirm(tx2)
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	e.AssertOnePerChange(got)
}

// ForeignCallbacksTouchNoInvoice: signed callbacks (the service signs
// whatever address anyone creates) that do not carry an invoice's own ID,
// nonce and address are refused and change nothing.
func ForeignCallbacksTouchNoInvoice(t *testing.T, e *Env) {
	a := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	b := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Down.Store(true)
	e.Pay("btc", a.AddressIn, "0.0002")
	e.Down.Store(false)
	ds := e.Deliveries(a.AddressIn, true)
	require.NotEmpty(t, ds)
	orig := ds[0].URL
	u, err := url.Parse(orig)
	require.NoError(t, err)
	q := u.Query()
	bRec, err := e.Store.Load(e.Ctx, b.ID)
	require.NoError(t, err)
	bNonce := nonceOf(t, e, b.ID)
	aNonce := q.Get(invoice.ParamNonce)
	require.NotEmpty(t, aNonce)
	_ = bRec

	forge := func(name string, edit func(url.Values)) {
		t.Helper()
		v := url.Values{}
		for k, vs := range q {
			v[k] = append([]string(nil), vs...)
		}
		edit(v)
		target := e.Shop.URL + "/callback?" + v.Encode()
		h := http.Header{}
		h.Set("x-ca-signature", e.Srv.Sign([]byte(target)))
		status, _ := e.Send(http.MethodGet, target, h, nil)
		assert.Equal(t, http.StatusForbidden, status, name)
	}
	forge("no invoice parameter", func(v url.Values) { v.Del(invoice.ParamInvoice) })
	forge("unknown invoice", func(v url.Values) { v.Set(invoice.ParamInvoice, "AAAAAAAAAAAAAAAAAAAAAAAAAA") })
	forge("wrong nonce", func(v url.Values) { v.Set(invoice.ParamNonce, bNonce) })
	forge("another invoice's ID with this nonce", func(v url.Values) { v.Set(invoice.ParamInvoice, b.ID) })
	forge("another invoice with its own nonce, this address", func(v url.Values) {
		v.Set(invoice.ParamInvoice, b.ID)
		v.Set(invoice.ParamNonce, bNonce)
	})
	forge("two nonces", func(v url.Values) { v.Add(invoice.ParamNonce, aNonce) })
	for _, id := range []string{a.ID, b.ID} {
		assert.Equal(t, int64(1), e.Stored(id).Version, "invoice %s untouched", id)
	}
	// The genuine one passes.
	status, _ := e.Resend(ds[0])
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, int64(2), e.Stored(a.ID).Version)
}

// nonceOf reads an invoice's nonce from its callback URL as the service
// stored it.
func nonceOf(t *testing.T, e *Env, id string) string {
	t.Helper()
	for _, p := range e.Srv.Requests() {
		if strings.HasSuffix(p.Path, "/create/") {
			cb, err := url.Parse(p.Query.Get("callback"))
			require.NoError(t, err)
			if cb.Query().Get(invoice.ParamInvoice) == id {
				return cb.Query().Get(invoice.ParamNonce)
			}
		}
	}
	t.Fatalf("no create for invoice %s", id)
	return ""
}

// FailedOnChangeIsOfferedAgain: a callback whose change onChange refused
// is not acknowledged; the redelivery offers the same change again.
func FailedOnChangeIsOfferedAgain(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.FailChanges.Store(1)
	e.Pay("btc", inv.AddressIn, "0.00041667")
	ds := e.Deliveries(inv.AddressIn, true)
	require.Len(t, ds, 1)
	assert.Equal(t, http.StatusInternalServerError, ds[0].StatusCode, "not acknowledged")
	assert.Equal(t, int64(2), e.Stored(inv.ID).Version, "the change is stored")
	assert.Empty(t, e.Changes(inv.ID))

	e.Clock.Advance(time.Second)
	e.Flush()
	ds = e.Deliveries(inv.AddressIn, true)
	require.Len(t, ds, 2)
	assert.True(t, ds[1].OK, "acknowledged on redelivery")
	assert.Equal(t, 2, e.Offered(inv.ID), "offered twice")
	got := e.Stored(inv.ID)
	assert.Equal(t, int64(2), got.Version, "applied once")
	e.AssertOnePerChange(got)
}

// Invalidate: a cancelled invoice records a later payment as paid_late.
func Invalidate(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	got, err := e.Desk.Invalidate(e.Ctx, inv.ID, "the customer cancelled")
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusInvalid, got.Status)
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.00041667"))
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusInvalid, got.Status)
	assert.Equal(t, invoice.ExceptionPaidLate, got.Exception)
	e.AssertOnePerChange(got)

	paid := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", paid.AddressIn, "0.00041667"))
	_, err = e.Desk.Invalidate(e.Ctx, paid.ID, "")
	assert.True(t, errors.Is(err, invoice.ErrWrongStatus))
	var below *cryptapi.BelowMinimumError
	_, err = e.Desk.Create(e.Ctx, &invoice.CreateOptions{Ticker: "btc", Price: D("1"), Currency: "USD", Callback: e.CallbackURL(), Address: BTCDest})
	assert.ErrorAs(t, err, &below, "1 USD is below the minimum")
}

// OnChangeMayUseTheDesk: onChange reading the invoice with Get, or
// invalidating it, neither waits for itself nor loses a change.
func OnChangeMayUseTheDesk(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	var reads []invoice.Status
	e.Hook = func(ctx context.Context, changed *invoice.Invoice) error {
		got, err := e.Desk.Get(ctx, changed.ID)
		if err != nil {
			return err
		}
		reads = append(reads, got.Status)
		if changed.Exception == invoice.ExceptionPaidPartial && got.Status == invoice.StatusNew {
			_, err = e.Desk.Invalidate(ctx, changed.ID, "the shop gives up on partial payers") // the shop gives up on partial payers
		}
		return err
	}
	e.Pay("btc", inv.AddressIn, "0.0002")
	got := e.Stored(inv.ID)
	assert.Equal(t, invoice.StatusInvalid, got.Status)
	assert.Equal(t, []invoice.Status{invoice.StatusNew, invoice.StatusInvalid}, reads)
	e.AssertOnePerChange(got)
}

// MissedWrongCoinIsNotCountedByReconcile: a payment in another token that
// the shop missed is recovered from the logs with its own coin (read from
// the URL the service called), so it is wrong_coin, not money.
func MissedWrongCoinIsNotCountedByReconcile(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Ticker: "trc20_usdt", Address: TRXDest, Price: D("30"), Currency: "USD", MultiToken: true})
	e.Down.Store(true)
	e.Confirm(e.Pay("trx", inv.AddressIn, "250"))
	got, err := e.Desk.Reconcile(e.Ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Equal(t, invoice.ExceptionWrongCoin, got.Exception)
	eq(t, "0", got.Paid, "250 trx are not 250 usdt")
	eq(t, "30", got.Due, "still due")
	require.Len(t, got.Payments, 1)
	assert.Equal(t, "trx", got.Payments[0].Coin)
	e.AssertOnePerChange(got)
}
