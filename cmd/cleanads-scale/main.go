// Command cleanads-scale fills a CleanAds database to given numbers of leads
// (with their visits, visitors, history, outbox rows and stages) through
// the store's own insert functions, the ones intake calls, counters and
// search index included; then, at each size, it times every admin page and
// the API's lead read through the real handler on a real HTTP listener,
// and prints a table with the bytes per visit and per lead.
//
//	cleanads-scale -db sqlite:/tmp/scale.db -sizes 10000,100000
//	cleanads-scale -db 'postgres://postgres@127.0.0.1:5432/scale?sslmode=disable' -sizes 10000
//
// Filling is incremental: a database already holding some leads of the
// benchmark's site is grown to the next size, so a run can be resumed and
// one fill serves every size below it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	dsn      string
	sizes    []int
	visits   int
	days     int
	runs     int
	fillOnly bool
	// batch is how many leads one fill transaction stores; workers how
	// many transactions run at once (on SQLite they share its one writer).
	batch, workers int
	// verify, when set, checks after each fill that the counters equal a
	// recount of the rows (which it leaves in their place).
	verify bool
	// cpuProfile, when set, is where the run's CPU profile is written.
	cpuProfile string
	// eventDays, when set, runs retention after each fill, before the
	// measures: its shrinking of finished events (retention.event_days) and
	// its fold of past days' counter shards.
	eventDays int
	// clickDays, when set, runs retention's clearing of the click identity
	// of leads older than it (retention.click_days) after each fill.
	clickDays int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanads-scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var sizes string
	fs.StringVar(&o.dsn, "db", "", "the database: sqlite:PATH or postgres://...")
	fs.StringVar(&sizes, "sizes", "10000,100000", "numbers of leads to fill to and measure at, comma-separated, growing")
	fs.IntVar(&o.visits, "visits", 10, "visits per lead")
	fs.IntVar(&o.days, "days", 365, "the leads and visits are spread over this many days up to now")
	fs.IntVar(&o.runs, "runs", 7, "timed requests per page (the median and the slowest are printed)")
	fs.BoolVar(&o.fillOnly, "fill-only", false, "fill to the sizes without measuring")
	fs.IntVar(&o.batch, "batch", 2000, "leads per fill transaction")
	fs.IntVar(&o.workers, "workers", 1, "fill transactions run at once (PostgreSQL runs them side by side; SQLite has one writer)")
	fs.BoolVar(&o.verify, "verify", false, "after each fill, recount the site's counters from its rows (committed) and fail if they were not equal")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the run's CPU profile to this file (for go tool pprof)")
	fs.IntVar(&o.eventDays, "event-days", 0, "after each fill, shrink finished events older than this many days and fold past days' counter shards, as retention does (0: leave them)")
	fs.IntVar(&o.clickDays, "click-days", 0, "after each fill, clear the click identity (IP, user agent, fbc, fbp) of leads older than this many days, as retention does (0: leave it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.batch <= 0 || o.workers <= 0 {
		fmt.Fprintln(stderr, "cleanads-scale: -batch and -workers must be at least 1")
		return 2
	}
	if o.dsn == "" {
		fmt.Fprintln(stderr, "cleanads-scale: -db is required")
		return 2
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "cleanads-scale: bad size %q\n", s)
			return 2
		}
		o.sizes = append(o.sizes, n)
	}
	if err := scale(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, "cleanads-scale:", err)
		return 1
	}
	return 0
}
