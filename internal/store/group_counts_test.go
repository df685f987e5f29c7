package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/testkit"
)

// An IntakeTx call's counts wait for its batch's end on SQLite, or for
// the next call of the batch that may read counters: every call that
// succeeded counts once, whatever rebuilds its batch went through; a call
// that failed, panicked or was rolled back counts nothing; and a plain
// InTx call reads the counts of the calls before it in its batch.
func TestGroupCommitIntakeCountsOnce(t *testing.T) {
	t.Parallel()
	f := newGroupFixture(t)
	ctx := f.ctx
	day := model.Day(time.Now())
	errBoom := errors.New("boom")
	add := func(name string, n int64) func(tx *store.Tx) error {
		return func(tx *store.Tx) error {
			return tx.CountersAdd(ctx, "base", day, "", model.Count{Name: name, N: n})
		}
	}
	then := func(fn func(tx *store.Tx) error, end func() error) func(tx *store.Tx) error {
		return func(tx *store.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return end()
		}
	}
	seen := make(chan int64, 2)
	read := func(tx *store.Tx) error {
		cs, err := tx.Counters(ctx, "base", day, day)
		if err != nil {
			return err
		}
		seen <- cs.Sum(model.CounterVisits, "*", day, day)
		return nil
	}
	type step struct {
		intake bool
		fn     func(tx *store.Tx) error
		fails  bool
	}
	steps := []step{
		{true, add(model.CounterVisits, 1), false},
		{true, add(model.CounterVisits, 2), false},
		{false, read, false}, // sees 3
		{true, add(model.CounterLeads, 1), false},
		{true, then(add(model.CounterVisits, 100), func() error { return errBoom }), true}, // the rebuild
		{true, then(add(model.CounterVisits, 1000), func() error { panic("kaboom") }), true},
		{true, func(tx *store.Tx) error { // meets a statement error and goes on
			if err := tx.TestExec(ctx, `INSERT INTO sites (id, name, created_at, updated_at) VALUES ('base', 'dup', 0, 0)`); err == nil {
				return errors.New("the duplicate insert succeeded")
			}
			return add(model.CounterVisits, 4)(tx)
		}, false},
		{false, add(model.CounterVisits, 8), false}, // a plain call counts its own
		{true, add(model.CounterVisits, 16), false},
		{true, then(add(model.CounterVisits, 10000), func() error { return errBoom }), true},
		{false, read, false}, // sees 31
		{true, add(model.CounterVisits, 32), false},
	}
	_, queued := f.db.GroupStats()
	results := make([]chan any, len(steps))
	for i, s := range steps {
		results[i] = make(chan any, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					results[i] <- fmt.Sprintf("panic: %v", v)
				}
			}()
			if s.intake {
				results[i] <- f.db.IntakeTx(ctx, s.fn)
			} else {
				results[i] <- f.db.InTx(ctx, s.fn)
			}
		}()
		queued++
		testkit.WaitFor(t, fmt.Sprintf("call %d to be queued", i), func() bool { _, q := f.db.GroupStats(); return q == queued })
	}
	batches, _ := f.db.GroupStats()
	rebuilds := f.db.WriterStats().Rebuilds
	f.releaseFirst()
	for i, ch := range results {
		got := <-ch
		err, _ := got.(error)
		switch {
		case steps[i].fails != (got != nil):
			t.Errorf("call %d: %v", i, got)
		case err != nil && !errors.Is(err, errBoom):
			t.Errorf("call %d: %v, want its own error", i, err)
		}
	}
	if a, b := <-seen, <-seen; a != 3 || b != 31 {
		t.Errorf("the plain calls read %d and %d visits, want 3 and 31", a, b)
	}
	cs, err := f.db.Counters(ctx, "base", day, day)
	if err != nil {
		t.Fatal(err)
	}
	if v, l := cs.Sum(model.CounterVisits, "*", day, day), cs.Sum(model.CounterLeads, "*", day, day); v != 63 || l != 1 {
		t.Errorf("counted %d visits and %d leads, want 63 and 1", v, l)
	}
	if after, _ := f.db.GroupStats(); after-batches != 1 {
		t.Errorf("the queued calls ran in %d batches, want 1", after-batches)
	}
	if n := f.db.WriterStats().Rebuilds - rebuilds; n != 1 {
		t.Errorf("%d rebuilds, want 1", n)
	}
}
