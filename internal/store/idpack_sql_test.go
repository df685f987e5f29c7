package store_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// idColumn is a column that may hold an id: id or a name ending in _id,
// but for those that hold a site's slug, a platform's id or a person's
// (never minted here, so never packed).
const idColumn = `(?:\w+\.)?(?:id|(?:lead|event|visitor|delivery|user|history|hook|webhook|endpoint|attempt)_id)\b`

// idStringWork matches SQL that treats an id as text: on SQLite an id is
// stored packed (idpack.go), 17 bytes that ||, substr, LIKE, json_* and
// the like would read as bytes, and a comparison with a literal id would
// never match (a literal is not packed; the empty string stays text).
var idStringWork = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?i)\b` + idColumn + `\s*\|\||\|\|\s*` + idColumn), "|| on an id"},
	{regexp.MustCompile(`(?i)\b(substr|substring|instr|length|lower|upper|trim|ltrim|rtrim|replace|hex|printf|format|json_object|json_array|json_quote|json_insert|json_set|jsonb_\w+|string_agg|group_concat|concat)\s*\(\s*(?:[^()]*,\s*)?` + idColumn), "a text function of an id"},
	{regexp.MustCompile(`(?i)\b` + idColumn + `\s+(NOT\s+)?(LIKE|GLOB)\b`), "LIKE on an id"},
	{regexp.MustCompile(`(?i)\b` + idColumn + `\s*(=|<>|!=|<|>|<=|>=)\s*'[^']+'|'[^']+'\s*(=|<>|!=|<|>|<=|>=)\s*` + idColumn), "an id compared with a literal"},
	{regexp.MustCompile(`(?i)\bCAST\s*\(\s*` + idColumn + `\s+AS\b`), "a cast of an id"},
	// An argument may be an id, bound packed: a cast to text makes it
	// text of its bytes.
	{regexp.MustCompile(`(?i)\bCAST\s*\(\s*\?\s+AS\s+(TEXT|VARCHAR)\s*\)`), "a cast of an argument to text"},
}

// idStringWorkAllowed are the statements (strings of the Go files) whose
// work on an id is right on a packed one too, each with its reason.
var idStringWorkAllowed = []struct {
	text  string
	whole bool // the string is text, not only contains it
}{
	// A Lead Ads event id ('leadads-' and the leadgen id) is never in
	// canonical form, so it stays text; a packed id begins with a byte
	// below 0x20, so LIKE is false on it, as it should be.
	{text: `event_id LIKE 'leadads-%'`},
	// PostgreSQL's, which keeps text ids: a counter row, the claim's lease
	// owner, textParam.
	{text: "(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT))", whole: true},
	{text: "CAST(? AS BIGINT), CAST(? AS TEXT) FROM c"},
	{text: "CAST(? AS TEXT)", whole: true},
}

func checkIDStringWork(sql string) (whats []string, lines []int) {
	sql = sqlComment.ReplaceAllStringFunc(sql, func(c string) string {
		return strings.Repeat("\n", strings.Count(c, "\n"))
	})
	for _, n := range idStringWork {
		for _, loc := range n.re.FindAllStringIndex(sql, -1) {
			whats = append(whats, n.what)
			lines = append(lines, 1+strings.Count(sql[:loc[0]], "\n"))
		}
	}
	return whats, lines
}

// TestStatementsNoStringWorkOnIDs: no statement of the store, and no
// migration from 0600 on, does string work on an id column (idStringWork).
func TestStatementsNoStringWorkOnIDs(t *testing.T) {
	found, n, err := scanStatementsWith(os.DirFS("."), checkIDStringWork, 600)
	if err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("read %d strings and migrations: the scan misses the package's statements", n)
	}
next:
	for _, f := range found {
		for _, a := range idStringWorkAllowed {
			if f.full == a.text || !a.whole && strings.Contains(f.full, a.text) {
				continue next
			}
		}
		t.Errorf("%s: %s: on SQLite an id is stored packed (idpack.go); do it in Go\n\t%s", f.pos, f.what, f.text)
	}
}

// TestIDStringWorkCaught: the check finds what it must and passes what
// it must not.
func TestIDStringWorkCaught(t *testing.T) {
	for _, sql := range []string{
		`SELECT id || ' ' || CAST(received_at AS TEXT) FROM leads`,
		`SELECT CAST(received_at AS TEXT) || ' ' || l.id FROM leads l`,
		`UPDATE leads SET event_id = 'erased-' || id WHERE id = ?`,
		`SELECT substr(event_id, 1, 8) FROM leads`,
		`SELECT json_object('lead', lead_id) FROM delivery_events`,
		`SELECT 1 FROM delivery_events WHERE event_id LIKE 'leadads-%'`,
		`SELECT 1 FROM leads WHERE visitor_id = 'v_01hx'`,
		`SELECT CAST(e.lead_id AS TEXT) FROM delivery_events e`,
		`SELECT group_concat(id, ',') FROM leads`,
		`INSERT INTO notifications (lead_id) SELECT CAST(? AS TEXT) FROM t`,
	} {
		if whats, _ := checkIDStringWork(sql); len(whats) == 0 {
			t.Errorf("not caught: %s", sql)
		}
	}
	for _, sql := range []string{
		`SELECT id FROM leads WHERE id = ? AND lead_id <> '' AND event_id = ?`,
		`SELECT 'stage:' || s.stage, site_id || '/' || pixel_id FROM t WHERE lead_ads_id <> ''`,
		`SELECT length(message), substr(name, 1, 3) FROM leads /* id || x */`,
		`SELECT COUNT(*) FROM leads WHERE id > ? ORDER BY id`,
	} {
		if whats, _ := checkIDStringWork(sql); len(whats) != 0 {
			t.Errorf("%s: wrongly caught as %v", sql, whats)
		}
	}
}
