//go:build cgosqlite

package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// SQLiteDriver names the database/sql driver of the SQLite engine; built
// with -tags cgosqlite it is SQLite's C library (github.com/mattn/go-sqlite3,
// through cgo), registered here under modernc's name and taking modernc's
// addresses, so that nothing else in the store, its tests or the CLI tells
// the two builds apart. The default build stays pure Go (sqlite_modernc.go).
const SQLiteDriver = "sqlite"

// SQLiteBuild says which SQLite the binary runs, for `cleanads version`.
var SQLiteBuild = "SQLite " + sqlite3Version + " (C, cgo: github.com/mattn/go-sqlite3)"

var sqlite3Version, _, _ = sqlite3.Version()

func init() { sql.Register(SQLiteDriver, cgoDriver{}) }

// cgoDriver opens mattn's connections from modernc's addresses: each
// _pragma=NAME(VALUE) runs as PRAGMA NAME = VALUE, in the order given, once
// the connection is open; _txlock and SQLite's own URI parameters (mode=ro)
// pass through.
type cgoDriver struct{}

func (cgoDriver) Open(dsn string) (driver.Conn, error) {
	path, query, _ := strings.Cut(dsn, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite address %q: %w", dsn, err)
	}
	var pragmas []string
	for _, p := range params["_pragma"] {
		name, value, ok := strings.Cut(strings.TrimSuffix(p, ")"), "(")
		if !ok {
			return nil, fmt.Errorf("store: sqlite address: _pragma=%s: want NAME(VALUE)", p)
		}
		pragmas = append(pragmas, "PRAGMA "+name+" = "+value)
	}
	params.Del("_pragma")
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	c, err := (&sqlite3.SQLiteDriver{}).Open(path)
	if err != nil {
		return nil, err
	}
	for _, p := range pragmas {
		if _, err := c.(*sqlite3.SQLiteConn).Exec(p, nil); err != nil {
			c.Close()
			return nil, fmt.Errorf("store: %s: %w", p, err)
		}
	}
	return c, nil
}

// sqliteCode returns the extended result code of a SQLite error.
func sqliteCode(err error) (int, bool) {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return int(se.ExtendedCode), true
	}
	return 0, false
}
