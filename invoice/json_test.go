package invoice

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The invoice JSON writes durations as text and leaves out the times that
// are not set, and reads back what it wrote.
func TestInvoiceJSONDurationsAsTextAbsentTimesAbsent(t *testing.T) {
	r := btcRecord(t, "0.01", "", "1") // a price in the coin: no quote deadline
	r = run(t, r, pay("a", "0.004", false, t0.Add(time.Minute)))
	b, err := json.Marshal(&r.Invoice)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"quote_ttl":"15m0s"`)
	assert.NotContains(t, s, "0001-01-01")
	assert.NotContains(t, s, "quote_expires_at", "no quote for a price in the coin")
	assert.NotContains(t, s, "confirmed_at", "not confirmed yet")
	assert.Contains(t, s, `"seen_at":"2026-11-23T12:01:00Z"`)

	var back Invoice
	require.NoError(t, json.Unmarshal(b, &back))
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, s, string(again), "round trip")
	assert.True(t, back.QuoteExpiresAt.IsZero())
}

// Records stored before durations were text (a number of nanoseconds)
// still decode.
func TestRecordReadsDurationsStoredAsNanoseconds(t *testing.T) {
	r := btcRecord(t, "25", "USD", "60000")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	old := strings.Replace(string(b), `"quote_ttl":"15m0s"`, `"quote_ttl":900000000000`, 1)
	require.NotEqual(t, string(b), old)
	var back Record
	require.NoError(t, json.Unmarshal([]byte(old), &back))
	assert.Equal(t, 15*time.Minute, back.Invoice.QuoteTTL.Duration)
	var d Duration
	assert.Error(t, json.Unmarshal([]byte(`"fortnight"`), &d))
	assert.Error(t, json.Unmarshal([]byte(`1.5`), &d))
	assert.Error(t, json.Unmarshal([]byte(`{}`), &d))
}
