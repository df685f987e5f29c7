package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// On PostgreSQL the ids are stored packed since migration 0630, as on
// SQLite since 0600 and in the same form (packID): the columns that hold
// them are bytea. The packing is driven by the parameter's type, which
// PostgreSQL tells pgx when it prepares a statement: a string bound to a
// bytea parameter is packed when it is a canonical id and otherwise sent
// as its UTF-8 bytes, and a bytea value that is a packed id is read back
// as its text. A text parameter (a lead's message, a search term, any
// column still text) gets the string as it is, so free text is never
// packed and needs no plain(). Before 0630 no id column is bytea and the
// codec changes nothing; the one other bytea column (cert_items.value)
// holds sealed values longer than 17 bytes.

// pgIDsPackedSince is the migration that made PostgreSQL's id columns
// bytea.
const pgIDsPackedSince = 630

// pgIDType is the type of PostgreSQL's id columns at the schema's version,
// for the casts a statement needs where PostgreSQL cannot infer it (a
// VALUES list, an array argument): bytea since 0630, text before (the
// migrations' tests fill a database of an older shape with today's
// statements).
func (q Q) pgIDType() string {
	if q.pgIDs != nil && q.pgIDs.Load() {
		return "BYTEA"
	}
	return "TEXT"
}

// pgExecer hands pgx a string argument that must reach a codec as
// idString: pgx sends a plain string in text format, which PostgreSQL
// parses itself (bytea's text form: a packed id would not be packed, a
// backslash would be read as an escape). A string bound to a text
// parameter reaches its text as before.
type pgExecer struct{ e execer }

// idString is a string argument that pgx encodes through the parameter's
// codec (its underlying type, string, found by pgx).
type idString string

// pgArgs returns args with the strings that need the codec as idString:
// those that pack and those with a backslash.
func pgArgs(args []any) []any {
	var out []any
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			continue
		}
		var b [idPackedLen]byte
		if !packIDTo(&b, s) && !strings.Contains(s, `\`) {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = idString(s)
	}
	if out == nil {
		return args
	}
	return out
}

func (p pgExecer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.e.ExecContext(ctx, query, pgArgs(args)...)
}

func (p pgExecer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.e.QueryContext(ctx, query, pgArgs(args)...)
}

func (p pgExecer) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.e.QueryRowContext(ctx, query, pgArgs(args)...)
}

// idCodec is pgx's bytea codec with the ids' packing.
type idCodec struct{ pgtype.ByteaCodec }

// registerIDCodec makes conn's bytea and bytea[] types use idCodec; it is
// run on every new connection (stdlib.OptionAfterConnect).
func registerIDCodec(_ context.Context, conn *pgx.Conn) error {
	m := conn.TypeMap()
	t := &pgtype.Type{Name: "bytea", OID: pgtype.ByteaOID, Codec: idCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_bytea", OID: pgtype.ByteaArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
	return nil
}

// PlanEncode packs a string; a named string type (model.LeadID) reaches
// it as its string through pgx's own unwrapping.
func (c idCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(string); ok && c.FormatSupported(format) {
		return idEncodePlan{text: format == pgtype.TextFormatCode}
	}
	return c.ByteaCodec.PlanEncode(m, oid, format, value)
}

// idEncodePlan binds a string as its stored form, in bytea's binary or
// text format.
type idEncodePlan struct{ text bool }

func (p idEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	s := value.(string)
	if buf == nil {
		buf = []byte{} // never nil: the empty string is an empty value, not NULL
	}
	var a [idPackedLen]byte
	packed := packIDTo(&a, s)
	switch {
	case p.text && packed:
		return hex.AppendEncode(append(buf, `\x`...), a[:]), nil
	case p.text:
		return hex.AppendEncode(append(buf, `\x`...), []byte(s)), nil
	case packed:
		return append(buf, a[:]...), nil
	}
	return append(buf, s...), nil
}

// PlanScan reads a packed id back as its text's bytes, which database/sql
// hands to a *string (or a typed id) as the id; anything else is read as
// it is.
func (c idCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	next := c.ByteaCodec.PlanScan(m, oid, format, target)
	if _, ok := target.(*[]byte); ok && next != nil {
		return idScanPlan{next: next}
	}
	return next
}

// idScanPlan unpacks what it scanned into a *[]byte.
type idScanPlan struct{ next pgtype.ScanPlan }

func (p idScanPlan) Scan(src []byte, dst any) error {
	if s, ok := unpackID(src); ok {
		*dst.(*[]byte) = []byte(s)
		return nil
	}
	return p.next.Scan(src, dst)
}
