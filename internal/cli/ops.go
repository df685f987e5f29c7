package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/secret"
	"github.com/cleanads/cleanads/internal/store"
)

// backup writes an online, consistent copy of the SQLite database.
func backup(ctx context.Context, e *env, args []string) error {
	fs := e.flags("backup")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cleanads backup [--config FILE] FILE\n\n"+
			"Writes a consistent copy of the SQLite database to FILE while the server runs.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	out := fs.Arg(0)
	c, err := e.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(c.Database, "sqlite:") {
		return store.ErrBackupPostgres
	}
	// No key is needed to copy: the tokens travel sealed.
	db, err := store.Open(ctx, c.Database, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up the database to %s\n", out)
	key := "secret_key"
	if c.SecretKey == "" {
		key = filepath.Join(filepath.Dir(strings.TrimPrefix(c.Database, "sqlite:")), secret.KeyFileName)
	}
	fmt.Fprintf(e.stdout, "The Meta access tokens in it are encrypted with %s: keep that key safe, apart from the copy.\n", key)
	return nil
}

// forget erases one person and prints what was removed, per table.
func forget(ctx context.Context, e *env, args []string) error {
	fs := e.flags("forget")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	email := fs.String("email", "", "the person's e-mail address")
	phone := fs.String("phone", "", "the person's phone number, in any formatting")
	waUser := fs.String("whatsapp-user", "", "the person's WhatsApp user id (a Click-to-WhatsApp lead's, shown on its page)")
	site := fs.String("site", "", "only this site's records (default: every site)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if n := countSet(*email, *phone, *waUser); n != 1 {
		fmt.Fprintln(e.stderr, "cleanads forget: give exactly one of --email, --phone or --whatsapp-user")
		fs.Usage()
		return errUsage
	}
	c, db, err := e.migratedStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if *site != "" {
		if _, err := db.SiteByID(ctx, model.SiteID(*site)); err != nil {
			return err
		}
	}
	svc := app.New(app.Options{Store: db, Logger: e.logger(c)})
	res, err := svc.Forget(ctx, app.ForgetInput{Email: *email, Phone: *phone, WhatsAppUser: *waUser, Site: model.SiteID(*site)})
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n", b)
	if res.Leads == 0 {
		fmt.Fprintln(e.stdout, "No lead of this person was found (already forgotten, or never here).")
		return nil
	}
	fmt.Fprintln(e.stdout, "Removed: contact details of the leads, personal data in their history, the linked visitor and visits,\n"+
		"their WhatsApp conversations and user ids, and the IP, user agent, click ids, Lead Ads id and page URL in their events.\n"+
		"Their events not sent yet were cancelled; a Lead Ads lead is never read from Meta again.\n"+
		"The events keep only the hashed match keys Meta already received.")
	return nil
}

// countSet is how many of vs are set.
func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// retentionJob runs the retention policy and logs what it removed (counts
// only).
func retentionJob(svc *app.Service, p app.RetentionPolicy, log interface {
	Info(msg string, args ...any)
}) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		res, err := svc.Retain(ctx, p)
		if res.Total() > 0 {
			log.Info("retention removed personal data", "leads", res.Leads, "deliveries", res.Deliveries,
				"visits", res.Visits, "visitors", res.Visitors, "form_tokens", res.FormTokens, "receipts", res.Receipts, "page_views", res.PageViews, "events_shrunk", res.Shrunk, "clicks_cleared", res.Clicks)
		}
		if res.CounterShards > 0 {
			log.Info("retention folded past days' counter shards", "rows", res.CounterShards)
		}
		return err
	}
}
