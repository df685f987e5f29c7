package store_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/store/storetest"
)

// TestIDPackSQLMatchesGo: migration 0630's cleanads_idpack stores every
// string as the store binds it (packID): the same 17 bytes for a canonical
// id, the string's own bytes for anything else. Were they to differ, a row
// the migration rewrote would never be found again.
func TestIDPackSQLMatchesGo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("PostgreSQL's migration")
		}
		ctx := context.Background()
		var g model.IDGen
		now := time.Now()
		uuid := model.NewUUID()
		id := model.NewID("ld_", now)
		ids := []string{uuid, model.NewUUIDv7(now), "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
			"ld_00000000000000000000000000", "ld_7zzzzzzzzzzzzzzzzzzzzzzzzz",
			// Not canonical: stored as their bytes.
			"", "ld_1", "erased-" + id, strings.ToUpper(uuid), "ld_" + strings.ToUpper(id[3:]), "ld_8" + id[4:],
			"ld_i" + id[4:], "zz_" + id[3:], "ld_" + id[3:] + "0", id[:28], "{" + uuid[1:35] + "}", "leadads-123", "Ayşe",
			`\x41`, `a\b`, `\\`} // bytea's text input would read these as escapes
		for _, p := range []string{"dl_", "evt_", "h_", "la_", "ld_", "u_", "v_", "wh_"} {
			ids = append(ids, g.New(p, now), model.NewID(p, now.Add(-time.Hour)))
		}
		for _, s := range ids {
			want, ok := store.PackIDHexForTest(s)
			if !ok {
				want = hex.EncodeToString([]byte(s))
			}
			got, err := db.TestQueryString(ctx, `SELECT encode(cleanads_idpack(CAST(? AS TEXT)), 'hex')`, s)
			if err != nil || got != want {
				t.Errorf("%q: SQL %s (%v), Go %s", s, got, err, want)
			}
			// Bound to a bytea parameter, the store sends the same bytes,
			// and reads them back as the string.
			if got, err := db.TestQueryString(ctx, `SELECT encode(CAST(? AS BYTEA), 'hex') || CASE WHEN CAST(? AS BYTEA) IS NULL THEN ' null' ELSE '' END`, s, s); err != nil || got != want {
				t.Errorf("%q bound: %s (%v), want %s", s, got, err, want)
			}
			if got, err := db.TestQueryString(ctx, `SELECT CAST(? AS BYTEA)`, s); err != nil || got != s {
				t.Errorf("%q read back as %q (%v)", s, got, err)
			}
			if got, err := db.TestQueryString(ctx, `SELECT cleanads_idtext(CAST(? AS BYTEA))`, s); err != nil || got != s {
				t.Errorf("%q: cleanads_idtext %q (%v)", s, got, err)
			}
		}
	})
}
