package invoice_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// logsAnswer serves every logs request with a fixed answer and passes
// every other request to the fake service.
type logsAnswer struct {
	status int
	body   string
}

func (a logsAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/logs/") {
		return http.DefaultTransport.RoundTrip(r)
	}
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

// TestReconcileFailsWhenTheLogsCannotBeRead: only the service's own
// "nothing found" answer leaves an invoice unchanged without an error. An
// error answered with HTTP 200 (a bad key, a rate limit) or a 200 page
// that is not JSON (a CDN challenge) is an error: payments may be there,
// unread.
func TestReconcileFailsWhenTheLogsCannotBeRead(t *testing.T) {
	srv := cryptapitest.NewServer()
	t.Cleanup(srv.Close)
	for name, tc := range map[string]struct {
		answer logsAnswer
		ok     bool
	}{
		"nothing found": {logsAnswer{200, `{"status":"error","error":"No request or no payment callbacks found"}`}, true},
		"bad key":       {logsAnswer{200, `{"status":"error","error":"Invalid API key"}`}, false},
		"rate limit":    {logsAnswer{200, `{"status":"error","error":"Rate limit reached, try again later"}`}, false},
		"CDN challenge": {logsAnswer{200, `<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>`}, false},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithoutRetries(),
				cryptapi.WithHTTPClient(&http.Client{Transport: tc.answer}))
			require.NoError(t, err)
			desk, err := invoice.New(c, invoice.NewMemoryStore(),
				invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
			require.NoError(t, err)
			inv, err := desk.Create(ctx, &invoice.CreateOptions{
				Ticker: "btc", Price: decimal.RequireFromString("0.001"), Currency: "btc",
				Callback: "https://shop.example/callback", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
			})
			require.NoError(t, err)
			got, err := desk.Reconcile(ctx, inv.ID)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, inv.Status, got.Status)
				return
			}
			var ae *cryptapi.APIError
			assert.ErrorAs(t, err, &ae)
		})
	}
}
