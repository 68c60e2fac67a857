package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/callback/pgstore"
)

// defaultOrdersTable is where pgOrders keeps the orders unless
// -orders-table says otherwise.
const defaultOrdersTable = "merchant_orders"

var tableNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// pgOrders keeps the orders in a PostgreSQL table that every replica
// shares, next to the callback handler's pgstore table in the same
// database, so that one transaction can write both.
type pgOrders struct {
	db    *sql.DB
	store *pgstore.Store // the handler's store: Record completes its keys
	table string         // quoted
	lock  string         // advisory lock name for migrate
	now   func() time.Time
}

// newPGOrders returns the orders kept in table, a plain identifier, on db.
// store must be the Store the callback handler uses in this process: Record
// marks the handler's claims done through it.
func newPGOrders(db *sql.DB, store *pgstore.Store, table string, now func() time.Time) (*pgOrders, error) {
	if !tableNameRE.MatchString(table) {
		return nil, fmt.Errorf("invalid orders table name %q", table)
	}
	return &pgOrders{
		db:    db,
		store: store,
		table: `"` + table + `"`,
		lock:  "examples/merchant:" + table,
		now:   now,
	}, nil
}

// migrate creates the orders table if it does not exist. Replicas that
// start together serialise on an advisory lock, because concurrent CREATE
// TABLE IF NOT EXISTS can fail in PostgreSQL.
func (s *pgOrders) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, s.lock); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+s.table+` (
	id          text PRIMARY KEY,
	nonce       text NOT NULL,
	ticker      text NOT NULL,
	amount      numeric NOT NULL,
	price       numeric NOT NULL,
	currency    text NOT NULL,
	address_in  text NOT NULL UNIQUE,
	minimum     numeric NOT NULL,
	payment_uri text NOT NULL,
	state       text NOT NULL,
	received    numeric NOT NULL,
	txids       jsonb NOT NULL,
	created_at  timestamptz NOT NULL,
	paid_at     timestamptz
)`); err != nil {
		return err
	}
	return tx.Commit()
}

const orderColumns = `id, nonce, ticker, amount, price, currency, address_in, minimum, payment_uri, state, received, txids, created_at, paid_at`

func (s *pgOrders) Add(ctx context.Context, o *Order) error {
	txids, err := json.Marshal(append([]string{}, o.TxIDs...))
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO `+s.table+` (`+orderColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14)`,
		o.ID, o.nonce, o.Ticker, o.Amount, o.Price, o.Currency, o.AddressIn, o.Minimum,
		o.PaymentURI, o.State, o.Received, string(txids), o.CreatedAt, nullTime(o.PaidAt))
	return err
}

func (s *pgOrders) Get(ctx context.Context, id string) (*Order, error) {
	o, err := scanOrder(s.db.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM `+s.table+` WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	return o, err
}

func (s *pgOrders) KnowsAddress(ctx context.Context, addressIn string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+s.table+` WHERE address_in = $1)`, addressIn).Scan(&ok)
	return ok, err
}

// Record applies one verified callback to its order and marks the callback
// done for the handler, in one transaction:
//
//	BEGIN
//	SELECT ... FROM merchant_orders WHERE address_in = $1 FOR UPDATE
//	-- check order_id and nonce, add the payment (Order.apply)
//	UPDATE merchant_orders SET state = ..., received = ..., txids = ...
//	-- store.CompleteTx: the handler's claim on this callback becomes "done"
//	COMMIT
//
// Why one transaction: the handler claims the callback's key in the store,
// calls Record, and then marks the key done with its own Complete. Were
// the order committed on its own, a process that died (or lost the
// database) after that commit and before Complete would leave the key only
// claimed; once its lease ran out, the service's next delivery of the same
// callback would be processed again, here or on another replica, and the
// payment counted twice. Committed together, either both the order update
// and the done mark are durable, and every later delivery finds the key
// done and is just acknowledged; or neither is, and a later delivery
// records the payment for the first time. Effects happen exactly once. The
// handler's own Complete then finds the key done and changes nothing.
//
// Why FOR UPDATE: two payments to one address (a customer who pays in two
// transactions) have different keys and may be processed at the same
// moment on two replicas. The row lock makes the second wait until the
// first has committed and then read its total, instead of both adding to
// the same old total.
//
// Any error rolls everything back; the handler then releases its claim and
// answers 500, and the service delivers the callback again.
func (s *pgOrders) Record(ctx context.Context, p *callback.Payment) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit

	o, err := scanOrder(tx.QueryRowContext(ctx,
		`SELECT `+orderColumns+` FROM `+s.table+` WHERE address_in = $1 FOR UPDATE`, p.AddressIn))
	if errors.Is(err, sql.ErrNoRows) {
		return errMismatch
	}
	if err != nil {
		return err
	}
	if err := o.apply(p, s.now()); err != nil {
		return err
	}
	txids, err := json.Marshal(o.TxIDs)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE `+s.table+` SET state = $2, received = $3, txids = $4::jsonb, paid_at = $5 WHERE id = $1`,
		o.ID, o.State, o.Received, string(txids), nullTime(o.PaidAt)); err != nil {
		return err
	}
	// The key the handler claimed for this callback, through the same
	// Store (it holds the claim's token).
	if err := s.store.CompleteTx(ctx, tx, callback.PaymentKey(p)); err != nil {
		return err
	}
	return tx.Commit()
}

func scanOrder(row *sql.Row) (*Order, error) {
	var (
		o      Order
		txids  []byte
		paidAt sql.NullTime
	)
	err := row.Scan(&o.ID, &o.nonce, &o.Ticker, &o.Amount, &o.Price, &o.Currency, &o.AddressIn,
		&o.Minimum, &o.PaymentURI, &o.State, &o.Received, &txids, &o.CreatedAt, &paidAt)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(txids, &o.TxIDs); err != nil {
		return nil, fmt.Errorf("order %s: txids: %w", o.ID, err)
	}
	o.CreatedAt = o.CreatedAt.UTC()
	if paidAt.Valid {
		t := paidAt.Time.UTC()
		o.PaidAt = &t
	}
	return &o, nil
}

func nullTime(t *time.Time) sql.NullTime {
	if t == nil {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: *t, Valid: true}
}
