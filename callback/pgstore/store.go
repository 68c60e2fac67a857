package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/forwardpay/cryptapi-go/internal/pgident"

	"github.com/forwardpay/cryptapi-go/callback"
)

// DefaultTable is the table a Store uses unless WithTable says otherwise.
const DefaultTable = "cryptapi_callbacks"

// MaxKeyLen is the longest key, in bytes, that a Store accepts.
const MaxKeyLen = 1024

var (
	// ErrUnavailable is wrapped by every error that comes from the database:
	// it could not be reached, a statement failed, or a transaction could
	// not commit. The driver's error is wrapped too, for errors.As. When it
	// is returned nothing was recorded (or, for a failed commit, it is not
	// known whether it was), so the callback must not be acknowledged; the
	// service will deliver it again. If ctx ended first, the error wraps
	// ctx.Err() instead.
	ErrUnavailable = errors.New("pgstore: store unavailable")
	// ErrInvalidTable is returned by New for a table name that is not a
	// plain identifier or schema.identifier.
	ErrInvalidTable = errors.New("pgstore: invalid table name")
	// ErrInvalidKey is returned for an empty key, a key longer than
	// MaxKeyLen, or one that is not valid UTF-8 or holds a NUL byte.
	ErrInvalidKey = errors.New("pgstore: invalid key")
	// ErrInvalidLease is returned for a lease that is not positive.
	ErrInvalidLease = errors.New("pgstore: lease must be positive")
	// ErrInvalidAge is returned by Purge for an age that is not positive.
	ErrInvalidAge = errors.New("pgstore: purge age must be positive")
)

var (
	_ callback.Store   = (*Store)(nil)
	_ callback.Renewer = (*Store)(nil)
)

// Store is a callback.Store kept in a PostgreSQL table, shared by every
// process that uses the same table.
//
// The database decides every claim: a key is a primary key, Claim is one
// statement (a read, then an INSERT ... ON CONFLICT that takes over a lease
// only when it has run out; a done key or a running lease is answered from
// the read, without writing), and lease times come from the database clock, so replicas with skewed
// clocks agree. Each successful Claim stores a fresh random token in the row
// and keeps it in the Store (a map from key to token, guarded by a mutex);
// Complete and Release act only on a row that still carries that token, and
// return callback.ErrNotClaimed once another caller has taken the key over.
//
// The token belongs to the Store value, not to a goroutine: if a lease runs
// out and a second goroutine of the same Store takes the key over, the first
// one's Complete completes the second one's claim. Use one Store per process
// (as the handler does) and leases longer than the work; WithinTx does not
// have this caveat.
//
// A Store is safe for concurrent use. It never starts goroutines and New
// does no I/O.
type Store struct {
	db    *sql.DB
	table string // quoted, possibly schema-qualified

	claimSQL, claimDoneSQL, completeSQL, completeTxSQL, releaseSQL, purgeSQL string
	renewSQL                                                                 string
	createSQL, dropIndexSQL, probeSQL, lockName                              string

	mu     sync.Mutex
	tokens map[string]string
}

// Option configures a Store. Nil options are skipped.
type Option func(*config) error

type config struct {
	table string
}

// WithTable sets the table name, either "name" or "schema.name", each part
// a letter or underscore followed by letters, digits or underscores, at most
// 63 bytes. Names are quoted, so they are case-sensitive. The default is
// DefaultTable.
func WithTable(name string) Option {
	return func(c *config) error {
		if _, _, err := parseTable(name); err != nil {
			return err
		}
		c.table = name
		return nil
	}
}

// parseTable validates name and returns it quoted and the bare table part.
func parseTable(name string) (quoted, bare string, err error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", "", fmt.Errorf("%w: %q", ErrInvalidTable, name)
	}
	for i, p := range parts {
		if !pgident.Valid(p, pgident.MaxLen) {
			return "", "", fmt.Errorf("%w: %q", ErrInvalidTable, name)
		}
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, "."), strings.Trim(parts[len(parts)-1], `"`), nil
}

// New returns a Store that keeps its records in db, a pool opened with any
// PostgreSQL driver for database/sql (pgx's stdlib driver "pgx", or lib/pq's
// "postgres"). It does no I/O; call Migrate once to create the table.
func New(db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("pgstore: nil *sql.DB")
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
	t, bare, err := parseTable(cfg.table)
	if err != nil {
		return nil, err
	}
	// Earlier versions created a partial index on done_at. Purge cannot use
	// it (its bounds come from clock_timestamp(), which is volatile), and
	// it made Complete's update write two index entries instead of none:
	// Migrate drops it.
	idx := bare
	if len(idx) > 63-len("_done_at") {
		idx = idx[:63-len("_done_at")]
	}
	idx = `"` + idx + `_done_at"`
	if schema, _, ok := strings.Cut(t, "."); ok {
		idx = schema + "." + idx
	}

	s := &Store{db: db, table: t, tokens: make(map[string]string)}
	s.createSQL = `CREATE TABLE IF NOT EXISTS ` + t + ` (
	key         text COLLATE "C" NOT NULL PRIMARY KEY,
	token       text        NOT NULL,
	lease_until timestamptz NOT NULL,
	claimed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	done_at     timestamptz
) WITH (fillfactor = 90)`
	s.dropIndexSQL = `DROP INDEX IF EXISTS ` + idx
	s.probeSQL = `SELECT key, token, lease_until, claimed_at, done_at FROM ` + t + ` LIMIT 0`
	s.lockName = "cryptapi-go/callback/pgstore:" + t
	// One statement, one round trip. It first reads the row without
	// locking it: a done key or a running lease is answered from that read
	// alone, so a duplicate delivery writes nothing and its commit waits
	// for no disk flush. Otherwise a new key is inserted, and an existing
	// one is taken over only if it is not done and its lease has run out;
	// the row lock taken by ON CONFLICT makes concurrent claims of one key
	// queue up, so exactly one of them sees the row as free.
	s.claimSQL = claimStatement(t, false)
	// The same for WithinTx, inside its transaction: the new or taken-over
	// row is done at once, and visible only once the transaction commits.
	s.claimDoneSQL = claimStatement(t, true)
	// Complete also succeeds on a row this token already completed (through
	// CompleteTx), so the handler's Complete after a committed CompleteTx is
	// not an error. A done row can never carry another caller's token.
	s.completeSQL = `UPDATE ` + t + ` SET done_at = coalesce(done_at, clock_timestamp())
WHERE key = $1 AND token = $2`
	s.completeTxSQL = `UPDATE ` + t + ` SET done_at = clock_timestamp()
WHERE key = $1 AND token = $2 AND done_at IS NULL`
	// Renew extends a claim this token still holds, even one whose lease
	// ran out without being taken over (as Complete would complete it); a
	// row this token completed is left as it is.
	s.renewSQL = `UPDATE ` + t + ` SET lease_until = CASE WHEN done_at IS NULL
	THEN clock_timestamp() + $3::bigint * interval '1 microsecond' ELSE lease_until END
WHERE key = $1 AND token = $2`
	s.releaseSQL = `DELETE FROM ` + t + ` WHERE key = $1 AND token = $2 AND done_at IS NULL`
	s.purgeSQL = `DELETE FROM ` + t + `
WHERE done_at < clock_timestamp() - $1::bigint * interval '1 microsecond'
   OR (done_at IS NULL AND lease_until < clock_timestamp() - $1::bigint * interval '1 microsecond')`
	return s, nil
}

// claimStatement returns the claim statement on table t ($1 key, $2 token,
// $3 lease in microseconds). With done, the row it inserts or takes over is
// marked done in the same statement.
func claimStatement(t string, done bool) string {
	cols, vals, set := "key, token, lease_until", "$1, $2, clock_timestamp() + $3::bigint * interval '1 microsecond'", ""
	if done {
		cols += ", done_at"
		vals += ", clock_timestamp()"
		set = ", done_at = EXCLUDED.done_at"
	}
	return `WITH seen AS (
	SELECT done_at IS NOT NULL AS done, lease_until > clock_timestamp() AS live FROM ` + t + ` WHERE key = $1
), taken AS (
	INSERT INTO ` + t + ` AS c (` + cols + `)
	SELECT ` + vals + `
	WHERE NOT EXISTS (SELECT FROM seen WHERE done OR live)
	ON CONFLICT (key) DO UPDATE
	SET token = EXCLUDED.token, lease_until = EXCLUDED.lease_until, claimed_at = clock_timestamp()` + set + `
	WHERE c.done_at IS NULL AND c.lease_until <= clock_timestamp()
	RETURNING 1
)
SELECT EXISTS (SELECT FROM taken), (SELECT done FROM seen)`
}

// Table returns the quoted, possibly schema-qualified table name the Store
// uses, ready to put in SQL.
func (s *Store) Table() string { return s.table }

// Migrate creates the table if it does not exist, and drops the partial
// index on done_at that v0.1.0 created. It is safe to run again, and from
// several processes at once (they serialise on an advisory lock). If a
// table of that name exists without the expected columns, Migrate returns
// an error. New tables leave room on each page (fillfactor 90) so that
// Complete updates a row in place; a table created by v0.1.0 keeps its
// setting unless you run ALTER TABLE ... SET (fillfactor = 90).
func (s *Store) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(ctx, "migrate", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, s.lockName); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	if _, err := tx.ExecContext(ctx, s.createSQL); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	if _, err := tx.ExecContext(ctx, s.probeSQL); err != nil {
		return dbErr(ctx, "migrate: check the columns of "+s.table, err)
	}
	if _, err := tx.ExecContext(ctx, s.dropIndexSQL); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	if err := tx.Commit(); err != nil {
		return dbErr(ctx, "migrate", err)
	}
	return nil
}

// Claim tries to take key for lease, as callback.Store documents: Claimed if
// the key was new, or was released, or its holder's lease had run out;
// InProgress if another holder's lease is still running; Done if the key was
// completed. The lease is measured on the database clock. An error (which
// wraps ErrUnavailable unless the arguments were invalid or ctx ended) means
// nothing is known and the callback must not be acknowledged.
func (s *Store) Claim(ctx context.Context, key string, lease time.Duration) (callback.Outcome, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	if lease <= 0 {
		return 0, ErrInvalidLease
	}
	micros := leaseMicros(lease)
	token := rand.Text()
	c, err := s.claim(ctx, s.db, s.claimSQL, key, token, micros)
	if err != nil {
		return 0, dbErr(ctx, "claim", err)
	}
	if c == callback.Claimed {
		s.mu.Lock()
		s.tokens[key] = token
		s.mu.Unlock()
	}
	return c, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// claim runs a claim statement (claimSQL or claimDoneSQL) on q. A row that
// the statement's snapshot did not see but its insert met (committed in
// between) gives no answer; the next round sees it. A row that keeps
// appearing and vanishing (claimed and released, or purged) for three
// rounds is reported as in progress.
func (s *Store) claim(ctx context.Context, q querier, query, key, token string, micros int64) (callback.Outcome, error) {
	for range 3 {
		var claimed bool
		var done sql.NullBool
		if err := q.QueryRowContext(ctx, query, key, token, micros).Scan(&claimed, &done); err != nil {
			return 0, err
		}
		switch {
		case claimed:
			return callback.Claimed, nil
		case done.Valid && done.Bool:
			return callback.AlreadyDone, nil
		case done.Valid:
			return callback.Busy, nil
		}
	}
	return callback.Busy, nil
}

// Complete marks key done, if this Store still holds the claim it made: it
// succeeds after the lease ran out as long as nobody took the key over, and
// returns callback.ErrNotClaimed otherwise (also when this Store never
// claimed key). It also returns nil when the claim was already completed
// with CompleteTx. A database error wraps ErrUnavailable; the key then stays
// claimed until its lease runs out, and Complete may be retried.
func (s *Store) Complete(ctx context.Context, key string) error {
	return s.finish(ctx, "complete", s.completeSQL, key)
}

// Release gives up the claim this Store holds on key, so that the next Claim
// takes it at once. It returns callback.ErrNotClaimed if the claim is no
// longer this Store's (taken over, completed, or never made). A database
// error wraps ErrUnavailable; the key then stays claimed until its lease runs
// out.
func (s *Store) Release(ctx context.Context, key string) error {
	return s.finish(ctx, "release", s.releaseSQL, key)
}

// Renew extends the claim this Store holds on key to lease from now, on the
// database clock, in one statement, as callback.Renewer documents. It
// returns callback.ErrNotClaimed if the claim is no longer this Store's, and
// nil if this claim was completed. A database error wraps ErrUnavailable;
// the claim then keeps its current lease.
func (s *Store) Renew(ctx context.Context, key string, lease time.Duration) error {
	if lease <= 0 {
		return ErrInvalidLease
	}
	token, ok := s.token(key)
	if !ok {
		return callback.ErrNotClaimed
	}
	micros := leaseMicros(lease)
	n, err := affected(s.db.ExecContext(ctx, s.renewSQL, key, token, micros))
	if err != nil {
		return dbErr(ctx, "renew", err)
	}
	if n == 0 {
		s.forget(key, token)
		return callback.ErrNotClaimed
	}
	return nil
}

func (s *Store) finish(ctx context.Context, op, query, key string) error {
	token, ok := s.token(key)
	if !ok {
		return callback.ErrNotClaimed
	}
	n, err := affected(s.db.ExecContext(ctx, query, key, token))
	if err != nil {
		return dbErr(ctx, op, err)
	}
	s.forget(key, token)
	if n == 0 {
		return callback.ErrNotClaimed
	}
	return nil
}

// CompleteTx marks key done inside tx, the caller's transaction, if this
// Store holds the claim; it returns callback.ErrNotClaimed otherwise. The
// mark becomes durable only when tx commits, together with whatever else tx
// wrote; if tx rolls back the key is still claimed. The row stays locked
// until tx ends, so no other caller can take the key over meanwhile.
//
// It is for code that runs inside the handler's processing function after
// the handler claimed the key through this Store: record the order and call
// CompleteTx in one transaction, commit, and return nil; the handler's own
// Complete then succeeds without changing anything. tx must belong to the
// database this Store uses.
func (s *Store) CompleteTx(ctx context.Context, tx *sql.Tx, key string) error {
	token, ok := s.token(key)
	if !ok {
		return callback.ErrNotClaimed
	}
	n, err := affected(tx.ExecContext(ctx, s.completeTxSQL, key, token))
	if err != nil {
		return dbErr(ctx, "complete", err)
	}
	if n == 0 {
		return callback.ErrNotClaimed
	}
	return nil
}

// WithinTx processes key exactly once against this database: in one
// transaction it claims key and marks it done in the same statement, runs
// fn with the transaction and commits. fn's writes and the done mark commit
// together or not at all, so a merchant who records the order through tx
// gets its effect exactly once, however often and on however many replicas
// the callback arrives, and whether or not a process dies midway. It costs
// one commit, where Claim and Complete cost two.
//
// It returns (when the error is not nil, the Claim says whether the key had
// been claimed: 0 if the claim itself failed, Claimed otherwise):
//   - InProgress or Done with a nil error when fn did not run (another
//     holder's lease from Claim is running, or the key was completed
//     before);
//   - Claimed with a nil error when fn ran and everything committed;
//   - fn's error (wrapped) when fn failed: the transaction was rolled back,
//     so the key is as it was before and the next delivery claims it;
//   - an error wrapping ErrUnavailable when the database failed. If it
//     failed on commit, the outcome is unknown until the next delivery,
//     which sees Done or claims the key again.
//
// The claim is not visible to others until the transaction ends, and the
// row it inserts stays locked until then: a concurrent Claim or WithinTx of
// the same key waits, then sees Done (or claims the key, if fn failed). At
// REPEATABLE READ or SERIALIZABLE, PostgreSQL may instead let a concurrent
// Claim or WithinTx take the key while fn runs, then fail all but one with a
// serialization failure (wrapped in ErrUnavailable) before it commits: fn's
// writes through tx still commit once, but what fn does outside tx may
// happen twice. If
// the process dies, the database rolls the transaction back when it sees
// the connection drop, and the key is free at once. A host that vanishes
// without closing its connection is noticed only by TCP keepalive (hours,
// by default), and an fn that hangs holds the key as long: keep fn short,
// make it honour ctx, give ctx a deadline, and consider the server's
// idle_in_transaction_session_timeout. Those waiting hold a connection of
// their pool meanwhile. fn must not commit or roll back tx, and must not
// claim key itself through any Store: it would wait for its own
// transaction until ctx ends.
func (s *Store) WithinTx(ctx context.Context, key string, fn func(*sql.Tx) error) (callback.Outcome, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, dbErr(ctx, "within tx: begin", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	c, err := s.claim(ctx, tx, s.claimDoneSQL, key, rand.Text(), 0)
	if err != nil {
		return 0, dbErr(ctx, "within tx: claim", err)
	}
	if c != callback.Claimed {
		return c, nil
	}
	if err := fn(tx); err != nil {
		return callback.Claimed, fmt.Errorf("pgstore: within tx: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return callback.Claimed, dbErr(ctx, "within tx: commit", err)
	}
	return callback.Claimed, nil
}

// Purge deletes done keys completed more than olderThan ago, and claims
// abandoned (never completed nor released) whose lease ran out more than
// olderThan ago, by the database clock. It returns how many rows it deleted.
//
// A purged key is forgotten: if the service delivered it again, it would be
// processed again. Choose olderThan well beyond the time the service keeps
// retrying a callback and beyond any manual resend, for example 30 days, and
// run Purge from a ticker or a cron job; the Store never purges on its own.
func (s *Store) Purge(ctx context.Context, olderThan time.Duration) (int64, error) {
	if olderThan <= 0 {
		return 0, ErrInvalidAge
	}
	res, err := s.db.ExecContext(ctx, s.purgeSQL, int64(olderThan/time.Microsecond))
	if err != nil {
		return 0, dbErr(ctx, "purge", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr(ctx, "purge", err)
	}
	return n, nil
}

// affected returns the number of rows a statement changed.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s *Store) token(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[key]
	return t, ok
}

// forget drops key's token if it is still token (a newer Claim by this
// Store may have replaced it).
func (s *Store) forget(key, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens[key] == token {
		delete(s.tokens, key)
	}
}

func checkKey(key string) error {
	if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 {
		return ErrInvalidKey
	}
	return nil
}

// dbErr wraps a database error: with ctx's error when ctx has ended (the
// caller gave up), with ErrUnavailable otherwise. Either way the driver's
// error stays reachable with errors.As.
func dbErr(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return fmt.Errorf("pgstore: %s: %w", op, err)
		}
		return fmt.Errorf("pgstore: %s: %w: %w", op, cerr, err)
	}
	return &unavailableError{op: op, err: err}
}

// unavailableError is a database error: it is ErrUnavailable and unwraps to
// the driver's error.
type unavailableError struct {
	op  string
	err error
}

func (e *unavailableError) Error() string {
	return "pgstore: " + e.op + ": store unavailable: " + e.err.Error()
}

func (e *unavailableError) Unwrap() error { return e.err }

func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// leaseMicros returns lease in microseconds, rounded up. It divides before
// rounding, so the longest Duration does not wrap around to a negative
// lease (one that ran out before it began).
func leaseMicros(lease time.Duration) int64 {
	micros := int64(lease / time.Microsecond)
	if lease%time.Microsecond != 0 {
		micros++
	}
	return micros
}
