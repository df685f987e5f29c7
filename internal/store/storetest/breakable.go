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
	ctx := context.Background()
	if d == store.Postgres {
		dsn, cut := Proxy(t, PostgresDSN(t))
		return openOpts(t, dsn, store.Options{}), cut
	}
	path := filepath.Join(t.TempDir(), "test.db")
	db = openOpts(t, "sqlite:"+path, store.Options{BusyTimeout: 100 * time.Millisecond})
	return db, func() {
		other, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
			other.Close()
		})
	}
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
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	shut  bool
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
	p := &proxy{ln: ln}
	t.Cleanup(p.close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
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
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

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
