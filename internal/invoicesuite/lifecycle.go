package invoicesuite

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// The rules of the invoice lifecycle (issue 20), each a scenario run with
// every store.

// Creates counts the create requests that reached the service.
func (e *Env) Creates() int {
	n := 0
	for _, r := range e.Srv.Requests() {
		if strings.HasSuffix(r.Path, "/create/") {
			n++
		}
	}
	return n
}

// Requests counts every request that reached the service.
func (e *Env) Requests() int { return len(e.Srv.Requests()) }

// NobodyWatching: an invoice reaches its deadline with nobody polling and
// no callback; the next Tick expires it, and onChange hears it once.
// Reads before the Tick change nothing.
func NobodyWatching(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{OrderID: "1", Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute, QuoteTTL: time.Hour})
	other := e.Create(invoice.CreateOptions{OrderID: "2", Price: D("25"), Currency: "USD", ExpiresIn: 2 * time.Hour, QuoteTTL: 3 * time.Hour})
	assert.Zero(t, e.Tick(), "nothing due")
	e.Clock.Advance(30 * time.Minute)

	got := e.Get(inv.ID)
	assert.Equal(t, invoice.StatusNew, got.Status, "Get is a read")
	assert.Equal(t, invoice.StatusExpired, got.AsOf(e.Clock.Now()).Status, "AsOf shows what the clock makes of it")
	assert.Empty(t, e.Changes(inv.ID))

	assert.Equal(t, 1, e.Tick())
	got = e.Get(inv.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception)
	require.Len(t, e.Changes(inv.ID), 1)
	assert.Equal(t, invoice.StatusExpired, e.Changes(inv.ID)[0].Status)
	last := got.Events[len(got.Events)-1]
	assert.Equal(t, invoice.EventExpired, last.Kind)
	assert.Equal(t, inv.ExpiresAt, last.At)

	assert.Zero(t, e.Tick(), "expired once")
	assert.Len(t, e.Changes(inv.ID), 1, "heard once")
	assert.Equal(t, invoice.StatusNew, e.Get(other.ID).Status, "the other invoice is not due")
	assert.Empty(t, e.Changes(other.ID))
	e.AssertOnePerChange(got)
}

// DroppedTransaction: a processing invoice whose payment never confirms
// expires once ExpiresAt + MonitorFor passes, paid_partial when part of
// it was confirmed; a confirmation after that is late.
func DroppedTransaction(t *testing.T, e *Env) {
	whole := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", MonitorFor: 2 * time.Hour})
	part := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", MonitorFor: 2 * time.Hour})
	tx := e.Pay("btc", whole.AddressIn, "0.00041667")
	e.Confirm(e.Pay("btc", part.AddressIn, "0.0002"))
	e.Pay("btc", part.AddressIn, "0.00021667")
	assert.Equal(t, invoice.StatusProcessing, e.Stored(whole.ID).Status)
	assert.Equal(t, invoice.StatusProcessing, e.Stored(part.ID).Status)

	e.Clock.Advance(3*time.Hour - time.Second) // 1 h deadline + 2 h monitoring
	e.Tick()
	assert.Equal(t, invoice.StatusProcessing, e.Stored(whole.ID).Status, "still monitored")
	e.Clock.Advance(time.Second)
	assert.Equal(t, 2, e.Tick())
	got := e.Get(whole.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, invoice.ExceptionNone, got.Exception, "nothing was received")
	gotPart := e.Get(part.ID)
	assert.Equal(t, invoice.StatusExpired, gotPart.Status)
	assert.Equal(t, invoice.ExceptionPaidPartial, gotPart.Exception, "part was confirmed")

	e.Confirm(tx) // it was not dropped after all
	got = e.Get(whole.ID)
	assert.Equal(t, invoice.StatusExpired, got.Status)
	assert.Equal(t, invoice.ExceptionPaidLate, got.Exception, "money on an expired invoice is flagged")
	eq(t, "0.00041667", got.Paid, "and counted")
	e.AssertOnePerChange(got)
	e.AssertOnePerChange(gotPart)
}

// TickOffersRefusedChanges: a change onChange refused is offered again by
// Tick, not only by the next callback, and accepted once.
func TickOffersRefusedChanges(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.FailChanges.Store(1)
	e.Pay("btc", inv.AddressIn, "0.0002")
	assert.Empty(t, e.Changes(inv.ID), "refused")
	e.Down.Store(true) // no redelivery reaches the shop

	n, err := e.Desk.Tick(e.Ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "Tick changed nothing; it offered what was stored")
	require.Len(t, e.Changes(inv.ID), 1)
	assert.Equal(t, 2, e.Offered(inv.ID))
	e.Tick()
	assert.Equal(t, 2, e.Offered(inv.ID), "accepted: not offered again")

	// A refusal during Tick is in its error, and the next Tick offers it.
	e.Clock.Advance(time.Hour)
	e.FailChanges.Store(1)
	n, err = e.Desk.Tick(e.Ctx)
	assert.Equal(t, 1, n, "expired")
	require.Error(t, err)
	assert.Contains(t, err.Error(), inv.ID)
	e.Tick()
	e.AssertOnePerChange(e.Get(inv.ID))
}

// ReadsAreReads: Get, List, ByOrderID and AsOf never write and never call
// onChange; Tick does.
func ReadsAreReads(t *testing.T, e *Env) {
	inv := e.Create(invoice.CreateOptions{OrderID: "r1", Price: D("25"), Currency: "USD"})
	e.Clock.Advance(2 * time.Hour)
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	before := e.Requests()
	for range 3 {
		e.Get(inv.ID)
		for _, err := range e.Desk.List(e.Ctx, nil) {
			require.NoError(t, err)
		}
		_, err := e.Desk.ByOrderID(e.Ctx, "r1")
		require.NoError(t, err)
	}
	assert.Equal(t, inv.Version, e.Stored(inv.ID).Version, "nothing stored")
	assert.Zero(t, e.Offered(inv.ID), "no onChange")
	assert.Equal(t, before, e.Requests(), "no price read")
}

// OneOpenInvoicePerOrder: a Create repeated with the same options returns
// the order's open invoice and asks the service for nothing; other options
// fail with ErrOrderOpen; once the invoice is final, a new Create makes a
// new invoice.
func OneOpenInvoicePerOrder(t *testing.T, e *Env) {
	o := invoice.CreateOptions{OrderID: "1001", Description: "2 × mug", Price: D("25"), Currency: "USD", Callback: e.CallbackURL(), Address: BTCDest, Ticker: "btc"}
	first := e.Create(o)
	before := e.Requests()

	// The same request written differently: defaults given explicitly, the
	// other ticker spelling, another case, another scale.
	same := o
	same.Ticker, same.Currency, same.Price = "BTC", "usd", D("25.00")
	same.QuoteTTL, same.ExpiresIn, same.MonitorFor = invoice.DefaultQuoteTTL, invoice.DefaultExpiresIn, invoice.DefaultMonitorFor
	again := e.Create(same)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, first.AddressIn, again.AddressIn)
	assert.Equal(t, before, e.Requests(), "the service was asked nothing")

	for name, edit := range map[string]func(*invoice.CreateOptions){
		"price":       func(o *invoice.CreateOptions) { o.Price = D("26") },
		"description": func(o *invoice.CreateOptions) { o.Description = "3 × mug" },
		"expiry":      func(o *invoice.CreateOptions) { o.ExpiresIn = 2 * time.Hour },
		"destination": func(o *invoice.CreateOptions) { o.Address = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh" },
		"tolerance":   func(o *invoice.CreateOptions) { o.Tolerance = D("0.01") },
		"coin":        func(o *invoice.CreateOptions) { o.Ticker, o.Address = "trc20_usdt", TRXDest },
	} {
		other := o
		edit(&other)
		_, err := e.Desk.Create(e.Ctx, &other)
		assert.ErrorIs(t, err, invoice.ErrOrderOpen, name)
	}
	assert.Equal(t, before, e.Requests(), "refused before the network")

	// Processing (paid in full, unconfirmed) is still open.
	tx := e.Pay("btc", first.AddressIn, first.Due.String())
	assert.Equal(t, first.ID, e.Create(o).ID)
	e.Confirm(tx)
	settled := e.Create(o)
	assert.NotEqual(t, first.ID, settled.ID, "settled: a new invoice")
	assert.NotEqual(t, first.AddressIn, settled.AddressIn)

	// An invoice past its deadline is expired first (onChange told), even
	// before Tick.
	e.Clock.Advance(time.Hour)
	third := e.Create(o)
	assert.NotEqual(t, settled.ID, third.ID)
	assert.Equal(t, invoice.StatusExpired, e.Stored(settled.ID).Status)
	assert.Equal(t, invoice.StatusExpired, e.Changes(settled.ID)[0].Status)
	_, err := e.Desk.Invalidate(e.Ctx, third.ID, "cancelled")
	require.NoError(t, err)
	fourth := e.Create(o)
	assert.NotEqual(t, third.ID, fourth.ID, "invalid: a new invoice")

	got, err := e.Desk.ByOrderID(e.Ctx, "1001")
	require.NoError(t, err)
	var ids []string
	for _, inv := range got {
		ids = append(ids, inv.ID)
	}
	assert.Equal(t, []string{fourth.ID, third.ID, settled.ID, first.ID}, ids, "newest first")
	e.AssertOnePerChange(e.Get(first.ID))
}

// RacingCreates: Creates of the same order at once, on one Desk or
// several over the same store, make one invoice and one address.
func RacingCreates(t *testing.T, e *Env) {
	desks := []*invoice.Desk{e.Desk, e.NewDesk(), e.NewDesk()}
	o := invoice.CreateOptions{OrderID: "race", Ticker: "btc", Price: D("25"), Currency: "USD", Callback: e.CallbackURL(), Address: BTCDest}
	var wg sync.WaitGroup
	ids := make([]string, 12)
	errs := make([]error, len(ids))
	start := make(chan struct{})
	for i := range ids {
		wg.Go(func() {
			<-start
			inv, err := desks[i%len(desks)].Create(e.Ctx, &o)
			errs[i] = err
			if err == nil {
				ids[i] = inv.ID
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "create %d", i)
		assert.Equal(t, ids[0], ids[i], "create %d", i)
	}
	assert.Equal(t, 1, e.Creates(), "one address")
	got, err := e.Desk.ByOrderID(e.Ctx, "race")
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

// CreateAfterACrash: a Create whose process died after reserving the
// order (its reservation never released) holds the order until its claim
// lapses; then the same request takes it over and gets the same address
// (the service binds a callback URL to its address), and another request
// gets a new one. A Create that failed cleanly frees the order at once.
func CreateAfterACrash(t *testing.T, e *Env) {
	o := invoice.CreateOptions{OrderID: "crash", Ticker: "btc", Price: D("25"), Currency: "USD", Callback: e.CallbackURL(), Address: BTCDest}
	// A clean failure: the service is down.
	e.FailInfo.Store(true)
	_, err := e.Desk.Create(e.Ctx, &o)
	require.Error(t, err)
	e.FailInfo.Store(false)
	other := o
	other.Price = D("30")
	inv, err := e.Desk.Create(e.Ctx, &other)
	require.NoError(t, err, "the failed Create released the order")
	_, err = e.Desk.Invalidate(e.Ctx, inv.ID, "")
	require.NoError(t, err)

	// A crash: the Create holds the order, and its process is gone once
	// the service answered (its store is unreachable: neither the invoice
	// nor the release is stored). Its claim holds the order for its lease;
	// a Create of the same order waits.
	var dead atomic.Bool
	deadDesk := e.NewDeskOn(&dyingStore{Store: e.Store, dead: &dead}, invoice.WithLease(time.Minute))
	e.OnCreate(func() { dead.Store(true) })
	_, err = deadDesk.Create(e.Ctx, &o)
	require.ErrorIs(t, err, errDead)
	e.OnCreate(nil)
	creates := e.Creates()

	waiting, stop := context.WithTimeout(e.Ctx, 300*time.Millisecond)
	_, err = e.Desk.Create(waiting, &o)
	stop()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the order is held while the claim runs")
	_, err = e.Desk.Create(e.Ctx, &other)
	assert.ErrorIs(t, err, invoice.ErrOrderOpen, "another request cannot take a running claim")

	e.Clock.Advance(time.Minute)
	got, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(t, err)
	assert.Equal(t, creates+1, e.Creates(), "asked again")
	assert.Equal(t, e.createCallback(t, creates-1), e.createCallback(t, creates), "with the same callback URL, so the same address")
	all, err := e.Desk.ByOrderID(e.Ctx, "crash")
	require.NoError(t, err)
	assert.Len(t, all, 2, "the crashed Create's invoice is this one")
	assert.Equal(t, got.ID, all[0].ID)

	// The store fails once, as the created invoice is stored: the Create
	// fails, but releases the order, and a retry goes on at once with the
	// same callback URL (so the same address).
	_, err = e.Desk.Invalidate(e.Ctx, got.ID, "")
	require.NoError(t, err)
	var failNext atomic.Bool
	flaky := e.NewDeskOn(&flakyStore{Store: e.Store, failNext: &failNext})
	e.OnCreate(func() { failNext.Store(true) })
	_, err = flaky.Create(e.Ctx, &o)
	require.ErrorIs(t, err, errDead)
	e.OnCreate(nil)
	creates = e.Creates()
	quick, stop := context.WithTimeout(e.Ctx, 5*time.Second)
	retried, err := e.Desk.Create(quick, &o)
	stop()
	require.NoError(t, err, "no wait for the lease")
	assert.Equal(t, e.createCallback(t, creates-1), e.createCallback(t, creates), "the same callback URL")
	assert.Equal(t, invoice.StatusNew, retried.Status)
}

// flakyStore fails the next Update once failNext is set.
type flakyStore struct {
	invoice.Store
	failNext *atomic.Bool
}

func (s *flakyStore) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	if s.failNext.CompareAndSwap(true, false) {
		return nil, errDead
	}
	return s.Store.Update(ctx, id, key, change)
}

// createCallback returns the callback URL of the i-th create request.
func (e *Env) createCallback(t *testing.T, i int) string {
	t.Helper()
	n := 0
	for _, r := range e.Srv.Requests() {
		if strings.HasSuffix(r.Path, "/create/") {
			if n == i {
				return r.Query.Get("callback")
			}
			n++
		}
	}
	t.Fatalf("no create request %d", i)
	return ""
}

// MarkedAndReopened: MarkSettled settles a new, processing or expired
// invoice with ExceptionMarked and the reason in Events, and fails on a
// settled or invalid one; Reopen works on an expired invoice only: the
// unpaid remainder at a fresh quote, a new deadline, the same address,
// payments keeping their quotes.
func MarkedAndReopened(t *testing.T, e *Env) {
	under := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", under.AddressIn, "0.0004")) // 24 USD: the exchange kept 1 USD
	got, err := e.Desk.MarkSettled(e.Ctx, under.ID, "exchange fee, accepted")
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusSettled, got.Status)
	assert.Equal(t, invoice.ExceptionMarked, got.Exception)
	last := got.Events[len(got.Events)-1]
	assert.Equal(t, invoice.EventMarked, last.Kind)
	assert.Equal(t, "exchange fee, accepted", last.Note)
	_, err = e.Desk.MarkSettled(e.Ctx, under.ID, "again")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "settled")

	processing := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	e.Pay("btc", processing.AddressIn, "0.00041667")
	got, err = e.Desk.MarkSettled(e.Ctx, processing.ID, "regular customer")
	require.NoError(t, err)
	assert.Equal(t, invoice.ExceptionMarked, got.Exception)

	cancelled := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"})
	_, err = e.Desk.Invalidate(e.Ctx, cancelled.ID, "")
	require.NoError(t, err)
	_, err = e.Desk.MarkSettled(e.Ctx, cancelled.ID, "x")
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "invalid")

	// Reopen: 12 USD paid at 60000, then expired; the remaining 13 USD at
	// a new price of 50000.
	late := e.Create(invoice.CreateOptions{OrderID: "late", Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	_, err = e.Desk.Reopen(e.Ctx, late.ID, nil)
	assert.ErrorIs(t, err, invoice.ErrWrongStatus, "a new invoice")
	e.Confirm(e.Pay("btc", late.AddressIn, "0.0002"))
	e.Clock.Advance(45 * time.Minute) // expired, not yet ticked: Reopen sees it
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	got, err = e.Desk.Reopen(e.Ctx, late.ID, &invoice.ReopenOptions{ExpiresIn: 20 * time.Minute, Reason: "customer asked"})
	require.NoError(t, err)
	assert.Equal(t, invoice.StatusNew, got.Status)
	assert.Equal(t, late.AddressIn, got.AddressIn, "the same address")
	eq(t, "50000", got.Rate, "a fresh quote")
	eq(t, "13", got.Remaining, "what is unpaid")
	eq(t, "0.00026", got.Due, "13 USD at 50000")
	eq(t, "60000", got.Payments[0].Rate, "the payment keeps its quote")
	assert.Equal(t, e.Clock.Now().Add(20*time.Minute), got.ExpiresAt)
	assert.Equal(t, []string{invoice.EventExpired, invoice.EventReopened}, kindsOf(got.Events[len(got.Events)-2:]))

	// The reopened invoice is the order's open one; reopening another of
	// the order while it is open fails.
	e.Confirm(e.Pay("btc", got.AddressIn, got.Due.String()))
	assert.Equal(t, invoice.StatusSettled, e.Get(late.ID).Status)
	e.AssertOnePerChange(e.Get(late.ID))

	stale := e.Create(invoice.CreateOptions{OrderID: "twice", Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Clock.Advance(31 * time.Minute)
	e.Tick()
	open := e.Create(invoice.CreateOptions{OrderID: "twice", Price: D("25"), Currency: "USD"})
	_, err = e.Desk.Reopen(e.Ctx, stale.ID, nil)
	assert.ErrorIs(t, err, invoice.ErrOrderOpen)
	assert.Equal(t, invoice.StatusExpired, e.Stored(stale.ID).Status, "nothing stored")
	assert.Equal(t, invoice.StatusNew, e.Stored(open.ID).Status)
}

func kindsOf(evs []invoice.Event) []string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return k
}

// ListsAndFilters: List and ByOrderID, on invoices made for it.
func ListsAndFilters(t *testing.T, e *Env) {
	t0 := e.Clock.Now()
	a := e.Create(invoice.CreateOptions{OrderID: "A", Price: D("25"), Currency: "USD"})
	b := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD"}) // same instant: creation order decides
	e.Clock.Advance(time.Minute)
	c := e.Create(invoice.CreateOptions{OrderID: "C", Price: D("25"), Currency: "USD"})
	e.Confirm(e.Pay("btc", c.AddressIn, "0.001")) // settled, paid_over
	e.Clock.Advance(time.Minute)
	d := e.Create(invoice.CreateOptions{OrderID: "A2", Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Confirm(e.Pay("btc", d.AddressIn, "0.0001"))
	e.Clock.Advance(31 * time.Minute)
	e.Tick() // a and b stay new (1 h), d expires with paid_partial

	list := func(o *invoice.ListOptions) []string {
		t.Helper()
		var ids []string
		for inv, err := range e.Desk.List(e.Ctx, o) {
			require.NoError(t, err)
			ids = append(ids, inv.ID)
		}
		return ids
	}
	assert.Equal(t, []string{d.ID, c.ID, b.ID, a.ID}, list(nil), "newest first, then by creation order")
	assert.Equal(t, []string{b.ID, a.ID}, list(&invoice.ListOptions{Status: []invoice.Status{invoice.StatusNew}}))
	assert.Equal(t, []string{d.ID, c.ID}, list(&invoice.ListOptions{Status: []invoice.Status{invoice.StatusSettled, invoice.StatusExpired}}))
	assert.Equal(t, []string{c.ID}, list(&invoice.ListOptions{Exception: []invoice.Exception{invoice.ExceptionPaidOver}}))
	assert.Equal(t, []string{b.ID, a.ID}, list(&invoice.ListOptions{Exception: []invoice.Exception{invoice.ExceptionNone}}))
	assert.Equal(t, []string{c.ID}, list(&invoice.ListOptions{CreatedAfter: t0.Add(time.Minute), CreatedBefore: t0.Add(2 * time.Minute)}),
		"at or after, before")
	assert.Equal(t, []string{b.ID, a.ID}, list(&invoice.ListOptions{CreatedBefore: t0.Add(time.Minute)}))
	assert.Equal(t, []string{b.ID, a.ID}, list(&invoice.ListOptions{StartingAfter: c.ID}))
	assert.Equal(t, []string{a.ID}, list(&invoice.ListOptions{StartingAfter: b.ID}))
	assert.Equal(t, []string{a.ID}, list(&invoice.ListOptions{OrderID: "A"}))
	assert.Empty(t, list(&invoice.ListOptions{OrderID: "none"}))

	// Stopping early stops the listing.
	n := 0
	for _, err := range e.Desk.List(e.Ctx, nil) {
		require.NoError(t, err)
		n++
		if n == 2 {
			break
		}
	}
	assert.Equal(t, 2, n)

	for name, o := range map[string]*invoice.ListOptions{
		"unknown status":       {Status: []invoice.Status{"paid"}},
		"unknown exception":    {Exception: []invoice.Exception{"odd"}},
		"an empty period":      {CreatedAfter: t0, CreatedBefore: t0},
		"a NUL in the orderID": {OrderID: "a\x00"},
	} {
		var err error
		for _, err = range e.Desk.List(e.Ctx, o) {
			break
		}
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, name)
	}
	var err error
	for _, err = range e.Desk.List(e.Ctx, &invoice.ListOptions{StartingAfter: "AAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
		break
	}
	assert.ErrorIs(t, err, invoice.ErrNotFound)
	_, err = e.Desk.ByOrderID(e.Ctx, "")
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
}

// PricesBackOff: while the service cannot give prices, re-quotes wait,
// and at most one price request per coin reaches it per interval,
// whatever the number of invoices due and the pages read; when it works
// again, one request re-quotes them all.
func PricesBackOff(t *testing.T, e *Env) {
	var ids []string
	for range 20 {
		ids = append(ids, e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 24 * time.Hour}).ID)
	}
	e.Clock.Advance(15 * time.Minute) // every quote lapsed
	e.FailInfo.Store(true)
	start := e.InfoRequests.Load()
	for range 3 {
		n, err := e.Desk.Tick(e.Ctx)
		require.NoError(t, err, "a price that cannot be read is not the tick's error")
		assert.Zero(t, n)
		for _, id := range ids {
			e.Get(id)
		}
	}
	assert.Equal(t, int64(1), e.InfoRequests.Load()-start, "one request for 20 invoices and three ticks")
	e.Clock.Advance(9 * time.Second)
	e.Tick()
	assert.Equal(t, int64(1), e.InfoRequests.Load()-start, "backing off")
	e.Clock.Advance(time.Second)
	e.Tick()
	assert.Equal(t, int64(2), e.InfoRequests.Load()-start, "tried again after 10 s")
	e.Clock.Advance(10 * time.Second)
	e.Tick()
	assert.Equal(t, int64(2), e.InfoRequests.Load()-start, "then after 20 s")
	e.Clock.Advance(10 * time.Second)
	e.FailInfo.Store(false)
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	assert.Equal(t, 20, e.Tick(), "all re-quoted")
	assert.Equal(t, int64(3), e.InfoRequests.Load()-start, "with one request")
	for _, id := range ids {
		eq(t, "50000", e.Get(id).Rate, id)
	}
	assert.Zero(t, e.Tick())
	assert.Equal(t, int64(3), e.InfoRequests.Load()-start)
}

// errDead is what a dead process's store answers.
var errDead = errors.New("invoicesuite: the process is gone")

// dyingStore is a Store that fails every call once dead is set: the
// process that used it is gone.
type dyingStore struct {
	invoice.Store
	dead *atomic.Bool
}

func (s *dyingStore) Insert(ctx context.Context, r *invoice.Record) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Insert(ctx, r)
}

func (s *dyingStore) Load(ctx context.Context, id string) (*invoice.Record, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.Store.Load(ctx, id)
}

func (s *dyingStore) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.Store.Update(ctx, id, key, change)
}

func (s *dyingStore) Notify(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Notify(ctx, id, fn)
}

// Books: ExportCSV writes a header and one row per payment (one per
// invoice without payments); every amount is exact, and the confirmed
// rows of an invoice in its own coin add up to its Paid (their fiat
// values to its PaidFiat). Read back with encoding/csv and added up.
func Books(t *testing.T, e *Env) {
	settled := e.Create(invoice.CreateOptions{OrderID: "b1", Price: D("25"), Currency: "USD", QuoteTTL: 10 * time.Minute})
	e.Confirm(e.Pay("btc", settled.AddressIn, "0.0002"))
	require.NoError(t, e.Srv.SetPrice("btc", "USD", D("50000")))
	e.Clock.Advance(10 * time.Minute)
	e.Tick() // the rest at another rate
	e.Confirm(e.Pay("btc", settled.AddressIn, e.Get(settled.ID).Due.String()))
	wrong := e.Create(invoice.CreateOptions{OrderID: "b2", Ticker: "trc20_usdt", Address: TRXDest, Price: D("30"), Currency: "USD", MultiToken: true})
	e.Confirm(e.Pay("trx", wrong.AddressIn, "250"))
	e.Confirm(e.Pay("trc20_usdt", wrong.AddressIn, "12.345678"))
	pending := e.Create(invoice.CreateOptions{OrderID: "b3", Price: D("25"), Currency: "USD"})
	e.Pay("btc", pending.AddressIn, "0.00012345")
	over := e.Create(invoice.CreateOptions{OrderID: "b4", Price: D("0.001")})
	e.Confirm(e.Pay("btc", over.AddressIn, "0.00123456"))
	none := e.Create(invoice.CreateOptions{OrderID: "b5", Price: D("25"), Currency: "EUR"})
	late := e.Create(invoice.CreateOptions{OrderID: "b6", Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Clock.Advance(31 * time.Minute)
	e.Tick()
	e.Confirm(e.Pay("btc", late.AddressIn, "0.0005"))

	var buf bytes.Buffer
	require.NoError(t, e.Desk.ExportCSV(e.Ctx, &buf, nil))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	assert.Equal(t, invoice.CSVHeader, rows[0])
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	byInvoice := map[string][][]string{}
	var order []string
	for _, r := range rows[1:] {
		require.Len(t, r, len(invoice.CSVHeader))
		id := r[col["invoice_id"]]
		if byInvoice[id] == nil {
			order = append(order, id)
		}
		byInvoice[id] = append(byInvoice[id], r)
	}
	assert.Equal(t, []string{late.ID, none.ID, over.ID, pending.ID, wrong.ID, settled.ID}, order, "newest first")
	for _, id := range order {
		inv := e.Get(id)
		rs := byInvoice[id]
		assert.Len(t, rs, max(1, len(inv.Payments)), id)
		paid, paidFiat := D("0"), D("0")
		for i, r := range rs {
			assert.Equal(t, inv.OrderID, r[col["order_id"]])
			assert.Equal(t, string(inv.Status), r[col["status"]])
			assert.Equal(t, string(inv.Exception), r[col["exception"]])
			assert.Equal(t, inv.Price.String(), r[col["price"]])
			if len(inv.Payments) == 0 {
				assert.Equal(t, inv.Ticker, r[col["ticker"]])
				assert.Empty(t, r[col["payment_uuid"]]+r[col["amount"]]+r[col["confirmed"]])
				continue
			}
			rc := inv.Payments[i]
			assert.Equal(t, rc.UUID, r[col["payment_uuid"]])
			assert.Equal(t, rc.TxID, r[col["txid_in"]])
			assert.Equal(t, rc.Coin, r[col["ticker"]])
			assert.NotContains(t, r[col["amount"]]+r[col["fiat_value"]]+r[col["fee"]], "e", "no exponent form")
			if r[col["confirmed"]] == "true" {
				assert.NotEmpty(t, r[col["txid_out"]], "the forwarding transaction of a confirmed payment")
				assert.NotEmpty(t, r[col["forwarded"]])
				assert.NotEmpty(t, r[col["fee"]])
				assert.True(t, D(r[col["forwarded"]]).Add(D(r[col["fee"]])).LessThanOrEqual(D(r[col["amount"]])), "forwarded + fee <= amount")
			}
			if rc.WrongCoin {
				assert.Empty(t, r[col["fiat_value"]]+r[col["rate"]], "not valued")
				continue
			}
			if inv.Currency == "" {
				assert.Empty(t, r[col["quoted_at"]], "a price in the coin has no quote")
			} else {
				assert.Equal(t, rc.QuotedAt.Format(time.RFC3339Nano), r[col["quoted_at"]])
			}
			if r[col["confirmed"]] == "true" && r[col["ticker"]] == inv.Ticker {
				paid = paid.Add(D(r[col["amount"]]))
				paidFiat = paidFiat.Add(D(r[col["fiat_value"]]))
			}
		}
		eq(t, inv.Paid.String(), paid, id+": the rows add up to Paid")
		eq(t, inv.PaidFiat.String(), paidFiat, id+": and to PaidFiat")
	}
	eq(t, "25", e.Get(settled.ID).PaidFiat, "12 USD at 60000 and 13 at 50000")
	assert.Len(t, byInvoice[settled.ID], 2)
	assert.NotEqual(t, byInvoice[settled.ID][0][col["rate"]], byInvoice[settled.ID][1][col["rate"]], "each payment at its quote")

	// The same filters as List.
	buf.Reset()
	require.NoError(t, e.Desk.ExportCSV(e.Ctx, &buf, &invoice.ListOptions{Exception: []invoice.Exception{invoice.ExceptionPaidLate}}))
	rows, err = csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, late.ID, rows[1][col["invoice_id"]])
	assert.ErrorIs(t, e.Desk.ExportCSV(e.Ctx, &buf, &invoice.ListOptions{Status: []invoice.Status{"paid"}}), invoice.ErrInvalidOptions)
}

// DecisionsRaceCallbacks: the merchant's MarkSettled, Reopen and
// Invalidate race the service's callbacks and Tick on other replicas:
// every change is applied once under the store's lock, the outcome is one
// the rules allow, and onChange hears each change once, in order.
func DecisionsRaceCallbacks(t *testing.T, e *Env) {
	other := e.NewDesk()
	for round := range 6 {
		inv := e.Create(invoice.CreateOptions{Price: D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
		e.Down.Store(true)
		tx := e.Pay("btc", inv.AddressIn, "0.0002")
		require.NoError(t, e.Srv.Confirm(tx, 1))
		e.Flush()
		e.Down.Store(false)
		if round%2 == 1 {
			e.Clock.Advance(31 * time.Minute) // expired: Reopen and MarkSettled both apply
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		var marked, reopened, invalidated error
		deliveries := append(e.Deliveries(inv.AddressIn, true), e.Deliveries(inv.AddressIn, false)...)
		wg.Go(func() { // the callbacks the shop missed, delivered again
			<-start
			for _, d := range deliveries {
				e.Resend(d)
			}
		})
		wg.Go(func() { <-start; _, marked = e.Desk.MarkSettled(e.Ctx, inv.ID, "accepted") })
		wg.Go(func() { <-start; _, reopened = other.Reopen(e.Ctx, inv.ID, nil) })
		wg.Go(func() { <-start; _, invalidated = other.Invalidate(e.Ctx, inv.ID, "cancelled") })
		wg.Go(func() { <-start; _, _ = other.Tick(e.Ctx) })
		close(start)
		wg.Wait()
		// The service's own retries (due once the clock moved) may still be
		// applying the payment that a resend found busy: let them finish.
		e.Flush()
		_, err := e.Desk.Tick(e.Ctx)
		require.NoError(t, err)
		got := e.Get(inv.ID)
		for name, err := range map[string]error{"mark": marked, "reopen": reopened, "invalidate": invalidated} {
			if err != nil {
				assert.ErrorIs(t, err, invoice.ErrWrongStatus, "round %d: %s", round, name)
			}
		}
		eq(t, "0.0002", got.Paid, "the payment counts once")
		require.Len(t, got.Payments, 1)
		count := map[string]int{}
		for _, ev := range got.Events {
			count[ev.Kind]++
		}
		assert.Equal(t, 1, count[invoice.EventPaymentConfirmed], "round %d", round)
		assert.LessOrEqual(t, count[invoice.EventMarked], 1)
		assert.LessOrEqual(t, count[invoice.EventInvalidated], 1)
		switch {
		case marked == nil:
			assert.Equal(t, invoice.StatusSettled, got.Status, "round %d", round)
			assert.Equal(t, invoice.ExceptionMarked, got.Exception)
		case invalidated == nil:
			assert.Equal(t, invoice.StatusInvalid, got.Status, "round %d", round)
			// Seen before the invalidation or after it: flagged either way.
			assert.Contains(t, []invoice.Exception{invoice.ExceptionPaidPartial, invoice.ExceptionPaidLate}, got.Exception,
				"round %d: money on an invalid invoice is flagged", round)
		}
		e.AssertOnePerChange(got)
	}
}
