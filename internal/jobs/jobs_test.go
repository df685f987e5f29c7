package jobs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunnerRunsAndStops(t *testing.T) {
	var runs atomic.Int32
	ran := make(chan struct{}, 10)
	r := New(Options{Jobs: []Job{{Name: "count", Every: time.Millisecond, Run: func(ctx context.Context) error {
		runs.Add(1)
		select {
		case ran <- struct{}{}:
		default:
		}
		return errors.New("failing jobs keep their schedule")
	}}}})
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.Start(ctx) // a second Start does nothing
	<-ran
	<-ran
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	n := runs.Load()
	time.Sleep(5 * time.Millisecond)
	if runs.Load() != n || n < 2 {
		t.Errorf("runs %d then %d: the job ran after Stop or too few times", n, runs.Load())
	}
}

func TestLockDecides(t *testing.T) {
	var runs atomic.Int32
	r := New(Options{
		Jobs: []Job{{Name: "x", Every: time.Hour, Run: func(context.Context) error { runs.Add(1); return nil }}},
		Lock: func(ctx context.Context, name string, fn func(context.Context) error) (bool, error) {
			return false, nil // another node holds it
		},
	})
	r.RunOnce(context.Background(), r.jobs[0])
	if runs.Load() != 0 {
		t.Error("a job ran without its lock")
	}
}
