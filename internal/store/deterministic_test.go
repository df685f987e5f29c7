package store_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// nondeterministic matches what makes a statement give another result when
// it runs again on the same state: the clock, randomness, and counters of
// the connection. On SQLite the group commit runs a batch's statements again
// after one of its calls fails (group.go, batchTx.restart), so a statement
// that used one of these would write something else the second time than
// what its caller saw the first. Times and ids are passed as arguments.
var nondeterministic = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?i)\brandom(blob)?\s*\(`), "random()"},
	{regexp.MustCompile(`(?i)\b(gen_random_uuid|uuid_generate_\w+)\s*\(`), "a random UUID"},
	{regexp.MustCompile(`(?i)\b(now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\(`), "the clock"},
	{regexp.MustCompile(`(?i)\b(current_timestamp|current_date|current_time|localtimestamp)\b`), "the clock"},
	// PostgreSQL's LOCALTIME, not SQLite's modifier 'localtime'.
	{regexp.MustCompile(`(?i)(^|[^'\w])localtime\b`), "the clock"},
	// SQLite's date functions read the clock for 'now' or with no time
	// value; PostgreSQL reads it for these special inputs.
	{regexp.MustCompile(`(?i)'\s*(now|today|tomorrow|yesterday)\s*'`), "the clock"},
	{regexp.MustCompile(`(?i)\b(date|time|datetime|julianday|unixepoch)\s*\(\s*\)`), "the clock"},
	{regexp.MustCompile(`(?i)\bstrftime\s*\(\s*'[^']*'\s*\)`), "the clock"},
	// Counts every change the connection made, rolled back or not.
	{regexp.MustCompile(`(?i)\btotal_changes\s*\(`), "total_changes()"},
}

var sqlComment = regexp.MustCompile(`(?s)/\*.*?\*/|--[^\n]*`)

// finding is one nondeterministic statement: where, and what it uses.
type finding struct {
	pos, what, text string
	full            string // the whole statement, spaces folded
}

// checkSQL returns what in sql makes it nondeterministic, at which line of
// it (1 is the first); comments are left out, so "/* Store.NowServing */"
// is no call of now().
func checkSQL(sql string) (whats []string, lines []int) {
	sql = sqlComment.ReplaceAllStringFunc(sql, func(c string) string {
		return strings.Repeat("\n", strings.Count(c, "\n")) // keeps the lines
	})
	for _, n := range nondeterministic {
		for _, loc := range n.re.FindAllStringIndex(sql, -1) {
			whats = append(whats, n.what)
			lines = append(lines, 1+strings.Count(sql[:loc[0]], "\n"))
		}
	}
	return whats, lines
}

// scanStatements reads every SQL statement of the package in fsys: each
// string in the Go files that are not tests (a statement or a part of one:
// the parts of a statement built with + are each such a string), and each
// migration under migrations/.
func scanStatements(fsys fs.FS) ([]finding, int, error) {
	return scanStatementsWith(fsys, checkSQL, 0)
}

// scanStatementsWith is scanStatements with another check, reading the
// migrations numbered from since on.
func scanStatementsWith(fsys fs.FS, check func(sql string) ([]string, []int), since int) ([]finding, int, error) {
	var found []finding
	n := 0
	add := func(file string, line int, sql string) {
		n++
		whats, lines := check(sql)
		for i, w := range whats {
			full := strings.Join(strings.Fields(sql), " ")
			text := full
			if len(text) > 120 {
				text = text[:120] + "..."
			}
			found = append(found, finding{pos: fmt.Sprintf("%s:%d", file, line+lines[i]-1), what: w, text: text, full: full})
		}
	}
	goFiles, err := fs.Glob(fsys, "*.go")
	if err != nil {
		return nil, 0, err
	}
	fset := token.NewFileSet()
	for _, name := range goFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, 0, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			lit, ok := node.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				s = lit.Value
			}
			add(name, fset.Position(lit.Pos()).Line, s)
			return true
		})
	}
	migrations, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, 0, err
	}
	for _, name := range migrations {
		if v, err := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0]); err == nil && v < since {
			continue
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, 0, err
		}
		add(name, 1, string(src))
	}
	return found, n, nil
}

// TestStatementsDeterministic: every statement of the store gives the same
// result when it runs again on the same state, as the group commit needs
// (store.go's package comment). A column DEFAULT or a trigger in a
// migration counts too: the INSERT that uses it would differ.
func TestStatementsDeterministic(t *testing.T) {
	found, n, err := scanStatements(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("read %d strings and migrations: the scan misses the package's statements", n)
	}
	t.Logf("read %d strings of the Go files and migrations", n)
	for _, f := range found {
		t.Errorf("%s: uses %s, so it gives another result when the group commit runs it again: pass the value as an argument\n\t%s", f.pos, f.what, f.text)
	}
}

// TestNondeterministicCaught shows the check fails where it must: each bad
// statement is found, each good one passes, and the scan finds the bad ones
// in a Go file and a migration of testdata/nondeterministic.
func TestNondeterministicCaught(t *testing.T) {
	for _, sql := range []string{
		`/* Store.LeadPick */ SELECT id FROM leads ORDER BY random() LIMIT 1`,
		`INSERT INTO tokens (id) VALUES (hex(randomblob(16)))`,
		`INSERT INTO sites (id) VALUES (gen_random_uuid())`,
		`UPDATE deliveries SET sent_at = now() WHERE id = ?`,
		`UPDATE deliveries SET sent_at = CURRENT_TIMESTAMP WHERE id = ?`,
		`DELETE FROM visits WHERE day < current_date`,
		`SELECT LOCALTIME`,
		`UPDATE leads SET at = datetime('now') WHERE id = ?`,
		`UPDATE leads SET at = strftime('%s', 'now') * 1000 WHERE id = ?`,
		`UPDATE leads SET at = unixepoch() WHERE id = ?`,
		`UPDATE leads SET at = strftime('%s') WHERE id = ?`,
		`UPDATE leads SET at = extract(epoch FROM clock_timestamp()) WHERE id = ?`,
		`CREATE TABLE t (id TEXT, at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
		"INSERT INTO t (n)\n\tVALUES (total_changes())",
	} {
		if whats, _ := checkSQL(sql); len(whats) == 0 {
			t.Errorf("not caught: %s", sql)
		}
	}
	for _, sql := range []string{
		`/* Store.NowServing */ SELECT id FROM leads WHERE created_at > ? ORDER BY created_at, id`,
		`UPDATE deliveries SET sent_at = ?, next_at = ? WHERE id = ? -- sent now()`,
		`SELECT random_seed, known_at, date(at / 1000, 'unixepoch', 'localtime') FROM t WHERE current_step = ?`,
		`INSERT INTO visits (id, at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`,
	} {
		if whats, _ := checkSQL(sql); len(whats) != 0 {
			t.Errorf("%s: wrongly caught as using %v", sql, whats)
		}
	}

	found, _, err := scanStatements(os.DirFS("testdata/nondeterministic"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.pos+" "+f.what)
	}
	want := []string{
		"bad.go:7 random()",
		"bad.go:12 the clock",
		"bad.go:16 the clock",
		path.Join("migrations", "0001_bad.sql") + ":4 the clock",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scan of testdata/nondeterministic found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
