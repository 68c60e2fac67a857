package pgstore_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// plan is what the customer of one invoice pays, and how it must end.
type plan struct {
	pay       []string
	status    invoice.Status
	exception invoice.Exception
	paid      string
	due       string
}

var plans = []plan{
	{pay: []string{"0.00041667"}, status: invoice.StatusSettled, paid: "0.00041667", due: "0"},
	{pay: []string{"0.0002", "0.00021667"}, status: invoice.StatusSettled, paid: "0.00041667", due: "0"},
	{pay: []string{"0.001"}, status: invoice.StatusSettled, exception: invoice.ExceptionPaidOver, paid: "0.001", due: "0"},
	{pay: []string{"0.0001", "0.0001", "0.0001"}, status: invoice.StatusNew, exception: invoice.ExceptionPaidPartial, paid: "0.0003", due: "0.00011667"},
	{pay: []string{"0.0004", "0.0001"}, status: invoice.StatusSettled, paid: "0.0005", due: "0"},
	{pay: []string{"0.0002", "0.0002", "0.0002"}, status: invoice.StatusSettled, exception: invoice.ExceptionPaidOver, paid: "0.0006", due: "0"},
}

// Eight replicas, each with its own pool, Store and Desk on the same
// tables, receive every callback twice at the same moment (two replicas
// picked at random race on each delivery, and the service retries what
// either did not acknowledge). Every invoice ends with the right totals,
// status and exception, and onChange ran exactly once per change, in
// order, across all replicas.
func TestEightReplicasRacingOnEveryCallback(t *testing.T) {
	dsn := testDSN(t)
	const nReplicas, perPlan = 8, 3
	table := tableName(t, openDB(t, dsn))
	clock := cryptapitest.NewFakeClock(invoicesuite.T0)
	waits := make([]time.Duration, 40)
	for i := range waits {
		waits[i] = time.Second
	}
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock), cryptapitest.WithRetrySchedule(waits))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var mu sync.Mutex
	changes := map[string][]int64{}
	onChange := func(_ context.Context, inv *invoice.Invoice) error {
		mu.Lock()
		defer mu.Unlock()
		changes[inv.ID] = append(changes[inv.ID], inv.Version)
		return nil
	}

	front := httptest.NewUnstartedServer(nil)
	handlers := make([]http.Handler, nReplicas)
	desks := make([]*invoice.Desk, nReplicas)
	for i := range nReplicas {
		s := newStore(t, openDB(t, dsn), table)
		c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithoutRetries())
		require.NoError(t, err)
		desks[i], err = invoice.New(c, s, invoice.WithClock(clock), invoice.WithOnChange(onChange))
		require.NoError(t, err)
		v, err := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL("http://"+front.Listener.Addr().String()))
		require.NoError(t, err)
		handlers[i], err = desks[i].Handler(v)
		require.NoError(t, err)
	}
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 8))
	front.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rngMu.Lock()
		a := rng.IntN(nReplicas)
		b := (a + 1 + rng.IntN(nReplicas-1)) % nReplicas
		rngMu.Unlock()
		start := make(chan struct{})
		acked := make([]bool, 2)
		var wg sync.WaitGroup
		for k, rep := range []int{a, b} {
			wg.Go(func() {
				req := httptest.NewRequestWithContext(r.Context(), r.Method, r.RequestURI, bytes.NewReader(body))
				req.Header = r.Header.Clone()
				rec := httptest.NewRecorder()
				<-start
				handlers[rep].ServeHTTP(rec, req)
				acked[k] = rec.Code == http.StatusOK && rec.Body.String() == callback.OK
			})
		}
		close(start)
		wg.Wait()
		if acked[0] && acked[1] {
			callback.WriteOK(w)
			return
		}
		http.Error(w, "not both", http.StatusServiceUnavailable)
	})
	front.Start()
	t.Cleanup(front.Close)

	type made struct {
		inv *invoice.Invoice
		p   plan
	}
	var all []made
	for i := range perPlan * len(plans) {
		p := plans[i%len(plans)]
		inv, err := desks[i%nReplicas].Create(ctx, &invoice.CreateOptions{
			Ticker: "btc", Price: invoicesuite.D("25"), Currency: "USD",
			Callback: front.URL + "/callback", Address: invoicesuite.BTCDest,
		})
		require.NoError(t, err)
		all = append(all, made{inv, p})
	}
	var txids []string
	for _, m := range all {
		for _, amount := range m.p.pay {
			tx, err := srv.Pay("btc", m.inv.AddressIn, invoicesuite.D(amount))
			require.NoError(t, err)
			txids = append(txids, tx)
		}
	}
	for _, tx := range txids {
		require.NoError(t, srv.Confirm(tx, 1))
	}
	require.NoError(t, srv.Flush(ctx))
	for round := 0; ; round++ {
		done := true
		for _, p := range srv.Payments() {
			done = done && p.Result == "done"
		}
		if done {
			break
		}
		require.Less(t, round, len(waits), "callbacks still unacknowledged")
		clock.Advance(time.Second)
		require.NoError(t, srv.Flush(ctx))
	}

	attempts := 0
	for _, d := range srv.Deliveries() {
		if d.Kind == "callback" {
			attempts++
		}
	}
	t.Logf("%d invoices, %d payments, %d deliveries (each to two replicas)", len(all), len(txids), attempts)
	for i, m := range all {
		got, err := desks[(i+3)%nReplicas].Get(ctx, m.inv.ID)
		require.NoError(t, err)
		assert.Equal(t, m.p.status, got.Status, "invoice %d", i)
		assert.Equal(t, m.p.exception, got.Exception, "invoice %d", i)
		assert.Equal(t, invoicesuite.D(m.p.paid).String(), got.Paid.String(), "invoice %d paid", i)
		assert.True(t, got.PaidPending.IsZero(), "invoice %d: all confirmed", i)
		assert.Equal(t, invoicesuite.D(m.p.due).String(), got.Due.String(), "invoice %d due", i)
		assert.Len(t, got.Payments, len(m.p.pay), "invoice %d: one receipt per payment", i)
		assert.GreaterOrEqual(t, got.Version, int64(1+len(m.p.pay)))
		assert.LessOrEqual(t, got.Version, int64(1+2*len(m.p.pay)))
		want := []int64{}
		for v := int64(2); v <= got.Version; v++ {
			want = append(want, v)
		}
		mu.Lock()
		assert.Equal(t, want, changes[m.inv.ID], "invoice %d: onChange once per change, in order", i)
		mu.Unlock()
	}
}
