package cli

import (
	"context"
	"fmt"

	"github.com/cleanads/cleanads/internal/store"
)

// configCmd checks the configuration ("config check") and shows it with
// secrets masked ("config show").
func configCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "check" && args[0] != "show") {
		fmt.Fprintln(e.stderr, "usage: cleanads config check|show [--config FILE]")
		return errUsage
	}
	fs := e.flags("config " + args[0])
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	c, err := e.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if args[0] == "show" {
		fmt.Fprint(e.stdout, c.Dump())
		return nil
	}
	fmt.Fprintf(e.stdout, "config is valid: %d site(s), database %s\n", len(c.Sites), store.RedactDSN(c.Database))
	return nil
}
