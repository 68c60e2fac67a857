package pgstore_test

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/callback/pgstore"
	"github.com/forwardpay/cryptapi-go/internal/needs"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }

// testDSN returns the test database URL. Without one, tests are skipped
// (and needs.Main says so), except under CI, where they fail.
func testDSN(tb testing.TB) string {
	tb.Helper()
	return needs.PostgreSQL(tb)
}

// openDB opens a pool of its own, as one replica would, closed at cleanup.
func openDB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	return needs.OpenDB(tb, dsn, 4)
}

// tableName returns a table name unique to this test and run, and drops
// the table and its _effects companion at cleanup.
func tableName(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	return needs.TableName(tb, db, "pgstore_", 24, "_effects")
}

// newStore returns a migrated Store on db over table.
func newStore(tb testing.TB, db *sql.DB, table string) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(tb, err)
	require.NoError(tb, s.Migrate(context.Background()))
	return s
}

// replicas opens n pools on dsn, each with its own Store over table.
func replicas(tb testing.TB, dsn, table string, n int) ([]*pgstore.Store, []*sql.DB) {
	tb.Helper()
	stores := make([]*pgstore.Store, n)
	dbs := make([]*sql.DB, n)
	for i := range n {
		dbs[i] = openDB(tb, dsn)
		stores[i] = newStore(tb, dbs[i], table)
	}
	return stores, dbs
}

// closedPortDSN returns dsn pointed at a local port nothing listens on.
func closedPortDSN(tb testing.TB, dsn string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	addr := ln.Addr().String()
	require.NoError(tb, ln.Close())
	return withHost(tb, dsn, addr)
}

func withHost(tb testing.TB, dsn, hostport string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	require.NoError(tb, err)
	u.Host = hostport
	q := u.Query()
	q.Set("connect_timeout", "5")
	u.RawQuery = q.Encode()
	return u.String()
}

// waitFor polls cond every 10ms until it holds or d has passed.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			tb.Fatalf("timed out after %v waiting for %s", d, what)
		case <-tick.C:
		}
	}
}

// pause waits d, or less if ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// proxy is a TCP relay in front of the database that can be taken down,
// cutting every open connection and refusing new ones, and brought back on
// the same address: to the pools behind it, the database stops and restarts.
type proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	p := &proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	tb.Cleanup(func() {
		p.down()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go p.relay(c)
		}
	}()
}

func (p *proxy) relay(c net.Conn) {
	defer p.wg.Done()
	u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = u.Close()
		return
	}
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = u.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// down closes the listener and every relayed connection.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// up listens again on the same address.
func (p *proxy) up(tb testing.TB) {
	tb.Helper()
	var ln net.Listener
	var err error
	waitFor(tb, 5*time.Second, "the proxy port to be free again", func() bool {
		ln, err = net.Listen("tcp", p.addr)
		return err == nil
	})
	p.serve(ln)
}

// urlHost returns the host:port of a postgres:// URL.
func urlHost(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	if u.Port() == "" {
		return u.Hostname() + ":5432", nil
	}
	return u.Host, nil
}
