// Command cleanads-load drives HTTP load at a CleanAds server (or at its own
// bare handler, the ceiling) over keep-alive connections for a fixed time,
// at full speed or at a target rate, and reports requests per second,
// latency percentiles and errors by status. It also serves, for the
// benchmark script, the ceiling handler, a lean Graph API stand-in and the
// floor: the ceiling plus one durable row per request (SQLite through the
// store's group commit, or PostgreSQL), the least any request that keeps
// data costs here. Repeated -url flags split the connections evenly over
// several nodes.
//
//	cleanads-load -serve 127.0.0.1:9100 -graph 127.0.0.1:9200
//	cleanads-load -floor 127.0.0.1:9300 -floor-db /tmp/floor.db
//	cleanads-load -floor 127.0.0.1:9301 -floor-db 'postgres://postgres@127.0.0.1:5432/floor?sslmode=disable'
//	cleanads-load -url http://127.0.0.1:9100/ -kind bare -c 64 -d 10s
//	cleanads-load -url http://127.0.0.1:8080 -url http://127.0.0.1:8081 -kind collect -c 256 -d 10s
//	cleanads-load -url http://127.0.0.1:8080 -kind collect -site dent -c 64 -d 10s
//	cleanads-load -url http://127.0.0.1:8080 -kind leads -site dent -rate 2000 -d 10s
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; tests call it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "cleanads-load:", err)
		return 2
	}
	if o.serve != "" || o.graph != "" || o.floor != "" {
		if err := serve(ctx, o, stdout); err != nil {
			fmt.Fprintln(stderr, "cleanads-load:", err)
			return 1
		}
		return 0
	}
	res, err := load(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "cleanads-load:", err)
		return 1
	}
	res.print(stdout, o)
	if res.ok == 0 {
		fmt.Fprintln(stderr, "cleanads-load: no request succeeded")
		return 1
	}
	return 0
}
