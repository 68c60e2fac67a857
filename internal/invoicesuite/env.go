// Package invoicesuite drives invoices end to end on the fake service,
// the same scenarios against every invoice.Store (the memory store and
// the PostgreSQL store run them both). It is test code.
package invoicesuite

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// Destinations valid for their coins.
const (
	BTCDest = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	TRXDest = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
)

// T0 is where every scenario's clock starts.
var T0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// D parses a decimal.
func D(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// Env is one shop on the fake service: a Desk with its handler mounted at
// /callback, sharing a fake clock with the service.
type Env struct {
	T      *testing.T
	Srv    *cryptapitest.Server
	Clock  *cryptapitest.FakeClock
	Client *cryptapi.Client
	Store  invoice.Store
	Desk   *invoice.Desk
	Shop   *httptest.Server
	Ctx    context.Context

	// Down makes the shop answer 503 to the service without running the
	// handler (a shop that is down).
	Down atomic.Bool
	// FailChanges makes the next n onChange calls fail.
	FailChanges atomic.Int32
	// Hook, when set, runs inside onChange (before it records the change).
	Hook func(context.Context, *invoice.Invoice) error
	// Log is the Desks' logger: into the test's log.
	Log *slog.Logger
	// FailInfo makes the service's coin info (prices) answer 503;
	// InfoRequests counts the info requests the Desk made, failed or not.
	FailInfo     atomic.Bool
	InfoRequests atomic.Int64
	// PayoutFault, when set, decides what happens to each payout call the
	// Desk makes (see Fault); PayoutCalls counts those calls by path.
	PayoutFault atomic.Pointer[func(path string) Fault]
	payoutCalls sync.Map // path -> *atomic.Int64

	deskOpts []invoice.Option // the Desk's, for its other replicas too

	mu       sync.Mutex
	changes  map[string][]*invoice.Invoice
	offered  map[string]int
	onCreate func()
}

// APIKey is the key of the keyed Envs (NewKeyedEnv).
const APIKey = "invoicesuite-key"

// Fault is what happens to a payout call on its way to the service.
type Fault int

// Faults of payout calls.
const (
	// Pass forwards the call.
	Pass Fault = iota
	// LoseAnswer forwards the call, then hangs up without the answer: the
	// service did it, the Desk cannot know (outcome unknown).
	LoseAnswer
	// Hang holds the call until the caller gives up, without forwarding
	// it (outcome unknown, nothing done).
	Hang
	// Refuse answers {"status":"error"} with 400, without forwarding it:
	// a known refusal.
	Refuse
	// Drop hangs up at once without forwarding it (outcome unknown,
	// nothing done).
	Drop
)

// FaultOn sets the payout fault: f for calls whose path ends with
// suffix, the first n of them (n < 0: all), Pass for the others.
func (e *Env) FaultOn(suffix string, f Fault, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	fn := func(path string) Fault {
		if !strings.HasSuffix(path, suffix) {
			return Pass
		}
		if n >= 0 && left.Add(-1) < 0 {
			return Pass
		}
		return f
	}
	e.PayoutFault.Store(&fn)
}

// PayoutCalls counts the payout calls (by the Desk) whose path ends with
// suffix.
func (e *Env) PayoutCalls(suffix string) int {
	n := 0
	e.payoutCalls.Range(func(k, v any) bool {
		if strings.HasSuffix(k.(string), suffix) {
			n += int(v.(*atomic.Int64).Load())
		}
		return true
	})
	return n
}

// NewKeyedEnv is NewEnv in the API-key form: the fake and the Desk's
// client share APIKey, so the Desk can send refunds from the payout
// wallet.
func NewKeyedEnv(t *testing.T, store invoice.Store, deskOpts ...invoice.Option) *Env {
	t.Helper()
	return newEnv(t, store, deskOpts, true, cryptapitest.WithAPIKey(APIKey))
}

// NewEnv starts a fake service and a shop using store.
func NewEnv(t *testing.T, store invoice.Store, srvOpts ...cryptapitest.Option) *Env {
	t.Helper()
	return NewEnvWith(t, store, nil, srvOpts...)
}

// NewEnvWith is NewEnv with options for the Desk (its clock is the
// Env's).
func NewEnvWith(t *testing.T, store invoice.Store, deskOpts []invoice.Option, srvOpts ...cryptapitest.Option) *Env {
	t.Helper()
	return newEnv(t, store, deskOpts, false, srvOpts...)
}

func newEnv(t *testing.T, store invoice.Store, deskOpts []invoice.Option, keyed bool, srvOpts ...cryptapitest.Option) *Env {
	t.Helper()
	e := &Env{T: t, Store: store, Clock: cryptapitest.NewFakeClock(T0), deskOpts: deskOpts,
		changes: map[string][]*invoice.Invoice{}, offered: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e.Ctx = ctx
	opts := append([]cryptapitest.Option{
		cryptapitest.WithClock(e.Clock),
		cryptapitest.WithRetrySchedule([]time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second}),
	}, srvOpts...)
	e.Srv = cryptapitest.NewServer(opts...)
	t.Cleanup(e.Srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	// The Desk reaches the service through a proxy that counts, and can
	// fail, its price reads.
	target, err := url.Parse(e.Srv.URL())
	require.NoError(t, err)
	fwd := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/create/") {
			defer func() {
				e.mu.Lock()
				f := e.onCreate
				e.mu.Unlock()
				if f != nil {
					f()
				}
			}()
		}
		if strings.HasSuffix(r.URL.Path, "/info/") {
			e.InfoRequests.Add(1)
			if e.FailInfo.Load() {
				http.Error(w, `{"status":"error","error":"try later"}`, http.StatusServiceUnavailable)
				return
			}
		}
		if strings.Contains(r.URL.Path, "payout/") {
			c, _ := e.payoutCalls.LoadOrStore(r.URL.Path, new(atomic.Int64))
			c.(*atomic.Int64).Add(1)
			f := Pass
			if fn := e.PayoutFault.Load(); fn != nil {
				f = (*fn)(r.URL.Path)
			}
			switch f {
			case LoseAnswer:
				rec := httptest.NewRecorder()
				fwd.ServeHTTP(rec, r)
				hangUp(w)
				return
			case Hang:
				// Read the body, so that the server notices the caller
				// hanging up (and ends r's context).
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-e.Ctx.Done():
				}
				return
			case Refuse:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"status":"error","error":"Payout refused by the test"}`)
				return
			case Drop:
				hangUp(w)
				return
			}
		}
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	copts := []cryptapi.Option{cryptapi.WithBaseURL(proxy.URL), cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: tr, Timeout: 20 * time.Second})}
	if keyed {
		copts = append(copts, cryptapi.WithAPIKey(APIKey))
	}
	c, err := cryptapi.New(copts...)
	require.NoError(t, err)
	e.Client = c
	tl := &testLog{t: t}
	t.Cleanup(func() {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		tl.done = true
	})
	e.Log = slog.New(slog.NewTextHandler(tl, nil))
	e.Desk, err = invoice.New(c, store, append([]invoice.Option{invoice.WithClock(e.Clock), invoice.WithOnChange(e.onChange),
		invoice.WithLogger(e.Log)}, deskOpts...)...)
	require.NoError(t, err)

	mux := http.NewServeMux()
	e.Shop = httptest.NewUnstartedServer(mux)
	e.Shop.Start()
	t.Cleanup(e.Shop.Close)
	v, err := callback.NewVerifier(callback.WithPublicKey(e.Srv.PublicKey()), callback.WithPublicURL(e.Shop.URL))
	require.NoError(t, err)
	h, err := e.Desk.Handler(v)
	require.NoError(t, err)
	mux.Handle("/callback", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return e
}

// hangUp closes the connection of w without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (e *Env) onChange(ctx context.Context, inv *invoice.Invoice) error {
	if e.Hook != nil {
		if err := e.Hook(ctx, inv); err != nil {
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.offered[inv.ID]++
	if e.FailChanges.Load() > 0 {
		e.FailChanges.Add(-1)
		return io.ErrUnexpectedEOF
	}
	e.changes[inv.ID] = append(e.changes[inv.ID], inv)
	return nil
}

// Changes returns the changes onChange accepted for id, in order.
func (e *Env) Changes(id string) []*invoice.Invoice {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*invoice.Invoice(nil), e.changes[id]...)
}

// Offered returns how many times onChange was called for id.
func (e *Env) Offered(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.offered[id]
}

// CallbackURL is the shop's callback URL.
func (e *Env) CallbackURL() string { return e.Shop.URL + "/callback" }

// Create makes a btc invoice of price USD unless o says otherwise.
func (e *Env) Create(o invoice.CreateOptions) *invoice.Invoice {
	e.T.Helper()
	if o.Ticker == "" {
		o.Ticker = "btc"
	}
	if o.Callback == "" {
		o.Callback = e.CallbackURL()
	}
	if o.Address == "" && len(o.Outputs) == 0 {
		o.Address = BTCDest
	}
	inv, err := e.Desk.Create(e.Ctx, &o)
	require.NoError(e.T, err)
	return inv
}

// Pay pays amount of ticker to inv's address and delivers the callbacks.
func (e *Env) Pay(ticker, addr, amount string) string {
	e.T.Helper()
	txid, err := e.Srv.Pay(ticker, addr, D(amount))
	require.NoError(e.T, err)
	e.Flush()
	return txid
}

// Confirm confirms txid and delivers the callbacks.
func (e *Env) Confirm(txid string) {
	e.T.Helper()
	require.NoError(e.T, e.Srv.Confirm(txid, 1))
	e.Flush()
}

// Flush waits until every delivery due now was attempted.
func (e *Env) Flush() {
	e.T.Helper()
	require.NoError(e.T, e.Srv.Flush(e.Ctx))
}

// Get reads the invoice through the Desk.
func (e *Env) Get(id string) *invoice.Invoice {
	e.T.Helper()
	inv, err := e.Desk.Get(e.Ctx, id)
	require.NoError(e.T, err)
	return inv
}

// OnCreate sets a function run each time the service has answered a
// create request (nil: none).
func (e *Env) OnCreate(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onCreate = f
}

// NewDesk returns another Desk on the Env's client and store, with its
// clock, onChange and options: another replica, configured alike.
func (e *Env) NewDesk(opts ...invoice.Option) *invoice.Desk {
	return e.NewDeskOn(e.Store, opts...)
}

// NewDeskOn is NewDesk on another store.
func (e *Env) NewDeskOn(store invoice.Store, opts ...invoice.Option) *invoice.Desk {
	e.T.Helper()
	d, err := invoice.New(e.Client, store, append(append([]invoice.Option{invoice.WithClock(e.Clock), invoice.WithOnChange(e.onChange),
		invoice.WithLogger(e.Log)}, e.deskOpts...), opts...)...)
	require.NoError(e.T, err)
	return d
}

// Tick runs the Desk's Tick and returns how many invoices it changed.
func (e *Env) Tick() int {
	e.T.Helper()
	n, err := e.Desk.Tick(e.Ctx)
	require.NoError(e.T, err)
	return n
}

// Stored reads the invoice from the store, without applying the clock.
func (e *Env) Stored(id string) *invoice.Invoice {
	e.T.Helper()
	r, err := e.Store.Load(e.Ctx, id)
	require.NoError(e.T, err)
	return &r.Invoice
}

// Resend delivers a recorded delivery again, byte for byte, and returns
// the shop's status and answer.
func (e *Env) Resend(d cryptapitest.Delivery) (int, string) {
	e.T.Helper()
	return e.Send(d.Method, d.URL, d.Header, d.Body)
}

// Send makes a request to the shop.
func (e *Env) Send(method, url string, header http.Header, body []byte) (int, string) {
	e.T.Helper()
	req, err := http.NewRequestWithContext(e.Ctx, method, url, bytes.NewReader(body))
	require.NoError(e.T, err)
	req.Header = header.Clone()
	resp, err := e.Shop.Client().Do(req)
	require.NoError(e.T, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// AssertOnePerChange checks that onChange accepted every change of inv
// once, in order: versions 2 .. inv.Version (creation is not a change),
// each equal to the stored state of that version.
func (e *Env) AssertOnePerChange(inv *invoice.Invoice) {
	e.T.Helper()
	got := e.Changes(inv.ID)
	versions := make([]int64, len(got))
	for i, c := range got {
		versions[i] = c.Version
	}
	want := []int64{}
	for v := int64(2); v <= inv.Version; v++ {
		want = append(want, v)
	}
	assert.Equal(e.T, want, versions, "onChange once per change, in order")
	if len(got) > 0 {
		last := got[len(got)-1]
		assert.Equal(e.T, inv.Status, last.Status)
		assert.True(e.T, inv.Paid.Equal(last.Paid), "last change carries the final totals")
	}
}

// Deliveries returns the service's delivery attempts for addressIn.
func (e *Env) Deliveries(addressIn string, pending bool) []cryptapitest.Delivery {
	var out []cryptapitest.Delivery
	for _, d := range e.Srv.Deliveries() {
		if d.Kind == "callback" && d.Pending == pending && bytes.Contains([]byte(d.URL), []byte("address_in="+addressIn)) {
			out = append(out, d)
		}
	}
	return out
}

// testLog writes log lines to the test's log, and drops those that come
// after the test ended (from a delivery still on its way).
type testLog struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}
