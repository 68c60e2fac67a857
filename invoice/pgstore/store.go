// Package pgstore is an invoice.Store kept in PostgreSQL, for a shop that
// runs several replicas: every replica opens its own pool on the shared
// database and gives its Desk a Store over the same tables.
//
// It works over database/sql with any PostgreSQL driver (pgx's stdlib
// driver "pgx", or lib/pq's "postgres"), in three tables created by
// Migrate (the names follow WithTable, DefaultTable by default):
//
//	cryptapi_invoices            one row per invoice: id, order_id, status,
//	                             version, record (jsonb), created_at, updated_at
//	cryptapi_invoices_changes    one row per change, until onChange accepted it
//	cryptapi_invoices_callbacks  the callbacks' de-duplication (callback/pgstore)
//
// # Guarantees
//
// Update locks the invoice's row (SELECT ... FOR UPDATE), so changes of one
// invoice are computed one at a time on the latest state, whatever replica
// computes them. The new invoice, its change row and the callback's done
// mark (callback/pgstore's CompleteTx) commit in one transaction: a
// callback is recorded as done exactly when its effect on the invoice is.
//
// Notify serialises on a transaction-scoped advisory lock per invoice, and
// marks a change passed in the transaction that was open while onChange
// ran: a change is passed to one onChange at a time, in order, and again
// only if onChange failed or the process died before the mark committed.
// For exactly-once effects, write them with the transaction Tx returns
// inside onChange: they commit together with the mark.
//
// Every database failure is returned as an error wrapping ErrUnavailable
// (and the driver's error); a callback that meets one is not acknowledged,
// and the service delivers it again.
package pgstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/pgident"

	"github.com/forwardpay/cryptapi-go/callback"
	cbpg "github.com/forwardpay/cryptapi-go/callback/pgstore"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// DefaultTable is the invoices table unless WithTable names another.
const DefaultTable = "cryptapi_invoices"

var (
	// ErrUnavailable is wrapped by every error that comes from the
	// database (it is callback/pgstore's ErrUnavailable).
	ErrUnavailable = cbpg.ErrUnavailable
	// ErrInvalidTable is returned by New for a table name that is not a
	// plain identifier or schema.identifier of at most 53 bytes (the
	// companion tables add a suffix).
	ErrInvalidTable = errors.New("invoice/pgstore: invalid table name")
)

var _ invoice.Store = (*Store)(nil)

// Store is an invoice.Store in PostgreSQL. It is safe for concurrent use,
// starts no goroutines, and New does no I/O.
type Store struct {
	db        *sql.DB
	callbacks *cbpg.Store
	lockName  string

	createSQL                                                           []string
	insertSQL, loadSQL, lockSQL, updateSQL, changeSQL, nextSQL, markSQL string
}

// Option configures a Store. Nil options are skipped.
type Option func(*config) error

type config struct {
	table     string
	callbacks *cbpg.Store
}

// WithTable sets the invoices table, "name" or "schema.name" (letters,
// digits and underscores, at most 53 bytes each part); the changes and
// callbacks tables are that name with "_changes" and "_callbacks". The
// default is DefaultTable.
func WithTable(name string) Option {
	return func(c *config) error {
		if _, _, err := parseTable(name, ""); err != nil {
			return err
		}
		c.table = name
		return nil
	}
}

// WithCallbackStore makes the Store de-duplicate callbacks in s (a
// callback/pgstore Store on the same database, for example the one the
// shop's other callbacks use) instead of its own "_callbacks" table.
func WithCallbackStore(s *cbpg.Store) Option {
	return func(c *config) error {
		if s == nil {
			return errors.New("invoice/pgstore: nil callback store")
		}
		c.callbacks = s
		return nil
	}
}

// parseTable validates name and returns it with suffix, quoted, and the
// unquoted form.
func parseTable(name, suffix string) (quoted, plain string, err error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", "", fmt.Errorf("%w: %q", ErrInvalidTable, name)
	}
	for _, p := range parts {
		if !pgident.Valid(p, pgident.MaxLen-len("_callbacks")) {
			return "", "", fmt.Errorf("%w: %q", ErrInvalidTable, name)
		}
	}
	parts[len(parts)-1] += suffix
	plain = strings.Join(parts, ".")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, "."), plain, nil
}

// New returns a Store over db, a pool opened with any PostgreSQL driver
// for database/sql. It does no I/O; call Migrate once to create the
// tables.
func New(db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("invoice/pgstore: nil *sql.DB")
	}
	cfg := config{table: DefaultTable}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	t, plain, err := parseTable(cfg.table, "")
	if err != nil {
		return nil, err
	}
	ch, _, _ := parseTable(cfg.table, "_changes")
	cbs := cfg.callbacks
	if cbs == nil {
		_, cbPlain, _ := parseTable(cfg.table, "_callbacks")
		if cbs, err = cbpg.New(db, cbpg.WithTable(cbPlain)); err != nil {
			return nil, err
		}
	}
	bare := plain[strings.LastIndexByte(plain, '.')+1:]
	s := &Store{db: db, callbacks: cbs, lockName: "cryptapi-go/invoice/pgstore:" + plain}
	s.createSQL = []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (
	id         text COLLATE "C" NOT NULL PRIMARY KEY,
	order_id   text NOT NULL,
	status     text NOT NULL,
	version    bigint NOT NULL,
	record     jsonb NOT NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`,
		`CREATE TABLE IF NOT EXISTS ` + ch + ` (
	invoice_id  text COLLATE "C" NOT NULL,
	version     bigint NOT NULL,
	invoice     jsonb NOT NULL,
	created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	notified_at timestamptz,
	PRIMARY KEY (invoice_id, version)
)`,
		`CREATE INDEX IF NOT EXISTS "` + bare + `_order_id" ON ` + t + ` (order_id)`,
		`CREATE INDEX IF NOT EXISTS "` + bare + `_pending" ON ` + ch + ` (invoice_id, version) WHERE notified_at IS NULL`,
		`SELECT id, order_id, status, version, record, created_at, updated_at FROM ` + t + ` LIMIT 0`,
		`SELECT invoice_id, version, invoice, created_at, notified_at FROM ` + ch + ` LIMIT 0`,
	}
	s.insertSQL = `INSERT INTO ` + t + ` (id, order_id, status, version, record) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id) DO NOTHING RETURNING 1`
	s.loadSQL = `SELECT record FROM ` + t + ` WHERE id = $1`
	s.lockSQL = `SELECT record FROM ` + t + ` WHERE id = $1 FOR UPDATE`
	s.updateSQL = `UPDATE ` + t + ` SET record = $2, version = $3, status = $4, updated_at = clock_timestamp() WHERE id = $1`
	s.changeSQL = `INSERT INTO ` + ch + ` (invoice_id, version, invoice) VALUES ($1, $2, $3)`
	s.nextSQL = `SELECT version, invoice FROM ` + ch + ` WHERE invoice_id = $1 AND notified_at IS NULL ORDER BY version LIMIT 1`
	s.markSQL = `UPDATE ` + ch + ` SET notified_at = clock_timestamp() WHERE invoice_id = $1 AND version = $2 AND notified_at IS NULL`
	return s, nil
}

// Migrate creates the tables and indexes if they do not exist (the
// callbacks table too, unless WithCallbackStore gave one). It is safe to
// run again and from several processes at once.
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, s.lockName); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	for _, q := range s.createSQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return dbErr(ctx, "migrate", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	return s.callbacks.Migrate(ctx)
}

// Callbacks implements invoice.Store: the callback/pgstore Store whose
// keys Update marks done in its own transaction.
func (s *Store) Callbacks() callback.Store { return s.callbacks }

// Insert implements invoice.Store.
func (s *Store) Insert(ctx context.Context, r *invoice.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var one int
	err = s.db.QueryRowContext(ctx, s.insertSQL, r.ID(), r.Invoice.OrderID, string(r.Invoice.Status), r.Version(), b).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return invoice.ErrDuplicate
	}
	if err != nil {
		return dbErr(ctx, "insert", err)
	}
	return nil
}

// Load implements invoice.Store.
func (s *Store) Load(ctx context.Context, id string) (*invoice.Record, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, s.loadSQL, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invoice.ErrNotFound
	}
	if err != nil {
		return nil, dbErr(ctx, "load", err)
	}
	return decode(b)
}

func decode(b []byte) (*invoice.Record, error) {
	r := &invoice.Record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("invoice/pgstore: stored record: %w", err)
	}
	return r, nil
}

// Update implements invoice.Store: one transaction locks the invoice's
// row, stores what change returns with its change row, and marks key done
// in the callbacks table (callback/pgstore's CompleteTx, so key must be
// claimed through Callbacks); all or nothing.
func (s *Store) Update(ctx context.Context, id, key string, change func(*invoice.Record) (*invoice.Record, error)) (*invoice.Record, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, dbErr(ctx, "update", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var b []byte
	err = tx.QueryRowContext(ctx, s.lockSQL, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invoice.ErrNotFound
	}
	if err != nil {
		return nil, dbErr(ctx, "update", err)
	}
	cur, err := decode(b)
	if err != nil {
		return nil, err
	}
	next, err := change(cur)
	if err != nil {
		return nil, err
	}
	if next != nil {
		nb, err := json.Marshal(next)
		if err != nil {
			return nil, err
		}
		ib, err := json.Marshal(&next.Invoice)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, s.updateSQL, id, nb, next.Version(), string(next.Invoice.Status)); err != nil {
			return nil, dbErr(ctx, "update", err)
		}
		if _, err := tx.ExecContext(ctx, s.changeSQL, id, next.Version(), ib); err != nil {
			return nil, dbErr(ctx, "update: change", err)
		}
		cur = next
	}
	if key != "" {
		if err := s.callbacks.CompleteTx(ctx, tx, key); err != nil {
			return nil, fmt.Errorf("invoice/pgstore: update: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, dbErr(ctx, "update: commit", err)
	}
	return cur, nil
}

type txKey struct{}

// Tx returns the transaction of the Notify call that runs onChange with
// ctx: what onChange writes with it commits together with the mark that
// the change was passed, so that its effect happens exactly once. It
// reports false outside such a call. Do not commit or roll it back.
func Tx(ctx context.Context) (*sql.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(*sql.Tx)
	return tx, ok
}

// Notify implements invoice.Store. Each change is passed in a transaction
// of its own, holding the invoice's advisory lock while fn runs: fn holds
// one connection of the pool (see Tx), and anything else it does with the
// database, or with the Desk (Get, Invalidate), needs another.
func (s *Store) Notify(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) error {
	for {
		done, err := s.notifyOne(ctx, id, fn)
		if err != nil || done {
			return err
		}
	}
}

func (s *Store) notifyOne(ctx context.Context, id string, fn func(context.Context, *invoice.Invoice) error) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, dbErr(ctx, "notify", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))`, s.lockName, id); err != nil {
		return false, dbErr(ctx, "notify: lock", err)
	}
	var version int64
	var b []byte
	err = tx.QueryRowContext(ctx, s.nextSQL, id).Scan(&version, &b)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, dbErr(ctx, "notify", err)
	}
	inv := &invoice.Invoice{}
	if err := json.Unmarshal(b, inv); err != nil {
		return false, fmt.Errorf("invoice/pgstore: stored change: %w", err)
	}
	if err := fn(context.WithValue(ctx, txKey{}, tx), inv); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, s.markSQL, id, version); err != nil {
		return false, dbErr(ctx, "notify: mark", err)
	}
	if err := tx.Commit(); err != nil {
		return false, dbErr(ctx, "notify: commit", err)
	}
	return false, nil
}

// dbErr wraps a database error with ErrUnavailable, or with ctx's error
// when ctx ended; the driver's error stays reachable with errors.As.
func dbErr(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("invoice/pgstore: %s: %w: %w", op, cerr, err)
	}
	return fmt.Errorf("invoice/pgstore: %s: %w: %w", op, ErrUnavailable, err)
}
