// Package jobs runs CleanAds' periodic work (review expiry, retention) on a
// schedule, each run under a lock so that with several nodes exactly one
// runs a job at a time.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Job is one periodic task.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// LockFunc runs fn if this node gets the job's lock, and reports whether it
// ran. With one node it can simply call fn.
type LockFunc func(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error)

// Options are the dependencies of a Runner.
type Options struct {
	Jobs   []Job
	Lock   LockFunc
	Logger *slog.Logger
}

// Runner runs jobs until stopped.
type Runner struct {
	jobs []Job
	lock LockFunc
	log  *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// New returns a Runner; nothing runs until Start.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Lock == nil {
		o.Lock = func(ctx context.Context, _ string, fn func(context.Context) error) (bool, error) {
			return true, fn(ctx)
		}
	}
	return &Runner{jobs: o.Jobs, lock: o.Lock, log: o.Logger}
}

// Start runs each job once now and then at its interval. Starting a
// running Runner does nothing.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, j := range r.jobs {
		r.done.Add(1)
		go r.loop(ctx, j)
	}
	return nil
}

// Stop ends the schedule and waits for running jobs, or for ctx.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { r.done.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) loop(ctx context.Context, j Job) {
	defer r.done.Done()
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		r.RunOnce(ctx, j)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunOnce runs one job under its lock and logs a failure.
func (r *Runner) RunOnce(ctx context.Context, j Job) {
	ran, err := r.lock(ctx, j.Name, j.Run)
	if err != nil && ctx.Err() == nil {
		r.log.Error("job failed", "job", j.Name, "err", err)
		return
	}
	if ran {
		r.log.Debug("job ran", "job", j.Name)
	}
}
