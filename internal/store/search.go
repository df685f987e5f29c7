package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// searchMany is the number of candidates from which SQLite's search reads
// the leads newest first rather than its candidates (see leadSearch). Each
// candidate read is a row anywhere in the table, the walk a run of index
// entries: at a million leads a name's 1,100 candidates took 75 ms read
// one by one and 16 walked (with 2,000 here); at 10,000 leads 300
// candidates or more are few enough leads to walk either way.
const searchMany = 300

// searchDense: a search whose candidates are one in searchDense or more of
// the newest leads checks the leads newest first without the set of its
// candidates (see leadSearch).
const searchDense = 8

// searchMin is the fewest characters a search term has: the index keeps
// trigrams, and a shorter term would need a scan of every lead.
const searchMin = 3

// searchTerms are the terms a search looks for: search itself and the
// phone's digits (the inbox passes those of a search that looks like a
// phone), each of searchMin characters or more, once.
func searchTerms(search, phoneDigits string) []string {
	var terms []string
	for _, t := range []string{search, phoneDigits} {
		if utf8.RuneCountInString(t) >= searchMin && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	return terms
}

// leadSearch is the condition, with its arguments, that keeps the leads
// whose name, e-mail, phone (as written or as its digits) or message
// contains one of terms, ignoring case, found through the search index:
// PostgreSQL's trigram index (migration 0260), whose LIKE PostgreSQL
// checks against the row itself; SQLite's FTS5 table of trigrams (0400),
// which keeps no positions: it gives the leads that have, somewhere, the
// trigrams that cover a term (searchMatch), and each is checked for the
// term itself (search_has).
func (q Q) leadSearch(ctx context.Context, terms []string) (string, []any, error) {
	var ors []string
	var args []any
	if q.dialect == Postgres {
		for _, t := range terms {
			ors = append(ors, leadSearchText+` LIKE ? ESCAPE '\'`)
			args = append(args, "%"+likeEscape(strings.ToLower(t))+"%")
		}
		return "(" + strings.Join(ors, " OR ") + ")", args, nil
	}
	match := searchMatch(terms)
	// SQLite knows nothing of how many leads a search matches, and read
	// every match, then sorted them: 1.3 s at 100,000 leads for a word in
	// a sixth of the messages. So it counts the candidates, up to
	// searchMany, and those among the newest searchMany leads:
	//   - one in searchDense or more of the newest leads a candidate: it
	//     reads the leads newest first and checks each, stopping at the
	//     page's end, about Limit*searchDense leads (a term in most leads,
	//     "gmail.com", read a set of all of them with the third way: 44 ms
	//     at 100,000 leads, and ten times that at a million; 3 ms so);
	//   - else few candidates (fewer than searchMany): it reads them,
	//     checks and sorts them;
	//   - else many: it reads the leads newest first too, but checks only
	//     those in the set of candidates (the unary + keeps the rowids
	//     from being the way in): the set costs a read of each candidate's
	//     rowid (cheap), the walk about Limit*N/M leads for M matches.
	// Up to searchMany candidates, in one read of the index: when they are
	// all (few), the leads are read by their rowids, and the index is not
	// asked again (each ask reads the lists of the term's trigrams, a
	// phone's in every lead). FTS5 reads them in rowid order; asked for
	// the newest first it read an e-mail's three times slower.
	var (
		ids    []any
		newest int64
	)
	err := q.eachRow(ctx, func(r *sql.Rows) error {
		var id int64
		if err := r.Scan(&id, &newest); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	}, `/* Store.LeadList */ SELECT rowid, (SELECT max(rowid) FROM leads) FROM lead_search WHERE lead_search MATCH ? LIMIT ?`,
		match, searchMany)
	if err != nil {
		return "", nil, err
	}
	recent := 0
	if len(ids) < searchMany {
		for _, id := range ids {
			if id.(int64) > newest-searchMany {
				recent++
			}
		}
	} else if err := q.queryRow(ctx, `/* Store.LeadList */ SELECT COUNT(*) FROM lead_search WHERE lead_search MATCH ?
		AND rowid > (SELECT max(rowid) FROM leads) - ?`, match, searchMany).Scan(&recent); err != nil {
		return "", nil, err
	}
	var in string
	switch {
	case recent*searchDense >= searchMany:
	case len(ids) == 0:
		return "0", nil, nil
	case len(ids) < searchMany:
		in = "rowid IN (?" + strings.Repeat(", ?", len(ids)-1) + ") AND "
		args = append(args, ids...)
	default:
		in = "+rowid IN (SELECT rowid FROM lead_search WHERE lead_search MATCH ?) AND "
		args = append(args, match)
	}
	for _, t := range terms {
		ors = append(ors, `search_has(?, `+leadSearchWho+`) OR search_has(?, message)`)
		f := searchFold(t)
		args = append(args, f, f)
	}
	return in + "(" + strings.Join(ors, " OR ") + ")", args, nil
}

// searchMatch is the FTS5 query for the candidates of terms: for each
// term, trigrams of it that cover it, one every three characters and the
// last (the index has no positions, so no phrase; every trigram, rather
// than these, read three times the lists for no fewer candidates worth
// it: 17 ms for a phone at 100,000 leads where these take 10); FTS5 folds
// their case as it folded the text's.
func searchMatch(terms []string) string {
	var ors []string
	for _, t := range terms {
		r := []rune(t)
		var ands []string
		for i := 0; ; i += searchMin {
			// The last trigram ends with the term.
			i = min(i, len(r)-searchMin)
			g := `"` + strings.ReplaceAll(string(r[i:i+searchMin]), `"`, `""`) + `"`
			if !slices.Contains(ands, g) {
				ands = append(ands, g)
			}
			if i == len(r)-searchMin {
				break
			}
		}
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return strings.Join(ors, " OR ")
}

// leadSearchWho is the text of SQLite's lead_search column who, as its
// triggers write it (migration 0400).
const leadSearchWho = `name || ' ' || first_name || ' ' || last_name || ' ' || email || ' ' || phone || ' ' || phone_key`

// leadSearchText is the expression PostgreSQL's leads_search indexes
// (migration 0260): a query must spell it the same to use the index.
const leadSearchText = `lower(name || ' ' || first_name || ' ' || last_name || ' ' || email || ' ' || phone || ' ' || phone_key || ' ' || message)`

// likeEscape makes s match itself in a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// searchFold maps s so that two texts FTS5's trigram tokenizer takes for
// the same ignoring case map to the same: each letter to the first of the
// letters Unicode folds together with it (unicode.SimpleFold). It folds
// no less than FTS5 (TestSearchFoldCoversFTS5), so a lead the index finds
// is never lost to the check. It folds a few letters FTS5 does not (those
// Unicode paired after FTS5's tables, 6.1: Cherokee's), so a candidate
// with one of them in the other case is kept, never a lead the index did
// not give. Like FTS5 it keeps the dotted İ apart from i, and ı from I.
func searchFold(s string) string {
	return strings.Map(foldRune, s)
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	if r == 0xFFFE || r == 0xFFFF {
		// SQLite reads these two non-characters as U+FFFD, as Go reads
		// text that is not UTF-8.
		return utf8.RuneError
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

// search_has(term, text) is SQLite's check of the search's candidates:
// whether text, folded (searchFold), contains term, folded by the caller.
// One call a column, its arguments read in place (VolatileArgs), not
// copied: 14 ms for the 1,734 candidates of a word at 10,000 leads where
// a search_fold(text) returned to instr took 24, and reading them
// unchecked 11. modernc's driver adds it to every connection it opens.
func init() {
	sqlite.MustRegisterFunction("search_has", &sqlite.FunctionImpl{NArgs: 2, Deterministic: true, VolatileArgs: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			term, ok1 := args[0].(string)
			text, ok2 := args[1].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("search_has: %T, %T, want text", args[0], args[1])
			}
			return strings.Contains(searchFold(text), term), nil
		}})
}
