// Package pgstore is an invoice.Store kept in PostgreSQL, for a shop that
// runs several replicas: every replica opens its own pool on the shared
// database and gives its Desk a Store over the same tables.
//
// It works over database/sql with any PostgreSQL driver (pgx's stdlib
// driver "pgx", or lib/pq's "postgres"), in three tables created by
// Migrate (the names follow WithTable, DefaultTable by default):
//
//	cryptapi_invoices            one row per invoice: the record (jsonb), and
//	                             the columns it is found by: order_id, status,
//	                             exception, invoice_created_at and seq (the
//	                             listing order), open_order (unique: one open
//	                             invoice per order), tick_at, pending and
//	                             wake_at (Tick's index)
//	cryptapi_invoices_changes    one row per change, until onChange accepted it
//	cryptapi_invoices_keys       one row per unique key of an invoice (a refund's
//	                             claim token, a payout request a refund uses),
//	                             naming the invoice: LoadByKey's index
//	cryptapi_invoices_callbacks  the callbacks' de-duplication (callback/pgstore)
//
// # Guarantees
//
// Update locks the invoice's row (SELECT ... FOR UPDATE), so changes of one
// invoice are computed one at a time on the latest state, whatever replica
// computes them. The new invoice, its change row and the callback's done
// mark (callback/pgstore's CompleteTx) commit in one transaction: a
// callback is recorded as done exactly when its effect on the invoice is.
// A unique index on open_order keeps one open invoice per order, across
// replicas.
//
// Notify serialises on a transaction-scoped advisory lock per invoice, and
// marks a change passed in the transaction that was open while onChange
// ran: a change is passed to one onChange at a time, in order, and again
// only if onChange failed or the process died before the mark committed.
// For exactly-once effects, write them with the transaction Tx returns
// inside onChange: they commit together with the mark.
//
// Due reads an index on wake_at (the invoice's tick time, or the epoch
// while a change waits for onChange): a Tick reads about as many rows as
// are due, whatever the number of invoices stored. List reads pages of
// pageSize rows along an index on (invoice_created_at, seq).
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
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/pgident"

	"github.com/forwardpay/cryptapi-go/callback"
	cbpg "github.com/forwardpay/cryptapi-go/callback/pgstore"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// DefaultTable is the invoices table unless WithTable names another.
const DefaultTable = "cryptapi_invoices"

// pageSize is how many rows Due and List read at a time.
const pageSize = 100

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
	table     string // quoted
	changes   string // quoted
	keys      string // quoted
	keysRaw   string // the keys table's name as to_regclass reads it
	plain     string // the table's name as to_regclass reads it
	bare      string // the table's name without its schema, for index names

	insertSQL, existsSQL, loadSQL, lockSQL, updateSQL, changeSQL, nextSQL, markSQL string
	pendingSQL, moreSQL, clearSQL, dueSQL, positionSQL, keySQL, byKeySQL           string
}

// Option configures a Store. Nil options are skipped.
type Option func(*config) error

type config struct {
	table     string
	callbacks *cbpg.Store
}

// WithTable sets the invoices table, "name" or "schema.name" (letters,
// digits and underscores, at most 53 bytes each part); the changes,
// keys and callbacks tables are that name with "_changes", "_keys"
// and "_callbacks". The default is DefaultTable.
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
	cl, clPlain, _ := parseTable(cfg.table, "_keys")
	cbs := cfg.callbacks
	if cbs == nil {
		_, cbPlain, _ := parseTable(cfg.table, "_callbacks")
		if cbs, err = cbpg.New(db, cbpg.WithTable(cbPlain)); err != nil {
			return nil, err
		}
	}
	s := &Store{db: db, callbacks: cbs, lockName: "cryptapi-go/invoice/pgstore:" + plain,
		table: t, changes: ch, keys: cl, keysRaw: clPlain, plain: t, bare: plain[strings.LastIndexByte(plain, '.')+1:]}
	s.insertSQL = `WITH ins AS (
	INSERT INTO ` + t + ` (id, order_id, status, version, record, invoice_created_at, exception, open_order, tick_at, pending)
	VALUES ($1, $2, $3, $4::bigint, $5, $6, $7, $8, $9, $4::bigint >= 2)
	ON CONFLICT DO NOTHING RETURNING id
), change AS (
	INSERT INTO ` + ch + ` (invoice_id, version, invoice) SELECT id, $4::bigint, $10 FROM ins WHERE $4::bigint >= 2
)
SELECT count(*) FROM ins`
	s.existsSQL = `SELECT EXISTS (SELECT 1 FROM ` + t + ` WHERE id = $1)`
	s.loadSQL = `SELECT record FROM ` + t + ` WHERE id = $1`
	s.lockSQL = `SELECT record FROM ` + t + ` WHERE id = $1 FOR UPDATE`
	s.updateSQL = `UPDATE ` + t + ` SET record = $2, version = $3::bigint, status = $4, exception = $5,
	open_order = CASE $8::int WHEN 1 THEN $6 WHEN 2 THEN NULL ELSE open_order END,
	tick_at = $7, pending = pending OR $9::bool, updated_at = clock_timestamp() WHERE id = $1`
	s.changeSQL = `INSERT INTO ` + ch + ` (invoice_id, version, invoice) VALUES ($1, $2, $3)`
	s.nextSQL = `SELECT version, invoice FROM ` + ch + ` WHERE invoice_id = $1 AND notified_at IS NULL ORDER BY version LIMIT 1`
	s.markSQL = `UPDATE ` + ch + ` SET notified_at = clock_timestamp() WHERE invoice_id = $1 AND version = $2 AND notified_at IS NULL`
	s.pendingSQL = `SELECT pending FROM ` + t + ` WHERE id = $1 FOR UPDATE`
	s.moreSQL = `SELECT EXISTS (SELECT 1 FROM ` + ch + ` WHERE invoice_id = $1 AND notified_at IS NULL)`
	s.clearSQL = `UPDATE ` + t + ` SET pending = false WHERE id = $1`
	s.dueSQL = `SELECT id, wake_at FROM ` + t + ` WHERE wake_at <= $1 AND (wake_at, id) > ($2, $3)
ORDER BY wake_at, id LIMIT ` + strconv.Itoa(pageSize)
	s.positionSQL = `SELECT invoice_created_at, seq FROM ` + t + ` WHERE id = $1`
	s.keySQL = `INSERT INTO ` + cl + ` (key, invoice_id) VALUES ($1, $2)`
	s.byKeySQL = `SELECT t.record FROM ` + cl + ` k JOIN ` + t + ` t ON t.id = k.invoice_id WHERE k.key = $1`
	return s, nil
}

// A column Migrate adds to a table that lacks it, and how it fills the
// rows that were there.
type column struct {
	name, ddl string
	fill      []string // statements run once, when the column is added
}

func (s *Store) columns() []column {
	t, ch := s.table, s.changes
	return []column{
		{name: "seq", ddl: "bigint GENERATED BY DEFAULT AS IDENTITY", fill: []string{
			// Rows stored before v0.2.0 are numbered in the order they were
			// inserted, and the sequence goes on after them.
			`UPDATE ` + t + ` SET seq = n.rn FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS rn FROM ` + t + `) n WHERE ` + t + `.id = n.id`,
			`SELECT setval(pg_get_serial_sequence('` + strings.ReplaceAll(t, "'", "''") + `', 'seq'), coalesce((SELECT max(seq) FROM ` + t + `), 0) + 1, false)`,
		}},
		{name: "invoice_created_at", ddl: "timestamptz", fill: []string{
			`UPDATE ` + t + ` SET invoice_created_at = (record->'invoice'->>'created_at')::timestamptz`,
			`ALTER TABLE ` + t + ` ALTER COLUMN invoice_created_at SET NOT NULL`,
		}},
		{name: "exception", ddl: "text NOT NULL DEFAULT ''", fill: []string{
			`UPDATE ` + t + ` SET exception = record->'invoice'->>'exception' WHERE coalesce(record->'invoice'->>'exception', '') <> ''`,
		}},
		{name: "open_order", ddl: "text", fill: []string{
			// v0.1.0 allowed several open invoices per order: the newest
			// holds it.
			`UPDATE ` + t + ` SET open_order = order_id WHERE id IN (
	SELECT DISTINCT ON (order_id) id FROM ` + t + `
	WHERE status IN ('new', 'processing') AND order_id <> ''
	ORDER BY order_id, invoice_created_at DESC, seq DESC)`,
		}},
		{name: "tick_at", ddl: "timestamptz"}, // filled by Migrate from the records
		{name: "pending", ddl: "boolean NOT NULL DEFAULT false", fill: []string{
			`UPDATE ` + t + ` SET pending = true WHERE EXISTS (SELECT 1 FROM ` + ch + ` c WHERE c.invoice_id = ` + t + `.id AND c.notified_at IS NULL)`,
		}},
		{name: "wake_at", ddl: "timestamptz GENERATED ALWAYS AS (CASE WHEN pending THEN timestamptz '1970-01-01 00:00:00+00' ELSE tick_at END) STORED"},
	}
}

// Migrate creates the tables and indexes if they do not exist (the
// callbacks table too, unless WithCallbackStore gave one), and upgrades
// tables made by an earlier version: it adds the columns they lack,
// fills them from the records they hold, and adds the indexes. It is safe
// to run again and from several processes at once. Upgrading a table of
// v0.1.0 reads every row once, under a lock that makes the other
// replicas' writes wait. Stop the replicas of v0.1.0 before: they do not
// write the new columns, and their inserts fail once the table is
// upgraded (invoice_created_at is required).
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	t, ch, b := s.table, s.changes, s.bare
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return dbErr(ctx, "migrate", err)
		}
		return nil
	}
	if err := exec(`SELECT pg_advisory_xact_lock(hashtext($1))`, s.lockName); err != nil {
		return err
	}
	for _, q := range []string{
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
	} {
		if err := exec(q); err != nil {
			return err
		}
	}
	var keysExist bool
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, s.keysRaw).Scan(&keysExist); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	if !keysExist {
		// The records' unique keys (refunds' claim tokens, the payout
		// requests refunds use); a table of an earlier version gets it,
		// filled from the records (which hold the keys) in case any has
		// refunds.
		if err := exec(`CREATE TABLE ` + s.keys + ` (
	key        text COLLATE "C" NOT NULL PRIMARY KEY,
	invoice_id text COLLATE "C" NOT NULL
)`); err != nil {
			return err
		}
		if err := exec(`INSERT INTO ` + s.keys + ` (key, invoice_id)
SELECT k.key, t.id FROM ` + t + ` t CROSS JOIN LATERAL jsonb_array_elements(
	CASE jsonb_typeof(t.record->'refunds') WHEN 'array' THEN t.record->'refunds' ELSE '[]'::jsonb END) w
CROSS JOIN LATERAL (
	SELECT w->>'token' AS key
	UNION ALL
	SELECT '` + invoice.PayoutRequestKey + `' || r FROM jsonb_array_elements_text(
		CASE jsonb_typeof(w->'requests') WHEN 'array' THEN w->'requests' ELSE '[]'::jsonb END) r
) k
WHERE coalesce(k.key, '') <> ''
ON CONFLICT (key) DO NOTHING`); err != nil {
			return err
		}
	}
	have := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, s.plain)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return dbErr(ctx, "migrate", err)
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	addedTick := false
	for _, c := range s.columns() {
		if have[c.name] {
			continue
		}
		if err := exec(`ALTER TABLE ` + t + ` ADD COLUMN ` + c.name + ` ` + c.ddl); err != nil {
			return err
		}
		for _, q := range c.fill {
			if err := exec(q); err != nil {
				return err
			}
		}
		addedTick = addedTick || c.name == "tick_at"
	}
	if addedTick {
		if err := s.fillTickAt(ctx, tx); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`CREATE INDEX IF NOT EXISTS "` + b + `_order_id" ON ` + t + ` (order_id)`,
		`CREATE UNIQUE INDEX IF NOT EXISTS "` + b + `_open" ON ` + t + ` (open_order) WHERE open_order IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS "` + b + `_wake" ON ` + t + ` (wake_at, id) WHERE wake_at IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS "` + b + `_list" ON ` + t + ` (invoice_created_at, seq)`,
		`CREATE INDEX IF NOT EXISTS "` + b + `_slist" ON ` + t + ` (status, invoice_created_at, seq)`,
		`CREATE INDEX IF NOT EXISTS "` + b + `_pending" ON ` + ch + ` (invoice_id, version) WHERE notified_at IS NULL`,
		`SELECT id, order_id, status, version, record, created_at, updated_at, seq, invoice_created_at, exception,
	open_order, tick_at, pending, wake_at FROM ` + t + ` LIMIT 0`,
		`SELECT invoice_id, version, invoice, created_at, notified_at FROM ` + ch + ` LIMIT 0`,
		`SELECT key, invoice_id FROM ` + s.keys + ` LIMIT 0`,
	} {
		if err := exec(q); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	return s.callbacks.Migrate(ctx)
}

// fillTickAt computes the tick time of the open invoices of a table that
// had none (only the invoice package knows how).
func (s *Store) fillTickAt(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT record FROM `+s.table+` WHERE status IN ('new', 'processing')`)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	type tick struct {
		id string
		at time.Time
	}
	var ticks []tick
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return dbErr(ctx, "migrate", err)
		}
		r, err := decode(b)
		if err != nil {
			rows.Close()
			return err
		}
		if at := r.TickAt(); !at.IsZero() {
			ticks = append(ticks, tick{r.ID(), at})
		}
	}
	if err := rows.Err(); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	for _, k := range ticks {
		if _, err := tx.ExecContext(ctx, `UPDATE `+s.table+` SET tick_at = $2 WHERE id = $1`, k.id, k.at); err != nil {
			return dbErr(ctx, "migrate", err)
		}
	}
	return nil
}

// Callbacks implements invoice.Store: the callback/pgstore Store whose
// keys Update marks done in its own transaction.
func (s *Store) Callbacks() callback.Store { return s.callbacks }

// indexed is what a record's columns hold besides the record.
type indexed struct {
	record, invoice   []byte // the invoice only for a change
	openOrder, tickAt any    // nil for none
	status, exception string
	version           int64
	createdAt         time.Time
	orderID, id       string
}

func index(r *invoice.Record) (indexed, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return indexed{}, err
	}
	x := indexed{record: b, status: string(r.Invoice.Status), exception: string(r.Invoice.Exception),
		version: r.Version(), createdAt: r.Invoice.CreatedAt, orderID: r.Invoice.OrderID, id: r.ID()}
	if o := r.OpenOrder(); o != "" {
		x.openOrder = o
	}
	if at := r.TickAt(); !at.IsZero() {
		x.tickAt = at
	}
	if x.version >= 2 {
		if x.invoice, err = json.Marshal(&r.Invoice); err != nil {
			return indexed{}, err
		}
	}
	return x, nil
}

// Insert implements invoice.Store. A record that holds keys (the Desk
// inserts none) is inserted with them in one transaction.
func (s *Store) Insert(ctx context.Context, r *invoice.Record) error {
	x, err := index(r)
	if err != nil {
		return err
	}
	keys := r.Keys()
	var q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	} = s.db
	var tx *sql.Tx
	if len(keys) > 0 {
		if tx, err = s.db.BeginTx(ctx, nil); err != nil {
			return dbErr(ctx, "insert", err)
		}
		defer tx.Rollback() //nolint:errcheck // no-op after Commit
		q = tx
	}
	var n int
	err = q.QueryRowContext(ctx, s.insertSQL, x.id, x.orderID, x.status, x.version, x.record, x.createdAt,
		x.exception, x.openOrder, x.tickAt, x.invoice).Scan(&n)
	if err != nil {
		return dbErr(ctx, "insert", err)
	}
	if n == 1 {
		if tx == nil {
			return nil
		}
		if err := s.addKeys(ctx, tx, x.id, keys); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return dbErr(ctx, "insert: commit", err)
		}
		return nil
	}
	var exists bool
	if err := s.db.QueryRowContext(ctx, s.existsSQL, x.id).Scan(&exists); err != nil {
		return dbErr(ctx, "insert", err)
	}
	if exists {
		return invoice.ErrDuplicate
	}
	return invoice.ErrOrderOpen
}

// addKeys indexes the keys of invoice id, in tx; a key another invoice
// holds is invoice.ErrDuplicate.
func (s *Store) addKeys(ctx context.Context, tx *sql.Tx, id string, keys []string) error {
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, s.keySQL, k, id); err != nil {
			if uniqueViolation(err) {
				return fmt.Errorf("%w: key held by another invoice", invoice.ErrDuplicate)
			}
			return dbErr(ctx, "claim", err)
		}
	}
	return nil
}

// LoadByKey implements invoice.Store: one read along the keys
// table's primary key.
func (s *Store) LoadByKey(ctx context.Context, key string) (*invoice.Record, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, s.byKeySQL, key).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invoice.ErrNotFound
	}
	if err != nil {
		return nil, dbErr(ctx, "load by claim", err)
	}
	return decode(b)
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
	// Called directly: json.Unmarshal would check the bytes once more
	// before handing them to the method, which checks them itself.
	if err := r.UnmarshalJSON(b); err != nil {
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
	// What the stored record holds, before change (which may modify the
	// copy it is given).
	was, wasOpen, hadKeys := cur.Version(), cur.OpenOrder(), cur.Keys()
	next, err := change(cur)
	if err != nil {
		return nil, err
	}
	if next != nil {
		x, err := index(next)
		if err != nil {
			return nil, err
		}
		// A record that opens its order claims it; one that closes it
		// gives it up; one that stays open keeps what it had (an open
		// invoice of v0.1.0 that does not hold its order stays so).
		open := 0
		switch {
		case next.OpenOrder() != "" && wasOpen == "":
			open = 1
		case next.OpenOrder() == "":
			open = 2
		}
		// A higher version is a change for onChange; the same version is
		// the Desk's bookkeeping.
		isChange := x.version >= 2 && x.version > was
		_, err = tx.ExecContext(ctx, s.updateSQL, id, x.record, x.version, x.status, x.exception, x.openOrder, x.tickAt, open, isChange)
		if uniqueViolation(err) {
			return nil, invoice.ErrOrderOpen
		}
		if err != nil {
			return nil, dbErr(ctx, "update", err)
		}
		if isChange {
			if _, err := tx.ExecContext(ctx, s.changeSQL, id, x.version, x.invoice); err != nil {
				return nil, dbErr(ctx, "update: change", err)
			}
		}
		if err := s.addKeys(ctx, tx, id, newKeys(hadKeys, next)); err != nil {
			return nil, err
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

// newKeys returns the claim tokens of next not among old.
func newKeys(old []string, next *invoice.Record) []string {
	had := map[string]bool{}
	for _, t := range old {
		had[t] = true
	}
	var out []string
	for _, t := range next.Keys() {
		if !had[t] {
			out = append(out, t)
		}
	}
	return out
}

// uniqueViolation reports whether err is PostgreSQL's unique_violation,
// with any driver that reports the SQLSTATE (pgx, lib/pq).
func uniqueViolation(err error) bool {
	var e interface{ SQLState() string }
	return errors.As(err, &e) && e.SQLState() == "23505"
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
// database, or with the Desk (Get, Invalidate), needs another. When no
// change is left, the invoice is no longer due for its changes.
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
		if _, err := s.settle(ctx, tx, id); err != nil {
			return false, err
		}
		if err := tx.Commit(); err != nil {
			return false, dbErr(ctx, "notify: commit", err)
		}
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
	more, err := s.settle(ctx, tx, id)
	if err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, dbErr(ctx, "notify: commit", err)
	}
	return !more, nil
}

// settle tells whether a change still waits for onChange, and clears the
// invoice's pending flag when none does, in tx: under the row's lock, so
// that an Update that stores a change (and sets the flag) either commits
// before the check, which then sees its change, or waits for tx and sets
// the flag after it.
func (s *Store) settle(ctx context.Context, tx *sql.Tx, id string) (more bool, err error) {
	var pending bool
	err = tx.QueryRowContext(ctx, s.pendingSQL, id).Scan(&pending)
	if errors.Is(err, sql.ErrNoRows) {
		return false, invoice.ErrNotFound
	}
	if err != nil {
		return false, dbErr(ctx, "notify", err)
	}
	if err := tx.QueryRowContext(ctx, s.moreSQL, id).Scan(&more); err != nil {
		return false, dbErr(ctx, "notify", err)
	}
	if pending && !more {
		if _, err := tx.ExecContext(ctx, s.clearSQL, id); err != nil {
			return false, dbErr(ctx, "notify", err)
		}
	}
	return more, nil
}

// Due implements invoice.Store: pages of pageSize IDs along the wake_at
// index, each page a query of its own.
func (s *Store) Due(ctx context.Context, now time.Time) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var after time.Time
		var afterID string
		for {
			rows, err := s.db.QueryContext(ctx, s.dueSQL, now, after, afterID)
			if err != nil {
				yield("", dbErr(ctx, "due", err))
				return
			}
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id, &after); err != nil {
					rows.Close()
					yield("", dbErr(ctx, "due", err))
					return
				}
				ids = append(ids, id)
			}
			if err := rows.Err(); err != nil {
				yield("", dbErr(ctx, "due", err))
				return
			}
			for _, id := range ids {
				if !yield(id, nil) {
					return
				}
			}
			if len(ids) < pageSize {
				return
			}
			afterID = ids[len(ids)-1]
		}
	}
}

// List implements invoice.Store: pages of pageSize records, newest first,
// each page a query of its own that starts after the last row of the
// previous one.
func (s *Store) List(ctx context.Context, o *invoice.ListOptions) iter.Seq2[*invoice.Record, error] {
	return func(yield func(*invoice.Record, error) bool) {
		if o == nil {
			o = &invoice.ListOptions{}
		}
		var where []string
		var args []any
		arg := func(v any) string {
			args = append(args, v)
			return "$" + strconv.Itoa(len(args))
		}
		in := func(col string, vs []string) {
			if len(vs) == 0 {
				return
			}
			ps := make([]string, len(vs))
			for i, v := range vs {
				ps[i] = arg(v)
			}
			where = append(where, col+" IN ("+strings.Join(ps, ", ")+")")
		}
		var statuses, exceptions []string
		for _, v := range o.Status {
			statuses = append(statuses, string(v))
		}
		for _, v := range o.Exception {
			exceptions = append(exceptions, string(v))
		}
		in("status", statuses)
		in("exception", exceptions)
		if !o.CreatedAfter.IsZero() {
			where = append(where, "invoice_created_at >= "+arg(o.CreatedAfter))
		}
		if !o.CreatedBefore.IsZero() {
			where = append(where, "invoice_created_at < "+arg(o.CreatedBefore))
		}
		if o.OrderID != "" {
			where = append(where, "order_id = "+arg(o.OrderID))
		}
		var created time.Time
		var seq int64
		cursor := false
		if o.StartingAfter != "" {
			err := s.db.QueryRowContext(ctx, s.positionSQL, o.StartingAfter).Scan(&created, &seq)
			if errors.Is(err, sql.ErrNoRows) {
				yield(nil, invoice.ErrNotFound)
				return
			}
			if err != nil {
				yield(nil, dbErr(ctx, "list", err))
				return
			}
			cursor = true
		}
		n := len(args)
		for {
			args = args[:n]
			w := append([]string(nil), where...)
			if cursor {
				w = append(w, "(invoice_created_at, seq) < ("+arg(created)+", "+arg(seq)+")")
			}
			q := `SELECT record, invoice_created_at, seq FROM ` + s.table
			if len(w) > 0 {
				q += " WHERE " + strings.Join(w, " AND ")
			}
			q += " ORDER BY invoice_created_at DESC, seq DESC LIMIT " + strconv.Itoa(pageSize)
			rows, err := s.db.QueryContext(ctx, q, args...)
			if err != nil {
				yield(nil, dbErr(ctx, "list", err))
				return
			}
			var page []*invoice.Record
			for rows.Next() {
				var b []byte
				if err := rows.Scan(&b, &created, &seq); err != nil {
					rows.Close()
					yield(nil, dbErr(ctx, "list", err))
					return
				}
				r, err := decode(b)
				if err != nil {
					rows.Close()
					yield(nil, err)
					return
				}
				page = append(page, r)
			}
			if err := rows.Err(); err != nil {
				yield(nil, dbErr(ctx, "list", err))
				return
			}
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			cursor = true
		}
	}
}

// dbErr wraps a database error with ErrUnavailable, or with ctx's error
// when ctx ended; the driver's error stays reachable with errors.As.
func dbErr(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("invoice/pgstore: %s: %w: %w", op, cerr, err)
	}
	return fmt.Errorf("invoice/pgstore: %s: %w: %w", op, ErrUnavailable, err)
}
