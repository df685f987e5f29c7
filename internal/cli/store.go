package cli

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

// openStore opens the configured database with the key that encrypts Meta
// access tokens at rest: derived from secret_key when it is set; else, on
// SQLite, from a key file kept next to the database (created once, mode
// 0600), so a server with no secret_key still never stores a token in
// clear. On PostgreSQL several nodes must share the key, so without
// secret_key there is none and a site with a token is refused.
func openStore(ctx context.Context, c *config.Config) (*store.DB, error) {
	box, err := tokenBox(c)
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, c.Database, store.Options{Secrets: box, Version: buildinfo.Read().Short()})
}

// tokenBox returns the box that seals access tokens, or nil (PostgreSQL
// without secret_key).
func tokenBox(c *config.Config) (*secret.Box, error) {
	key := c.SecretKey
	if key == "" {
		path, ok := strings.CutPrefix(c.Database, "sqlite:")
		if !ok {
			return nil, nil
		}
		var err error
		if key, err = secret.LoadOrCreateKeyFile(filepath.Join(filepath.Dir(path), secret.KeyFileName)); err != nil {
			return nil, err
		}
	}
	return secret.NewBox(key)
}

// configAndStore loads the config named by --config (or CLEANADS_CONFIG)
// and opens its database, for the commands that work on it.
func (e *env) configAndStore(ctx context.Context, cfgPath string) (*config.Config, *store.DB, error) {
	c, err := e.loadConfig(cfgPath)
	if err != nil {
		return nil, nil, err
	}
	db, err := openStore(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return c, db, nil
}

// migratedStore is configAndStore for the commands that read and write the
// data: it refuses a database whose schema is not the binary's (run
// "cleanads migrate" first). The caller closes the database.
func (e *env) migratedStore(ctx context.Context, cfgPath string) (*config.Config, *store.DB, error) {
	c, db, err := e.configAndStore(ctx, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	if err := db.CheckSchema(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, db, nil
}
