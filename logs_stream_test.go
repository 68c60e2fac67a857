package cryptapi

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const busyCallback = "https://shop.example/cb?order=busy"

// busyItem is the i-th payment of a busy address, shaped like the
// service's log items (about 2.4 KB: two delivery attempts with their
// full request URLs).
func busyItem(i int) []byte {
	uuid := fmt.Sprintf("%08x-4d2c-4e1b-9a7f-%012x", i, i)
	txin := fmt.Sprintf("%064x", i+1)
	txout := fmt.Sprintf("%064x", i+2)
	reqURL := busyCallback + "&uuid=" + uuid +
		"&address_in=bc1q6ant9pgsffkk4fj9wrdku5fchcyy68wmm064gz&address_out=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" +
		"&txid_in=" + txin + "&txid_out=" + txout +
		"&confirmations=1&value=100000&value_coin=0.001&value_coin_convert=%7B%22USD%22%3A+%2260.00%22%2C+%22EUR%22%3A+%2255.20%22%7D" +
		"&value_forwarded=99000&value_forwarded_coin=0.00099&value_forwarded_coin_convert=%7B%22USD%22%3A+%2259.40%22%2C+%22EUR%22%3A+%2254.65%22%7D" +
		"&fee=1000&fee_coin=0.00001&coin=btc&price=60000&pending=0"
	entry := func(resp, status, next string) string {
		return `{"request_url":"` + reqURL + `","responses":"` + resp + `","response_status":"` + status +
			`","next_try":"` + next + `","pending":false,"confirmed":true}`
	}
	return []byte(`{"uuid":"` + uuid + `","txid_in":"` + txin + `","txid_out":"` + txout +
		`","value":100000,"value_coin":"0.001","value_forwarded":99000,"value_forwarded_coin":"0.00099",` +
		`"confirmations":3,"last_update":"02/01/2026 03:04:05","result":"done","fee_percent":"1",` +
		`"fee":1000,"fee_coin":"0.00001","prices":{"USD":"60000.00","EUR":"55200.00","GBP":"47500.00"},"logs":[` +
		entry("<html><body>Internal Server Error</body></html>", "500", "02/01/2026 03:05:05") + "," +
		entry("*ok*", "200", "") + `]}`)
}

const busyHead = `"address_in":"bc1q6ant9pgsffkk4fj9wrdku5fchcyy68wmm064gz","address_out":"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",` +
	`"callback_url":"` + busyCallback + `","status":"success","notify_pending":false,"notify_confirmations":1,"priority":"default"`

// writeBusyLogs writes the logs answer of an address with n payments,
// with the fields before the callbacks (as the service does) or after.
func writeBusyLogs(w io.Writer, n int, headFirst bool) {
	if headFirst {
		_, _ = io.WriteString(w, "{"+busyHead+`,"callbacks":[`)
	} else {
		_, _ = io.WriteString(w, `{"callbacks":[`)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		_, _ = w.Write(busyItem(i))
	}
	if headFirst {
		_, _ = io.WriteString(w, "]}")
	} else {
		_, _ = io.WriteString(w, "],"+busyHead+"}")
	}
}

// busyServer answers the logs of busyCallback with n payments, generated
// as they are written.
func busyServer(tb testing.TB, n int, headFirst bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != apiPrefix+"/btc/logs/" || r.URL.Query().Get("callback") != busyCallback {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		writeBusyLogs(w, n, headFirst)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func busyClient(tb testing.TB, srv *httptest.Server, opts ...Option) *Client {
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	c, err := New(append([]Option{WithBaseURL(srv.URL + apiPrefix), WithoutRetries(),
		WithHTTPClient(&http.Client{Transport: tr})}, opts...)...)
	require.NoError(tb, err)
	return c
}

func TestLogsOfABusyAddressPassTheWholeAnswerLimit(t *testing.T) {
	const n = 400 // about 1 MB, 16 times the limit below
	for _, headFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("headFirst=", headFirst), func(t *testing.T) {
			c := busyClient(t, busyServer(t, n, headFirst), WithMaxResponseBytes(64<<10))
			logs, err := c.Logs(context.Background(), "btc", busyCallback)
			require.NoError(t, err)
			require.Len(t, logs.Callbacks, n)
			assert.Equal(t, "bc1q6ant9pgsffkk4fj9wrdku5fchcyy68wmm064gz", logs.AddressIn)
			assert.Equal(t, busyCallback, logs.CallbackURL)
			for i, p := range logs.Callbacks {
				assert.Equal(t, fmt.Sprintf("%064x", i+1), p.TxIDIn)
				assert.True(t, p.Confirmed())
				assert.Equal(t, "0.001", p.ValueCoin.String())
			}

			seen := 0
			var kept []LogsItem
			for it, err := range c.LoggedPayments(context.Background(), "btc", busyCallback) {
				require.NoError(t, err)
				h, p := it.Logs, it.Payment
				assert.Equal(t, "bc1q6ant9pgsffkk4fj9wrdku5fchcyy68wmm064gz", h.AddressIn, "the head is complete before any payment")
				assert.Equal(t, "success", h.Status)
				assert.Equal(t, "default", h.Priority)
				assert.Nil(t, h.Callbacks)
				assert.Equal(t, fmt.Sprintf("%064x", seen+1), p.TxIDIn)
				kept = append(kept, it)
				seen++
			}
			assert.Equal(t, n, seen)
			for i, it := range kept {
				assert.Equal(t, fmt.Sprintf("%064x", i+1), it.Payment.TxIDIn, "an item kept after the loop moved on is unchanged")
				assert.Equal(t, "bc1q6ant9pgsffkk4fj9wrdku5fchcyy68wmm064gz", it.Logs.AddressIn)
			}
		})
	}
}

func TestLogsRecordOverTheLimitIsRefused(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "{"+busyHead+`,"callbacks":[`)
		_, _ = w.Write(busyItem(0))
		_, _ = io.WriteString(w, `,{"uuid":"`+big+`"}]}`)
	}))
	t.Cleanup(srv.Close)
	c := busyClient(t, srv, WithMaxResponseBytes(64<<10))
	seen, errs := 0, 0
	for _, err := range c.LoggedPayments(context.Background(), "btc", busyCallback) {
		if err != nil {
			require.ErrorIs(t, err, ErrResponseTooLarge)
			errs++
			continue
		}
		seen++
	}
	assert.Equal(t, 1, seen, "the payment before the oversized one was read")
	assert.Equal(t, 1, errs, "the error ends the sequence")
	_, err := c.Logs(context.Background(), "btc", busyCallback)
	require.ErrorIs(t, err, ErrResponseTooLarge)
}

func TestLoggedPaymentsStopsWithTheLoop(t *testing.T) {
	srv := busyServer(t, 5000, true)
	c := busyClient(t, srv)
	seen := 0
	for _, err := range c.LoggedPayments(context.Background(), "btc", busyCallback) {
		require.NoError(t, err)
		seen++
		if seen == 3 {
			break
		}
	}
	assert.Equal(t, 3, seen)
}

func TestLoggedPaymentsStatusErrorBeforeAnyPayment(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"error","error":"Request could not be processed, try later","callbacks":[`)
		_, _ = w.Write(busyItem(0))
		_, _ = io.WriteString(w, `]}`)
	}))
	t.Cleanup(srv.Close)
	c := busyClient(t, srv)
	n := 0
	for it, err := range c.LoggedPayments(context.Background(), "btc", busyCallback) {
		n++
		require.Nil(t, it.Payment, "a payment of an error answer was handed over")
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "Request could not be processed, try later", ae.Message)
	}
	assert.Equal(t, 1, n)
}

// BenchmarkLogsBusyAddress reads the logs of an address with 1,000, 10,000
// and 100,000 payments (about 2.4 KB each) with LoggedPayments, in alternating
// chunks. One operation is 100,000 payments' worth: 100 answers of 1,000,
// 10 of 10,000 or 1 of 100,000, so equal figures mean linear time. It then
// reports the peak live heap while reading each size (sampled after a
// collection every 1,000 payments, outside the timed part).
func BenchmarkLogsBusyAddress(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	ctx := context.Background()
	var cs []benchcmp.Contender
	clients := map[int]*Client{}
	for _, n := range sizes {
		c := busyClient(b, busyServer(b, n, true))
		clients[n] = c
		reps := 100000 / n
		cs = append(cs, benchcmp.Contender{Name: fmt.Sprintf("n%dk", n/1000), Op: func(k int) {
			for i := 0; i < k*reps; i++ {
				seen := 0
				for _, err := range c.LoggedPayments(ctx, "btc", busyCallback) {
					if err != nil {
						b.Fatal(err)
					}
					seen++
				}
				if seen != n {
					b.Fatal(seen)
				}
			}
		}})
	}
	benchcmp.Run(b, 1, cs...)
	for _, n := range sizes {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var peak uint64
		seen := 0
		for _, err := range clients[n].LoggedPayments(ctx, "btc", busyCallback) {
			if err != nil {
				b.Fatal(err)
			}
			seen++
			if seen%1000 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
			}
		}
		b.ReportMetric(float64(peak)/1024, fmt.Sprintf("n%dk-peak-live-KiB", n/1000))
	}
}

// TestLogsWithTheLargestResponseLimit: WithMaxResponseBytes(math.MaxInt64)
// is no limit for the streamed logs either. The per-record bound was
// computed as max+1, which overflowed and made the read slice panic.
func TestLogsWithTheLargestResponseLimit(t *testing.T) {
	c, api := setup(t, WithMaxResponseBytes(math.MaxInt64))
	api.handle("GET /btc/logs/", serveFixture(t, "logs.json"))
	l, err := c.Logs(t.Context(), "btc", logsCallback)
	require.NoError(t, err)
	assert.Len(t, l.Callbacks, 2)
}

// TestLoggedPaymentsNeverHandsOverThePaymentsOfAnErrorAnswer: an answer
// that says "status": "error" after its callbacks, or the service's
// nothing-found answer, yields no payment, only the error.
func TestLoggedPaymentsNeverHandsOverThePaymentsOfAnErrorAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"status after callbacks":  `{"callbacks":[` + string(busyItem(0)) + `],"address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs","address_out":"bc1q5wg5duprkhryy5ks5yas5zd69d00ky2duhkmx4","callback_url":"` + busyCallback + `","notify_pending":false,"status":"error","error":"Request could not be processed, try later"}`,
		"status error at the end": `{"address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs","callbacks":[` + string(busyItem(0)) + `],"status":"error"}`,
		"nothing found":           `{"status":"error","error":"No request or no payment callbacks found"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, body)
			}))
			t.Cleanup(srv.Close)
			c := busyClient(t, srv)
			n := 0
			for it, err := range c.LoggedPayments(context.Background(), "btc", busyCallback) {
				n++
				require.Nil(t, it.Payment, "a payment of an error answer was handed over")
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				if name == "nothing found" {
					assert.ErrorIs(t, err, ErrNoLogs)
				} else {
					assert.NotErrorIs(t, err, ErrNoLogs)
				}
			}
			assert.Equal(t, 1, n)
		})
	}
}
