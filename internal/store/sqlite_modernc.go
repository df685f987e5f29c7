//go:build !cgosqlite

package store

import (
	"errors"

	"modernc.org/sqlite"
)

// SQLiteDriver names the database/sql driver of the SQLite engine: the pure
// Go modernc.org/sqlite by default, the C library through cgo when built
// with -tags cgosqlite (sqlite_cgo.go). Either takes modernc's addresses:
// file:PATH?_pragma=NAME(VALUE)&...&_txlock=immediate.
const SQLiteDriver = "sqlite"

// SQLiteBuild says which SQLite the binary runs, for `cleanads version`.
var SQLiteBuild = "modernc.org/sqlite (pure Go)"

// sqliteCode returns the extended result code of a SQLite error.
func sqliteCode(err error) (int, bool) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code(), true
	}
	return 0, false
}
