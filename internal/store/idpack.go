package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"

	"github.com/cleanads/cleanads/internal/model"
)

// On SQLite the ids are stored as 17-byte BLOBs, not as text (migration
// 0600; PostgreSQL stores the same form in bytea columns since 0630,
// idpack_postgres.go): a prefixed id (ld_, dl_, h_ ... and 26 Crockford digits, 29
// bytes as text) and a canonical UUID (36 bytes) become a tag byte that
// names their kind, then their 128 bits, big-endian. Each string has one
// stored form, a pure function of the string (packID), so equality,
// UNIQUE and look-ups stay exact in a column that mixes packed ids and
// text (a client's event id that is not a canonical UUID, a test's id, an
// empty string); ids of one kind sort as their text did, the prefixed
// kinds in the order of their prefixes, UUIDs before them, and text ids
// before every packed one (SQLite sorts text before blobs).
//
// The packing happens in one place, a thin wrapper around modernc's
// driver (idConn): a string argument in canonical form is bound packed,
// and a result value that is a packed id (17 bytes, a tag byte below
// 0x20, in a column not declared BLOB) is read back as its string. No
// statement, scan or model type changes. What SQL itself does with an id
// as text (concatenation, substr, LIKE, json) would see the bytes: the
// store does no such thing (TestStatementsNoStringWorkOnIDs), and free
// text that may look like an id (a lead's name, e-mail, phone, message;
// a search term) is bound with plain(), never packed, so the search
// index and search_has always read text.

// The tags: the first byte of a packed id, one a kind: UUIDs first, then
// the prefixes in their order; a new prefix takes the next number (and
// sorts after the others), a prefix not listed is stored as text. Bytes
// below 0x20 begin no text, no JSON, no packed payload: a blob that
// begins with one is an id.
var idPrefixes = []string{"", "dl_", "evt_", "h_", "la_", "ld_", "u_", "v_", "wh_"}

// idTagUUID is the tag of a canonical UUID; a prefix's is its index in
// idPrefixes plus one.
const (
	idTagUUID   = 1
	idPackedLen = 17
	idDigits    = 26
)

const crockfordDigits = "0123456789abcdefghjkmnpqrstvwxyz"

// crockfordValue maps a lower-case Crockford digit to its value, others to 0xff.
var crockfordValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(crockfordDigits); i++ {
		t[crockfordDigits[i]] = byte(i)
	}
	return t
}()

// packID returns s's stored form on SQLite: 17 bytes when s is a
// canonical id, else ok is false and s is stored as text.
func packID(s string) (b []byte, ok bool) {
	var a [idPackedLen]byte
	if !packIDTo(&a, s) {
		return nil, false
	}
	return a[:], true
}

// packIDTo writes s's packed form to b when s is a canonical id (it
// allocates nothing, for PostgreSQL's arguments, which it checks one by
// one).
func packIDTo(b *[idPackedLen]byte, s string) bool {
	switch n := len(s); {
	case n == 36:
		return packUUID(b, s)
	case n >= idDigits+2 && n <= idDigits+4:
		p := s[:n-idDigits]
		for i := 1; i < len(idPrefixes); i++ {
			if idPrefixes[i] == p {
				return packCrockford(b, byte(i+1), s[n-idDigits:])
			}
		}
	}
	return false
}

func packUUID(b *[idPackedLen]byte, s string) bool {
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	b[0] = idTagUUID
	j := 1
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		hi, lo := hexValue(s[i]), hexValue(s[i+1])
		if hi > 15 || lo > 15 {
			return false
		}
		b[j] = hi<<4 | lo
		j++
		i++
	}
	return true
}

// hexValue is a lower-case hex digit's value, 0xff for anything else
// (capitals too: "A" and "a" are two strings, so only one may be packed).
func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return 0xff
}

// packCrockford packs 26 digits (130 bits, of which the first two must be
// zero) after tag.
func packCrockford(b *[idPackedLen]byte, tag byte, d string) bool {
	if crockfordValue[d[0]] > 7 {
		return false
	}
	var hi, lo uint64
	for i := 0; i < idDigits; i++ {
		v := crockfordValue[d[i]]
		if v > 31 {
			return false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	b[0] = tag
	for i := 0; i < 8; i++ {
		b[1+i] = byte(hi >> (56 - 8*i))
		b[9+i] = byte(lo >> (56 - 8*i))
	}
	return true
}

// unpackID returns the string b was packed from; ok is false when b is
// not a packed id.
func unpackID(b []byte) (s string, ok bool) {
	if len(b) != idPackedLen || b[0] == 0 || int(b[0]) > len(idPrefixes) {
		return "", false
	}
	if b[0] == idTagUUID {
		return model.FormatUUID([16]byte(b[1:])), true
	}
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[1+i])
		lo = lo<<8 | uint64(b[9+i])
	}
	var out [idDigits]byte
	for i := idDigits - 1; i >= 0; i-- {
		out[i] = crockfordDigits[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return idPrefixes[b[0]-1] + string(out[:]), true
}

// plainText is a string bound as text even when it looks like an id.
type plainText string

// plain keeps s as text on SQLite: free text that may happen to be an id's
// form (a lead's message, a search term). On PostgreSQL it is s.
func (q Q) plain(s string) any {
	if q.dialect == SQLite {
		return plainText(s)
	}
	return s
}

// textParam is a text argument in a SELECT's list: PostgreSQL is told its
// type; SQLite is not, since a CAST would make an id bound packed text of
// its bytes.
func (q Q) textParam() string {
	if q.dialect == Postgres {
		return "CAST(? AS TEXT)"
	}
	return "?"
}

// idParam is an id argument in a SELECT's list: PostgreSQL is told its
// type (bytea since 0630, so that the id is bound packed); SQLite is not
// (textParam).
func (q Q) idParam() string {
	if q.dialect == Postgres {
		return "CAST(? AS " + q.pgIDType() + ")"
	}
	return "?"
}

// idConnector opens modernc connections wrapped in idConn. pack is
// shared by a database's pools: it is set once the schema has packed its
// ids (0600), and until then arguments are bound as they are, so the
// migrations before it read and write the text their rows hold.
type idConnector struct {
	dsn  string
	drv  driver.Driver
	pack *atomic.Bool
}

// sqliteDriver is modernc's, with the functions the store registers.
var sqliteDriver = func() driver.Driver {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	return db.Driver()
}()

// openIDPacked is sql.Open("sqlite", dsn) through the wrapper.
func openIDPacked(dsn string, pack *atomic.Bool) *sql.DB {
	return sql.OpenDB(idConnector{dsn: dsn, drv: sqliteDriver, pack: pack})
}

func (c idConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &idConn{c: cn, pack: c.pack}, nil
}

func (c idConnector) Driver() driver.Driver { return c.drv }

// The interfaces modernc's connection, statement and rows offer, which
// database/sql uses.
type (
	sqliteConn interface {
		driver.Conn
		driver.ConnBeginTx
		driver.ConnPrepareContext
		driver.ExecerContext
		driver.QueryerContext
	}
	sqliteStmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
)

// idConn wraps a modernc connection: see packID.
type idConn struct {
	c    driver.Conn
	pack *atomic.Bool
}

var (
	_ driver.NamedValueChecker = (*idConn)(nil)
	_ driver.SessionResetter   = (*idConn)(nil)
	_ driver.Validator         = (*idConn)(nil)
	_ driver.Pinger            = (*idConn)(nil)
)

func (c *idConn) inner() sqliteConn { return c.c.(sqliteConn) }

// CheckNamedValue keeps a plainText apart from other strings (database/sql
// would make it a string); everything else converts as usual.
func (c *idConn) CheckNamedValue(nv *driver.NamedValue) error {
	if p, ok := nv.Value.(plainText); ok {
		nv.Value = p
		return nil
	}
	return driver.ErrSkip
}

// args packs the canonical ids among a statement's arguments and turns
// plain text back into strings.
func (c *idConn) args(args []driver.NamedValue) []driver.NamedValue {
	pack := c.pack.Load()
	for i := range args {
		switch v := args[i].Value.(type) {
		case string:
			if pack {
				if b, ok := packID(v); ok {
					args[i].Value = b
				}
			}
		case plainText:
			args[i].Value = string(v)
		}
	}
	return args
}

func (c *idConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *idConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &idStmt{s: s.(sqliteStmt), c: c}, nil
}

func (c *idConn) Close() error { return c.c.Close() }

func (c *idConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *idConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner().BeginTx(ctx, opts)
}

func (c *idConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.inner().ExecContext(ctx, query, c.args(args))
}

func (c *idConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.inner().QueryContext(ctx, query, c.args(args))
	if err != nil {
		return nil, err
	}
	return newIDRows(r), nil
}

func (c *idConn) ResetSession(ctx context.Context) error {
	if r, ok := c.c.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *idConn) IsValid() bool {
	if v, ok := c.c.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *idConn) Ping(ctx context.Context) error {
	if p, ok := c.c.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// idStmt is a prepared statement of an idConn.
type idStmt struct {
	s sqliteStmt
	c *idConn
}

func (s *idStmt) Close() error  { return s.s.Close() }
func (s *idStmt) NumInput() int { return s.s.NumInput() }

func (s *idStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *idStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *idStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.s.ExecContext(ctx, s.c.args(args))
}

func (s *idStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	r, err := s.s.QueryContext(ctx, s.c.args(args))
	if err != nil {
		return nil, err
	}
	return newIDRows(r), nil
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

// idRows reads packed ids back as their strings.
type idRows struct {
	driver.Rows
	types driver.RowsColumnTypeDatabaseTypeName
}

func newIDRows(r driver.Rows) *idRows {
	t, _ := r.(driver.RowsColumnTypeDatabaseTypeName)
	return &idRows{Rows: r, types: t}
}

// Next unpacks a 17-byte blob whose first byte is a tag, unless its
// column is declared BLOB (no column of the store's is, but for
// certificates; an expression's declared type is empty, and a blob there
// with a tag's first byte is an id: the store's blobs are text or
// JSON, which begin with a printable byte).
func (r *idRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		b, ok := v.([]byte)
		if !ok || len(b) != idPackedLen {
			continue
		}
		if r.types != nil && r.types.ColumnTypeDatabaseTypeName(i) == "BLOB" {
			continue
		}
		if s, ok := unpackID(b); ok {
			dest[i] = s
		}
	}
	return nil
}

func (r *idRows) ColumnTypeDatabaseTypeName(i int) string {
	if r.types == nil {
		return ""
	}
	return r.types.ColumnTypeDatabaseTypeName(i)
}

// cleanads_idpack(x), SQLite's side of packID for migration 0600: x packed
// when it is text in canonical form, else x unchanged. cleanads_idtext(x)
// is unpackID's: what reads the file without the store (a test auditing
// the disk) says it to read an id as text. modernc's driver adds both to
// every connection it opens in a binary that has the store.
func init() {
	sqlite.MustRegisterFunction("cleanads_idtext", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			if b, ok := args[0].([]byte); ok {
				if s, ok := unpackID(b); ok {
					return s, nil
				}
			}
			return args[0], nil
		}})
	sqlite.MustRegisterFunction("cleanads_idpack", &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			if s, ok := args[0].(string); ok {
				if b, ok := packID(s); ok {
					return b, nil
				}
			}
			return args[0], nil
		}})
}

// idsPackedSince is the migration that packs SQLite's stored ids; from it
// on the wrapper packs the arguments.
const idsPackedSince = 600

// idTextColumns are the columns that hold free text a person typed, which
// may happen to look like an id: they stay text (the store binds them
// with plain), since the search index's triggers and search_has read them
// as text.
var idTextColumns = map[string]map[string]bool{
	"leads": {"name": true, "first_name": true, "last_name": true, "email": true, "phone": true, "phone_key": true, "message": true},
}

// packStoredIDs is migration 0600's Go step on SQLite: every text value in
// canonical form, in every column declared TEXT of every table (but the
// free text of idTextColumns, the search index's own tables and
// schema_migrations), is rewritten packed, as the wrapper binds it from
// now on. One read of each table finds the columns that hold ids, one
// UPDATE rewrites them. Foreign keys are checked at the commit: a lead's
// id and its events' lead_id are packed by two statements.
func packStoredIDs(ctx context.Context, tx *Tx) error {
	if tx.dialect != SQLite {
		return nil
	}
	if _, err := tx.w.ExecContext(ctx, `/* DB.Migrate */ PRAGMA defer_foreign_keys = ON`); err != nil {
		return err
	}
	tables, err := packableTables(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		cols, err := textColumns(ctx, tx, t)
		if err != nil || len(cols) == 0 {
			return err
		}
		packable := func(c string) string {
			return fmt.Sprintf(`(length(%[1]s) IN (28, 29, 30, 36) AND typeof(cleanads_idpack(%[1]s)) = 'blob')`, c)
		}
		// Which columns hold an id: a look-up each, which stops at the
		// first (an id column's first row) or reads the column through.
		flags := make([]bool, len(cols))
		for i, c := range cols {
			if err := tx.r.QueryRowContext(ctx, `/* DB.Migrate */ SELECT EXISTS (SELECT 1 FROM "`+t+`" WHERE `+packable(c)+`)`).Scan(&flags[i]); err != nil {
				return fmt.Errorf("read %s: %w", t, err)
			}
		}
		var set, where []string
		for i, c := range cols {
			if flags[i] {
				set = append(set, fmt.Sprintf(`%[1]s = CASE WHEN length(%[1]s) IN (28, 29, 30, 36) THEN cleanads_idpack(%[1]s) ELSE %[1]s END`, c))
				where = append(where, packable(c))
			}
		}
		if len(set) == 0 {
			continue
		}
		if copied, err := copyPacked(ctx, tx, t, flags, cols); err != nil || copied {
			if err != nil {
				return fmt.Errorf("pack %s: %w", t, err)
			}
			continue
		}
		if _, err := tx.w.ExecContext(ctx, `/* DB.Migrate */ UPDATE "`+t+`" SET `+strings.Join(set, ", ")+` WHERE `+strings.Join(where, " OR ")); err != nil {
			return fmt.Errorf("pack %s: %w", t, err)
		}
	}
	return nil
}

// copyPacked packs table t's ids by copying it, when nothing else refers to
// it (no trigger, view or foreign key: visits, visitors): an UPDATE that
// changes a key moves every row within its B-trees (visits: 41 µs a row at
// 10,000 leads), where a copy writes them in order and builds the indexes
// at once, packed from the start. Otherwise it reports false and the
// caller updates the rows in place.
func copyPacked(ctx context.Context, tx *Tx, t string, flags []bool, cols []string) (bool, error) {
	var def string
	var refs int
	if err := tx.r.QueryRowContext(ctx, `/* DB.Migrate */ SELECT sql,
		(SELECT COUNT(*) FROM sqlite_schema WHERE type IN ('trigger', 'view') AND (tbl_name = ? OR sql LIKE '%' || ? || '%'))
		+ (SELECT COUNT(*) FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND f."table" = ?)
		FROM sqlite_schema WHERE type = 'table' AND name = ?`, t, t, t, t).Scan(&def, &refs); err != nil {
		return false, err
	}
	open := strings.Index(def, "(")
	if refs > 0 || open < 0 {
		return false, nil
	}
	var indexes []string
	rows, err := tx.r.QueryContext(ctx, `/* DB.Migrate */ SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, t)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var ix string
		if err := rows.Scan(&ix); err != nil {
			rows.Close()
			return false, err
		}
		indexes = append(indexes, ix)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	var all, packed []string
	ptr, err := tx.r.QueryContext(ctx, `/* DB.Migrate */ SELECT name FROM pragma_table_info(?) ORDER BY cid`, t)
	if err != nil {
		return false, err
	}
	for ptr.Next() {
		var c string
		if err := ptr.Scan(&c); err != nil {
			ptr.Close()
			return false, err
		}
		c = `"` + c + `"`
		all = append(all, c)
		v := c
		for i, pc := range cols {
			if pc == c && flags[i] {
				v = fmt.Sprintf(`CASE WHEN length(%[1]s) IN (28, 29, 30, 36) THEN cleanads_idpack(%[1]s) ELSE %[1]s END`, c)
			}
		}
		packed = append(packed, v)
	}
	ptr.Close()
	if err := ptr.Err(); err != nil {
		return false, err
	}
	tmp := t + "_packing"
	steps := []string{
		`CREATE TABLE "` + tmp + `" ` + def[open:],
		`INSERT INTO "` + tmp + `" (` + strings.Join(all, ", ") + `) SELECT ` + strings.Join(packed, ", ") + ` FROM "` + t + `"`,
		`DROP TABLE "` + t + `"`,
		`ALTER TABLE "` + tmp + `" RENAME TO "` + t + `"`,
	}
	for _, st := range append(steps, indexes...) {
		if _, err := tx.w.ExecContext(ctx, `/* DB.Migrate */ `+st); err != nil {
			return false, err
		}
	}
	return true, nil
}

// packableTables are the tables whose ids 0600 packs: all but SQLite's
// own, schema_migrations, virtual tables and their shadow tables.
func packableTables(ctx context.Context, tx *Tx) ([]string, error) {
	rows, err := tx.r.QueryContext(ctx, `/* DB.Migrate */ SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all, virtual []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, err
		}
		if strings.HasPrefix(strings.ToUpper(def), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
			continue
		}
		all = append(all, name)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
next:
	for _, t := range all {
		if strings.HasPrefix(t, "sqlite_") || t == "schema_migrations" {
			continue
		}
		for _, v := range virtual {
			if strings.HasPrefix(t, v+"_") {
				continue next
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// textColumns are t's columns declared TEXT (or VARCHAR, CHAR...), but the
// free text of idTextColumns.
func textColumns(ctx context.Context, tx *Tx, t string) ([]string, error) {
	rows, err := tx.r.QueryContext(ctx, `/* DB.Migrate */ SELECT name, type FROM pragma_table_info(?)`, t)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		typ = strings.ToUpper(typ)
		if (strings.Contains(typ, "TEXT") || strings.Contains(typ, "CHAR") || strings.Contains(typ, "CLOB")) && !idTextColumns[t][name] {
			cols = append(cols, `"`+name+`"`)
		}
	}
	return cols, rows.Err()
}
