package invoice

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const customer = "bc1q56mj3gna7kq0057de42ww2rjxwzeh9amkncq5e"

// rfCreate is a refund event of a btc invoice.
func rfCreate(of RefundOf, rate RefundRate, amount, price string, at time.Time) event {
	e := &refundEvent{of: of, rate: rate, ticker: "btc", decimals: 8, token: "TOKEN" + string(of) + at.Format("150405"),
		claimFor: time.Hour, reason: "why"}
	if amount != "" {
		e.amount = dec(amount)
	}
	if price != "" {
		e.price = dec(price)
	}
	return event{kind: evRefund, at: at, refund: e}
}

func rfEvent(kind eventKind, id string, at time.Time, edit func(*refundEvent)) event {
	e := &refundEvent{id: id}
	if edit != nil {
		edit(e)
	}
	return event{kind: kind, at: at, refund: e}
}

// settledOver is an invoice of 25 USD at 60000 paid 0.001 btc, confirmed.
func settledOver(t *testing.T) *Record {
	t.Helper()
	return run(t, btcRecord(t, "25", "USD", "60000"), pay("a", "0.001", true, t0.Add(time.Minute)))
}

// The amount of a new refund, by what it gives back and at which rate,
// decided from the invoice as it stands.
func TestRefundAmountTable(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	for _, c := range []struct {
		name   string
		before []event // after the invoice is paid 0.001 btc (60 USD for 25)
		e      event
		amount string
		err    error
	}{
		{"overpaid: the excess at the quote received", nil, rfCreate(RefundOverpaid, RateThen, "", "", m), "0.00058333", nil},
		{"all", nil, rfCreate(RefundAll, RateThen, "", "", m), "0.001", nil},
		{"custom", nil, rfCreate(RefundCustom, "", "0.0004", "", m), "0.0004", nil},
		{"custom: all of it", nil, rfCreate(RefundCustom, "", "0.001", "", m), "0.001", nil},
		{"custom: a satoshi more", nil, rfCreate(RefundCustom, "", "0.00100001", "", m), "", ErrNotRefundable},
		{"custom: finer than the coin", nil, rfCreate(RefundCustom, "", "0.000000001", "", m), "", errBadEvent},
		{"now at twice the price: half the coin", nil, rfCreate(RefundAll, RateNow, "", "120000", m), "0.0005", nil},
		{"now at half the price: never more coin than received", nil, rfCreate(RefundAll, RateNow, "", "30000", m), "0.001", nil},
		{"now without a price", nil, rfCreate(RefundAll, RateNow, "", "", m), "", errBadEvent},
		{"overpaid now at twice the price", nil, rfCreate(RefundOverpaid, RateNow, "", "120000", m), "0.00029166", nil},
		{"all after a custom refund", []event{rfCreate(RefundCustom, "", "0.0004", "", m)}, rfCreate(RefundAll, RateThen, "", "", m), "0.0006", nil},
		{"overpaid after a custom refund: it counts against the excess", []event{rfCreate(RefundCustom, "", "0.0004", "", m)},
			rfCreate(RefundOverpaid, RateThen, "", "", m), "0.00018333", nil},
		{"overpaid after all is refunded", []event{rfCreate(RefundAll, RateThen, "", "", m)}, rfCreate(RefundOverpaid, RateThen, "", "", m), "", ErrNotRefundable},
		{"all after a cancelled refund", []event{rfCreate(RefundAll, RateThen, "", "", m), rfEvent(evRefundCancel, "INV-R1", m, nil)},
			rfCreate(RefundAll, RateThen, "", "", m), "0.001", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, settledOver(t), c.before...)
			n, changed, err := transition(r, c.e)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				assert.Nil(t, n)
				return
			}
			require.NoError(t, err)
			require.True(t, changed)
			rf := n.Invoice.Refunds[len(n.Invoice.Refunds)-1]
			assertDec(t, c.amount, rf.Amount, "amount")
			assert.Equal(t, RefundAwaitingAddress, rf.Status)
			assert.Equal(t, r.Invoice.Version+1, n.Invoice.Version, "a change")
			assert.Equal(t, EventRefundCreated, n.Invoice.Events[len(n.Invoice.Events)-1].Kind)
			assert.Equal(t, r.Invoice.Status, n.Invoice.Status, "payments are as they were")
			assertDec(t, r.Invoice.Paid.String(), n.Invoice.Paid, "paid")
			assert.Equal(t, fmt.Sprint("INV-R", len(n.Invoice.Refunds)), rf.ID)
			assert.Equal(t, PageClaimPath+"/"+c.e.refund.token, rf.ClaimPath)
			assert.Equal(t, []string{c.e.refund.token}, n.Keys()[len(n.Keys())-1:])
		})
	}
}

// What the invoice's payments allow: nothing received, unconfirmed, a
// payment in another coin, an invoice still waiting for payment, a price
// in the coin, the excess of several payments at their own quotes.
func TestRefundsByPayments(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	r := btcRecord(t, "25", "USD", "60000")
	_, _, err := transition(r, rfCreate(RefundAll, RateThen, "", "", m))
	assert.ErrorIs(t, err, ErrNotRefundable, "nothing received")

	pending := run(t, r, pay("a", "0.001", false, t0.Add(time.Minute)))
	_, _, err = transition(pending, rfCreate(RefundAll, RateThen, "", "", m))
	assert.ErrorIs(t, err, ErrNotRefundable, "unconfirmed")
	assert.ErrorContains(t, err, "not confirmed yet")

	partial := run(t, r, pay("a", "0.0001", true, t0.Add(time.Minute)))
	_, _, err = transition(partial, rfCreate(RefundAll, RateThen, "", "", m))
	assert.ErrorIs(t, err, ErrWrongStatus, "a new invoice waits for payment")
	expired := run(t, partial, event{kind: evClock, at: t0.Add(time.Hour)})
	n, _, err := transition(expired, rfCreate(RefundAll, RateThen, "", "", t0.Add(time.Hour)))
	require.NoError(t, err, "expired: refundable")
	assertDec(t, "0.0001", n.Invoice.Refunds[0].Amount, "all")
	_, _, err = transition(expired, rfCreate(RefundOverpaid, RateThen, "", "", t0.Add(time.Hour)))
	assert.ErrorIs(t, err, ErrNotRefundable, "nothing over the price")

	// Several payments at several quotes: the one that crossed the price
	// brought the excess, at its own quote.
	two := run(t, r, pay("a", "0.0002", true, t0.Add(time.Minute)), // 12 USD at 60000
		event{kind: evQuote, at: t0.Add(15 * time.Minute), rate: dec("50000")},
		pay("b", "0.0004", true, t0.Add(16*time.Minute))) // 20 USD at 50000: 7 over
	n, _, err = transition(two, rfCreate(RefundOverpaid, RateThen, "", "", t0.Add(20*time.Minute)))
	require.NoError(t, err)
	assertDec(t, "0.00014", n.Invoice.Refunds[0].Amount, "7 USD at 50000")

	// Another coin: refunded in that coin, all of it.
	wrong := run(t, r, event{kind: evPayment, at: t0.Add(time.Minute), uuid: "w", txid: "tw", coin: "trx", amount: dec("250"), confirmed: true},
		event{kind: evInvalidate, at: t0.Add(2 * time.Minute)})
	e := rfCreate(RefundOverpaid, RateThen, "", "", m)
	e.refund.ticker, e.refund.decimals = "trx", 6
	n, _, err = transition(wrong, e)
	require.NoError(t, err)
	assert.Equal(t, "trx", n.Invoice.Refunds[0].Ticker)
	assertDec(t, "250", n.Invoice.Refunds[0].Amount, "all of it")
	assert.True(t, n.Invoice.Refundable("btc").IsZero())
	assertDec(t, "0", n.Invoice.Refundable("trx"), "none left")

	// A price in the coin: RateNow is RateThen.
	q := request{Ticker: "btc", Price: dec("0.001"), Callback: "https://shop.example/cb", Address: customer,
		QuoteTTL: Duration{15 * time.Minute}, ExpiresIn: Duration{time.Hour}, MonitorFor: Duration{24 * time.Hour}}
	c := reservation(q, t0)
	c.Invoice.ID, c.nonce = "INV", "N"
	c = run(t, c, event{kind: evCreate, at: t0, rate: dec("1"), created: &created{nonce: "N", addressIn: "x", minimum: dec("0.0001"), decimals: 8}},
		pay("a", "0.0015", true, t0.Add(time.Minute)))
	n, _, err = transition(c, rfCreate(RefundOverpaid, RateNow, "", "60000", m))
	require.NoError(t, err)
	assertDec(t, "0.0005", n.Invoice.Refunds[0].Amount, "the coin's excess")
}

// A refund's life: every change through the transition, each with an
// event and a new version; what a status does not allow is
// ErrWrongStatus and stores nothing.
func TestRefundLifeTable(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	until := m.Add(time.Minute)
	base := run(t, settledOver(t), rfCreate(RefundOverpaid, RateThen, "", "", m))
	const id = "INV-R1"
	addr := rfEvent(evRefundAddress, id, m, func(e *refundEvent) { e.address = customer })
	send := rfEvent(evRefundSend, id, m, func(e *refundEvent) { e.owner, e.until = "A", until })
	sentOK := rfEvent(evRefundDone, id, m, func(e *refundEvent) { e.owner, e.sent, e.txid, e.payoutID = "A", true, "TX", "7" })
	failed := rfEvent(evRefundDone, id, m, func(e *refundEvent) { e.owner, e.failure, e.payoutID = "A", "short balance", "7" })
	mark := rfEvent(evRefundMarkSent, id, m, func(e *refundEvent) { e.txid = "MTX" })
	cancel := rfEvent(evRefundCancel, id, m, func(e *refundEvent) { e.reason = "store credit" })
	for _, c := range []struct {
		name   string
		events []event
		last   event
		status RefundStatus
		event  string // "" for no change
		err    error
	}{
		{"address", nil, addr, RefundReady, EventRefundAddress, nil},
		{"another network's address", nil, rfEvent(evRefundAddress, id, m, func(e *refundEvent) { e.address = "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7" }), "", "", ErrInvalidOptions},
		{"the same address again", []event{addr}, addr, RefundReady, "", nil},
		{"a second address", []event{addr}, rfEvent(evRefundAddress, id, m, func(e *refundEvent) { e.address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" }), "", "", ErrWrongStatus},
		{"send without an address", nil, send, "", "", ErrWrongStatus},
		{"send", []event{addr}, send, RefundSending, EventRefundSending, nil},
		{"send while sending", []event{addr, send}, rfEvent(evRefundSend, id, m, func(e *refundEvent) { e.owner = "B" }), RefundSending, "", nil},
		{"sent", []event{addr, send}, sentOK, RefundSent, EventRefundSent, nil},
		{"sent by another sender", []event{addr, send}, rfEvent(evRefundDone, id, m, func(e *refundEvent) { e.owner, e.sent = "B", true }), "", "", errLostClaim},
		{"failed", []event{addr, send}, failed, RefundFailed, EventRefundFailed, nil},
		{"sent again after failing", []event{addr, send, failed}, send, RefundSending, EventRefundSending, nil},
		{"send a sent refund", []event{addr, send, sentOK}, send, RefundSent, "", nil},
		{"mark sent", []event{addr}, mark, RefundSent, EventRefundSent, nil},
		{"mark an awaiting refund", nil, mark, "", "", ErrWrongStatus},
		{"mark a sending refund", []event{addr, send}, mark, "", "", ErrWrongStatus},
		{"mark sent twice", []event{addr, mark}, mark, RefundSent, "", nil},
		{"cancel awaiting", nil, cancel, RefundCancelled, EventRefundCancelled, nil},
		{"cancel ready", []event{addr}, cancel, RefundCancelled, EventRefundCancelled, nil},
		{"cancel failed", []event{addr, send, failed}, cancel, RefundCancelled, EventRefundCancelled, nil},
		{"cancel sending", []event{addr, send}, cancel, "", "", ErrWrongStatus},
		{"cancel sent", []event{addr, mark}, cancel, "", "", ErrWrongStatus},
		{"cancel twice", []event{cancel}, cancel, RefundCancelled, "", nil},
		{"address after cancelling", []event{cancel}, addr, "", "", ErrWrongStatus},
		{"an unknown refund", nil, rfEvent(evRefundCancel, "INV-R9", m, nil), "", "", ErrRefundNotFound},
		{"address after the link expired", nil, rfEvent(evRefundAddress, id, m.Add(time.Hour), func(e *refundEvent) { e.address = customer }), "", "", ErrWrongStatus},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, base, c.events...)
			n, changed, err := transition(r, c.last)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			rf := n.refundIn(id)
			assert.Equal(t, c.status, rf.Status)
			if c.event == "" {
				assert.False(t, changed, "no change")
				assert.Equal(t, r.Invoice.Version, n.Invoice.Version)
				return
			}
			require.True(t, changed)
			assert.Equal(t, r.Invoice.Version+1, n.Invoice.Version)
			ev := n.Invoice.Events[len(n.Invoice.Events)-1]
			assert.Equal(t, c.event, ev.Kind)
			assert.Contains(t, ev.Note, "refund R1")
			if c.last.kind == evRefundCancel {
				assert.Contains(t, ev.Note, "store credit", "the reason is kept")
			}
			if c.status == RefundSent {
				assertDec(t, rf.Amount.String(), n.Invoice.Refunded, "refunded")
			}
		})
	}
}

// The bookkeeping of a send: the claim is taken over only once it
// lapsed, the progress is recorded only by the claim's holder, and
// neither is a change (the version stays).
func TestRefundBookkeeping(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	const id = "INV-R1"
	r := run(t, settledOver(t), rfCreate(RefundAll, RateThen, "", "", m),
		rfEvent(evRefundAddress, id, m, func(e *refundEvent) { e.address = customer }),
		rfEvent(evRefundSend, id, m, func(e *refundEvent) { e.owner, e.until = "A", m.Add(time.Minute) }))
	v := r.Invoice.Version
	work := func(owner string, w refundWork, at time.Time) event {
		return rfEvent(evRefundWork, id, at, func(e *refundEvent) { e.owner, e.work, e.until = owner, &w, at.Add(time.Minute) })
	}
	n, changed, err := transition(r, work("A", refundWork{Step: stepRequest, AskedAt: m}, m))
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, v, n.Invoice.Version, "bookkeeping is no change")
	assert.Equal(t, stepRequest, n.workOf(id).Step)
	assert.Equal(t, r.Invoice.Events, n.Invoice.Events, "and no event")

	_, _, err = transition(n, work("B", refundWork{RequestID: "1"}, m))
	assert.ErrorIs(t, err, errLostClaim, "not the holder")
	resume := func(owner string, at time.Time) event {
		return rfEvent(evRefundResume, id, at, func(e *refundEvent) { e.owner, e.until = owner, at.Add(time.Minute) })
	}
	_, _, err = transition(n, resume("B", m.Add(30*time.Second)))
	assert.ErrorIs(t, err, errClaimHeld, "the claim holds")
	taken, changed, err := transition(n, resume("B", m.Add(2*time.Minute)))
	require.NoError(t, err, "lapsed")
	assert.True(t, changed)
	assert.Equal(t, "B", taken.workOf(id).Owner)
	assert.Equal(t, stepRequest, taken.workOf(id).Step, "the progress is kept")
	_, _, err = transition(taken, work("A", refundWork{RequestID: "1"}, m.Add(2*time.Minute)))
	assert.ErrorIs(t, err, errLostClaim, "the old holder can record nothing")

	// Released, Tick looks again at CheckAt: the invoice's TickAt.
	rel := work("B", refundWork{Step: stepProcessed, PayoutID: "7", CheckAt: m.Add(5 * time.Minute)}, m.Add(2*time.Minute))
	rel.refund.release, rel.refund.until = true, m.Add(2*time.Minute)
	released, _, err := transition(taken, rel)
	require.NoError(t, err)
	assert.Empty(t, released.workOf(id).Owner)
	assert.Equal(t, m.Add(5*time.Minute), released.TickAt(), "due when the payout is looked at again")
	assert.Equal(t, m.Add(time.Minute), r.TickAt(), "while held: when the claim lapses")

	// A refund that is not sending has no bookkeeping.
	done, _, err := transition(released, rfEvent(evRefundDone, id, m.Add(3*time.Minute), func(e *refundEvent) { e.owner, e.sent, e.txid = "", true, "T" }))
	assert.ErrorIs(t, err, errLostClaim, "only the holder ends it")
	assert.Nil(t, done)
}

// The clock cancels an unclaimed refund when its link expires, as of that
// moment; AsOf shows it before Tick stores it.
func TestClaimExpiryIsTheClocks(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	r := run(t, settledOver(t), rfCreate(RefundAll, RateThen, "", "", m))
	assert.Equal(t, m.Add(time.Hour), r.TickAt(), "due when the link expires")
	n, changed, err := transition(r, event{kind: evClock, at: m.Add(59 * time.Minute)})
	require.NoError(t, err)
	assert.False(t, changed)
	n, changed, err = transition(n, event{kind: evClock, at: m.Add(2 * time.Hour)})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, RefundCancelled, n.Invoice.Refunds[0].Status)
	ev := n.Invoice.Events[len(n.Invoice.Events)-1]
	assert.Equal(t, EventRefundCancelled, ev.Kind)
	assert.Equal(t, m.Add(time.Hour), ev.At, "as of the expiry")
	assert.True(t, n.TickAt().IsZero(), "nothing left to wait for")
	assert.Equal(t, RefundCancelled, r.Invoice.AsOf(m.Add(2 * time.Hour)).Refunds[0].Status)
}

// Refunds keep an invoice from being reopened or marked settled; a
// cancelled one does not.
func TestRefundsAndDecisions(t *testing.T) {
	expired := run(t, btcRecord(t, "25", "USD", "60000"), pay("a", "0.0001", true, t0.Add(time.Minute)),
		event{kind: evClock, at: t0.Add(time.Hour)})
	m := t0.Add(time.Hour)
	r := run(t, expired, rfCreate(RefundAll, RateThen, "", "", m))
	_, _, err := transition(r, event{kind: evMark, at: m, note: "ok"})
	assert.ErrorIs(t, err, ErrWrongStatus)
	_, _, err = transition(r, event{kind: evReopen, at: m, expiresIn: time.Hour, rate: dec("60000")})
	assert.ErrorIs(t, err, ErrWrongStatus)
	r = run(t, r, rfEvent(evRefundCancel, "INV-R1", m, nil))
	_, _, err = transition(r, event{kind: evReopen, at: m, expiresIn: time.Hour, rate: dec("60000")})
	assert.NoError(t, err)
}

// Records with refunds survive the store's JSON, bookkeeping included; a
// record whose refunds and bookkeeping disagree is refused.
func TestRecordWithRefundsRoundTrips(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	r := run(t, settledOver(t), rfCreate(RefundAll, RateThen, "", "", m),
		rfEvent(evRefundAddress, "INV-R1", m, func(e *refundEvent) { e.address = customer }),
		rfEvent(evRefundSend, "INV-R1", m, func(e *refundEvent) { e.owner, e.until = "A", m.Add(time.Minute) }))
	b, err := r.MarshalJSON()
	require.NoError(t, err)
	var back Record
	require.NoError(t, back.UnmarshalJSON(b))
	assert.Equal(t, r.refunds, back.refunds)
	assert.Equal(t, r.Keys(), back.Keys())
	assert.True(t, sameState(r, &back))
	r.refunds = nil
	b, err = r.MarshalJSON()
	require.NoError(t, err)
	assert.Error(t, back.UnmarshalJSON(b))
}

// Refunds never add up to more than was received, whatever the order of
// refund events: a random walk over them.
func TestRefundsNeverExceedReceived(t *testing.T) {
	for seed := range 200 {
		r := settledOver(t)
		at := t0.Add(2 * time.Minute)
		rng := uint64(seed*7919 + 1)
		next := func(n int) int {
			rng = rng*6364136223846793005 + 1442695040888963407
			return int(rng>>33) % n
		}
		for step := range 30 {
			at = at.Add(time.Second)
			var e event
			id := fmt.Sprint("INV-R", 1+next(len(r.Invoice.Refunds)+1))
			switch next(6) {
			case 0:
				e = rfCreate(RefundCustom, "", decimal.New(int64(1+next(60000)), -8).String(), "", at)
				e.refund.token = fmt.Sprint("T", seed, "-", step)
			case 1:
				e = rfCreate([]RefundOf{RefundAll, RefundOverpaid}[next(2)], RateThen, "", "", at)
				e.refund.token = fmt.Sprint("T", seed, "-", step)
			case 2:
				e = rfEvent(evRefundAddress, id, at, func(e *refundEvent) { e.address = customer })
			case 3:
				e = rfEvent(evRefundSend, id, at, func(e *refundEvent) { e.owner, e.until = "A", at.Add(time.Minute) })
			case 4:
				e = rfEvent(evRefundDone, id, at, func(e *refundEvent) { e.owner, e.sent = "A", next(2) == 0 })
			case 5:
				e = rfEvent(evRefundCancel, id, at, nil)
			}
			n, _, err := transition(r, e)
			if err != nil {
				if !errors.Is(err, ErrNotRefundable) && !errors.Is(err, ErrWrongStatus) && !errors.Is(err, ErrRefundNotFound) && !errors.Is(err, errLostClaim) {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				continue
			}
			r = n
			sum := r.Invoice.refunded("btc", "")
			require.True(t, sum.LessThanOrEqual(r.Invoice.Paid), "seed %d step %d: %s refunded of %s", seed, step, sum, r.Invoice.Paid)
		}
	}
}

// AsOf keeps a marked invoice marked when the clock cancels one of its
// refunds (it knows the record only through the invoice).
func TestAsOfKeepsMarkedWhenAClaimExpires(t *testing.T) {
	m := t0.Add(2 * time.Minute)
	r := run(t, btcRecord(t, "25", "USD", "60000"), pay("a", "0.0002", true, t0.Add(time.Minute)),
		event{kind: evMark, at: m, note: "accepted"}, rfCreate(RefundCustom, "", "0.0001", "", m))
	require.Equal(t, ExceptionMarked, r.Invoice.Exception)
	view := r.Invoice.AsOf(m.Add(2 * time.Hour))
	ticked, _, err := transition(r, event{kind: evClock, at: m.Add(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, RefundCancelled, view.Refunds[0].Status)
	assert.Equal(t, ExceptionMarked, view.Exception)
	assert.Equal(t, ticked.Invoice.Exception, view.Exception)
}
