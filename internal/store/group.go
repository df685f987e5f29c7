package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cleanads/cleanads/internal/secret"
)

// DefaultGroupMax is how many InTx calls one SQLite transaction takes at
// most (Options.GroupMax).
const DefaultGroupMax = 128

// ErrClosed is returned by InTx on a database that is closed.
var ErrClosed = errors.New("store: the database is closed")

// group is SQLite's group commit. SQLite has one writer and a durable commit
// costs an fsync, so a commit per request caps the server at a few hundred
// writes a second. One goroutine owns the writer: it takes every InTx call
// waiting at that moment (at most max), runs each caller's function in one
// transaction, commits once, and only then answers each caller with its own
// result. A function that fails or panics leaves nothing behind and touches
// no other caller (see run: the batch is rebuilt without it, and the rest
// of it runs in savepoints); a failed COMMIT fails every caller of the
// batch. A lone caller is never delayed: the
// committer starts at once with whatever is waiting, and the next batch
// forms while this one commits. The callers of a committed batch are
// answered by the syncer once the commit is on disk (see walSyncer), so the
// committer goes on with the next batch meanwhile.
type group struct {
	w     *sql.DB
	max   int
	box   *secret.Box // seals access tokens, as in every Q
	stmts *stmtCache
	sync  *walSyncer
	ckpt  *checkpointer
	reqs  chan *txReq
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	// search indexes a transaction's leads just before it commits.
	search *searchQueue

	// Counted for tests and metrics: batches run, calls queued, and the
	// transactions committed with the calls they carried.
	// rebuilds counts the batches rolled back and run again without a
	// failed call (batchTx.restart).
	batches, queued, commits, calls, rebuilds atomic.Int64
	// busy is the committer's time in run, in nanoseconds.
	busy atomic.Int64
}

// txReq is one InTx call waiting for the committer.
type txReq struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan txResult
	// counts says fn reads no counters and its counts may wait for the
	// batch's (DB.IntakeTx); else InTx has fn flush its own.
	counts bool
}

// txResult is a caller's answer: its error, or the panic its function
// raised, re-raised in the caller's goroutine.
type txResult struct {
	err      error
	panicked bool
	panicVal any
}

func newGroup(w *sql.DB, max int, box *secret.Box, search *searchQueue, s *walSyncer, c *checkpointer) *group {
	if max <= 0 {
		max = DefaultGroupMax
	}
	g := &group{w: w, max: max, box: box, search: search, stmts: &stmtCache{}, sync: s, ckpt: c, reqs: make(chan *txReq, max), quit: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// inTx queues fn and waits for its result. Once queued a call always waits
// for its answer, even when ctx ends: the committer may be running fn, and
// the caller must not report a failure for work that then commits. The
// committer skips a call whose ctx ended before its turn.
func (g *group) inTx(ctx context.Context, fn func(*Tx) error, counts bool) error {
	req := &txReq{ctx: ctx, fn: fn, done: make(chan txResult, 1), counts: counts}
	select {
	case <-g.quit:
		return ErrClosed
	default:
	}
	select {
	case g.reqs <- req:
		g.queued.Add(1)
	case <-ctx.Done():
		return ctx.Err()
	case <-g.quit:
		return ErrClosed
	}
	res := <-req.done
	if res.panicked {
		panic(res.panicVal)
	}
	// Classified once here, as InTx does on every engine: a busy or full
	// database answers "unavailable" on every write path.
	return unavailable(res.err)
}

// close stops the committer after the batch it is running; calls still
// queued fail with ErrClosed.
func (g *group) close() {
	g.once.Do(func() { close(g.quit) })
	<-g.done
	g.sync.close()
	g.ckpt.close()
	g.stmts.close()
}

func (g *group) loop() {
	var batch []*txReq // the calls taken so far, answered if fn exits the goroutine
	exited := false
	defer func() {
		if exited {
			close(g.done)
			return
		}
		// A function ended its goroutine (runtime.Goexit, e.g. t.FailNow
		// from a helper): answer the batch and carry on in a new
		// goroutine, so no caller waits forever.
		for _, r := range batch {
			r.answer(txResult{err: errors.New("store: a transaction function exited its goroutine")})
		}
		go g.loop()
	}()
	for {
		batch = batch[:0]
		select {
		case r := <-g.reqs:
			batch = append(batch, r)
		case <-g.ckpt.finish:
			// Between two batches nothing writes: this checkpoint can
			// reach the end of the log, which SQLite then starts over.
			_, _ = checkpoint(g.w)
			continue
		case <-g.quit:
			g.drain()
			exited = true
			return
		}
		g.batches.Add(1)
		start := time.Now()
		g.run(&batch)
		g.busy.Add(int64(time.Since(start)))
		g.stmts.prepare(g.w)
	}
}

// drain fails the calls still queued at close.
func (g *group) drain() {
	for {
		select {
		case r := <-g.reqs:
			r.answer(txResult{err: ErrClosed})
		default:
			return
		}
	}
}

func (r *txReq) answer(res txResult) {
	select {
	case r.done <- res:
	default: // answered already
	}
}

// run executes one batch in one transaction: the call in *batch, every
// call already waiting, and, while the syncer is still busy with the commit
// before, every call that arrives until it is free (at most max): those
// calls would wait for that fsync anyway, and one commit for all of them
// writes each page they share once. A call alone with the syncer free runs
// at once, on its own (runOne). Calls taken are appended to *batch.
//
// The calls run one after another with no savepoint between them: a
// savepoint has SQLite copy every page a call first changes into its
// statement journal, about a tenth of the writer's time for a lead. The
// writes each call made are logged instead (batchTx). When a call fails,
// panics, or meets a statement error, the transaction is rolled back, the
// writes of the calls that succeeded before it are run again in a new one
// (the same statements on the same state give the same result: the rules
// in the package comment, which TestStatementsDeterministic enforces for
// the statements), and the rest of the batch runs each call in a savepoint
// of its own, as one failure often comes with others.
func (g *group) run(batch *[]*txReq) {
	first := (*batch)[0]
	if err := first.ctx.Err(); err != nil {
		first.answer(txResult{err: err})
		return
	}
	if len(g.reqs) == 0 && !g.sync.busy() {
		g.runOne(first)
		return
	}
	b := &batchTx{stmts: g.stmts}
	if err := b.begin(g.w); err != nil {
		first.answer(txResult{err: fmt.Errorf("store: begin: %w", err)})
		return
	}
	// Ends the transaction however run ends, even by runtime.Goexit: the
	// writer must not stay taken. After a commit it does nothing.
	defer func() { _ = b.t.Rollback() }()
	bg := context.Background()
	var live []*txReq
	var results []txResult
	next := first
	for next != nil {
		r := next
		next = nil
		if err := r.ctx.Err(); err != nil {
			r.answer(txResult{err: err})
		} else if err := b.flushBefore(r); err != nil {
			g.abort(b.t, live, r, err)
			return
		} else if b.savepoints {
			ex := b.exec(nil)
			if _, err := ex.ExecContext(bg, `SAVEPOINT cleanads_call`); err != nil {
				g.abort(b.t, live, r, err)
				return
			}
			res := b.call(r, g.tx(ex))
			var err error
			if res.failed() {
				_, err = ex.ExecContext(bg, `ROLLBACK TO cleanads_call`)
			}
			if err == nil {
				_, err = ex.ExecContext(bg, `RELEASE cleanads_call`)
			}
			if err != nil {
				// SQLite rolled the whole transaction back (an I/O
				// error, a full disk): what ran is lost.
				g.abort(b.t, append(live, r), nil, err)
				return
			}
			live = append(live, r)
			results = append(results, res)
		} else {
			log := &writeLog{}
			res := b.call(r, g.tx(b.exec(log)))
			if res.failed() {
				log.writes = nil // rolled back below with the rest
			}
			b.logs = append(b.logs, log.writes)
			live = append(live, r)
			results = append(results, res)
			if res.failed() || log.broken {
				// Without this call's work if it failed, with it if it
				// only met an error it handled (SQLite may have rolled
				// the transaction back for it, a full disk for one).
				g.rebuilds.Add(1)
				if err := b.restart(g.w); err != nil {
					// Nothing of the batch is left: each call hears
					// its own failure, or this one.
					failAll(b.t, live, results, fmt.Errorf("store: group transaction failed: %w", err))
					return
				}
			}
		}
		if len(*batch) >= g.max {
			break
		}
		select {
		case next = <-g.reqs:
		default:
			select {
			case next = <-g.reqs:
			case <-g.sync.idleCh():
			case <-g.quit:
			}
		}
		if next != nil {
			*batch = append(*batch, next)
		}
	}
	if len(live) == 0 {
		return
	}
	if err := b.flushCounts(); err != nil {
		failAll(b.t, live, results, fmt.Errorf("store: commit: %w", err))
		return
	}
	if err := g.search.flush(bg, b.exec(nil)); err != nil {
		failAll(b.t, live, results, fmt.Errorf("store: commit: %w", err))
		return
	}
	if err := b.t.Commit(); err != nil {
		failAll(b.t, live, results, fmt.Errorf("store: commit: %w", err))
		return
	}
	g.committed(live, results)
}

// batchTx is a batch's transaction and the writes of each call run in it
// without a savepoint, kept so the transaction can be built again without
// a call that failed. Each call's function runs once; only its statements
// are run again.
type batchTx struct {
	t          *sql.Tx
	stmts      *stmtCache
	bound      map[*sql.Stmt]*sql.Stmt // the cached statements bound to t (txExec.stmt)
	logs       [][]loggedWrite         // per call run without a savepoint, in order
	savepoints bool                    // the rest of the batch runs in savepoints
	// counts are the counts of the IntakeTx calls that succeeded, not
	// written yet (flushCounts).
	counts counterTally
	// callCounts keeps the counts of the IntakeTx call running, cleared
	// for each: its maps are made once a batch, not once a call (a visit's
	// one count made a map of its own).
	callCounts counterTally
}

// call runs r's function in tx; the counts of an IntakeTx call that
// succeeds join the batch's, those of one that fails are dropped.
func (b *batchTx) call(r *txReq, tx *Tx) txResult {
	if !r.counts {
		return call(r.fn, tx)
	}
	clear(b.callCounts.counters)
	clear(b.callCounts.pageViews)
	tx.tally = &b.callCounts
	res := call(r.fn, tx)
	if !res.failed() {
		b.counts.merge(tx.tally)
	}
	tx.tally = nil
	return res
}

// flushBefore writes the batch's counts before a call that may read
// counters (not an IntakeTx).
func (b *batchTx) flushBefore(r *txReq) error {
	if r.counts {
		return nil
	}
	return b.flushCounts()
}

// flushCounts writes the batch's counts kept so far. Without savepoints
// its statements are logged as a call's are, so that a restart writes them
// again; an error means the transaction may be gone.
func (b *batchTx) flushCounts() error {
	if b.counts.empty() {
		return nil
	}
	var log *writeLog
	if !b.savepoints {
		log = &writeLog{}
	}
	ex := b.exec(log)
	err := b.counts.flush(context.Background(), Q{r: ex, w: ex, dialect: SQLite})
	if log != nil {
		b.logs = append(b.logs, log.writes)
		if err == nil && log.broken {
			err = errors.New("store: a counter statement failed")
		}
	}
	if err != nil {
		return fmt.Errorf("store: batch counters: %w", err)
	}
	return nil
}

// loggedWrite is one statement a call ran that may have changed the
// database: an Exec, or a query that does not begin with SELECT (an
// UPDATE ... RETURNING, say).
type loggedWrite struct {
	query string
	args  []any
	rows  bool // a query: run again with Query, its rows read and dropped
}

// writeLog collects a call's writes while it runs; broken says a statement
// failed, after which the transaction may be gone.
type writeLog struct {
	writes []loggedWrite
	broken bool
}

func (l *writeLog) note(query string, args []any, rows bool, err error) {
	if l == nil {
		return
	}
	if err != nil {
		l.broken = true
		return
	}
	if rows && readOnly(query) {
		return
	}
	l.writes = append(l.writes, loggedWrite{query: query, args: args, rows: rows})
}

func (b *batchTx) begin(w *sql.DB) error {
	t, err := w.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	b.t, b.bound = t, map[*sql.Stmt]*sql.Stmt{}
	return nil
}

func (b *batchTx) exec(log *writeLog) txExec {
	return txExec{t: b.t, stmts: b.stmts, bound: b.bound, log: log}
}

// restart rolls the transaction back, begins a new one and runs the logged
// writes again in it; from then on the batch runs in savepoints. An error
// means the batch's work is lost.
func (b *batchTx) restart(w *sql.DB) error {
	_ = b.t.Rollback() // SQLite may have rolled it back already
	if err := b.begin(w); err != nil {
		return err
	}
	b.savepoints = true
	ex := b.exec(nil)
	bg := context.Background()
	for _, writes := range b.logs {
		for _, wr := range writes {
			if err := wr.run(bg, ex); err != nil {
				return fmt.Errorf("store: running a batch's writes again: %w", err)
			}
		}
	}
	b.logs = nil
	return nil
}

func (wr loggedWrite) run(ctx context.Context, ex txExec) error {
	if !wr.rows {
		_, err := ex.ExecContext(ctx, wr.query, wr.args...)
		return err
	}
	rows, err := ex.QueryContext(ctx, wr.query, wr.args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// readOnly reports whether a query only reads: its first word, after
// comments, is SELECT.
func readOnly(query string) bool {
	q := strings.TrimSpace(query)
	for strings.HasPrefix(q, "/*") {
		end := strings.Index(q, "*/")
		if end < 0 {
			return false
		}
		q = strings.TrimSpace(q[end+2:])
	}
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// committed counts a commit and has the syncer answer its callers, each
// with its own result, once the commit is on disk.
func (g *group) committed(reqs []*txReq, results []txResult) {
	g.commits.Add(1)
	g.calls.Add(int64(len(reqs)))
	g.sync.after(func(err error) {
		for i, r := range reqs {
			r.answer(results[i].or(err))
		}
	})
}

// abort rolls the batch back after the transaction broke and fails the
// calls that ran in it; next, taken but not run yet, goes in a new one.
func (g *group) abort(t *sql.Tx, ran []*txReq, next *txReq, cause error) {
	_ = t.Rollback()
	for _, r := range ran {
		r.answer(txResult{err: fmt.Errorf("store: group transaction failed: %w", cause)})
	}
	if next != nil {
		b := []*txReq{next}
		g.run(&b)
	}
}

// failAll rolls back a batch whose work is lost and answers each call with
// its own failure, or err.
func failAll(t *sql.Tx, reqs []*txReq, results []txResult, err error) {
	_ = t.Rollback()
	for i, r := range reqs {
		r.answer(results[i].or(err))
	}
}

// failed reports whether the call's function returned an error or panicked.
func (res txResult) failed() bool { return res.err != nil || res.panicked }

// or is the result with err in place of a success.
func (res txResult) or(err error) txResult {
	if !res.failed() {
		res.err = err
	}
	return res
}

// runOne runs a lone call in a transaction of its own. As in a batch, the
// call's context was checked before it started (run) and its end does not
// stop it once it runs: under a cancellable context the driver would start
// a goroutine to watch it for every statement, and database/sql one for the
// transaction, on the one writer, for every lone request.
func (g *group) runOne(r *txReq) {
	t, err := g.w.BeginTx(context.Background(), nil)
	if err != nil {
		r.answer(txResult{err: fmt.Errorf("store: begin: %w", err)})
		return
	}
	defer t.Rollback()
	ex := txExec{t: t, stmts: g.stmts}
	tx := g.tx(ex)
	if r.counts {
		tx.tally = &counterTally{}
	}
	res := call(r.fn, tx)
	if res.failed() {
		r.answer(res)
		return
	}
	if r.counts {
		if err := tx.tally.flush(context.Background(), tx.Q); err != nil {
			r.answer(txResult{err: err})
			return
		}
	}
	if err := g.search.flush(context.Background(), ex); err != nil {
		r.answer(txResult{err: fmt.Errorf("store: commit: %w", err)})
		return
	}
	if err := t.Commit(); err != nil {
		r.answer(txResult{err: fmt.Errorf("store: commit: %w", err)})
		return
	}
	g.committed([]*txReq{r}, []txResult{res})
}

// tx is the Tx a call's function runs in, on the committer's statements;
// it tells the function when calls queue behind it (Tx.ShouldYield).
func (g *group) tx(ex txExec) *Tx {
	return &Tx{Q: Q{r: ex, w: ex, dialect: SQLite, box: g.box}, waiting: g.waiting, start: time.Now()}
}

// waiting reports whether calls are queued behind the one running.
func (g *group) waiting() bool { return len(g.reqs) > 0 }

// call runs fn, turning a panic into a result for the caller to re-raise.
func call(fn func(*Tx) error, tx *Tx) (res txResult) {
	defer func() {
		if v := recover(); v != nil {
			res = txResult{panicked: true, panicVal: v}
		}
	}()
	return txResult{err: fn(tx)}
}

// txExec runs the committer's statements: through the writer's prepared
// statements once they exist (SQLite takes about as long to parse a
// statement as to run it), and without the caller's cancellation: on SQLite
// a cancelled statement interrupts the connection, and an interrupted write
// rolls back the whole transaction, every other caller's work in the batch
// with it (and a cancellable context costs a watcher goroutine per
// statement in the driver). A call's context is checked before it starts.
// Queries that return rows are not prepared: a cached statement must not be
// reset while its rows are still being read.
type txExec struct {
	t     *sql.Tx
	stmts *stmtCache
	// bound keeps the cached statements t.StmtContext bound to t, for the
	// transaction's life (nil: bound at each use). Binding one makes a new
	// *sql.Stmt that t keeps until it ends: a batch of visits bound about
	// 500 of them.
	bound map[*sql.Stmt]*sql.Stmt
	log   *writeLog // notes the writes of a call run without a savepoint
}

// stmt returns the cached statement st bound to the transaction.
func (e txExec) stmt(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	if e.bound == nil {
		return e.t.StmtContext(ctx, st)
	}
	ts := e.bound[st]
	if ts == nil {
		ts = e.t.StmtContext(ctx, st)
		e.bound[st] = ts
	}
	return ts
}

func (e txExec) ctx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

func (e txExec) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = e.ctx(ctx)
	var res sql.Result
	var err error
	if st := e.stmts.get(query, len(args)); st != nil {
		res, err = e.stmt(ctx, st).ExecContext(ctx, args...)
	} else {
		res, err = e.t.ExecContext(ctx, query, args...)
	}
	e.log.note(query, args, false, err)
	return res, err
}

// QueryContext runs a cached statement too: the outbox's claim and outcome
// read what they write (RETURNING), and preparing their texts of a
// writeSlice of ids again at every slice took 13% of the writer's time in a
// drain.
func (e txExec) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = e.ctx(ctx)
	var rows *sql.Rows
	var err error
	if st := e.stmts.get(query, len(args)); st != nil {
		rows, err = e.stmt(ctx, st).QueryContext(ctx, args...)
	} else {
		rows, err = e.t.QueryContext(ctx, query, args...)
	}
	e.log.note(query, args, true, err)
	return rows, err
}

// QueryRowContext's error shows only at Scan: a query that writes through
// it is logged as run, and a failure then shows when it is run again.
func (e txExec) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = e.ctx(ctx)
	e.log.note(query, args, true, nil)
	if st := e.stmts.get(query, len(args)); st != nil {
		return e.stmt(ctx, st).QueryRowContext(ctx, args...)
	}
	return e.t.QueryRowContext(ctx, query, args...)
}

// stmtCache holds the writer's prepared statements by text. A statement
// seen for the first time inside a transaction cannot be prepared there
// (the transaction holds the only writer connection), so it is noted and
// prepared by the committer between batches.
type stmtCache struct {
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool
}

// Statements with many arguments are built with varying IN lists; caching
// them would fill the cache with one-off texts. Those of a writeSlice of
// ids (and the columns set with them) are one text each and are cached.
const (
	stmtCacheMax = 256
	stmtArgsMax  = writeSlice + 16
)

func (c *stmtCache) get(query string, nargs int) *sql.Stmt {
	if nargs > stmtArgsMax {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.stmts[query]; st != nil {
		return st
	}
	if len(c.stmts)+len(c.pending) < stmtCacheMax {
		if c.pending == nil {
			c.pending = map[string]bool{}
		}
		c.pending[query] = true
	}
	return nil
}

// prepare prepares the noted statements; the writer must be free. A
// statement that fails to prepare is simply run unprepared.
func (c *stmtCache) prepare(w *sql.DB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q := range c.pending {
		if st, err := w.Prepare(q); err == nil {
			if c.stmts == nil {
				c.stmts = map[string]*sql.Stmt{}
			}
			c.stmts[q] = st
		}
	}
	clear(c.pending)
}

// close closes the prepared statements.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
}
