package invoice_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// writeCounter counts the writes a Store is asked for.
type writeCounter struct {
	invoice.Store
	writes atomic.Int64
}

func (s *writeCounter) Insert(ctx context.Context, r *invoice.Record) error {
	s.writes.Add(1)
	return s.Store.Insert(ctx, r)
}

func (s *writeCounter) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	s.writes.Add(1)
	return s.Store.Update(ctx, id, key, change)
}

func (s *writeCounter) Notify(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) error {
	s.writes.Add(1)
	return s.Store.Notify(ctx, id, fn)
}

// The payment page is a read: its page, status and QR codes of an
// invoice whose deadline passed show it expired, and never ask the store
// for a write, the service for a price, or onChange for anything.
func TestThePageNeverWrites(t *testing.T) {
	store := &writeCounter{Store: invoice.NewMemoryStore()}
	e := invoicesuite.NewEnv(t, store)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", ExpiresIn: 30 * time.Minute})
	page := httptest.NewServer(http.StripPrefix("/pay", e.Desk.Page()))
	t.Cleanup(page.Close)
	e.Clock.Advance(31 * time.Minute)
	writes, requests := store.writes.Load(), e.Requests()
	for _, path := range []string{"", "/status", "/qr.png", "/qr-address.png"} {
		resp, err := http.Get(page.URL + "/pay/" + inv.ID + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	resp, body := get(t, page.URL+"/pay/"+inv.ID+"/status")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"status":"expired"`, "shown as the clock makes it")
	assert.Contains(t, string(body), `"show_pay":false`, "a passed deadline never asks for payment")
	assert.Equal(t, writes, store.writes.Load(), "no write")
	assert.Equal(t, requests, e.Requests(), "no request to the service")
	assert.Zero(t, e.Offered(inv.ID), "no onChange")
	assert.Equal(t, invoice.StatusNew, e.Stored(inv.ID).Status, "stored by Tick, not by the page")
	e.Tick()
	assert.Equal(t, invoice.StatusExpired, e.Stored(inv.ID).Status)
}
