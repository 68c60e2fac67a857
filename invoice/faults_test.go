package invoice_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

var errInjected = errors.New("injected store failure")

// faults decides, at random, which store operations fail.
type faults struct {
	mu    sync.Mutex
	rng   *rand.Rand
	rate  float64
	on    bool
	count map[string]int
}

func (f *faults) fail(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.on || f.rng.Float64() >= f.rate {
		return false
	}
	f.count[op]++
	return true
}

// faultyStore fails every step of an invoice.Store at random: before an
// operation, and after an Update that did store (the answer of a commit
// lost on the way back).
type faultyStore struct {
	inner invoice.Store
	cbs   *faultyCallbacks
	f     *faults
}

func (s *faultyStore) Callbacks() callback.Store { return s.cbs }

func (s *faultyStore) Insert(ctx context.Context, r *invoice.Record) error {
	if s.f.fail("insert before") {
		return errInjected
	}
	err := s.inner.Insert(ctx, r)
	if err == nil && s.f.fail("insert after") {
		return errInjected
	}
	return err
}

func (s *faultyStore) Load(ctx context.Context, id string) (*invoice.Record, error) {
	if s.f.fail("load") {
		return nil, errInjected
	}
	return s.inner.Load(ctx, id)
}

func (s *faultyStore) LoadByKey(ctx context.Context, token string) (*invoice.Record, error) {
	if s.f.fail("load by claim") {
		return nil, errInjected
	}
	return s.inner.LoadByKey(ctx, token)
}

func (s *faultyStore) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	if s.f.fail("update before") {
		return nil, errInjected
	}
	r, err := s.inner.Update(ctx, id, key, change)
	if err == nil && s.f.fail("update after") {
		return nil, errInjected
	}
	return r, err
}

func (s *faultyStore) Notify(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) error {
	if s.f.fail("notify") {
		return errInjected
	}
	return s.inner.Notify(ctx, id, fn)
}

func (s *faultyStore) Due(ctx context.Context, now time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if s.f.fail("due") {
			yield("", errInjected)
			return
		}
		for id, err := range s.inner.Due(ctx, now) {
			if !yield(id, err) || err != nil {
				return
			}
			if s.f.fail("due next page") {
				yield("", errInjected)
				return
			}
		}
	}
}

func (s *faultyStore) List(ctx context.Context, o *invoice.ListOptions) iter.Seq2[*invoice.Record, error] {
	return func(yield func(*invoice.Record, error) bool) {
		if s.f.fail("list") {
			yield(nil, errInjected)
			return
		}
		for r, err := range s.inner.List(ctx, o) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

type faultyCallbacks struct {
	inner *callback.MemoryStore
	f     *faults
}

func (c *faultyCallbacks) Claim(ctx context.Context, key string, lease time.Duration) (callback.Outcome, error) {
	if c.f.fail("claim") {
		return 0, errInjected
	}
	return c.inner.Claim(ctx, key, lease)
}

func (c *faultyCallbacks) Complete(ctx context.Context, key string) error {
	if c.f.fail("complete") {
		return errInjected
	}
	return c.inner.Complete(ctx, key)
}

func (c *faultyCallbacks) Release(ctx context.Context, key string) error {
	if c.f.fail("release") {
		return errInjected
	}
	return c.inner.Release(ctx, key)
}

// With every store step failing at random (30% of calls), callbacks are
// acknowledged only once their change is stored and passed on; the
// service's retries and Reconcile bring every invoice to the right end,
// and onChange still sees each change once.
func TestStoresFailingAtEveryStep(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			f := &faults{rng: rand.New(rand.NewPCG(seed, 99)), rate: 0.3, count: map[string]int{}}
			waits := make([]time.Duration, 200)
			for i := range waits {
				waits[i] = time.Second
			}
			var e *invoicesuite.Env
			store := &faultyStore{inner: invoice.NewMemoryStore(), f: f}
			var ids sync.Map // address_in -> invoice ID
			var violations []string
			var vmu sync.Mutex
			// Every acknowledged callback has its payment stored and every
			// change of its invoice passed on, at the moment of the answer.
			check := func(d cryptapitest.Delivery) {
				if !d.OK || d.Kind != "callback" {
					return
				}
				u, _ := url.Parse(d.URL)
				q := u.Query()
				id, ok := ids.Load(q.Get("address_in"))
				if !ok {
					return
				}
				r, err := store.inner.Load(context.Background(), id.(string))
				bad := ""
				switch {
				case err != nil:
					bad = err.Error()
				default:
					found := false
					for _, rc := range r.Invoice.Payments {
						if rc.UUID == q.Get("uuid") {
							found = rc.Confirmed || q.Get("pending") == "1"
						}
					}
					if !found {
						bad = "acknowledged before stored"
					}
					passed := false
					for _, c := range e.Changes(id.(string)) {
						for _, rc := range c.Payments {
							if rc.UUID == q.Get("uuid") && (rc.Confirmed || q.Get("pending") == "1") {
								passed = true
							}
						}
					}
					if !passed {
						bad += " acknowledged before passed on"
					}
				}
				if bad != "" {
					vmu.Lock()
					violations = append(violations, q.Get("uuid")+": "+bad)
					vmu.Unlock()
				}
			}
			e = invoicesuite.NewEnvWith(t, store, []invoice.Option{invoice.WithLease(5 * time.Second)},
				cryptapitest.WithRetrySchedule(waits), cryptapitest.WithDeliveryHook(check))
			store.cbs = &faultyCallbacks{inner: callback.NewMemoryStore(callback.WithClock(e.Clock)), f: f}

			a := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 24 * time.Hour})
			b := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 24 * time.Hour})
			ids.Store(a.AddressIn, a.ID)
			ids.Store(b.AddressIn, b.ID)
			f.mu.Lock()
			f.on = true
			f.mu.Unlock()
			var txs []string
			for _, p := range []struct{ addr, amount string }{
				{a.AddressIn, "0.0002"}, {a.AddressIn, "0.00021667"}, {b.AddressIn, "0.001"},
			} {
				tx, err := e.Srv.Pay("btc", p.addr, invoicesuite.D(p.amount))
				require.NoError(t, err)
				txs = append(txs, tx)
			}
			e.Flush()
			for _, tx := range txs {
				require.NoError(t, e.Srv.Confirm(tx, 1))
			}
			e.Flush()
			for round := 0; ; round++ {
				done := true
				for _, p := range e.Srv.Payments() {
					done = done && p.Result == "done"
				}
				if done {
					break
				}
				require.Less(t, round, len(waits), "callbacks still unacknowledged")
				e.Clock.Advance(time.Second)
				e.Flush()
			}
			vmu.Lock()
			assert.Empty(t, violations)
			vmu.Unlock()
			f.mu.Lock()
			f.on = false
			t.Logf("injected failures: %v", f.count)
			f.mu.Unlock()

			ga, err := e.Desk.Reconcile(e.Ctx, a.ID) // passes on any change left by a failed Notify
			require.NoError(t, err)
			gb, err := e.Desk.Reconcile(e.Ctx, b.ID)
			require.NoError(t, err)
			assert.Equal(t, invoice.StatusSettled, ga.Status)
			assert.Equal(t, invoice.ExceptionNone, ga.Exception)
			assert.Equal(t, "0.00041667", ga.Paid.String())
			assert.Len(t, ga.Payments, 2)
			assert.Equal(t, invoice.StatusSettled, gb.Status)
			assert.Equal(t, invoice.ExceptionPaidOver, gb.Exception)
			assert.Equal(t, "0.001", gb.Paid.String())
			e.AssertOnePerChange(ga)
			e.AssertOnePerChange(gb)
		})
	}
}

// The lifecycle with every store step failing at random (30% of calls):
// Creates retried after failures make one invoice per order, Tick and the
// merchant's decisions retried until they succeed apply each change once,
// and once the store works again every change reaches onChange once, in
// order.
func TestLifecycleWithAStoreFailingAtEveryStep(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			f := &faults{rng: rand.New(rand.NewPCG(seed, 7)), rate: 0.3, count: map[string]int{}}
			store := &faultyStore{inner: invoice.NewMemoryStore(), f: f}
			const lease = 10 * time.Second
			e := invoicesuite.NewEnvWith(t, store, []invoice.Option{invoice.WithLease(lease)},
				cryptapitest.WithRetrySchedule(make([]time.Duration, 0)))
			store.cbs = &faultyCallbacks{inner: callback.NewMemoryStore(callback.WithClock(e.Clock)), f: f}
			// retry runs op until it succeeds; a failure may leave a claim
			// (a reservation stored, its answer lost), which lapses with
			// the lease.
			retry := func(what string, op func() error) {
				t.Helper()
				for i := 0; ; i++ {
					err := op()
					if err == nil {
						return
					}
					require.Less(t, i, 200, "%s: %v", what, err)
					e.Clock.Advance(lease)
				}
			}
			f.mu.Lock()
			f.on = true
			f.mu.Unlock()
			ids := map[string]string{}
			for i := range 8 {
				order := fmt.Sprint("order-", i)
				o := invoice.CreateOptions{OrderID: order, Ticker: "btc", Price: invoicesuite.D("25"), Currency: "USD",
					Callback: e.CallbackURL(), Address: invoicesuite.BTCDest, ExpiresIn: 24 * time.Hour}
				for range 3 { // the shop retries, and asks again later
					retry("create", func() error {
						inv, err := e.Desk.Create(e.Ctx, &o)
						if err == nil {
							if ids[order] != "" {
								assert.Equal(t, ids[order], inv.ID, "%s: one invoice", order)
							}
							ids[order] = inv.ID
						}
						return err
					})
				}
			}
			retry("mark", func() error {
				_, err := e.Desk.MarkSettled(e.Ctx, ids["order-0"], "paid in cash")
				if errors.Is(err, invoice.ErrWrongStatus) || errors.Is(err, invoice.ErrNotNotified) {
					return nil // stored before its answer was lost
				}
				return err
			})
			retry("invalidate", func() error {
				_, err := e.Desk.Invalidate(e.Ctx, ids["order-1"], "out of stock")
				if errors.Is(err, invoice.ErrNotNotified) {
					return nil
				}
				return err
			})
			e.Clock.Advance(25 * time.Hour) // the others expire
			for range 5 {
				_, _ = e.Desk.Tick(e.Ctx)
			}
			f.mu.Lock()
			f.on = false
			t.Logf("injected failures: %v", f.count)
			f.mu.Unlock()
			e.Tick()

			for i := range 8 {
				order := fmt.Sprint("order-", i)
				invs, err := e.Desk.ByOrderID(e.Ctx, order)
				require.NoError(t, err)
				require.Len(t, invs, 1, "%s: one invoice", order)
				inv := invs[0]
				switch i {
				case 0:
					assert.Equal(t, invoice.ExceptionMarked, inv.Exception)
				case 1:
					assert.Equal(t, invoice.StatusInvalid, inv.Status)
				default:
					assert.Equal(t, invoice.StatusExpired, inv.Status, order)
				}
				e.AssertOnePerChange(inv)
			}
			assert.Equal(t, 8, e.Creates()-countSame(e), "one address per order")
		})
	}
}

// countSame counts the create requests that repeated an earlier one's
// callback URL (the same invoice asking again: the same address).
func countSame(e *invoicesuite.Env) int {
	seen := map[string]bool{}
	n := 0
	for _, r := range e.Srv.Requests() {
		if !strings.HasSuffix(r.Path, "/create/") {
			continue
		}
		cb := r.Query.Get("callback")
		if seen[cb] {
			n++
		}
		seen[cb] = true
	}
	return n
}

// Refunds with every store step failing at random (30% of calls, before
// an operation or after a write whose answer is lost): Refund (with its
// Key), SetRefundAddress, SendRefund and Tick, retried until they hold,
// make one refund per key, and each refund is sent by one payout of one
// payout request; once the store works again every change reaches
// onChange once, in order.
func TestRefundsWithAStoreFailingAtEveryStep(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			f := &faults{rng: rand.New(rand.NewPCG(seed, 21)), rate: 0.3, count: map[string]int{}}
			store := &faultyStore{inner: invoice.NewMemoryStore(), f: f}
			const lease = 10 * time.Second
			e := invoicesuite.NewKeyedEnv(t, store, invoice.WithLease(lease))
			store.cbs = &faultyCallbacks{inner: callback.NewMemoryStore(callback.WithClock(e.Clock)), f: f}
			require.NoError(t, e.Srv.FundPayoutWallet("btc", invoicesuite.D("1")))
			retry := func(what string, op func() error) {
				t.Helper()
				for i := 0; ; i++ {
					err := op()
					if err == nil {
						return
					}
					require.Less(t, i, 200, "%s: %v", what, err)
					e.Clock.Advance(lease)
				}
			}
			var invs []*invoice.Invoice
			for i := range 3 {
				inv := e.Create(invoice.CreateOptions{OrderID: fmt.Sprint("f-", i), Price: invoicesuite.D("25"), Currency: "USD"})
				e.Confirm(e.Pay("btc", inv.AddressIn, "0.001"))
				invs = append(invs, inv)
			}
			f.mu.Lock()
			f.on = true
			f.mu.Unlock()
			var refunds []string
			for i, inv := range invs {
				var rf *invoice.Refund
				for _, o := range []*invoice.RefundOptions{
					{Of: invoice.RefundOverpaid, Key: "over"},
					{Of: invoice.RefundCustom, Amount: invoicesuite.D("0.0001"), Key: "custom"},
				} {
					retry("refund", func() (err error) {
						rf, err = e.Desk.Refund(e.Ctx, inv.ID, o)
						if errors.Is(err, invoice.ErrNotNotified) {
							return nil
						}
						return err
					})
					retry("address", func() error {
						_, err := e.Desk.SetRefundAddress(e.Ctx, rf.ID, invoicesuite.CustomerBTC)
						if errors.Is(err, invoice.ErrNotNotified) {
							return nil
						}
						return err
					})
					refunds = append(refunds, rf.ID)
				}
				_ = i
			}
			for _, id := range refunds {
				retry("send", func() error {
					rf, err := e.Desk.SendRefund(e.Ctx, id)
					if rf != nil && rf.Status != invoice.RefundReady {
						return nil // sending or sent: Tick carries it on
					}
					if err == nil {
						return errors.New("still ready")
					}
					return err
				})
			}
			for range 20 {
				e.Clock.Advance(lease + invoice.RefundCheckEvery)
				_, _ = e.Desk.Tick(e.Ctx)
			}
			f.mu.Lock()
			f.on = false
			t.Logf("injected failures: %v", f.count)
			f.mu.Unlock()
			for range 5 {
				e.Clock.Advance(lease + invoice.RefundCheckEvery)
				e.Tick()
			}

			perAddress := 0
			for _, inv := range invs {
				got := e.Get(inv.ID)
				require.Len(t, got.Refunds, 2, "one refund per key")
				for _, rf := range got.Refunds {
					assert.Equal(t, invoice.RefundSent, rf.Status, rf.ID)
					assert.NotEmpty(t, rf.TxID)
				}
				e.AssertOnePerChange(got)
				perAddress += 2
			}
			assert.Len(t, e.Srv.Payouts(), perAddress, "one payout request per refund")
			assert.Len(t, e.Srv.PayoutBatches(), perAddress, "one payout per refund")
			for _, b := range e.Srv.PayoutBatches() {
				assert.Equal(t, "Done", b.Status)
			}
		})
	}
}
