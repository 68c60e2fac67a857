package cryptapitest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
)

// failingShop is a merchant that answers every callback with HTTP 500.
func failingShop(b *testing.B) *httptest.Server {
	b.Helper()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "boom")
	}))
	b.Cleanup(shop.Close)
	return shop
}

// queuedServer is a fake whose delivery queue holds queued retries of
// deliveries the shop refused, none due before the clock moves.
type queuedServer struct {
	s    *cryptapitest.Server
	addr string
}

func newQueuedServer(b *testing.B, shopURL string, queued int) *queuedServer {
	b.Helper()
	ctx := context.Background()
	clock := cryptapitest.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	b.Cleanup(s.Close)
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	c, err := cryptapi.New(cryptapi.WithBaseURL(s.URL()), cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		b.Fatal(err)
	}
	a, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{Callback: shopURL + "/cb?q=" + strconv.Itoa(queued), Address: btcDest})
	if err != nil {
		b.Fatal(err)
	}
	q := &queuedServer{s: s, addr: a.AddressIn}
	for i := 0; i < queued; i++ {
		q.event(b, false)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return q
}

// event is one payment, confirmed: one callback to queue, sign, deliver,
// record and queue again for its retry.
func (q *queuedServer) event(b *testing.B, flush bool) {
	txid, err := q.s.Pay("btc", q.addr, dec("0.001"))
	if err != nil {
		b.Fatal(err)
	}
	if err := q.s.Confirm(txid, 1); err != nil {
		b.Fatal(err)
	}
	if flush {
		if err := q.s.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliveryQueued measures one delivery event (a payment whose
// callback the shop answers with HTTP 500, so that its retry is queued)
// on a server with 1,000 and with 50,000 retries queued, in alternating
// chunks. "q50k/q1k" is the cost of an event at 50,000 queued relative to
// 1,000 queued.
func BenchmarkDeliveryQueued(b *testing.B) {
	shop := failingShop(b)
	small := newQueuedServer(b, shop.URL, 1000)
	big := newQueuedServer(b, shop.URL, 50000)
	op := func(q *queuedServer) func(int) {
		return func(n int) {
			for i := 0; i < n; i++ {
				q.event(b, true)
			}
		}
	}
	benchcmp.Run(b, 50,
		benchcmp.Contender{Name: "q1k", Op: op(small)},
		benchcmp.Contender{Name: "q50k", Op: op(big)},
	)
}

// BenchmarkDeliveryBurst measures events queued together and delivered
// in parallel, on a server with 1,000 retries queued: signing runs outside
// the server's lock and deliveries reuse connections.
func BenchmarkDeliveryBurst(b *testing.B) {
	shop := failingShop(b)
	q := newQueuedServer(b, shop.URL, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.event(b, false)
	}
	if err := q.s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSoak runs b.N payments (ten per address, each with a pending
// and a confirmed callback the shop acknowledges) through a server with
// WithHistoryLimit(10000), as "cryptapi sim serve" runs by default. It
// reports the live heap after half of the payments and after all of them;
// "heap-end/heap-half" near 1 means memory stays bounded.
func BenchmarkSoak(b *testing.B) {
	ctx := context.Background()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "*ok*")
	}))
	defer shop.Close()
	s := cryptapitest.NewServer(cryptapitest.WithHistoryLimit(10000))
	defer s.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := cryptapi.New(cryptapi.WithBaseURL(s.URL()), cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		b.Fatal(err)
	}
	start := heapInUse()
	var half uint64
	var addr string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 0 {
			a, err := c.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
				Callback: shop.URL + "/cb?order=" + strconv.Itoa(i), Address: btcDest, Pending: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			addr = a.AddressIn
		}
		txid, err := s.Pay("btc", addr, dec("0.001"))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Confirm(txid, 1); err != nil {
			b.Fatal(err)
		}
		if i%256 == 255 || i == b.N-1 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if i == b.N/2 {
			b.StopTimer()
			half = heapInUse()
			b.StartTimer()
		}
	}
	b.StopTimer()
	end := heapInUse()
	b.ReportMetric(float64(half-min(half, start))/(1<<20), "heap-half-MiB")
	b.ReportMetric(float64(end-min(end, start))/(1<<20), "heap-end-MiB")
	if half > start {
		b.ReportMetric(float64(end-start)/float64(half-start), "heap-end/heap-half")
	}
}
