package invoice_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func nothing(context.Context, *invoice.Invoice) error { return nil }

// There is one way to give onChange, and no Desk without one: a change
// can never go to a do-nothing function by accident.
func TestNewNeedsOnChange(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	_, err := invoice.New(e.Client, invoice.NewMemoryStore())
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "no WithOnChange")
	_, err = invoice.New(e.Client, invoice.NewMemoryStore(), invoice.WithOnChange(nil))
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "a nil function")
	_, err = invoice.New(e.Client, invoice.NewMemoryStore(), invoice.WithOnChange(nothing), invoice.WithLogger(nil))
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "a nil logger")
	d, err := invoice.New(e.Client, invoice.NewMemoryStore(), invoice.WithOnChange(nothing), nil)
	assert.NoError(t, err, "nil options are skipped")
	assert.NotNil(t, d)
}

// Every handler of a Desk passes every change to the Desk's one function.
func TestEveryHandlerPassesChangesToTheDesksFunction(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	v, err := callback.NewVerifier(callback.WithPublicKey(e.Srv.PublicKey()), callback.WithPublicURL(e.Shop.URL))
	require.NoError(t, err)
	second, err := e.Desk.Handler(v)
	require.NoError(t, err)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	e.Down.Store(true)
	e.Pay("btc", inv.AddressIn, "0.0002")
	ds := e.Deliveries(inv.AddressIn, true)
	require.Len(t, ds, 1)
	req, err := http.NewRequestWithContext(e.Ctx, ds[0].Method, ds[0].URL, nil)
	require.NoError(t, err)
	req.Header = ds[0].Header.Clone()
	rec := httptest.NewRecorder()
	second.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Len(t, e.Changes(inv.ID), 1, "the Desk's onChange heard the change")
}

// A Handler whose Verifier cannot rebuild the signed URL of a GET
// callback could only refuse every callback: it is an error at once.
func TestHandlerNeedsThePublicURL(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	v, err := callback.NewVerifier(callback.WithPublicKey(e.Srv.PublicKey()))
	require.NoError(t, err)
	h, err := e.Desk.Handler(v)
	assert.Nil(t, h)
	assert.ErrorIs(t, err, callback.ErrPublicURLRequired)
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
	_, err = e.Desk.Handler(nil)
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
}

// Refused callbacks are logged to slog.Default() unless the Desk was
// given a logger, and no line carries the nonce, the signature or the
// payload.
func TestRefusalsAreLoggedByDefault(t *testing.T) {
	var def syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	e.Down.Store(true)
	e.Pay("btc", inv.AddressIn, "0.0002")
	ds := e.Deliveries(inv.AddressIn, true)
	require.Len(t, ds, 1)
	u, err := url.Parse(ds[0].URL)
	require.NoError(t, err)
	q := u.Query()
	nonce := q.Get(invoice.ParamNonce)
	q.Set(invoice.ParamNonce, strings.Repeat("A", 26))
	target := "/callback?" + q.Encode()
	sig := e.Srv.Sign([]byte(e.Shop.URL + target)) // the service signs what anyone asks it to create
	v, err := callback.NewVerifier(callback.WithPublicKey(e.Srv.PublicKey()), callback.WithPublicURL(e.Shop.URL))
	require.NoError(t, err)
	send := func(d *invoice.Desk) int {
		t.Helper()
		h, err := d.Handler(v)
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set(callback.SignatureHeader, sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}

	// A Desk without WithLogger logs to slog.Default().
	plain, err := invoice.New(e.Client, e.Store, invoice.WithOnChange(nothing))
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, send(plain))
	logs := def.String()
	assert.Contains(t, logs, "invoice callback not acknowledged")
	assert.Contains(t, logs, "status=403")
	for name, secret := range map[string]string{"nonce": nonce, "forged nonce": strings.Repeat("A", 26), "signature": sig,
		"uuid": q.Get("uuid"), "txid": q.Get("txid_in"), "address": inv.AddressIn} {
		assert.NotContains(t, logs, secret, name)
	}

	// With WithLogger, the lines go there and not to the default.
	var own syncBuffer
	logged, err := invoice.New(e.Client, e.Store, invoice.WithOnChange(nothing), invoice.WithLogger(slog.New(slog.NewTextHandler(&own, nil))))
	require.NoError(t, err)
	before := def.String()
	assert.Equal(t, http.StatusForbidden, send(logged))
	assert.Contains(t, own.String(), "invoice callback not acknowledged")
	assert.Equal(t, before, def.String(), "nothing more in the default log")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A change stored but refused by onChange comes back with the stored
// invoice and an error saying so (it used to be nil and the error).
func TestManualChangesReturnTheStoredInvoiceWhenOnChangeFails(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	e.FailChanges.Store(1)
	got, err := e.Desk.Invalidate(e.Ctx, inv.ID, "out of stock")
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, got)
	assert.Equal(t, invoice.StatusInvalid, got.Status)
	assert.Equal(t, got.Version, e.Stored(inv.ID).Version, "stored")
	assert.Empty(t, e.Changes(inv.ID), "not accepted")

	other := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	e.Pay("btc", other.AddressIn, "0.0002")
	e.FailChanges.Store(1)
	got, err = e.Desk.MarkSettled(e.Ctx, other.ID, "the rest in cash")
	assert.ErrorIs(t, err, invoice.ErrNotNotified)
	require.NotNil(t, got)
	assert.Equal(t, invoice.ExceptionMarked, got.Exception)

	_, err = e.Desk.MarkSettled(e.Ctx, other.ID, "")
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions, "a reason is required")
	_, err = e.Desk.Invalidate(e.Ctx, other.ID, "bad\x00reason")
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
	_, err = e.Desk.MarkSettled(e.Ctx, "nope", "x")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
}

// An onChange that hangs holds Tick for the Desk's lease at most, and the
// other invoices are brought up to date.
func TestTickGoesOnPastAHangingOnChange(t *testing.T) {
	e := invoicesuite.NewEnvWith(t, invoice.NewMemoryStore(), []invoice.Option{invoice.WithLease(200 * time.Millisecond)})
	stuck := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	fine := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	e.Hook = func(ctx context.Context, inv *invoice.Invoice) error {
		if inv.ID == stuck.ID {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	e.Clock.Advance(time.Hour)
	n, err := e.Desk.Tick(e.Ctx)
	assert.Equal(t, 2, n)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), stuck.ID)
	assert.Len(t, e.Changes(fine.ID), 1, "the other invoice's change was passed on")
	e.Hook = nil
	e.Tick()
	assert.Len(t, e.Changes(stuck.ID), 1, "offered again")
}
