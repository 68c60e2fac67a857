package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/needs"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// testDSN returns the test database URL. Without one, the PostgreSQL tests
// are skipped (and needs.Main says so), except under CI, where they fail.
func testDSN(t *testing.T) string {
	t.Helper()
	return needs.PostgreSQL(t)
}

// merchantAddress is the shop's own wallet, where the fake forwards funds.
const merchantAddress = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"

// testAPIKey is the key of the API-key mode; the shop must never log it.
const testAPIKey = "test-key-5f0c1d2e3a4b"

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// mode is one way to run the shop.
type mode struct {
	name     string
	apiKey   string // "" for the keyless deployment
	postgres bool   // invoices and callback records in PostgreSQL
	replicas int    // shop processes behind the one public URL
}

var modes = []mode{
	{name: "memory", replicas: 1},
	{name: "memory with API key", apiKey: testAPIKey, replicas: 1},
	{name: "postgres with two replicas", postgres: true, replicas: 2},
}

// forEachMode runs f in a subtest per mode, each with its own fake service,
// shop replicas and tables.
func forEachMode(t *testing.T, f func(t *testing.T, e *env)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dsn := ""
			if m.postgres {
				dsn = testDSN(t)
			}
			f(t, setup(t, m, dsn))
		})
	}
}

// env is one test's world: the fake service on a fake clock, and shop
// replicas behind a load balancer whose URL is the shop's public URL.
type env struct {
	t        *testing.T
	ctx      context.Context
	clock    *cryptapitest.FakeClock
	fake     *cryptapitest.Server
	lb       *balancer
	shopURL  string
	replicas []http.Handler
	shops    []*shop
	cfg      config
	logs     *syncBuffer
}

func setup(t *testing.T, m mode, dsn string) *env {
	t.Helper()
	ctx := t.Context()
	e := &env{t: t, ctx: ctx, logs: &syncBuffer{}, lb: &balancer{}}
	e.cfg = config{
		ticker:        "btc",
		destination:   merchantAddress,
		apiKey:        m.apiKey,
		invoicesTable: pgstore.DefaultTable,
	}
	if dsn != "" {
		suffix := strings.ToLower(rand.Text()[:10])
		e.cfg.postgres = dsn
		e.cfg.invoicesTable = "merchant_invoices_" + suffix
		db := openDB(t, dsn)
		t.Cleanup(func() { // runs last, once the shop is gone
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, table := range []string{e.cfg.invoicesTable, e.cfg.invoicesTable + "_changes", e.cfg.invoicesTable + "_keys", e.cfg.invoicesTable + "_callbacks"} {
				if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "`+table+`"`); err != nil {
					t.Errorf("drop %s: %v", table, err)
				}
			}
		})
	}

	shop := httptest.NewServer(e.lb)
	t.Cleanup(shop.Close)
	e.shopURL = shop.URL
	e.cfg.publicURL = shop.URL

	e.clock = cryptapitest.NewFakeClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	fakeOpts := []cryptapitest.Option{cryptapitest.WithClock(e.clock)}
	if m.apiKey != "" {
		fakeOpts = append(fakeOpts, cryptapitest.WithAPIKey(m.apiKey))
	}
	e.fake = cryptapitest.NewServer(fakeOpts...)
	e.cfg.clientOptions = []cryptapi.Option{cryptapi.WithBaseURL(e.fake.URL())}
	e.cfg.verifierOptions = []callback.VerifierOption{callback.WithPublicKey(e.fake.PublicKey())}
	e.cfg.clock = e.clock

	log := slog.New(slog.NewTextHandler(e.logs, nil))
	for range m.replicas {
		h, closeStores, err := newServer(ctx, e.cfg, log)
		require.NoError(t, err)
		t.Cleanup(closeStores)
		e.replicas = append(e.replicas, h)
		e.shops = append(e.shops, h)
	}
	e.lb.set(e.replicas)
	t.Cleanup(e.fake.Close) // first: no delivery reaches a closed shop
	if m.apiKey != "" {
		t.Cleanup(func() {
			assert.NotContains(t, e.logs.String(), m.apiKey, "the API key must never be logged")
		})
	}
	return e
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// balancer spreads requests over the shop replicas in turn, like a load
// balancer in front of several processes. With refuse set it answers
// callbacks with 503 itself, as if no replica were reachable.
type balancer struct {
	mu       sync.Mutex
	backends []http.Handler
	next     int
	refuse   bool
}

func (b *balancer) set(hs []http.Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = hs
}

func (b *balancer) refuseCallbacks(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refuse = on
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if len(b.backends) == 0 || (b.refuse && r.URL.Path == "/callback") {
		b.mu.Unlock()
		http.Error(w, "no replica available", http.StatusServiceUnavailable)
		return
	}
	h := b.backends[b.next%len(b.backends)]
	b.next++
	b.mu.Unlock()
	h.ServeHTTP(w, r)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// do sends a request to the shop through the balancer.
func (e *env) do(method, path string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.shopURL+path, nil)
	require.NoError(e.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, body
}

// createOrder posts an order and decodes the 201 answer.
func (e *env) createOrder(query string) createdOrder {
	e.t.Helper()
	status, body := e.do(http.MethodPost, "/orders?"+query)
	require.Equal(e.t, http.StatusCreated, status, "POST /orders?%s: %s", query, body)
	var out createdOrder
	require.NoError(e.t, json.Unmarshal(body, &out))
	require.NotNil(e.t, out.Invoice)
	return out
}

// order reads an order from every replica directly, checks that they
// agree, and returns it.
func (e *env) order(id string) invoice.Invoice {
	e.t.Helper()
	var first []byte
	var out invoice.Invoice
	for i, h := range e.replicas {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(e.ctx, http.MethodGet, "/orders/"+id, nil))
		require.Equal(e.t, http.StatusOK, rec.Code, "replica %d: GET /orders/%s: %s", i, id, rec.Body)
		if i == 0 {
			first = rec.Body.Bytes()
			require.NoError(e.t, json.Unmarshal(first, &out))
			continue
		}
		assert.JSONEq(e.t, string(first), rec.Body.String(), "replica %d sees another order", i)
	}
	return out
}

// creates counts the create requests that reached the fake service.
func (e *env) creates() int {
	n := 0
	for _, r := range e.fake.Requests() {
		if strings.HasSuffix(r.Path, "/create/") {
			n++
		}
	}
	return n
}

func (e *env) flush() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	require.NoError(e.t, e.fake.Flush(ctx))
}

// pay plays the customer: amount to addressIn, then flush the pending
// callback. It returns the transaction id.
func (e *env) pay(addressIn string, amount decimal.Decimal) string {
	e.t.Helper()
	txid, err := e.fake.Pay("btc", addressIn, amount)
	require.NoError(e.t, err)
	e.flush()
	return txid
}

// confirm plays the blockchain: one confirmation, then flush the confirmed
// callback.
func (e *env) confirm(txid string) {
	e.t.Helper()
	require.NoError(e.t, e.fake.Confirm(txid, 1))
	e.flush()
}

// deliveries returns the callback deliveries for addressIn, pending or
// confirmed, oldest first.
func (e *env) deliveries(addressIn string, pending bool) []cryptapitest.Delivery {
	e.t.Helper()
	var out []cryptapitest.Delivery
	for _, d := range e.fake.Deliveries() {
		u, err := url.Parse(d.URL)
		require.NoError(e.t, err)
		if d.Kind == "callback" && d.Pending == pending && u.Query().Get("address_in") == addressIn {
			out = append(out, d)
		}
	}
	return out
}

// resend delivers d again, as the service does when it did not see an
// answer: same method, URL, body and signature.
func (e *env) resend(d cryptapitest.Delivery) (int, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, d.Method, d.URL, bytes.NewReader(d.Body))
	require.NoError(e.t, err)
	req.Header.Set(callback.SignatureHeader, d.Header.Get(callback.SignatureHeader))
	if ct := d.Header.Get("Content-Type"); ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, string(body)
}

// sendSigned sends a GET callback with the given fields, signed by the fake
// service's key: a callback the shop cannot tell from a real one by its
// signature.
func (e *env) sendSigned(fields url.Values) int {
	e.t.Helper()
	u := e.shopURL + "/callback?" + fields.Encode()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, u, nil)
	require.NoError(e.t, err)
	req.Header.Set(callback.SignatureHeader, e.fake.Sign([]byte(u)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// changesLogged counts the "invoice changed" lines of an invoice.
func (e *env) changesLogged(id string) int {
	n := 0
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, `msg="invoice changed"`) && strings.Contains(line, "invoice="+id) {
			n++
		}
	}
	return n
}

func TestOrderIsPaidOnceThoughTheCallbackComesAgain(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		created := e.createOrder("amount=25&currency=USD&order_id=1001&qr=1")
		ord := created.Invoice
		// 25 USD at the fake's 60000 USD/BTC, rounded up to the coin's 8 decimals.
		assert.True(t, ord.Due.Equal(dec("0.00041667")), "due %s", ord.Due)
		assert.True(t, ord.Price.Equal(dec("25")), "price %s", ord.Price)
		assert.Equal(t, "USD", ord.Currency)
		assert.Equal(t, "btc", ord.Ticker)
		assert.Equal(t, "1001", ord.OrderID)
		assert.True(t, ord.Minimum.Equal(dec("0.0001")), "minimum %s", ord.Minimum)
		assert.Equal(t, invoice.StatusNew, ord.Status)
		require.NotEmpty(t, ord.AddressIn)
		assert.Contains(t, ord.PaymentURI, ord.AddressIn)
		require.True(t, strings.HasPrefix(created.QRCode, "data:image/png;base64,"), "qr_code %.40q", created.QRCode)
		png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(created.QRCode, "data:image/png;base64,"))
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "the QR code is a PNG image")
		assert.Equal(t, 1, e.creates())
		assert.Equal(t, invoice.StatusNew, e.order(ord.ID).Status)

		txid := e.pay(ord.AddressIn, ord.Due)
		assert.Equal(t, invoice.StatusProcessing, e.order(ord.ID).Status, "the pending callback was recorded")

		e.confirm(txid)
		paid := e.order(ord.ID)
		require.Equal(t, invoice.StatusSettled, paid.Status)
		assert.Equal(t, invoice.ExceptionNone, paid.Exception)
		assert.True(t, paid.Paid.Equal(ord.Due), "paid %s", paid.Paid)
		require.Len(t, paid.Payments, 1)
		assert.Equal(t, txid, paid.Payments[0].TxID)

		confirmed := e.deliveries(ord.AddressIn, false)
		require.Len(t, confirmed, 1)
		require.True(t, confirmed[0].OK, "the shop acknowledged the confirmed callback: %d %q", confirmed[0].StatusCode, confirmed[0].Response)

		// The service delivers at least once: the same signed callback
		// again, to each replica in turn, then many at once.
		for i := range 2 {
			status, body := e.resend(confirmed[0])
			assert.Equal(t, http.StatusOK, status, "resend %d", i)
			assert.Equal(t, callback.OK, body, "resend %d", i)
		}
		var wg sync.WaitGroup
		results := make([]string, 8)
		for i := range results {
			wg.Go(func() {
				req, err := http.NewRequestWithContext(e.ctx, confirmed[0].Method, confirmed[0].URL, nil)
				if err != nil {
					results[i] = err.Error()
					return
				}
				req.Header.Set(callback.SignatureHeader, confirmed[0].Header.Get(callback.SignatureHeader))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					results[i] = err.Error()
					return
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				results[i] = fmt.Sprintf("%d %s", resp.StatusCode, body)
			})
		}
		wg.Wait()
		for i, r := range results {
			assert.Equal(t, "200 "+callback.OK, r, "concurrent resend %d", i)
		}
		// A late pending callback does not undo the confirmation.
		pending := e.deliveries(ord.AddressIn, true)
		require.NotEmpty(t, pending)
		status, body := e.resend(pending[0])
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, callback.OK, body)

		after := e.order(ord.ID)
		assert.Equal(t, invoice.StatusSettled, after.Status)
		assert.True(t, after.Paid.Equal(ord.Due), "paid %s after redeliveries, want %s once", after.Paid, ord.Due)
		assert.Equal(t, paid.Version, after.Version, "no change")
		assert.Equal(t, 1, e.creates())
		assert.Equal(t, int(after.Version-1), e.changesLogged(ord.ID), "each change logged once, on one replica")
	})
}

func TestOrderBelowMinimumIsRefused(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			query, amount, price, currency string
		}{
			// 5 USD is 0.00008334 BTC (rounded up), under the 0.0001 BTC minimum.
			{query: "amount=5&currency=USD", amount: "0.00008334", price: "5", currency: "USD"},
			{query: "amount=5&currency=usd", amount: "0.00008334", price: "5", currency: "USD"},
			{query: "amount=0.00009999", amount: "0.00009999", price: "0.00009999"},
		} {
			status, body := e.do(http.MethodPost, "/orders?"+tc.query)
			require.Equal(t, http.StatusUnprocessableEntity, status, "%s: %s", tc.query, body)
			var got belowMinimum
			require.NoError(t, json.Unmarshal(body, &got), "%s: %s", tc.query, body)
			assert.Equal(t, "btc", got.Ticker, tc.query)
			assert.True(t, got.Amount.Equal(dec(tc.amount)), "%s: amount %s", tc.query, got.Amount)
			assert.True(t, got.Minimum.Equal(dec("0.0001")), "%s: minimum %s", tc.query, got.Minimum)
			assert.True(t, got.Price.Equal(dec(tc.price)), "%s: price %s", tc.query, got.Price)
			assert.Equal(t, tc.currency, got.Currency, tc.query)
			assert.Contains(t, got.Error, "below the minimum", tc.query)
		}
		assert.Zero(t, e.creates(), "no address may be created for an amount below the minimum")

		// At the minimum exactly, the order is taken.
		ord := e.createOrder("amount=0.0001").Invoice
		assert.True(t, ord.Due.Equal(dec("0.0001")), "due %s", ord.Due)
		assert.Equal(t, 1, e.creates())
	})
}

func TestBadOrderRequests(t *testing.T) {
	e := setup(t, modes[0], "")
	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"no amount", http.MethodPost, "/orders", http.StatusBadRequest},
		{"not a number", http.MethodPost, "/orders?amount=ten", http.StatusBadRequest},
		{"zero", http.MethodPost, "/orders?amount=0", http.StatusBadRequest},
		{"negative", http.MethodPost, "/orders?amount=-25", http.StatusBadRequest},
		{"not a currency code", http.MethodPost, "/orders?amount=25&currency=U%24D", http.StatusBadRequest},
		{"unknown currency", http.MethodPost, "/orders?amount=25&currency=XYZ", http.StatusBadRequest},
		{"unknown order", http.MethodGet, "/orders/0123456789abcdef", http.StatusNotFound},
		{"reconcile unknown order", http.MethodPost, "/orders/0123456789abcdef/reconcile", http.StatusNotFound},
		{"wrong method", http.MethodPut, "/orders", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.do(tc.method, tc.path)
			assert.Equal(t, tc.status, status, "%s", body)
			if status != http.StatusMethodNotAllowed {
				var answer map[string]string
				require.NoError(t, json.Unmarshal(body, &answer), "%s", body)
				assert.NotEmpty(t, answer["error"])
			}
		})
	}
	assert.Zero(t, e.creates())
}

func TestPartialPaymentThenTopUp(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ord := e.createOrder("amount=0.001").Invoice
		assert.True(t, ord.Due.Equal(dec("0.001")), "due %s", ord.Due)
		assert.Empty(t, ord.Currency)

		tx1 := e.pay(ord.AddressIn, dec("0.0004"))
		e.confirm(tx1)
		got := e.order(ord.ID)
		assert.Equal(t, invoice.StatusNew, got.Status)
		assert.Equal(t, invoice.ExceptionPaidPartial, got.Exception)
		assert.True(t, got.Paid.Equal(dec("0.0004")), "paid %s", got.Paid)
		assert.True(t, got.Due.Equal(dec("0.0006")), "due %s", got.Due)

		tx2 := e.pay(ord.AddressIn, dec("0.0006"))
		assert.Equal(t, invoice.StatusProcessing, e.order(ord.ID).Status, "a pending payment is not money yet")
		e.confirm(tx2)
		got = e.order(ord.ID)
		assert.Equal(t, invoice.StatusSettled, got.Status)
		assert.Equal(t, invoice.ExceptionNone, got.Exception)
		assert.True(t, got.Paid.Equal(dec("0.001")), "paid %s", got.Paid)
		require.Len(t, got.Payments, 2)
		assert.Equal(t, []string{tx1, tx2}, []string{got.Payments[0].TxID, got.Payments[1].TxID})
	})
}

func TestCallbacksNotForTheOrderAreRefused(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ord := e.createOrder("amount=0.001").Invoice
		other := e.createOrder("amount=0.002").Invoice
		confirmed := func(addressIn string, custom url.Values) url.Values {
			v := url.Values{
				"address_in": {addressIn}, "uuid": {rand.Text()}, "txid_in": {strings.Repeat("ab", 32)},
				"value_coin": {"0.001"}, "pending": {"0"}, "confirmations": {"1"}, "coin": {"btc"},
				"address_out": {"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"}, "price": {"64000"},
			}
			for k, vs := range custom {
				v[k] = vs
			}
			return v
		}
		// Signed by the service's key, as anyone's address on the keyless
		// service would be: without this order's own ID, nonce and
		// address, refused, and no invoice touched.
		for name, custom := range map[string]url.Values{
			"unknown address": {"invoice": {ord.ID}, "nonce": {strings.Repeat("0", 26)}},
			"wrong nonce":     {"invoice": {ord.ID}, "nonce": {strings.Repeat("0", 26)}},
			"no nonce":        {"invoice": {ord.ID}},
			"other order":     {"invoice": {other.ID}, "nonce": {strings.Repeat("0", 26)}},
			"no invoice":      {},
		} {
			addr := ord.AddressIn
			if name == "unknown address" {
				addr = "bc1q2d9fjazrh28qg4rxe23mpkypg4ah6vqtq4lmrw"
			}
			assert.Equal(t, http.StatusForbidden, e.sendSigned(confirmed(addr, custom)), name)
		}
		for _, id := range []string{ord.ID, other.ID} {
			got := e.order(id)
			assert.Equal(t, invoice.StatusNew, got.Status)
			assert.True(t, got.Paid.IsZero(), "paid %s", got.Paid)
			assert.Empty(t, got.Payments)
			assert.Equal(t, int64(1), got.Version)
		}
	})
}

func TestMissedCallbacksAreReconciled(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		ord := e.createOrder("amount=0.001").Invoice
		e.lb.refuseCallbacks(true)
		e.confirm(e.pay(ord.AddressIn, ord.Due))
		require.Equal(t, invoice.StatusNew, e.order(ord.ID).Status, "no callback got through")

		status, body := e.do(http.MethodPost, "/orders/"+ord.ID+"/reconcile")
		require.Equal(t, http.StatusOK, status, "%s", body)
		var got invoice.Invoice
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, invoice.StatusSettled, got.Status)
		assert.True(t, got.Paid.Equal(dec("0.001")), "paid %s", got.Paid)

		// The service retries later; the replicas acknowledge without
		// counting the payment again.
		e.lb.refuseCallbacks(false)
		e.clock.Advance(time.Minute)
		e.flush()
		confirmed := e.deliveries(ord.AddressIn, false)
		require.Len(t, confirmed, 2)
		assert.True(t, confirmed[1].OK, "the retry was acknowledged: %d %q", confirmed[1].StatusCode, confirmed[1].Response)
		after := e.order(ord.ID)
		assert.True(t, after.Paid.Equal(dec("0.001")), "paid %s, once", after.Paid)
		assert.Equal(t, got.Version, after.Version)
		assert.Equal(t, int(after.Version-1), e.changesLogged(ord.ID))
	})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		apiKey  string
		wantErr string
	}{
		{name: "keyless", args: []string{"-public-url", "https://shop.example", "-address", merchantAddress}},
		{name: "API key, dashboard addresses", args: []string{"-public-url", "https://shop.example"}, apiKey: testAPIKey},
		{name: "postgres", args: []string{"-public-url", "https://shop.example/", "-address", merchantAddress,
			"-postgres", "postgres://shop@db/shop", "-invoices-table", "shop_invoices", "-tolerance", "0.01"}},
		{name: "no public URL", args: []string{"-address", merchantAddress}, wantErr: "-public-url is required"},
		{name: "public URL not http", args: []string{"-public-url", "ftp://shop.example", "-address", merchantAddress}, wantErr: "-public-url must be"},
		{name: "public URL with a query", args: []string{"-public-url", "https://shop.example/?a=1", "-address", merchantAddress}, wantErr: "-public-url must be"},
		{name: "keyless without address", args: []string{"-public-url", "https://shop.example"}, wantErr: "-address is required"},
		{name: "bad invoices table", args: []string{"-public-url", "https://shop.example", "-address", merchantAddress, "-invoices-table", "orders; drop"}, wantErr: "-invoices-table"},
		{name: "bad tolerance", args: []string{"-public-url", "https://shop.example", "-address", merchantAddress, "-tolerance", "1"}, wantErr: "-tolerance"},
		{name: "bad tick", args: []string{"-public-url", "https://shop.example", "-address", merchantAddress, "-tick", "0s"}, wantErr: "-tick"},
		{name: "stray argument", args: []string{"-public-url", "https://shop.example", "-address", merchantAddress, "extra"}, wantErr: "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "CRYPTAPI_API_KEY" {
					return tc.apiKey
				}
				return ""
			}
			cfg, err := parseConfig(tc.args, getenv, io.Discard)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.apiKey, cfg.apiKey)
			assert.Equal(t, callbackURL(cfg.publicURL), "https://shop.example/callback")
		})
	}
}

func TestConfigNeverPrintsSecrets(t *testing.T) {
	cfg, err := parseConfig([]string{"-public-url", "https://shop.example", "-postgres", "postgres://shop:hunter2@db/shop"},
		func(string) string { return testAPIKey }, io.Discard)
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out := fmt.Sprintf(verb, cfg)
		assert.NotContains(t, out, testAPIKey, verb)
		assert.NotContains(t, out, "hunter2", verb)
		assert.Contains(t, out, "api key: true", verb)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("start", "config", cfg)
	assert.NotContains(t, buf.String(), testAPIKey)
	assert.NotContains(t, buf.String(), "hunter2")
}

// TestMerchantServerSetsEveryTimeout: a client cannot hold the shop's
// connections by sending slowly, reading slowly or idling, and a callback
// can be answered within its lease.
func TestMerchantServerSetsEveryTimeout(t *testing.T) {
	srv := newHTTPServer(":0", http.NewServeMux())
	assert.Positive(t, srv.ReadHeaderTimeout)
	assert.Positive(t, srv.ReadTimeout)
	assert.Positive(t, srv.IdleTimeout)
	assert.Greater(t, srv.WriteTimeout, callback.DefaultLease)
}

// TestMerchantRunsAgainstTheSimulatorWithOneFlag: -base-url alone (and
// the key in the environment) points the shop at a local simulator: the
// public URL defaults to where it listens, on loopback, and callbacks are
// verified with the simulator's own key, so an order gets paid.
func TestMerchantRunsAgainstTheSimulatorWithOneFlag(t *testing.T) {
	fake := cryptapitest.NewServer(cryptapitest.WithAPIKey(testAPIKey))
	defer fake.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	cfg, err := parseConfig([]string{"-base-url", fake.URL(), "-addr", addr, "-ticker", "btc"},
		func(k string) string {
			if k == "CRYPTAPI_API_KEY" {
				return testAPIKey
			}
			return ""
		}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "http://"+addr, cfg.publicURL)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	require.NoError(t, cfg.useService(t.Context(), log))
	h, closeStores, err := newServer(t.Context(), cfg, log)
	require.NoError(t, err)
	defer closeStores()
	srv := newHTTPServer(addr, h)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	resp, err := http.Post("http://"+addr+"/orders?amount=0.01", "", nil)
	require.NoError(t, err)
	var o createdOrder
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&o))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NotNil(t, o.Invoice)
	txid, err := fake.Pay("btc", o.AddressIn, o.Due)
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(t.Context()))

	resp, err = http.Get("http://" + addr + "/orders/" + o.ID)
	require.NoError(t, err)
	var got invoice.Invoice
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	assert.Equal(t, invoice.StatusSettled, got.Status, "invoice settled after a verified confirmed callback: %+v", got)
	assert.NotContains(t, logs.String(), testAPIKey)
}

// TestMerchantListensOnLoopbackByDefault: without -addr the shop is not
// reachable from other machines.
func TestMerchantListensOnLoopbackByDefault(t *testing.T) {
	cfg, err := parseConfig([]string{"-public-url", "https://shop.example", "-address", merchantAddress},
		func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	host, _, err := net.SplitHostPort(cfg.addr)
	require.NoError(t, err)
	assert.True(t, net.ParseIP(host).IsLoopback(), cfg.addr)
}

// An order is found by its ID, a retried order creates nothing, and the
// merchant marks, reopens and cancels invoices; the Desk's clock expires
// what nobody pays, once, whatever replica runs it.
func TestOrdersAreFoundRetriedMarkedAndReopened(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		a := e.createOrder("amount=25&currency=USD&order_id=1001").Invoice
		again := e.createOrder("amount=25.00&currency=usd&order_id=1001").Invoice
		assert.Equal(t, a.ID, again.ID, "a retry answers the same invoice")
		assert.Equal(t, 1, e.creates(), "and creates no address")
		status, body := e.do(http.MethodPost, "/orders?amount=26&currency=USD&order_id=1001")
		assert.Equal(t, http.StatusConflict, status, "%s", body)

		var found []invoice.Invoice
		status, body = e.do(http.MethodGet, "/orders?order_id=1001")
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.NoError(t, json.Unmarshal(body, &found))
		require.Len(t, found, 1)
		assert.Equal(t, a.ID, found[0].ID)

		// 24 of 25 USD arrive: the merchant accepts it.
		e.confirm(e.pay(a.AddressIn, dec("0.0004")))
		assert.Equal(t, invoice.ExceptionPaidPartial, e.order(a.ID).Exception)
		status, body = e.do(http.MethodPost, "/orders/"+a.ID+"/mark")
		assert.Equal(t, http.StatusBadRequest, status, "a reason is required: %s", body)
		status, body = e.do(http.MethodPost, "/orders/"+a.ID+"/mark?reason=fee+kept+by+the+exchange")
		require.Equal(t, http.StatusOK, status, "%s", body)
		got := e.order(a.ID)
		assert.Equal(t, invoice.StatusSettled, got.Status)
		assert.Equal(t, invoice.ExceptionMarked, got.Exception)
		assert.Equal(t, "fee kept by the exchange", got.Events[len(got.Events)-1].Note)
		status, _ = e.do(http.MethodPost, "/orders/"+a.ID+"/mark?reason=again")
		assert.Equal(t, http.StatusConflict, status)

		// Nobody pays the next one: shown expired at once, stored so by the
		// clock of one replica, once.
		b := e.createOrder("amount=25&currency=USD&order_id=1002").Invoice
		e.clock.Advance(time.Hour)
		assert.Equal(t, invoice.StatusExpired, e.order(b.ID).Status, "as the clock makes it")
		for _, s := range e.shops {
			_, err := s.desk.Tick(e.ctx)
			require.NoError(t, err)
		}
		assert.Equal(t, 1, e.changesLogged(b.ID), "expired once")
		status, body = e.do(http.MethodPost, "/orders/"+b.ID+"/reopen?minutes=30&reason=customer+asked")
		require.Equal(t, http.StatusOK, status, "%s", body)
		got = e.order(b.ID)
		assert.Equal(t, invoice.StatusNew, got.Status)
		assert.Equal(t, b.AddressIn, got.AddressIn)
		assert.Equal(t, e.clock.Now().Add(30*time.Minute).UTC(), got.ExpiresAt)
		status, _ = e.do(http.MethodPost, "/orders/"+a.ID+"/reopen")
		assert.Equal(t, http.StatusConflict, status, "a settled invoice cannot be reopened")
		status, _ = e.do(http.MethodPost, "/orders/"+b.ID+"/reopen?minutes=soon")
		assert.Equal(t, http.StatusBadRequest, status)

		var open []invoice.Invoice
		status, body = e.do(http.MethodGet, "/orders?status=new")
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.NoError(t, json.Unmarshal(body, &open))
		require.Len(t, open, 1)
		assert.Equal(t, b.ID, open[0].ID)
		status, _ = e.do(http.MethodGet, "/orders?status=paid")
		assert.Equal(t, http.StatusBadRequest, status)

		status, body = e.do(http.MethodPost, "/orders/"+b.ID+"/cancel?reason=out+of+stock")
		require.Equal(t, http.StatusOK, status, "%s", body)
		assert.Equal(t, invoice.StatusInvalid, e.order(b.ID).Status)
		assert.Equal(t, int(e.order(b.ID).Version-1), e.changesLogged(b.ID), "every change logged once")
	})
}
