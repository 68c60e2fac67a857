package invoice_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/slowbody"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// TestHandlerCutsOffASlowBody: a client that sends a POST callback one
// byte at a time cannot hold the Desk's handler: it answers 408 at the
// read timeout, before the body is complete, and no invoice changes.
func TestHandlerCutsOffASlowBody(t *testing.T) {
	e := invoicesuite.NewEnvWith(t, invoice.NewMemoryStore(),
		[]invoice.Option{invoice.WithReadTimeout(100 * time.Millisecond)})
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})

	body := "uuid=" + strings.Repeat("a", 600) + "&address_in=" + inv.AddressIn
	slow := slowbody.New([]byte(body), 10*time.Millisecond) // about 6 s for the whole body
	defer slow.Stop()
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodPost, e.CallbackURL(), slow.Reader)
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(callback.SignatureHeader, "c2lnbmF0dXJl")
	resp, err := e.Shop.Client().Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	slow.Stop()

	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.NotContains(t, string(b), callback.OK)
	assert.Less(t, slow.Sent(), int64(len(body)), "answered before the body was complete")
	assert.Equal(t, inv.Version, e.Stored(inv.ID).Version, "no change")
}

func TestWithReadTimeoutRefusesZero(t *testing.T) {
	_, err := invoice.New(invoicesuite.NewEnv(t, invoice.NewMemoryStore()).Client, invoice.NewMemoryStore(),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }), invoice.WithReadTimeout(0))
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
}
