package invoice_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func TestScenariosWithTheMemoryStore(t *testing.T) {
	invoicesuite.Run(t, func(*testing.T) invoice.Store { return invoice.NewMemoryStore() })
}

func TestCreateRefusesBadOptionsBeforeAnyRequest(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	good := func() *invoice.CreateOptions {
		return &invoice.CreateOptions{Ticker: "btc", Price: invoicesuite.D("25"), Currency: "USD",
			Callback: e.CallbackURL(), Address: invoicesuite.BTCDest}
	}
	for name, edit := range map[string]func(*invoice.CreateOptions){
		"bad ticker":          func(o *invoice.CreateOptions) { o.Ticker = "../btc" },
		"no ticker":           func(o *invoice.CreateOptions) { o.Ticker = "" },
		"zero price":          func(o *invoice.CreateOptions) { o.Price = decimal.Zero },
		"negative price":      func(o *invoice.CreateOptions) { o.Price = invoicesuite.D("-1") },
		"tolerance 1":         func(o *invoice.CreateOptions) { o.Tolerance = invoicesuite.D("1") },
		"negative tolerance":  func(o *invoice.CreateOptions) { o.Tolerance = invoicesuite.D("-0.01") },
		"negative quote TTL":  func(o *invoice.CreateOptions) { o.QuoteTTL = -time.Second },
		"negative expiry":     func(o *invoice.CreateOptions) { o.ExpiresIn = -time.Second },
		"no callback":         func(o *invoice.CreateOptions) { o.Callback = " " },
		"callback has an ID":  func(o *invoice.CreateOptions) { o.Callback += "?invoice=x" },
		"callback has nonce":  func(o *invoice.CreateOptions) { o.Callback += "?a=1&nonce=x" },
		"not a currency code": func(o *invoice.CreateOptions) { o.Currency = "U$D" },
		"unparseable query":   func(o *invoice.CreateOptions) { o.Callback += "?a=1;b=2" },
		"hidden nonce":        func(o *invoice.CreateOptions) { o.Callback += "?a=1&%6Eonce=x" },
	} {
		o := good()
		edit(o)
		_, err := e.Desk.Create(e.Ctx, o)
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, name)
	}
	_, err := e.Desk.Create(e.Ctx, nil)
	assert.ErrorIs(t, err, invoice.ErrInvalidOptions)
	assert.Empty(t, e.Srv.Requests(), "nothing was sent")

	_, err = e.Desk.Create(e.Ctx, &invoice.CreateOptions{Ticker: "btc", Price: invoicesuite.D("25"), Currency: "XYZ",
		Callback: e.CallbackURL(), Address: invoicesuite.BTCDest})
	assert.ErrorIs(t, err, invoice.ErrNoRate)
	for _, r := range e.Srv.Requests() {
		assert.NotContains(t, r.Path, "/create/", "no address without a rate")
	}
}

// The callback URL of every invoice carries its ID and a nonce of its
// own, and pending callbacks are asked for; the minimum follows the
// number of destinations.
func TestCreateAsksForPendingCallbacksWithIDAndNonce(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	outs := []cryptapi.Output{
		{Address: invoicesuite.BTCDest, Share: invoicesuite.D("0.5")},
		{Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", Share: invoicesuite.D("0.5")},
	}
	seen := map[string]bool{}
	for range 3 {
		inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD", Outputs: outs})
		assert.Equal(t, "0.00013334", inv.Minimum.String(), "0.0001 × (1 + 1/3), rounded up")
		seen[inv.ID] = true
	}
	nonces := map[string]bool{}
	for _, r := range e.Srv.Requests() {
		if !strings.HasSuffix(r.Path, "/create/") {
			continue
		}
		assert.Equal(t, "1", r.Query.Get("pending"))
		cb, err := url.Parse(r.Query.Get("callback"))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(cb.String(), e.CallbackURL()+"?"))
		assert.True(t, seen[cb.Query().Get(invoice.ParamInvoice)], "the callback names the invoice")
		n := cb.Query().Get(invoice.ParamNonce)
		assert.GreaterOrEqual(t, len(n), 26, "at least 128 bits")
		assert.False(t, nonces[n], "a nonce per invoice")
		nonces[n] = true
	}
	assert.Len(t, nonces, 3)

	_, err := e.Desk.Create(e.Ctx, &invoice.CreateOptions{Ticker: "btc", Price: invoicesuite.D("0.0001"),
		Callback: e.CallbackURL(), Outputs: outs})
	var below *cryptapi.BelowMinimumError
	require.ErrorAs(t, err, &below, "0.0001 is below the two-destination minimum")
	assert.Equal(t, "0.00013334", below.Minimum.String())
}

// A re-quote that cannot read the price leaves the invoice as stored; the
// next Get tries again.
func TestGetKeepsTheQuoteWhenThePriceCannotBeRead(t *testing.T) {
	e := invoicesuite.NewEnv(t, invoice.NewMemoryStore())
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("25"), Currency: "USD"})
	e.Clock.Advance(20 * time.Minute)
	e.Srv.Close()
	got, err := e.Desk.Get(e.Ctx, inv.ID)
	require.NoError(t, err)
	assert.Equal(t, inv.Version, got.Version)
	assert.Equal(t, inv.Rate.String(), got.Rate.String())
	_, err = e.Desk.Get(e.Ctx, "nope")
	assert.ErrorIs(t, err, invoice.ErrNotFound)
}
