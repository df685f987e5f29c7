package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/app"
	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/buildinfo"
	"github.com/cleanads/cleanads/internal/config"
	"github.com/cleanads/cleanads/internal/deliver"
	"github.com/cleanads/cleanads/internal/jobs"
	"github.com/cleanads/cleanads/internal/leadads"
	"github.com/cleanads/cleanads/internal/metrics"
	"github.com/cleanads/cleanads/internal/model"
	"github.com/cleanads/cleanads/internal/notify"
	"github.com/cleanads/cleanads/internal/platform"
	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/sources"
	"github.com/cleanads/cleanads/internal/store"
	"github.com/cleanads/cleanads/internal/web"
	"github.com/cleanads/cleanads/internal/whatsapp"
)

// shutdownGrace is how long in-flight requests get to finish on shutdown.
const shutdownGrace = 30 * time.Second

// serve runs the server until ctx ends (SIGINT or SIGTERM in main), then
// stops in reverse order of start: HTTP (finishing what is in flight), the
// background workers (the delivery runner), the database. It builds its
// parts in steps, each of which returns how to stop what it started:
// startStore the database, startCore the use cases and the workers,
// startHTTP the listeners.
func serve(ctx context.Context, e *env, args []string) error {
	fs := e.flags("serve")
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	pprofAddr := fs.String("pprof", "", "serve Go's profiler (net/http/pprof) on this address, e.g. 127.0.0.1:6060; off by default")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		*cfgPath = e.getenv("CLEANADS_CONFIG")
	}
	c, err := config.Load(*cfgPath, e.getenv)
	if err != nil {
		return err
	}
	log := e.logger(c)
	build := buildinfo.Read()
	log.Info("starting cleanads", "version", build.Short(), "commit", build.Revision, "commit_time", build.Time,
		"dirty", build.Dirty, "go", build.GoVersion)
	if *pprofAddr != "" {
		_, stop, err := servePprof(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stop()
	}

	db, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	// An upgrade listens before it migrates: the intake is journaled
	// meanwhile and replayed after (startUpgrade).
	up, early, err := startUpgrade(ctx, c, db, log)
	if err != nil {
		return err
	}
	// closeEarly stops the early listener when serve fails before it
	// serves: requests being journaled finish and are answered (and
	// replayed at the next start).
	closeEarly := func() {
		if early != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
			defer cancel()
			early.Shutdown(sctx, log)
		}
	}
	if up != nil {
		defer up.journal.Close()
		announce(e, c, early, *cfgPath)
	}
	if err := prepareStore(ctx, c, db, log, up, e.migrateHold); err != nil {
		closeEarly()
		return err
	}
	users := auth.New(auth.Options{Store: db, Logger: log, Now: time.Now})
	if err := bootstrapAdmin(ctx, users, c, e, log); err != nil {
		closeEarly()
		return err
	}
	// The use cases, the sources and the web server read this clock: a
	// request replayed from the upgrade journal is handled at the time it
	// arrived.
	clock := &web.UpgradeClock{}
	core, err := startCore(ctx, c, db, log, build, clock)
	if err != nil {
		closeEarly()
		return err
	}
	// Stops the workers on an early return too; a second Stop does nothing.
	defer core.stop(context.WithoutCancel(ctx))
	fr, stopHTTP, err := startHTTP(ctx, e, c, db, users, core, log, clock, up, early)
	if err != nil {
		return err
	}
	if up == nil {
		announce(e, c, fr, *cfgPath)
	}
	// The periodic jobs read the use cases' clock too: they start once
	// nothing is replayed.
	if err := core.startJobs(ctx); err != nil {
		stopHTTP(context.WithoutCancel(ctx))
		return err
	}

	select {
	case err := <-fr.errs:
		fr.Close()
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	stopHTTP(sctx)
	if err := core.runner.Stop(sctx); err != nil {
		log.Warn("delivery shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

// upgrade is the server's answer while it migrates the database: the
// journal of the intake's requests, and the handler that writes it.
type upgrade struct {
	*web.Upgrade
	journal *web.Journal
}

// startUpgrade listens before the migrations when there are some to apply
// to a database in use (or a journal that an interrupted upgrade left to
// replay) and a journal file is configured: the intake's requests are
// journaled and answered meanwhile, the rest answers 503 (web.Upgrade).
// Otherwise (a new database, or no journal: PostgreSQL without
// upgrade_journal) it returns nil and serve migrates before it listens.
func startUpgrade(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger) (*upgrade, *front, error) {
	path := upgradeJournalPath(c)
	if path == "" {
		return nil, nil, nil
	}
	cur, err := db.SchemaVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	pending, err := db.MigrationsPending(ctx)
	if err != nil {
		return nil, nil, err
	}
	if (cur == 0 || pending == 0) && !web.JournalExists(path) {
		return nil, nil, nil
	}
	if c.TLS.Enabled() && cur < certificatesSince {
		// The front keeps its certificates in the database: a schema
		// without their table is migrated first.
		return nil, nil, nil
	}
	j, err := web.OpenJournal(path)
	if err != nil {
		return nil, nil, err
	}
	up := &upgrade{Upgrade: web.NewUpgrade(web.UpgradeOptions{Journal: j, Logger: log, TrustedProxies: c.Proxies}), journal: j}
	fr, err := startFront(ctx, c, db, up, log)
	if err != nil {
		j.Close()
		return nil, nil, err
	}
	log.Info("listening while the database is upgraded: the intake is journaled", "migrations", pending, "journal", path)
	return up, fr, nil
}

// certificatesSince is the migration that made the table the front keeps
// its TLS certificates in.
const certificatesSince = 150

// upgradeJournalPath is upgrade_journal, or PATH.upgrade beside a SQLite
// database; "" for none.
func upgradeJournalPath(c *config.Config) string {
	if c.UpgradeJournal != "" {
		return c.UpgradeJournal
	}
	if path, ok := strings.CutPrefix(c.Database, "sqlite:"); ok {
		return path + ".upgrade"
	}
	return ""
}

// prepareStore migrates db, seals tokens stored in clear, and provisions
// the config file's sites. With up, each step of the migration is shown on
// the upgrade's answers; hold is the tests' hook (store.MigrateOptions.Hold).
func prepareStore(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger, up *upgrade,
	hold func(context.Context, int) error) error {
	o := store.MigrateOptions{Now: time.Now, Hold: hold}
	if up != nil {
		o.Step = up.Step
	}
	if applied, err := db.MigrateWith(ctx, o); err != nil {
		return err
	} else if len(applied) > 0 {
		log.Info("migrated the database", "versions", fmt.Sprint(applied))
	}
	// Before provision: a token sealed now compares equal to the file's,
	// so a paused site stays paused.
	if n, err := db.SiteSealTokens(ctx); err != nil {
		return err
	} else if n > 0 {
		log.Info("encrypted Meta access tokens stored in clear", "sites", n)
	}
	return provision(ctx, db, c, time.Now())
}

// core is the use cases and the background workers that serve them: the
// delivery runner and the periodic jobs.
type core struct {
	svc      *app.Service
	metrics  *metrics.Metrics // nil unless asked for
	runner   *deliver.Runner
	periodic *jobs.Runner
	// notifier sends the owners' notifications (notify.Runner).
	notifier *notify.Runner
	// sources are the lead sources the server receives from.
	sources []source.Source
}

// stop stops the periodic jobs, then the runner.
func (k *core) stop(ctx context.Context) {
	k.periodic.Stop(ctx)
	k.notifier.Stop(ctx)
	k.runner.Stop(ctx)
}

// startCore builds the use cases, the metrics when asked for, and the
// delivery runner with its destinations' handlers, and starts the runner
// and the periodic jobs; the caller stops them with stop.
func startCore(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger, build buildinfo.Info,
	clock *web.UpgradeClock) (*core, error) {
	lists, err := qualifyLists(c)
	if err != nil {
		return nil, err
	}
	graph := graphClient(c)
	k := &core{}
	// Metrics exist only when asked for: on their own address, or on the
	// main one behind a token; never open by default.
	if c.MetricsListen != "" || c.MetricsToken != "" {
		k.metrics = metrics.New(metrics.Options{Source: db, Logger: log, Writer: db.WriterStats,
			Build: map[string]string{"version": build.Short(), "revision": build.Revision, "goversion": build.GoVersion}})
	}
	// The use cases first: the Lead Ads fetch, a destination of the
	// runner, stores leads through them; they wake the runner once built.
	wake := &notifyLater{}
	list, dests, googleDest, err := platformSetup(ctx, c, db, log, k.metrics, graph)
	if err != nil {
		return nil, err
	}
	k.svc = app.New(app.Options{Store: db, Logger: log, Now: clock.Now, Lists: lists, SecretKey: c.SecretKey,
		Graph: graph, Notifier: wake, Platforms: list})
	// The Lead Ads backfill and check; its fetch is the Lead Ads source's
	// worker.
	leadAds := leadads.New(leadads.Options{Store: db, Graph: graph, Leads: k.svc, Logger: log, Now: clock.Now})
	// The lead sources: their routes are mounted by the web server, their
	// workers are destinations of the runner.
	k.sources = sources.All(source.Deps{Deps: platform.Deps{Logger: log, Now: clock.Now, Endpoints: c.PlatformAPIURLs},
		App: k.svc, Sites: db, Pauses: db, PublicURL: c.PublicURL, Settings: sourceSettings(c), Graph: graph})
	for _, src := range k.sources {
		if w, ok := src.(source.Worker); ok {
			dests[w.Destination()] = w.Handler()
		}
	}
	k.runner = deliver.New(deliver.Options{Store: db, Logger: log, Now: time.Now,
		Workers: c.Delivery.Workers, Lease: time.Duration(c.Delivery.Lease), Poll: time.Duration(c.Delivery.Poll),
		Handlers: dests})
	// The owners' notifications, queued with each lead's verdict: sent
	// apart from intake, woken with the delivery runner.
	k.notifier = notify.New(notify.Options{Store: db, Logger: log, Now: time.Now, PublicURL: c.PublicURL,
		Location: c.Admin.Location})
	wake.wake = func() { k.runner.Wake(); k.notifier.Wake() }
	if err := k.runner.Start(ctx); err != nil {
		return nil, err
	}
	if err := k.notifier.Start(ctx); err != nil {
		k.runner.Stop(context.WithoutCancel(ctx))
		return nil, err
	}

	// Each job runs under a lock named after it: with several nodes on one
	// PostgreSQL exactly one runs it at a time. Started by startJobs.
	k.periodic = jobs.New(jobs.Options{Logger: log, Lock: db.WithJobLock, Jobs: append(serveJobs(c, k.svc, leadAds, googleDest, log),
		notifyJobs(k.notifier, db, log)...)})
	return k, nil
}

// startJobs starts the periodic jobs; stop stops them.
func (k *core) startJobs(ctx context.Context) error {
	return k.periodic.Start(ctx)
}

// sourceSettings are the lead sources' program-wide settings from the
// config file, by "<source>.<key>" (source.Deps.Settings): the WhatsApp
// app's webhook secrets.
func sourceSettings(c *config.Config) map[string]string {
	return map[string]string{
		whatsapp.SettingVerifyToken: c.WhatsApp.VerifyToken,
		whatsapp.SettingAppSecret:   c.WhatsApp.AppSecret,
	}
}

// notifyJobs sends the daily digests of notifications, on one node, and
// forgets finished notifications after 90 days.
func notifyJobs(n *notify.Runner, db *store.DB, log *slog.Logger) []jobs.Job {
	return []jobs.Job{{Name: "notify-digest", Every: 10 * time.Minute, Run: func(ctx context.Context) error {
		sent, err := n.Digest(ctx)
		if sent > 0 {
			log.Info("daily digests sent", "count", sent)
		}
		return err
	}}, {Name: "notify-prune", Every: time.Hour, Run: func(ctx context.Context) error {
		_, err := db.NotifyPrune(ctx, time.Now().Add(-90*24*time.Hour), 1000)
		return err
	}}}
}

// serveJobs is the periodic work of serve: reviews that expire, text
// models to rebuild, retention, the Lead Ads backfill, and Google's jobs.
func serveJobs(c *config.Config, svc *app.Service, leadAds *leadads.Service, googleDest *deliver.Google, log *slog.Logger) []jobs.Job {
	return append([]jobs.Job{
		{Name: "expire-reviews", Every: time.Minute, Run: func(ctx context.Context) error {
			n, err := svc.ExpireReviews(ctx)
			if n > 0 {
				log.Info("review leads expired unconfirmed", "count", n)
			}
			return err
		}},
		{Name: "text-models", Every: time.Minute, Run: func(ctx context.Context) error {
			_, err := svc.RebuildTextModels(ctx)
			return err
		}},
		{Name: "retention", Every: time.Hour, Run: retentionJob(svc,
			app.RetentionPolicy{LeadDays: c.Retention.LeadDays, VisitDays: c.Retention.VisitDays,
				ReceiptDays: c.Retention.ReceiptDays, EventDays: c.Retention.EventDays,
				ClickDays: c.Retention.ClickDays}, log)},
		{Name: "leadads-backfill", Every: leadads.BackfillEvery, Run: func(ctx context.Context) error {
			st, err := leadAds.Backfill(ctx)
			if st.Created > 0 {
				log.Info("lead ads leads found by the backfill", "count", st.Created, "forms", st.Forms)
			}
			return err
		}},
	}, googleJobs(googleDest, log)...)
}

// startHTTP serves the web app on the configured listeners, and the
// metrics on their own address when asked for. It returns the front (whose
// errs say a listener failed) and how to stop both gracefully: the metrics
// at once, the front letting in-flight requests finish within ctx.
//
// With up the front is already listening (early, answering with up): the
// requests journaled during the upgrade are replayed through the web app,
// which then answers every request.
func startHTTP(ctx context.Context, e *env, c *config.Config, db *store.DB, users *auth.Service, k *core,
	log *slog.Logger, clock *web.UpgradeClock, up *upgrade, early *front) (*front, func(ctx context.Context), error) {
	m := k.metrics
	wo := web.Options{App: k.svc, Store: db, Logger: log, Now: clock.Now, TrustedProxies: c.Proxies,
		Auth: users, PublicURL: c.PublicURL, Location: c.Admin.Location, Limits: webLimits(c), Notifier: k.notifier,
		Platforms: k.svc.Platforms(), Sources: k.sources}
	if m != nil {
		wo.Metrics = m
		if c.MetricsListen == "" {
			wo.MetricsHandler, wo.MetricsToken = m.Handler(), c.MetricsToken
		}
	}
	handler := web.New(wo).Handler()

	fr := early
	if up != nil {
		st, err := up.Finish(ctx, handler, clock.Set)
		if err != nil {
			fr.Close()
			return nil, nil, fmt.Errorf("replaying the requests received during the upgrade (kept in %s for the next start): %w",
				upgradeJournalPath(c), err)
		}
		log.Info("replayed the requests received during the upgrade; serving", "requests", st.Replayed,
			"refused", st.Failed, "took", st.Took.Round(time.Millisecond))
	} else {
		var err error
		if fr, err = startFront(ctx, c, db, handler, log); err != nil {
			return nil, nil, err
		}
	}

	var msrv *http.Server
	if c.MetricsListen != "" {
		mln, err := net.Listen("tcp", c.MetricsListen)
		if err != nil {
			fr.Close()
			return nil, nil, fmt.Errorf("metrics_listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", web.MetricsGuard(c.MetricsToken, m.Handler()))
		msrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go func() {
			if err := msrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics listener", "err", err)
			}
		}()
		fmt.Fprintf(e.stdout, "metrics on http://%s/metrics\n", mln.Addr())
	}
	stop := func(ctx context.Context) {
		if msrv != nil {
			// Scrapes are short; they need no grace of their own.
			msrv.Close()
		}
		fr.Shutdown(ctx, log)
	}
	return fr, stop, nil
}

// announce says where the server listens, and what to do next when it
// runs without a config file.
func announce(e *env, c *config.Config, fr *front, cfgPath string) {
	addr := fr.url
	fmt.Fprintf(e.stdout, "cleanads is listening on %s (database %s); admin UI at %s/admin/\n", addr, store.RedactDSN(c.Database), addr)
	if fr.plain != "" {
		fmt.Fprintf(e.stdout, "plain HTTP on %s redirects to https (but for /healthz, /readyz and ACME challenges)\n", fr.plain)
	}
	if cfgPath == "" {
		fmt.Fprintf(e.stdout, "No config file: running with the defaults and no sites.\n"+
			"Next: run cleanads init, which asks what it needs and writes cleanads.yaml\n"+
			"(or write it yourself: docs/configuration.md), then run\n"+
			"  cleanads serve --config cleanads.yaml\n"+
			"and check it with %s/readyz\n", addr)
	}
}

// newHTTPServer bounds what one client can hold: the headers must arrive
// within read_header_timeout, the whole request within read_timeout (a
// body dribbled byte by byte is cut off), the answer within write_timeout,
// and an idle keep-alive connection is closed after idle_timeout.
func newHTTPServer(c *config.Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: time.Duration(c.HTTP.ReadHeaderTimeout),
		ReadTimeout:       time.Duration(c.HTTP.ReadTimeout),
		WriteTimeout:      time.Duration(c.HTTP.WriteTimeout),
		IdleTimeout:       time.Duration(c.HTTP.IdleTimeout),
		MaxHeaderBytes:    c.HTTP.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// webLimits turns the config's limits into the web server's.
func webLimits(c *config.Config) web.Limits {
	l := web.Limits{PublicPerIP: c.Limits.PublicPerIP, APIPerKey: c.Limits.APIPerKey, Sites: map[model.SiteID]web.SiteLimits{}}
	for _, s := range c.Sites {
		l.Sites[model.SiteID(s.ID)] = web.SiteLimits{PublicPerIP: s.Limits.PublicPerIP, APIPerKey: s.Limits.APIPerKey}
	}
	return l
}

// provision writes the config file's sites into the database: the file
// wins for the sites it names, but for the stages saved in the admin's
// stage editor, which win over the file's meta.stages.
func provision(ctx context.Context, db *store.DB, c *config.Config, now time.Time) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		for i := range c.Sites {
			s := c.Sites[i].SiteModel()
			// A site not there yet, or one whose settings cannot be read,
			// takes the file's stages.
			if old, err := tx.SiteSettingsByID(ctx, s.ID); err == nil && old.StagesEdited {
				s.Settings.Meta.Stages, s.Settings.StageOrder, s.Settings.StagesEdited = old.Meta.Stages, old.StageOrder, true
			}
			if c.Sites[i].APIKey != "" {
				s.APIKeyHash = model.HashAPIKey(c.Sites[i].APIKey)
			}
			if c.Sites[i].CallToken != "" {
				s.Settings.CallTokenHash = model.HashAPIKey(c.Sites[i].CallToken)
			}
			if err := tx.SiteUpsert(ctx, s, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// bootstrapAdmin creates the first admin user from admin.email and
// admin.password when there is no user yet, and says how to make one when
// neither exists.
func bootstrapAdmin(ctx context.Context, users *auth.Service, c *config.Config, e *env, log *slog.Logger) error {
	if c.Admin.Email != "" {
		created, err := users.Bootstrap(ctx, c.Admin.Email, c.Admin.Password)
		if err != nil {
			return fmt.Errorf("admin user from admin.email: %w", err)
		}
		if created {
			log.Info("created the first admin user from admin.email")
		}
		return nil
	}
	has, err := users.HasUsers(ctx)
	if err != nil {
		return err
	}
	if !has {
		fmt.Fprintln(e.stdout, "No admin user yet: set admin.email and admin.password in the config, or run\n"+
			"  cleanads user add --email you@example.com")
	}
	return nil
}
