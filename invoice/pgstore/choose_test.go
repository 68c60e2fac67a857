package pgstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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

// Four replicas, each with its own pool, Store and Desk on the same
// tables, answer the same customer's choice at once (a double tap
// reaching two replicas, a retry behind a load balancer): every
// invoice gets one address per coin chosen, with one call to the
// service for it, and every replica answers with that address. Then all
// four switch the invoice to another coin at once, while the customer's
// wallet pays the first: the payment counts once, at its coin's quote.
func TestFourReplicasRacingOnEveryChoice(t *testing.T) {
	dsn := testDSN(t)
	const nReplicas, nInvoices = 4, 12
	table := tableName(t, openDB(t, dsn))
	clock := cryptapitest.NewFakeClock(invoicesuite.T0)
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The service answers creates slowly (the replicas' claims overlap),
	// and counts them.
	var creates atomic.Int64
	target, err := url.Parse(srv.URL())
	require.NoError(t, err)
	fwd := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/create/") {
			creates.Add(1)
			time.Sleep(30 * time.Millisecond)
		}
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)

	var mu sync.Mutex
	changes := map[string][]int64{}
	onChange := func(_ context.Context, inv *invoice.Invoice) error {
		mu.Lock()
		defer mu.Unlock()
		changes[inv.ID] = append(changes[inv.ID], inv.Version)
		return nil
	}
	// The shop: each callback goes to a replica in turn.
	shop := httptest.NewUnstartedServer(nil)
	desks := make([]*invoice.Desk, nReplicas)
	handlers := make([]http.Handler, nReplicas)
	for i := range nReplicas {
		c, err := cryptapi.New(cryptapi.WithBaseURL(slow.URL), cryptapi.WithoutRetries())
		require.NoError(t, err)
		desks[i], err = invoice.New(c, newStore(t, openDB(t, dsn), table), invoice.WithClock(clock), invoice.WithOnChange(onChange))
		require.NoError(t, err)
		v, err := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL("http://"+shop.Listener.Addr().String()))
		require.NoError(t, err)
		handlers[i], err = desks[i].Handler(v)
		require.NoError(t, err)
	}
	var turn atomic.Int64
	shop.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[turn.Add(1)%nReplicas].ServeHTTP(w, r)
	})
	shop.Start()
	t.Cleanup(shop.Close)

	ids := make([]string, nInvoices)
	for i := range ids {
		inv, err := desks[i%nReplicas].Create(ctx, &invoice.CreateOptions{
			Price: invoicesuite.D("25"), Currency: "USD", Callback: "http://" + shop.Listener.Addr().String() + "/callback",
			Tickers:      []string{"btc", "ltc"},
			Destinations: map[string]string{"btc": invoicesuite.BTCDest, "ltc": invoicesuite.LTCDest},
		})
		require.NoError(t, err)
		ids[i] = inv.ID
	}
	require.Zero(t, creates.Load(), "no address before a choice")

	race := func(coin string) map[string][]string {
		got := map[string][]string{}
		var gmu sync.Mutex
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, id := range ids {
			for r := range nReplicas {
				wg.Go(func() {
					<-start
					inv, err := desks[r].Choose(ctx, id, coin)
					if !assert.NoError(t, err, "%s on replica %d", id, r) {
						return
					}
					gmu.Lock()
					got[id] = append(got[id], inv.AddressIn)
					gmu.Unlock()
				})
			}
		}
		close(start)
		wg.Wait()
		return got
	}

	got := race("ltc")
	assert.Equal(t, int64(nInvoices), creates.Load(), "one service call per invoice")
	for _, id := range ids {
		require.Len(t, got[id], nReplicas)
		for _, a := range got[id] {
			assert.Equal(t, got[id][0], a, "every replica answers with the one address")
		}
		inv, err := desks[0].Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, got[id][0], inv.AddressIn)
		assert.Equal(t, int64(2), inv.Version, "one change")
	}

	// The switch to btc on every replica, racing a payment to the ltc
	// address (its callback applied by a replica while they choose).
	var paid sync.WaitGroup
	for i, id := range ids {
		paid.Go(func() {
			inv, err := desks[i%nReplicas].Get(ctx, id)
			assert.NoError(t, err)
			_, err = srv.Pay("ltc", inv.AddressIn, invoicesuite.D("0.125"))
			assert.NoError(t, err)
			assert.NoError(t, srv.Flush(ctx))
		})
	}
	got = race("btc")
	paid.Wait()
	require.NoError(t, srv.Flush(ctx))
	assert.Equal(t, int64(2*nInvoices), creates.Load(), "one more call per invoice")
	for _, id := range ids {
		for _, a := range got[id] {
			assert.Equal(t, got[id][0], a)
		}
		inv, err := desks[1].Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, "btc", inv.Ticker)
		require.Len(t, inv.Payments, 1, "the ltc payment, once")
		assert.Equal(t, "ltc", inv.Payments[0].Coin)
		assert.Equal(t, "10", inv.PaidPendingFiat.String(), "at ltc's quote")
		assert.Equal(t, "0.00025", inv.Due.String(), "15 USD at 60000, in btc")
		assert.Equal(t, int64(4), inv.Version, "a choice and a payment")
		want := []int64{2, 3, 4}
		mu.Lock()
		assert.Equal(t, want, changes[id], "onChange once per change, in order")
		mu.Unlock()
	}
	for _, d := range srv.Deliveries() {
		assert.True(t, d.OK, "every callback acknowledged at once")
	}
}
