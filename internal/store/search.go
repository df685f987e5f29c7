package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/cleanads/cleanads/internal/model"
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
// PostgreSQL's trigram index (migrations 0260, 0530; leadSearchDays adds
// the days), whose LIKE PostgreSQL checks against the row itself; SQLite's FTS5 table of trigrams (0400),
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
		f := q.plain(searchFold(t))
		args = append(args, f, f)
	}
	return in + "(" + strings.Join(ors, " OR ") + ")", args, nil
}

// searchWalkFirst is how many candidates leadSearchWalk reads first, and
// searchWalkMost how many it reads before it leaves the page to
// leadSearch: each candidate is a lead read by its rowid and checked (a
// name's 1,100 candidates so took 75 ms at a million leads), and a term
// whose candidates the filters or the check mostly refuse (another site's
// leads, trigrams apart) pages faster by walking the leads newest first.
const (
	searchWalkFirst = 64
	searchWalkMost  = 1000
)

// searchOrderBlock is log2 of the rowids in a block of lead_search_order
// (migration 0510).
const searchOrderBlock = 6

// leadSearchWalk answers a page of SQLite's search, where is LeadList's
// filter without the search, from the index's candidates read newest
// rowid first, a batch at a time (FTS5 reads its lists from their end
// and stops with the batch): each batch's leads are read by rowid,
// filtered and checked (search_has), and the walk stops when it has a
// page and no lead left below the batch can belong on it. A lead's rowid
// does not follow its time (imports and the Lead Ads backfill store
// older times), so that is asked of lead_search_order: the newest
// received time of any lead whose rowid is in a block or below (0510).
// When it is older than the page's last lead, every candidate left is
// older too, and the page, sorted by (received_at, id), is exact; so it
// is when the index has no candidate left. done is false when the walk
// read searchWalkMost candidates without a page (few of them pass, or a
// later page, whose newer candidates are read and passed over), and
// leadSearch answers instead.
func (q Q) leadSearchWalk(ctx context.Context, where string, args []any, f LeadFilter, terms []string) (list []*model.Lead, done bool, err error) {
	limit := pageLimit(f.Limit)
	where, args = olderThan(where, args, "received_at", f.Before, string(f.BeforeID))
	var ors []string
	var checks []any
	for _, t := range terms {
		ors = append(ors, `search_has(?, `+leadSearchWho+`) OR search_has(?, message)`)
		folded := q.plain(searchFold(t))
		checks = append(checks, folded, folded)
	}
	check := " AND (" + strings.Join(ors, " OR ") + ")"
	match := searchMatch(terms)
	next := int64(math.MaxInt64) // the candidates left have this rowid or a lower one
	// The leads that pass, by rowid, time and id: the page's whole rows
	// are read once it is known.
	type passed struct {
		rowid, at int64
		id        string
	}
	var found []passed
	for read, batch := 0, searchWalkFirst; read < searchWalkMost; read, batch = read+batch, batch*3 {
		batch = min(batch, searchWalkMost-read)
		var rowids []any
		err := q.eachRow(ctx, func(r *sql.Rows) error {
			var id int64
			if err := r.Scan(&id); err != nil {
				return err
			}
			rowids = append(rowids, id)
			return nil
		}, `/* Store.LeadList */ SELECT rowid FROM lead_search WHERE lead_search MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT ?`,
			match, next, batch)
		if err != nil {
			return nil, false, err
		}
		if len(rowids) > 0 {
			next = rowids[len(rowids)-1].(int64) - 1
			// NOT INDEXED: the leads by rowid, never by an index on the
			// filters' columns, which SQLite chose for a site's search
			// (leads_site_changed: every lead of the site read).
			err := q.eachRow(ctx, func(r *sql.Rows) error {
				var p passed
				if err := r.Scan(&p.rowid, &p.at, &p.id); err != nil {
					return err
				}
				found = append(found, p)
				return nil
			}, searchWalkLeadsQuery(len(rowids), where+check), slices.Concat(rowids, args, checks)...)
			if err != nil {
				return nil, false, err
			}
			slices.SortFunc(found, func(a, b passed) int {
				if a.at != b.at {
					return cmp.Compare(b.at, a.at)
				}
				return strings.Compare(b.id, a.id)
			})
		}
		end := len(rowids) < batch // no candidate left
		if !end && len(found) >= limit {
			var upto sql.NullInt64
			err := q.queryRow(ctx, `/* Store.LeadList */ SELECT upto FROM lead_search_order WHERE block <= ?
				ORDER BY block DESC LIMIT 1`, next>>searchOrderBlock).Scan(&upto)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, false, err
			}
			end = !upto.Valid || upto.Int64 < found[limit-1].at
		}
		if end {
			found = found[:min(len(found), limit)]
			if len(found) == 0 {
				return nil, true, nil
			}
			page := make([]any, len(found))
			for i, p := range found {
				page[i] = p.rowid
			}
			rows, err := q.query(ctx, `/* Store.LeadList */ SELECT `+leadColumns+` FROM leads
				WHERE rowid IN (?`+strings.Repeat(", ?", len(page)-1)+`)`, page...)
			list, err := scanAll(rows, err, "leads", scanLead)
			if err != nil {
				return nil, false, err
			}
			slices.SortFunc(list, newerFirst)
			return list, true, nil
		}
	}
	return nil, false, nil
}

// searchDayMS is the width of the days PostgreSQL's leads_search_days
// keys a lead by (migration 0530): its UTC day, received_at / searchDayMS.
const searchDayMS = 24 * 60 * 60 * 1000

// searchDaysMost is the most days one window of PostgreSQL's search
// reads through its days (leadSearchDays): a window would be wider for a
// term so rare that its matches, all read and sorted, cost less than the
// window's days (each a look-up in the index, a few pages).
const searchDaysMost = 64

// leadSearchDays answers a page of PostgreSQL's search, where being
// LeadList's filter without the search, newest first, in reads that each
// stop at the page's end:
//   - the newest Limit*searchDense leads that pass the filters, walked
//     by time and checked for the terms: a term in one lead of
//     searchDense or more (a word of many messages, "gmail") fills its
//     page there, at a cost that does not depend on how many leads have
//     it (read through the index, they would all be read and sorted);
//   - else windows of days, newest first, each read through
//     leads_search_days (0530), which intersects the terms' trigram
//     lists with the window's days: a window's matches are read and
//     sorted, no older lead's, and the reads stop once the page is full.
//     The first window is twice as many days as the walk's leads say
//     the page needs (its matches over the days it spanned), each next
//     one twice what the matches so far say, seven times the days read
//     when there were none. A lead's day only grows with its
//     time, so every lead of a window is newer than every lead of the
//     windows after it, and the windows' pages, each sorted by
//     (received_at, id), make the page the one sort of all matches
//     gives, ties included;
//   - past searchDaysMost days in a window, the older days in one read,
//     as the search read every day before: a rare term's matches, or a
//     small database's.
//
// The days start at the newest lead that passes the filters and the
// page's cursor (olderThan), so that a lead with a time ahead of the
// clock is found first and a later page starts at its cursor's day.
func (q Q) leadSearchDays(ctx context.Context, where string, args []any, f LeadFilter, terms []string) ([]*model.Lead, error) {
	limit := pageLimit(f.Limit)
	where, args = olderThan(where, args, "received_at", f.Before, string(f.BeforeID))
	cond, cargs, err := q.leadSearch(ctx, terms)
	if err != nil {
		return nil, err
	}
	read := func(query string, qargs ...any) ([]*model.Lead, error) {
		rows, err := q.query(ctx, query, qargs...)
		return scanAll(rows, err, "leads", scanLead)
	}
	// The newest leads that pass the filters, walked and checked for the
	// terms, with how many there are and their newest and oldest times:
	// one row with no lead when none has the terms.
	var (
		list     []*model.Lead
		walked   int
		top      sql.NullInt64
		oldest   sql.NullInt64
		matchID  sql.NullString
		scanPeek = func(r *sql.Rows) error {
			cols, err := r.Columns()
			if err != nil {
				return err
			}
			dest := []any{&walked, &top, &oldest, &matchID}
			for len(dest) < len(cols) {
				dest = append(dest, new(any))
			}
			if err := r.Scan(dest...); err != nil || !matchID.Valid {
				return err
			}
			l, err := scanLead(prefixScanner{r, []any{&walked, &top, &oldest}})
			list = append(list, l)
			return err
		}
	)
	// The walk (x) stops at the page's end, a common term's after about a
	// page of leads; how many leads it may walk, and the times of the
	// newest and oldest of them (m), are read from the time index alone.
	walk := limit * searchDense
	err = q.eachRow(ctx, scanPeek, `/* Store.LeadList */ SELECT m.n, m.top, m.oldest, x.*
		FROM (SELECT COUNT(*) AS n, max(received_at) AS top, min(received_at) AS oldest
			FROM (SELECT received_at FROM leads WHERE `+where+` ORDER BY received_at DESC LIMIT ?) w) m
		LEFT JOIN LATERAL (SELECT `+leadColumns+` FROM (SELECT * FROM leads WHERE `+where+`
			ORDER BY received_at DESC, id DESC LIMIT ?) l WHERE `+cond+`
			ORDER BY received_at DESC, id DESC LIMIT ?) x ON true`,
		slices.Concat(args, []any{walk}, args, []any{walk}, cargs, []any{limit})...)
	if err != nil {
		return nil, fmt.Errorf("store: leads: %w", err)
	}
	// A full page, or every lead that passes the filters read: the page.
	if len(list) == limit || walked < walk {
		return list, nil
	}
	day := top.Int64 / searchDayMS
	// Twice the days the page needs at the walk's rate of matches (half a
	// match when it had none).
	spanned := max(float64(top.Int64-oldest.Int64)/searchDayMS, 1.0/24)
	days := int64(math.Ceil(2 * float64(limit) * spanned / max(float64(len(list)), 0.5)))
	where += " AND " + cond
	args = append(args, cargs...)
	list = list[:0]
	for done := int64(0); days <= searchDaysMost; {
		window := make([]int64, days)
		for i := range window {
			window[i] = day - int64(i)
		}
		page, err := read(`/* Store.LeadList */ SELECT `+leadColumns+` FROM leads WHERE `+where+`
			AND ARRAY[received_at / 86400000] && ? ORDER BY received_at DESC, id DESC LIMIT ?`,
			slices.Concat(args, []any{window, limit - len(list)})...)
		if err != nil {
			return nil, err
		}
		list = append(list, page...)
		if len(list) == limit {
			return list, nil
		}
		day -= days
		done += days
		// Twice the days the rest of the page needs at the rate so far, at
		// least half the days read (a page's last few leads are not worth
		// a read each), at most six times them (seven, with none yet).
		days = 6 * done
		if len(list) > 0 {
			need := int64(math.Ceil(2 * float64(limit-len(list)) * float64(done) / float64(len(list))))
			days = min(days, max(need, (done+1)/2))
		}
	}
	page, err := read(`/* Store.LeadList */ SELECT `+leadColumns+` FROM leads WHERE `+where+`
		AND received_at / 86400000 <= ? ORDER BY received_at DESC, id DESC LIMIT ?`,
		slices.Concat(args, []any{day, limit - len(list)})...)
	return append(list, page...), err
}

// prefixScanner scans a row whose first columns go to pre, the rest to
// the caller's destinations.
type prefixScanner struct {
	r   *sql.Rows
	pre []any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.r.Scan(append(slices.Clone(p.pre), dest...)...)
}

// searchWalkLeadsQuery reads n candidates' rowid, time and id, where
// they pass where.
func searchWalkLeadsQuery(n int, where string) string {
	return `/* Store.LeadList */ SELECT rowid, received_at, id FROM leads NOT INDEXED
		WHERE rowid IN (?` + strings.Repeat(", ?", n-1) + `) AND ` + where
}

// newerFirst orders leads as the inbox lists them: received_at, then id,
// newest first.
func newerFirst(a, b *model.Lead) int {
	if c := b.ReceivedAt.Compare(a.ReceivedAt); c != 0 {
		return c
	}
	return strings.Compare(string(b.ID), string(a.ID))
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

// leadSearchText is the expression PostgreSQL's leads_search_days
// indexes (migrations 0260, 0530): a query must spell it the same to use
// the index.
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

// searchQueue indexes, on SQLite, the leads a write transaction noted in
// lead_search_pending (migration 0590), all in one statement just before
// it commits: FTS5 then writes the transaction's leads as one segment at
// the commit, where written by the leads' own triggers it wrote each lead
// as a segment of its own (it writes what it holds at every statement
// journal the transaction opens after). Every commit of the store's writer
// runs it: the group commit's (group.run, runOne), InTx's, and that of a
// statement outside InTx (syncedWriter), so a lead is in the index when
// the transaction that stores it is committed.
type searchQueue struct {
	// ready: the schema has lead_search_pending (searchQueuedSince; set by
	// DB.noteSchema). A database not yet migrated to 0590 has its triggers
	// write lead_search themselves.
	ready atomic.Bool
}

// searchQueuedSince is the migration that made lead_search_pending.
const searchQueuedSince = 590

// flush indexes the leads pending, if any, in the transaction ex and
// empties the queue. The leads go in by rowid, ascending, as FTS5 wants
// them to keep them in memory (a lower rowid than the last has it write
// what it holds). FTS5's automerge does merge work in proportion to the
// pages its flushes write, and a transaction's leads written together
// write far fewer pages than each lead's on its own did: a fill of 20,000
// leads left 13-21 segments where it left 8, and a search reads each
// term's list in every segment. So each flush also asks for 64 pages of
// merge work ('merge'), which kept it at 6-9 for about 1% of a lead's CPU.
// An error leaves the transaction to be rolled back.
func (s *searchQueue) flush(ctx context.Context, ex execer) error {
	if s == nil || !s.ready.Load() {
		return nil
	}
	var pending bool
	if err := ex.QueryRowContext(ctx, `/* Store.searchQueue */ SELECT EXISTS (SELECT 1 FROM lead_search_pending)`).Scan(&pending); err != nil {
		return fmt.Errorf("store: search index queue: %w", err)
	}
	if !pending {
		return nil
	}
	if _, err := ex.ExecContext(ctx, `/* Store.searchQueue */ INSERT INTO lead_search (rowid, who, message)
		SELECT l.rowid, l.name || ' ' || l.first_name || ' ' || l.last_name || ' ' || l.email || ' ' || l.phone || ' ' || l.phone_key, l.message
		FROM lead_search_pending p CROSS JOIN leads l ON l.rowid = p.rowid ORDER BY p.rowid`); err != nil {
		return fmt.Errorf("store: search index: %w", err)
	}
	if _, err := ex.ExecContext(ctx, `/* Store.searchQueue */ INSERT INTO lead_search (lead_search, rank) VALUES ('merge', 64)`); err != nil {
		return fmt.Errorf("store: search index merge: %w", err)
	}
	if _, err := ex.ExecContext(ctx, `/* Store.searchQueue */ DELETE FROM lead_search_pending`); err != nil {
		return fmt.Errorf("store: search index queue: %w", err)
	}
	return nil
}
