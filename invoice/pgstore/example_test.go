package pgstore_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/invoice"
	"github.com/forwardpay/cryptapi-go/invoice/pgstore"
)

// Every replica opens its own pool on the shared database and gives its
// Desk a Store on the same tables. onChange writes the order's state with
// the transaction pgstore.Tx gives it, so the write commits together with
// the mark that the change was passed on: exactly once, whichever replica
// runs it.
func Example() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(db, pgstore.WithTable("shop_invoices"))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	client, err := cryptapi.New()
	if err != nil {
		log.Fatal(err)
	}
	// onChange writes the order with the transaction that marks the change
	// passed on.
	onChange := func(ctx context.Context, inv *invoice.Invoice) error {
		tx, _ := pgstore.Tx(ctx)
		_, err := tx.ExecContext(ctx, `UPDATE orders SET status = $2, paid = $3 WHERE id = $1`,
			inv.OrderID, string(inv.Status), inv.Paid.String())
		return err
	}
	desk, err := invoice.New(client, store, invoice.WithOnChange(onChange))
	if err != nil {
		log.Fatal(err)
	}
	v, err := callback.NewVerifier(callback.WithPublicURL("https://shop.example"))
	if err != nil {
		log.Fatal(err)
	}
	h, err := desk.Handler(v)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/invoices/callback", h)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
