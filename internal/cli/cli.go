// Package cli owns the cleanads command: its subcommands, and in serve.go
// the one place where every part is built and wired together.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/cleanads/cleanads/internal/config"
)

// env is what every command gets from its caller: arguments, environment
// and output streams, so tests run commands in-process.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// migrateHold, set only by tests, runs inside each migration step of
	// serve (store.MigrateOptions.Hold): it makes a step as slow as a long
	// one on a large database.
	migrateHold func(ctx context.Context, version int) error
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the server", serve},
		{"migrate", "bring the database schema up to date", migrate},
		{"config", "check the configuration and show it with secrets masked", configCmd},
		{"score", "judge a lead read from stdin with a site's rules; nothing is stored or sent", score},
		{"replay", "judge a site's recent leads again with the current rules and text model; print what would change", replay},
		{"send-test", "send one test event for a site to Meta's Test Events tab", sendTest},
		{"matchkeys", "show what values normalise and hash to (JSON lines in and out)", matchKeys},
		{"user", "add admin users, set a password, list them", user},
		{"backup", "write a consistent copy of the SQLite database while the server runs", backup},
		{"forget", "erase one person (--email, --phone or --whatsapp-user) and print what was removed", forget},
		{"demo", "try CleanAds on this machine: the server, a demo website with a form, dry-run Meta; prints what to open", demoCmd},
		{"init", "write a first cleanads.yaml, its secret key and an admin user, asking what it needs", initCmd},
		{"counters", "rebuild: recount the sites' per-day visit and lead counters from the rows", countersCmd},
		{"doctor", "check a running install from outside: config, database, certificate, tracker, Meta tokens", doctor},
		{"version", "print the version, commit and Go version this binary was built from", version},
		{"probe", "fetch a URL and succeed on a 2xx answer (the container's health check)", probe},
		{"leadads", "check a site's Lead Ads token, Page subscription and permissions", leadAdsCmd},
	}
}

// errUsage marks a mistake in the command line; the usage was printed.
var errUsage = errors.New("usage")

// Run runs the command named in args[1:] and returns the process exit code:
// 0 on success, 1 on failure, 2 on a usage or configuration mistake.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) < 2 || args[1] == "help" || args[1] == "-h" || args[1] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[1] {
			continue
		}
		err := c.run(ctx, e, args[2:])
		var problems config.Problems
		switch {
		case err == nil:
			return 0
		case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
			return 2
		case errors.As(err, &problems):
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stderr, "cleanads %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(stderr, "cleanads: unknown command %q\n\n", args[1])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "cleanads: lead qualification and Meta Conversions API delivery\n\nUsage: cleanads COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'cleanads COMMAND -h' for a command's flags.")
}

// flags returns a flag set that prints to the command's stderr.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("cleanads "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses args, turning a flag mistake into errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return errUsage
	}
	return nil
}

// loadConfig reads the config named by --config or CLEANADS_CONFIG.
func (e *env) loadConfig(path string) (*config.Config, error) {
	if path == "" {
		path = e.getenv("CLEANADS_CONFIG")
	}
	return config.Load(path, e.getenv)
}

// logger builds the process logger from the config.
func (e *env) logger(c *config.Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Log.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(e.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(e.stderr, opts))
}
