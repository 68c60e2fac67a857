package invoice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// shopEnv is a shop on the fake service whose answers to QR code requests
// pass through rewrite (the service's payment URI in another form), with
// its callback handler and its payment page on one server: /callback and
// /pay/.
type shopEnv struct {
	t     *testing.T
	srv   *cryptapitest.Server
	clock *cryptapitest.FakeClock
	desk  *invoice.Desk
	store *countingStore
	url   string
	ctx   context.Context
	// infoDown makes the service's info (prices) answer 503.
	infoDown *atomic.Bool
}

// uriRewriter rewrites the payment_uri of the service's QR code answers,
// and answers 503 to info requests while infoDown is set.
type uriRewriter struct {
	next     http.RoundTripper
	rewrite  func(uri string) string
	infoDown *atomic.Bool
}

func (u uriRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	if u.infoDown.Load() && strings.HasSuffix(r.URL.Path, "/info/") {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
			Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"status":"error","error":"down"}`))}, nil
	}
	resp, err := u.next.RoundTrip(r)
	if err != nil || u.rewrite == nil || !strings.HasSuffix(r.URL.Path, "/qrcode/") {
		return resp, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		if s, ok := m["payment_uri"].(string); ok {
			m["payment_uri"] = u.rewrite(s)
			b, _ = json.Marshal(m)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// exponentAmount writes the amount of a "…?amount=0.00041667" URI in
// exponent notation ("…?amount=4.1667e-04"), as EIP-681 allows.
func exponentAmount(uri string) string {
	head, v, ok := strings.Cut(uri, "?amount=")
	if !ok {
		return uri
	}
	d := decimal.RequireFromString(v)
	f, _ := d.Float64()
	return head + "?amount=" + strconv.FormatFloat(f, 'e', -1, 64)
}

func newShopEnv(t *testing.T, rewrite func(string) string, opts ...invoice.PageOption) *shopEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	clock := cryptapitest.NewFakeClock(invoicesuite.T0)
	srv := cryptapitest.NewServer(cryptapitest.WithClock(clock))
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	down := &atomic.Bool{}
	c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: uriRewriter{next: tr, rewrite: rewrite, infoDown: down}, Timeout: 20 * time.Second}))
	require.NoError(t, err)
	store := &countingStore{Store: invoice.NewMemoryStore()}
	desk, err := invoice.New(c, store, invoice.WithClock(clock),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	require.NoError(t, err)
	mux := http.NewServeMux()
	ts := httptest.NewUnstartedServer(mux)
	ts.Start()
	t.Cleanup(ts.Close)
	v, err := callback.NewVerifier(callback.WithPublicKey(srv.PublicKey()), callback.WithPublicURL(ts.URL))
	require.NoError(t, err)
	h, err := desk.Handler(v)
	require.NoError(t, err)
	mux.Handle("/callback", h)
	mux.Handle("/pay/", http.StripPrefix("/pay", desk.Page(opts...)))
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return &shopEnv{t: t, srv: srv, clock: clock, desk: desk, store: store, url: ts.URL, ctx: ctx, infoDown: down}
}

// create makes a btc invoice of 25 USD unless o says otherwise.
func (e *shopEnv) create(o invoice.CreateOptions) *invoice.Invoice {
	e.t.Helper()
	if o.Ticker == "" {
		o.Ticker = "btc"
	}
	if o.Price.IsZero() {
		o.Price, o.Currency = decimal.NewFromInt(25), "USD"
	}
	o.Callback = e.url + "/callback"
	if o.Address == "" && len(o.Outputs) == 0 {
		o.Address = invoicesuite.BTCDest
		if strings.HasPrefix(o.Ticker, "tr") {
			o.Address = invoicesuite.TRXDest
		}
	}
	inv, err := e.desk.Create(e.ctx, &o)
	require.NoError(e.t, err)
	return inv
}

// pay pays amount to inv's address and delivers the callbacks.
func (e *shopEnv) pay(inv *invoice.Invoice, amount decimal.Decimal) string {
	e.t.Helper()
	return e.payIn(inv.Ticker, inv, amount)
}

// payIn pays amount of coin to inv's address and delivers the callbacks.
func (e *shopEnv) payIn(coin string, inv *invoice.Invoice, amount decimal.Decimal) string {
	e.t.Helper()
	txid, err := e.srv.Pay(coin, inv.AddressIn, amount)
	require.NoError(e.t, err)
	require.NoError(e.t, e.srv.Flush(e.ctx))
	return txid
}

func (e *shopEnv) confirm(txid string) {
	e.t.Helper()
	require.NoError(e.t, e.srv.Confirm(txid, 1))
	require.NoError(e.t, e.srv.Flush(e.ctx))
}

// stored reads the invoice as stored.
func (e *shopEnv) stored(id string) *invoice.Invoice {
	e.t.Helper()
	r, err := e.store.Store.Load(e.ctx, id)
	require.NoError(e.t, err)
	return r.Invoice.Clone()
}
