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
	"github.com/forwardpay/cryptapi-go/internal/address"
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
			Callback: e.CallbackURL(), Address: invoicesuite.BTCDest, OrderID: "1001", Description: "2 × Coffee mug"}
	}
	outs := func(shares ...string) []cryptapi.Output {
		var o []cryptapi.Output
		for i, s := range shares {
			o = append(o, cryptapi.Output{Address: address.Segwit("bc", 0, []byte(strings.Repeat(string(rune('a'+i)), 20))), Share: invoicesuite.D(s)})
		}
		return o
	}
	for _, tc := range []struct {
		name, field string
		edit        func(*invoice.CreateOptions)
	}{
		{"bad ticker", "Ticker", func(o *invoice.CreateOptions) { o.Ticker = "../btc" }},
		{"no ticker", "Ticker", func(o *invoice.CreateOptions) { o.Ticker = "" }},
		{"zero price", "Price", func(o *invoice.CreateOptions) { o.Price = decimal.Zero }},
		{"negative price", "Price", func(o *invoice.CreateOptions) { o.Price = invoicesuite.D("-1") }},
		{"absurd price", "Price", func(o *invoice.CreateOptions) { o.Price = invoicesuite.D("1e18") }},
		{"price finer than 18 places", "Price", func(o *invoice.CreateOptions) { o.Price = invoicesuite.D("25.0000000000000000001") }},
		{"tolerance 1", "Tolerance", func(o *invoice.CreateOptions) { o.Tolerance = invoicesuite.D("1") }},
		{"negative tolerance", "Tolerance", func(o *invoice.CreateOptions) { o.Tolerance = invoicesuite.D("-0.01") }},
		{"negative quote TTL", "QuoteTTL", func(o *invoice.CreateOptions) { o.QuoteTTL = -time.Second }},
		{"quote TTL of a second", "QuoteTTL", func(o *invoice.CreateOptions) { o.QuoteTTL = time.Second }},
		{"negative expiry", "ExpiresIn", func(o *invoice.CreateOptions) { o.ExpiresIn = -time.Second }},
		{"expiry in a year", "ExpiresIn", func(o *invoice.CreateOptions) { o.ExpiresIn = 365 * 24 * time.Hour }},
		{"no callback", "Callback", func(o *invoice.CreateOptions) { o.Callback = " " }},
		{"callback has an ID", "Callback", func(o *invoice.CreateOptions) { o.Callback += "?invoice=x" }},
		{"callback has nonce", "Callback", func(o *invoice.CreateOptions) { o.Callback += "?a=1&nonce=x" }},
		{"callback names a callback field", "Callback", func(o *invoice.CreateOptions) { o.Callback += "?uuid=1" }},
		{"unparseable query", "Callback", func(o *invoice.CreateOptions) { o.Callback += "?a=1;b=2" }},
		{"hidden nonce", "Callback", func(o *invoice.CreateOptions) { o.Callback += "?a=1&%6Eonce=x" }},
		{"not a currency code", "Currency", func(o *invoice.CreateOptions) { o.Currency = "U$D" }},
		{"NUL in the order ID", "OrderID", func(o *invoice.CreateOptions) { o.OrderID = "10\x0001" }},
		{"order ID not UTF-8", "OrderID", func(o *invoice.CreateOptions) { o.OrderID = "\xff\xfe" }},
		{"order ID too long", "OrderID", func(o *invoice.CreateOptions) { o.OrderID = strings.Repeat("1", invoice.MaxOrderIDLen+1) }},
		{"NUL in the description", "Description", func(o *invoice.CreateOptions) { o.Description = "mug\x00" }},
		{"description not UTF-8", "Description", func(o *invoice.CreateOptions) { o.Description = "caf\xe9" }},
		{"bidi override in the description", "Description", func(o *invoice.CreateOptions) { o.Description = "mug \u202egnp.exe" }},
		{"description too long", "Description", func(o *invoice.CreateOptions) { o.Description = strings.Repeat("é", invoice.MaxDescriptionLen) }},
		{"no destination without an API key", "Address", func(o *invoice.CreateOptions) { o.Address = "" }},
		{"address and outputs", "Address", func(o *invoice.CreateOptions) { o.Outputs = outs("1") }},
		{"address with a space", "Address", func(o *invoice.CreateOptions) { o.Address = "bc1q x" }},
		{"address with a NUL", "Address", func(o *invoice.CreateOptions) { o.Address = "bc1q\x00x" }},
		{"address with a separator", "Address", func(o *invoice.CreateOptions) { o.Address = "0.5@bc1q|0.5@bc1p" }},
		{"address of another network", "Address", func(o *invoice.CreateOptions) { o.Address = invoicesuite.TRXDest }},
		{"address with a mistyped character", "Address", func(o *invoice.CreateOptions) { o.Address = invoicesuite.BTCDest[:8] + "x" + invoicesuite.BTCDest[9:] }},
		{"address with a look-alike character", "Address", func(o *invoice.CreateOptions) {
			o.Address = strings.Replace(invoicesuite.BTCDest, "a", "\u0430", 1)
		}},
		{"shares not adding up", "Outputs", func(o *invoice.CreateOptions) { o.Address, o.Outputs = "", outs("0.5", "0.4") }},
		{"share zero", "Outputs", func(o *invoice.CreateOptions) { o.Address, o.Outputs = "", outs("1", "0") }},
		{"repeated output", "Outputs", func(o *invoice.CreateOptions) {
			o.Address, o.Outputs = "", []cryptapi.Output{{Address: invoicesuite.BTCDest, Share: invoicesuite.D("0.5")}, {Address: invoicesuite.BTCDest, Share: invoicesuite.D("0.5")}}
		}},
		{"too many outputs", "Outputs", func(o *invoice.CreateOptions) {
			o.Address = ""
			shares := make([]string, cryptapi.MaxOutputs+1)
			for i := range shares {
				shares[i] = "0.04"
			}
			o.Outputs = outs(shares...)
		}},
	} {
		o := good()
		tc.edit(o)
		_, err := e.Desk.Create(e.Ctx, o)
		assert.ErrorIs(t, err, invoice.ErrInvalidOptions, tc.name)
		if err != nil {
			assert.Contains(t, err.Error(), tc.field+":", "%s: the error names the field", tc.name)
			if tc.field == "Outputs" {
				assert.NotErrorIs(t, err, cryptapi.ErrInvalidAddress, "%s: refused for its outputs, not for an address", tc.name)
			}
		}
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

func TestRefundsMemory(t *testing.T) {
	invoicesuite.RunRefunds(t, func(*testing.T) invoice.Store { return invoice.NewMemoryStore() })
}
