// Package pgstore is a callback.Store kept in PostgreSQL, for merchant
// backends that run several replicas behind a load balancer. The service
// delivers every callback at least once and may deliver the same one to two
// replicas at the same moment; an in-memory store cannot see across
// processes, this one can.
//
// It works over database/sql with any PostgreSQL driver (pgx's stdlib driver
// "pgx", or lib/pq's "postgres"), in one table (DefaultTable unless
// WithTable names another), created by Migrate:
//
//	key         text primary key   -- e.g. "<uuid>:pending", "<uuid>:confirmed"
//	token       text               -- random, new for every successful claim
//	lease_until timestamptz        -- the claim runs until then (database clock)
//	claimed_at  timestamptz
//	done_at     timestamptz        -- set once the key is done; never unset
//
// # Guarantees
//
// The database decides: one statement per claim, an INSERT ... ON CONFLICT
// after a plain read, so exactly one of several concurrent claims of a key
// wins, on any replica; a duplicate delivery of a done key is answered from
// the read and writes nothing; a claim whose holder crashed is taken over
// after its lease by the next Claim, in the same statement; leases are
// measured on the database clock, so replicas with skewed clocks agree.
// Complete, Renew and Release act only on the caller's own claim, identified
// by its token, and return callback.ErrNotClaimed once the lease ran out and
// another caller took the key over. Each is one statement.
//
// With Claim, process, Complete (what the callback handler does through
// callback.Process), a key is processed by one replica at a time, the claim
// is renewed while the processing function runs, and the key is never
// processed again once Complete has succeeded. Process retries a statement
// that failed (a serialization failure at SERIALIZABLE or REPEATABLE READ,
// a deadlock, a dropped connection), the Complete for as long as the lease
// lasts, and answers *ok* only after Complete succeeded. A side effect
// outside this database can still happen twice if its process dies, or
// loses the database for longer than the lease, between the effect and
// Complete; that is at-least-once, and the redelivery is answered only after
// a durable Complete. For exactly-once effects, write them to this database in the
// same transaction as the done mark: WithinTx does the whole sequence, and
// CompleteTx does the marking inside the handler's processing function.
//
// Every database failure is returned as an error wrapping ErrUnavailable (and
// the driver's error). A failed Claim makes the handler answer something
// other than *ok*, so the service delivers the callback again later. With
// CompleteTx the done mark commits with the effect, before fn returns, so
// the handler never answers *ok* without a durable record, whatever happens
// afterwards (without it, a Complete that cannot be recorded within the
// lease makes the handler answer 500 and keep the claim, and the key is
// taken over after its lease if the callback comes again).
//
// Done keys stay until Purge deletes them; run it periodically with an age
// well beyond the service's retry period.
//
// # Use with the callback handler
//
// Every replica opens its own pool on the shared database and hands the
// handler a Store (see Example for the whole program):
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL")) // _ "github.com/jackc/pgx/v5/stdlib"
//	store, err := pgstore.New(db, pgstore.WithTable("cryptapi_callbacks"))
//	err = store.Migrate(ctx) // once at start-up; safe to repeat
//	h, err := callback.NewHandler(v, fn, callback.WithStore(store), callback.WithAddressCheck(orders.KnowsAddress))
//
// The handler claims callback.PaymentKey(p) ("<uuid>:pending" or
// "<uuid>:confirmed"), runs fn, and completes the key. For exactly-once
// effects, fn writes them and marks the key done in one transaction:
//
//	fn := func(ctx context.Context, p *callback.Payment) error {
//		tx, err := db.BeginTx(ctx, nil)
//		if err != nil {
//			return err
//		}
//		defer tx.Rollback()
//		if _, err := tx.ExecContext(ctx, `UPDATE orders SET paid = true WHERE payment_uuid = $1`, p.UUID); err != nil {
//			return err
//		}
//		if err := store.CompleteTx(ctx, tx, callback.PaymentKey(p)); err != nil {
//			return err
//		}
//		return tx.Commit()
//	}
//
// The handler's own Complete then finds the key done by this Store's claim
// and succeeds; if the transaction failed, fn's error makes the handler
// release the key and answer an error, so the service delivers again.
//
// # Exactly-once effects outside the handler
//
// WithinTx claims, marks done, runs fn and commits in one call:
//
//	c, err := store.WithinTx(ctx, key, func(tx *sql.Tx) error {
//		_, err := tx.ExecContext(ctx, `UPDATE orders SET paid = true WHERE id = $1`, orderID)
//		return err
//	})
//	switch {
//	case err != nil:
//		// Not recorded: do not acknowledge; the service retries.
//	case c == callback.Busy:
//		// Another replica is on it: do not acknowledge yet.
//	default:
//		// Claimed (the update and the done mark committed together) or
//		// Done (committed earlier): acknowledge with *ok*.
//	}
package pgstore
