package storetest

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// Breakable returns a fresh migrated database on engine d (Engine() for the
// engine under test) and a function that makes its storage unavailable the way production sees it:
// on SQLite another connection takes the write lock (writes then fail with
// SQLITE_BUSY after a short busy timeout); on PostgreSQL the server goes
// away (the database is reached through a local TCP proxy that cut closes,
// so open connections break and new ones are refused).
func Breakable(t testing.TB, d store.Dialect) (db *store.DB, cut func()) {
	t.Helper()
	db, cut, _ = Troubled(t, d)
	return db, cut
}

// Troubled is Breakable with the trouble's end: down makes the storage
// unavailable as Breakable's cut does, up ends that (the other connection
// gives the SQLite write lock back; the PostgreSQL proxy listens again on
// the same address, as a restarted server would), so tests can show the
// application recovers by itself. down and up may alternate; up without
// down does nothing.
func Troubled(t testing.TB, d store.Dialect) (db *store.DB, down, up func()) {
	t.Helper()
	ctx := context.Background()
	if d == store.Postgres {
		u, err := url.Parse(PostgresMigratedDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		p := newProxy(t, u.Host)
		u.Host = p.addr()
		return openOpts(t, u.String(), store.Options{}), p.close, func() { p.reopen(t) }
	}
	path := filepath.Join(t.TempDir(), "test.db")
	db = openOpts(t, "sqlite:"+path, store.Options{BusyTimeout: 100 * time.Millisecond})
	var (
		mu    sync.Mutex
		other *sql.DB
		conn  *sql.Conn
	)
	release := func() {
		mu.Lock()
		defer mu.Unlock()
		if conn != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
			other.Close()
			conn, other = nil, nil
		}
	}
	t.Cleanup(release)
	down = func() {
		mu.Lock()
		defer mu.Unlock()
		if conn != nil {
			return
		}
		var err error
		if other, err = sql.Open("sqlite", "file:"+path); err != nil {
			t.Fatal(err)
		}
		if conn, err = other.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
	}
	return db, down, release
}

// Proxy returns a URL that reaches the PostgreSQL server of dsn through a
// local TCP proxy, and cut, which takes the proxy down: open connections
// break and new ones are refused, as when the server or the network dies.
// Give it to one node of several to cut that node off alone.
func Proxy(t testing.TB, dsn string) (proxied string, cut func()) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr()
	return u.String(), p.close
}

// openOpts is Open with options.
func openOpts(t testing.TB, dsn string, opt store.Options) *store.DB {
	t.Helper()
	ctx := context.Background()
	if opt.Secrets == nil {
		opt.Secrets = Box(t)
	}
	db, err := store.Open(ctx, dsn, opt)
	if err != nil {
		t.Fatalf("open %s: %v", store.RedactDSN(dsn), err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// proxy forwards TCP connections to a server until it is closed.
type proxy struct {
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	shut   bool
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	if !strings.Contains(target, ":") {
		target += ":5432"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, ln: ln}
	t.Cleanup(p.close)
	go p.serve(ln)
	return p
}

// serve forwards the connections ln accepts until ln is closed.
func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

// reopen listens again on the proxy's address after close, as a restarted
// server does; connections broken by close stay broken.
func (p *proxy) reopen(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shut {
		return
	}
	ln, err := net.Listen("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatalf("proxy: listen again: %v", err)
	}
	p.ln, p.conns, p.shut = ln, nil, false
	go p.serve(ln)
}

func (p *proxy) addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ln.Addr().String()
}

// track remembers a pair of connections, or closes them when the proxy is
// already closed.
func (p *proxy) track(c ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut {
		for _, x := range c {
			x.Close()
		}
		return false
	}
	p.conns = append(p.conns, c...)
	return true
}

// close stops listening (new connections are refused) and breaks every
// open one; safe twice.
func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut {
		return
	}
	p.shut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
