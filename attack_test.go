package cryptapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryOperationUnderEveryFailure runs every operation against each
// way an answer can go wrong after the request left, with a keyed client
// that logs at debug level. A money call reports ErrOutcomeUnknown
// exactly when the service's own answer is missing, reaches the server
// once, and a read never claims an unknown outcome; the key appears in
// no error text, no %v/%#v and no log line.
func TestEveryOperationUnderEveryFailure(t *testing.T) {
	type mode struct {
		name    string
		handler func(cancel context.CancelFunc) http.HandlerFunc
		timeout time.Duration // client timeout, 0 for none
		unknown bool          // a money call's outcome is unknown
		ctxErr  error         // the error also matches this
		refused bool          // the server is not listening
		money   bool          // only for money calls (reads decode leniently)
	}
	modes := []mode{
		{name: "service refusal", unknown: false, handler: func(context.CancelFunc) http.HandlerFunc {
			return writeBody(http.StatusBadRequest, "application/json", []byte(`{"status":"error","error":"no `+testKey+`"}`))
		}},
		{name: "service refusal with HTTP 200", unknown: false, handler: func(context.CancelFunc) http.HandlerFunc {
			return writeJSON(`{"status":"error","error":"insufficient balance"}`)
		}},
		{name: "gateway HTML 502", unknown: true, handler: func(context.CancelFunc) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadGateway)
				_, _ = w.Write([]byte("<html>upstream timed out for " + r.URL.String() + "</html>"))
			}
		}},
		{name: "success with an unexpected shape", unknown: true, money: true, handler: func(context.CancelFunc) http.HandlerFunc {
			return writeJSON(`{"status":"success","request_ids":{"nested":true},"payment_url":[1],"coin":[],"address_in":{}}`)
		}},
		{name: "answer cut off mid-body", unknown: true, handler: func(context.CancelFunc) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "1000")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(`{"status":"success",`))
				w.(http.Flusher).Flush()
				hangUp(w, nil)
			}
		}},
		{name: "answer too large", unknown: true, handler: func(context.CancelFunc) http.HandlerFunc {
			return writeJSON(`{"status":"success","pad":"` + strings.Repeat("x", 4096) + `"}`)
		}},
		{name: "context cancelled mid-body", unknown: true, ctxErr: context.Canceled, handler: func(cancel context.CancelFunc) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(`{"status":`))
				w.(http.Flusher).Flush()
				cancel()
				<-r.Context().Done() // the client hangs up
			}
		}},
		{name: "slow body past the client timeout", unknown: true, timeout: 200 * time.Millisecond, handler: func(context.CancelFunc) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(`{"status":`))
				w.(http.Flusher).Flush()
				<-r.Context().Done() // the client gives up
			}
		}},
		{name: "connection refused", unknown: false, refused: true},
	}
	for _, m := range modes {
		for _, op := range append(allOps(), payoutMoneyOps()...) {
			if m.money && op.retried {
				continue
			}
			if m.name == "success with an unexpected shape" && (op.name == "send payouts" || op.name == "process payout") {
				continue // their answer is only a status, and it says success
			}
			t.Run(m.name+" "+op.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var hits atomic.Int32
				addr := ""
				if m.refused {
					ln, err := net.Listen("tcp", "127.0.0.1:0")
					require.NoError(t, err)
					addr = ln.Addr().String()
					require.NoError(t, ln.Close())
				} else {
					h := m.handler(cancel)
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						hits.Add(1)
						// Read the body first: the server notices a client
						// hanging up only after that.
						_, _ = io.Copy(io.Discard, r.Body)
						h(w, r)
					}))
					t.Cleanup(srv.Close)
					addr = srv.Listener.Addr().String()
				}
				logger, logs := debugLogger()
				c, err := New(WithAPIKey(testKey), WithBaseURL("http://"+addr), WithRetry(2, 0, 0), WithLogger(logger),
					WithMaxResponseBytes(2048), WithHTTPClient(&http.Client{Transport: &http.Transport{}, Timeout: m.timeout}))
				require.NoError(t, err)
				_, err = op.call(ctx, c)
				require.Error(t, err)
				money := !op.retried
				assert.Equal(t, money && m.unknown, errors.Is(err, ErrOutcomeUnknown), "outcome unknown: %v", err)
				if m.ctxErr != nil {
					assert.ErrorIs(t, err, m.ctxErr)
				}
				if money {
					assert.LessOrEqual(t, hits.Load(), int32(1), "requests of a money call")
				}
				assertNoKey(t, leakProbe(c, nil, err, logs.String()))
			})
		}
	}
}

// TestConcurrentMoneyCallsEachGoOutOnce: fifty payouts at once over the
// guarded transport each reach the server once and succeed; the guard of
// one call never refuses another's connection.
func TestConcurrentMoneyCallsEachGoOutOnce(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /btc/payout/request/create/", serveFixture(t, "payout.json"))
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.CreatePayout(context.Background(), "btc", &PayoutOptions{Address: btcOut1, Value: mustDec("0.01")})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, 50, api.count())
}

// TestMoneyCallNotSentIsNotUnknown: when no connection could be made
// (nothing left the process) through the SDK's own transport, the error
// does not claim an unknown outcome; through a RoundTripper that reports
// no connections, it does, because the SDK cannot tell.
func TestMoneyCallNotSentIsNotUnknown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	payout := func(c *Client) error {
		_, err := c.CreatePayout(context.Background(), "btc", &PayoutOptions{Address: btcOut1, Value: mustDec("1")})
		return err
	}
	c, err := New(WithAPIKey(testKey), WithBaseURL("http://"+addr))
	require.NoError(t, err)
	err = payout(c)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)

	opaque := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("custom transport failed") })
	c, err = New(WithAPIKey(testKey), WithBaseURL("http://"+addr), WithHTTPClient(&http.Client{Transport: opaque}))
	require.NoError(t, err)
	assert.ErrorIs(t, payout(c), ErrOutcomeUnknown)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
