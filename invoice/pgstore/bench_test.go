package pgstore_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// tickWorld is a Desk on a table holding settled invoices and invoices
// that come due ten at a time, one minute apart.
type tickWorld struct {
	desk  *invoice.Desk
	clock *cryptapitest.FakeClock
}

const duePerTick = 10

// newTickWorld stores settled invoices, and slots × duePerTick new
// invoices whose deadlines pass duePerTick at a time, a minute apart.
func newTickWorld(b *testing.B, srv *cryptapitest.Server, settled, slots int) tickWorld {
	b.Helper()
	ctx := context.Background()
	db := openDB(b, testDSN(b))
	table := tableName(b, db)
	s := newStore(b, db, table)
	clock := cryptapitest.NewFakeClock(invoicesuite.T0)
	c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL()), cryptapi.WithoutRetries())
	require.NoError(b, err)
	desk, err := invoice.New(c, s, invoice.WithClock(clock), invoice.WithLogger(slog.New(slog.DiscardHandler)),
		invoice.WithOnChange(func(context.Context, *invoice.Invoice) error { return nil }))
	require.NoError(b, err)
	// One real invoice, priced in the coin (no quote to renew), is the
	// template of every row.
	inv, err := desk.Create(ctx, &invoice.CreateOptions{Ticker: "btc", Price: invoicesuite.D("0.001"),
		Callback: "https://shop.example/callback", Address: invoicesuite.BTCDest, ExpiresIn: 24 * time.Hour})
	require.NoError(b, err)
	r, err := s.Load(ctx, inv.ID)
	require.NoError(b, err)
	rec, err := r.MarshalJSON()
	require.NoError(b, err)
	insert := func(prefix, status string, n int) {
		_, err := db.ExecContext(ctx, `INSERT INTO "`+table+`"
	(id, order_id, status, version, record, invoice_created_at, exception, open_order, tick_at, pending)
SELECT $1 || g, '', $2, 1,
	jsonb_set(jsonb_set(jsonb_set($3::jsonb, '{invoice,id}', to_jsonb($1 || g)), '{invoice,status}', to_jsonb($2::text)),
		'{invoice,expires_at}', to_jsonb(to_char(d.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))),
	$4::timestamptz, '', NULL, CASE WHEN $2 = 'new' THEN d.at END, false
FROM generate_series(0, $5::int - 1) AS g,
	LATERAL (SELECT $4::timestamptz + (g / $6::int + 1) * interval '1 minute' AS at) AS d`,
			prefix, status, rec, invoicesuite.T0, n, duePerTick)
		require.NoError(b, err)
	}
	insert("S", "settled", settled)
	insert("D", "new", slots*duePerTick)
	_, err = db.ExecContext(ctx, `ANALYZE "`+table+`"`)
	require.NoError(b, err)
	return tickWorld{desk: desk, clock: clock}
}

// tick moves the clock a minute and ticks: duePerTick invoices expire.
func (w tickWorld) tick(b *testing.B) func(n int) {
	return func(n int) {
		for range n {
			w.clock.Advance(time.Minute)
			changed, err := w.desk.Tick(context.Background())
			if err != nil || changed != duePerTick {
				b.Fatalf("tick changed %d invoices (want %d): %v", changed, duePerTick, err)
			}
		}
	}
}

// BenchmarkTickCostPerDueInvoice: a Tick that expires ten due invoices
// (reads them, stores each expiry and its change, passes it to onChange)
// in a table of 100,000 settled invoices, against the same in a table of
// 1,000. The work follows the invoices due, not the invoices stored: the
// ratio stays near 1. Run with a fixed count (the due invoices are made
// beforehand, b.N × 10 in each table):
//
//	go test ./invoice/pgstore -run XXX -bench TickCostPerDueInvoice -benchtime 200x -count 3
func BenchmarkTickCostPerDueInvoice(b *testing.B) {
	srv := cryptapitest.NewServer(cryptapitest.WithHTTPClient(&http.Client{Timeout: 5 * time.Second}))
	b.Cleanup(srv.Close)
	small := newTickWorld(b, srv, 1_000, b.N)
	large := newTickWorld(b, srv, 100_000, b.N)
	benchcmp.Run(b, 5,
		benchcmp.Contender{Name: "stored1k", Op: small.tick(b)},
		benchcmp.Contender{Name: "stored100k", Op: large.tick(b)},
	)
}
