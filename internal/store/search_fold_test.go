package store

import (
	"database/sql"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestSearchFoldCoversFTS5: searchFold folds together every two letters
// that FTS5's trigram tokenizer folds together (it may fold more), so
// SQLite's check of the index's candidates never drops a lead the index
// found. FTS5 is asked itself: each letter tripled is a row, and the
// trigram it indexed for it is that letter folded. Every letter of the
// Basic Multilingual Plane is asked, and beyond it those Go folds.
func TestSearchFoldCoversFTS5(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO t (rowid, x) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || r > 0xFFFF && unicode.SimpleFold(r) == r {
			continue
		}
		s := string(r)
		if _, err := ins.Exec(int64(r), s+s+s); err != nil {
			t.Fatal(err)
		}
		asked++
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT doc, term FROM v`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var doc int64
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		n++
		r, f := rune(doc), []rune(term)[0]
		if foldRune(r) != foldRune(f) {
			t.Errorf("FTS5 folds %U %q to %U %q; searchFold to %U and %U", r, r, f, f, foldRune(r), foldRune(f))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != asked {
		t.Errorf("FTS5 indexed %d letters of the %d asked", n, asked)
	}
	// What SQLite's search did before (migration 0260) and does now.
	for _, c := range []struct{ a, b string }{{"AYŞE", "ayşe"}, {"ÖZTÜRK", "öztürk"}, {"IŞIK", "işik"}, {"ΣΟΦΟΣ", "σοφος"}} {
		if searchFold(c.a) != searchFold(c.b) {
			t.Errorf("%q and %q fold apart", c.a, c.b)
		}
	}
	for _, c := range []struct{ a, b string }{{"İSMAİL", "ismail"}, {"ışık", "işik"}, {"çelik", "celik"}} {
		if searchFold(c.a) == searchFold(c.b) {
			t.Errorf("%q and %q fold together", c.a, c.b)
		}
	}
}
