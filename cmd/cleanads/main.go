// Command cleanads is the CleanAds server and its tools; see README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cleanads/cleanads/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
