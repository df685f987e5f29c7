package deliver_test

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/store"
)

// serverBackends reads the CPU time PostgreSQL's backends serving one
// database have used, from /proc (the server on this machine), so that a
// benchmark can report the server's share of a drain beside its own.
type serverBackends struct {
	admin *sql.DB
	seen  map[int]time.Duration
}

// openBackends returns the reader of the backends of the database of dsn,
// or nil when db is not PostgreSQL or /proc cannot be read.
func openBackends(b *testing.B, db *store.DB, dsn string) *serverBackends {
	if db.Dialect() != store.Postgres {
		return nil
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	admin.SetMaxOpenConns(1)
	b.Cleanup(func() { admin.Close() })
	return &serverBackends{admin: admin, seen: map[int]time.Duration{}}
}

// cpu is the CPU time (user and system) of the database's backends, its
// own connection's left out; a backend seen before and gone since counts
// with what it had used when last seen. Nil reads 0.
func (s *serverBackends) cpu() time.Duration {
	if s == nil {
		return 0
	}
	rows, err := s.admin.Query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err == nil {
		for rows.Next() {
			var pid int
			if rows.Scan(&pid) != nil {
				continue
			}
			if _, known := s.seen[pid]; !known {
				s.seen[pid] = 0 // read below
			}
		}
		rows.Close()
	}
	var total time.Duration
	for pid, last := range s.seen {
		if t, ok := procCPU(pid); ok {
			s.seen[pid], last = t, t
		}
		total += last
	}
	return total
}

// procCPU is a process's user and system time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command is in parentheses and may hold spaces: fields count
	// from the last ")".
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Clock ticks of 1/100 s (USER_HZ on Linux).
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}
