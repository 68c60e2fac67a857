package pgstore_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

// Listing 100,000 invoices reads them in pages: the heap in use stays
// within a few megabytes while the records, a kilobyte each, would take
// a hundred. Among them, a tick of ten due invoices reads about ten rows.
func TestListingHundredThousandInvoicesInBoundedMemory(t *testing.T) {
	dsn := testDSN(t)
	db := openDB(t, dsn)
	table := tableName(t, db)
	s := newStore(t, db, table)
	e := invoicesuite.NewEnv(t, s)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("0.001")})
	e.Confirm(e.Pay("btc", inv.AddressIn, "0.001"))
	r, err := s.Load(context.Background(), inv.ID)
	require.NoError(t, err)
	const n = 100_000
	// Ten invoices will come due among them (the Env's context is short:
	// they are made first).
	var due []string
	for range 10 {
		due = append(due, e.Create(invoice.CreateOptions{Price: invoicesuite.D("0.001"), ExpiresIn: time.Minute}).ID)
	}
	start := time.Now()
	bulkInsert(t, db, table, r, "BULK", n, invoicesuite.T0.Add(time.Hour))
	t.Logf("inserted %d invoices in %s", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	base := heap()
	var peak uint64
	count := 0
	var prev time.Time
	for got, err := range e.Desk.List(context.Background(), &invoice.ListOptions{Status: []invoice.Status{invoice.StatusSettled}}) {
		require.NoError(t, err)
		if count > 0 {
			require.True(t, got.CreatedAt.Before(prev), "newest first")
		}
		prev = got.CreatedAt
		count++
		if count%10_000 == 0 {
			peak = max(peak, heap())
		}
	}
	assert.Equal(t, n+1, count)
	t.Logf("listed them in %s", time.Since(start).Round(time.Millisecond))
	grew := int64(peak) - int64(base)
	t.Logf("heap in use: %d KiB at the start, %d KiB at the most while listing %d invoices", base>>10, peak>>10, count)
	assert.Less(t, grew, int64(16<<20), "memory grows with a page, not with the invoices")

	// The ten come due among the 100,000 settled ones: the tick reads
	// about ten rows, along the index.
	e.Clock.Advance(time.Minute)
	plan, err := pgstore.ExplainDue(context.Background(), s, e.Clock.Now())
	require.NoError(t, err)
	scanned, seq := planRows(t, plan)
	t.Logf("the due query read %.0f rows", scanned)
	assert.False(t, seq, "no sequential scan: %s", plan)
	assert.LessOrEqual(t, scanned, 12.0, "about as many rows as are due")
	changed, err := e.Desk.Tick(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 10, changed)
	for _, id := range due {
		r, err := s.Load(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, invoice.StatusExpired, r.Invoice.Status)
	}
}

// planRows adds up the rows the scans of an EXPLAIN ANALYZE (FORMAT JSON)
// plan returned, and tells whether one was a sequential scan.
func planRows(t *testing.T, plan string) (rows float64, seqScan bool) {
	t.Helper()
	var p []struct{ Plan map[string]any }
	require.NoError(t, json.Unmarshal([]byte(plan), &p))
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		kind, _ := n["Node Type"].(string)
		if strings.HasSuffix(kind, "Scan") {
			r, _ := n["Actual Rows"].(float64)
			loops, _ := n["Actual Loops"].(float64)
			rows += r * max(loops, 1)
			seqScan = seqScan || kind == "Seq Scan"
		}
		children, _ := n["Plans"].([]any)
		for _, c := range children {
			walk(c.(map[string]any))
		}
	}
	require.Len(t, p, 1)
	walk(p[0].Plan)
	return rows, seqScan
}
