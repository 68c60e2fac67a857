package callback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/forwardpay/cryptapi-go/internal/loadgen"
)

// swappable serves with the handler it holds, which a benchmark replaces
// between chunks.
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) set(h http.Handler)                               { s.h.Store(&h) }
func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }

// BenchmarkHandlerLoad sends signed GET callbacks over real HTTP on
// loopback, 32 connections at once (internal/loadgen), to three servers
// in alternating chunks of benchPool requests:
//   - "plain": plainOK, which reads the callback's fields and answers
//     *ok* without verifying or remembering anything, the baseline;
//   - "new": the callback handler with a MemoryStore, every callback a new
//     payment (a fresh store each chunk);
//   - "dup": the callback handler whose store has already processed every
//     callback, so each one is a duplicate delivery.
//
// "new/plain" and "dup/plain" are time ratios; the requests/s ratio is
// their inverse.
func BenchmarkHandlerLoad(b *testing.B) {
	reqs := benchRequests(b)
	v := newTestVerifier(b)
	fn := func(context.Context, *Payment) error { return nil }

	plain := httptest.NewServer(http.HandlerFunc(plainOK))
	defer plain.Close()
	fresh := &swappable{}
	fresh.set(newTestHandler(b, v, fn))
	newSrv := httptest.NewServer(fresh)
	defer newSrv.Close()
	done := newTestHandler(b, v, fn)
	for _, r := range reqs {
		w := httptest.NewRecorder()
		done.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("warming the duplicate store: status %d", w.Code)
		}
	}
	dupSrv := httptest.NewServer(done)
	defer dupSrv.Close()

	lc := loadgen.NewClient(32)
	defer lc.Close()
	run := func(base string, before func()) func(int) {
		return func(n int) {
			if before != nil {
				before()
			}
			res, err := lc.Run(context.Background(), loadgen.Config{
				Conns: 32, Requests: n, Duration: 2 * time.Minute, Want: OK,
				Request: func(i int) (string, http.Header) {
					r := reqs[i%len(reqs)]
					return base + r.URL.RequestURI(), r.Header
				},
			})
			if err != nil || res.Failed > 0 || res.Sent != n {
				b.Fatalf("%v: %+v", err, res)
			}
		}
	}
	benchcmp.Run(b, benchPool,
		benchcmp.Contender{Name: "plain", Op: run(plain.URL, nil)},
		benchcmp.Contender{Name: "new", Op: run(newSrv.URL, func() { fresh.set(newTestHandler(b, v, fn)) })},
		benchcmp.Contender{Name: "dup", Op: run(dupSrv.URL, nil)},
	)
}
