package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
		"&address_in=bc1qgurxlhcqtr39dxeqt6a0s6lr9fxnpqn737qte3&address_out=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" +
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

const busyHead = `"address_in":"bc1qgurxlhcqtr39dxeqt6a0s6lr9fxnpqn737qte3","address_out":"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",` +
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
			assert.Equal(t, "bc1qgurxlhcqtr39dxeqt6a0s6lr9fxnpqn737qte3", logs.AddressIn)
			assert.Equal(t, busyCallback, logs.CallbackURL)
			for i, p := range logs.Callbacks {
				assert.Equal(t, fmt.Sprintf("%064x", i+1), p.TxIDIn)
				assert.True(t, p.Confirmed())
				assert.Equal(t, "0.001", p.ValueCoin.String())
			}

			seen := 0
			head, err := c.LogsEach(context.Background(), "btc", busyCallback, func(h *Logs, p *LoggedPayment) error {
				assert.Equal(t, "bc1qgurxlhcqtr39dxeqt6a0s6lr9fxnpqn737qte3", h.AddressIn, "the head is complete before any payment")
				assert.Equal(t, "success", h.Status)
				assert.Nil(t, h.Callbacks)
				assert.Equal(t, fmt.Sprintf("%064x", seen+1), p.TxIDIn)
				seen++
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, n, seen)
			assert.Equal(t, "default", head.Priority)
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
	seen := 0
	_, err := c.LogsEach(context.Background(), "btc", busyCallback, func(*Logs, *LoggedPayment) error { seen++; return nil })
	require.ErrorIs(t, err, ErrResponseTooLarge)
	assert.Equal(t, 1, seen, "the payment before the oversized one was read")
	_, err = c.Logs(context.Background(), "btc", busyCallback)
	require.ErrorIs(t, err, ErrResponseTooLarge)
}

func TestLogsEachStopsAtTheCallersError(t *testing.T) {
	c := busyClient(t, busyServer(t, 50, true))
	stop := errors.New("enough")
	seen := 0
	_, err := c.LogsEach(context.Background(), "btc", busyCallback, func(*Logs, *LoggedPayment) error {
		seen++
		if seen == 3 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 3, seen)
	_, err = c.LogsEach(context.Background(), "btc", busyCallback, nil)
	assert.ErrorIs(t, err, ErrInvalidOption)
}

func TestLogsEachStatusErrorBeforeAnyPayment(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"error","error":"Request could not be processed, try later","callbacks":[`)
		_, _ = w.Write(busyItem(0))
		_, _ = io.WriteString(w, `]}`)
	}))
	t.Cleanup(srv.Close)
	c := busyClient(t, srv)
	_, err := c.LogsEach(context.Background(), "btc", busyCallback, func(*Logs, *LoggedPayment) error {
		t.Error("a payment of an error answer was handed over")
		return nil
	})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Request could not be processed, try later", ae.Message)
}

// FuzzLogsStreamMatchesUnmarshal checks the streamed decoding of a logs
// answer against Logs.UnmarshalJSON on the same bytes: both fail, or both
// give the same fields and payments. A second callbacks array is the one
// documented difference (the streamed decoding refuses it).
func FuzzLogsStreamMatchesUnmarshal(f *testing.F) {
	var buf bytes.Buffer
	writeBusyLogs(&buf, 2, true)
	f.Add(buf.Bytes())
	buf.Reset()
	writeBusyLogs(&buf, 2, false)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"callbacks":[],"status":"success"}`))
	f.Add([]byte(`{"CALLBACKS":null,"Address_Out":{"bc1q":0.5},"notify_pending":"1"}`))
	f.Add([]byte(`{"callbacks":[{"uuid":"a"}],"callbacks":[{"uuid":"b"}]}`))
	f.Add([]byte(`{"callbacks":[null,{"prices":"1e3"}]} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tr := bytes.TrimSpace(data); len(tr) == 0 || (tr[0] != '{' && tr[0] != '[') {
			return // refused as not JSON before either decoding, as in decode
		}
		var plain Logs
		perr := plain.UnmarshalJSON(data)
		var items []LoggedPayment
		var env statusEnvelope
		head, serr := decodeLogsStream(bytes.NewReader(data), &env, func(_ *Logs, p *LoggedPayment) error {
			items = append(items, *p)
			return nil
		})
		if serr != nil && strings.Contains(serr.Error(), "callbacks twice") {
			return
		}
		if (perr == nil) != (serr == nil) {
			t.Fatalf("plain error %v, streamed error %v", perr, serr)
		}
		if perr != nil {
			return
		}
		head.Callbacks = items
		if len(plain.Callbacks) == 0 {
			plain.Callbacks = nil
		}
		pj, _ := json.Marshal(plain)
		sj, _ := json.Marshal(head)
		if !bytes.Equal(pj, sj) {
			t.Fatalf("plain %s\nstreamed %s", pj, sj)
		}
	})
}

// BenchmarkLogsBusyAddress reads the logs of an address with 1,000, 10,000
// and 100,000 payments (about 2.4 KB each) with LogsEach, in alternating
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
				_, err := c.LogsEach(ctx, "btc", busyCallback, func(*Logs, *LoggedPayment) error { seen++; return nil })
				if err != nil || seen != n {
					b.Fatal(err, seen)
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
		_, err := clients[n].LogsEach(ctx, "btc", busyCallback, func(*Logs, *LoggedPayment) error {
			seen++
			if seen%1000 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
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
