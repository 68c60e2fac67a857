package cryptapi

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMoneyCallsAreNotReplayedOnReusedConnections: net/http silently sends
// a GET again when a reused keep-alive connection is closed after the
// request was written. A payout must reach the service once even then.
func TestMoneyCallsAreNotReplayedOnReusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var payouts atomic.Int32
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close() // the client's idle connection would otherwise wait for its timeout
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if strings.Contains(req.URL.Path, "/payout/") {
						payouts.Add(1)
						return // read the payout, then hang up without answering
					}
					body := `{"status":"success","coin":"Bitcoin","minimum_transaction_coin":"0.0001"}`
					_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
						itoa(len(body)) + "\r\n\r\n" + body))
				}
			}()
		}
	}()

	c, err := New(WithBaseURL("http://"+ln.Addr().String()), WithAPIKey("k"), WithRetry(3, 0, 0))
	require.NoError(t, err)
	ctx := context.Background()
	// A read leaves an idle keep-alive connection in the pool.
	_, err = c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	_, err = c.CreatePayout(ctx, "btc", &PayoutOptions{Address: btcAddress(1), Value: decimal.RequireFromString("0.5")})
	assert.Error(t, err, "the service hung up: the outcome is unknown and must be reported")
	assert.Equal(t, int32(1), payouts.Load(), "the payout reached the service exactly once")
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }
