package pgstore_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// Every replica opens its own pool on the shared database and gives the
// handler a Store on it. The handler's fn records the payment and marks the
// callback done in one transaction with CompleteTx, so a merchant's order is
// updated exactly once however many replicas receive the callback.
func Example() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(db, pgstore.WithTable("cryptapi_callbacks"))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	v, err := callback.NewVerifier()
	if err != nil {
		log.Fatal(err)
	}
	fn := func(ctx context.Context, p *callback.Payment) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		if _, err := tx.ExecContext(ctx,
			`UPDATE orders SET paid = true WHERE payment_uuid = $1`, p.UUID); err != nil {
			return err
		}
		// The key the handler claimed for this callback.
		if err := store.CompleteTx(ctx, tx, callback.PaymentKey(p)); err != nil {
			return err
		}
		return tx.Commit()
	}
	// Callbacks for an address this shop did not create are refused.
	known := func(ctx context.Context, addressIn string) (bool, error) {
		var ok bool
		err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM orders WHERE address_in = $1)`, addressIn).Scan(&ok)
		return ok, err
	}
	h, err := callback.NewHandler(v, fn, callback.WithStore(store), callback.WithAddressCheck(known))
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:              ":8080",
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      callback.DefaultLease + time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	log.Fatal(srv.ListenAndServe())
}

// WithinTx for payments that arrive by other means than the handler, for
// example replayed from the service's logs.
func ExampleStore_WithinTx() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(db)
	if err != nil {
		log.Fatal(err)
	}
	c, err := store.WithinTx(ctx, "2c1a5c5e-0d4c-4a8e-9d6f-3e2f1b0a9c8d:confirmed",
		func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE orders SET paid = true WHERE id = $1`, 42)
			return err
		})
	switch {
	case err != nil:
		log.Printf("not recorded, try again later: %v", err)
	case c == callback.Busy:
		log.Print("being processed elsewhere, try again later")
	default: // Claimed: done now; Done: done before
		log.Print("recorded")
	}
}

// Purge from a ticker keeps the table small. Keep done keys well beyond the
// time the service keeps retrying a callback.
func ExampleStore_Purge() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(db)
	if err != nil {
		log.Fatal(err)
	}
	for range time.Tick(time.Hour) {
		n, err := store.Purge(ctx, 30*24*time.Hour)
		if err != nil {
			log.Printf("purge: %v", err)
			continue
		}
		log.Printf("purged %d callback records", n)
	}
}
