package cli

import (
	"context"
	"fmt"
	"time"
)

// migrate brings the database schema up to date and says what it did.
func migrate(ctx context.Context, e *env, args []string) error {
	fs := e.flags("migrate")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	if err := parse(fs, args); err != nil {
		return err
	}
	_, db, err := e.configAndStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx, time.Now)
	if err != nil {
		return err
	}
	if n, err := db.SiteSealTokens(ctx); err != nil {
		return err
	} else if n > 0 {
		fmt.Fprintf(e.stdout, "encrypted the Meta access tokens of %d sites\n", n)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(e.stdout, "schema is up to date (version %d)\n", v)
		return nil
	}
	fmt.Fprintf(e.stdout, "applied migrations %v; schema is at version %d\n", applied, v)
	return nil
}
