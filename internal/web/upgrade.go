package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cleanads/cleanads/internal/source"
	"github.com/cleanads/cleanads/internal/webforms"
)

// Upgrade answers the server's addresses while the database is migrated,
// so that an upgrade neither refuses nor loses the site's traffic: every
// POST under /v1/ (the tracker's visits, the forms' leads, the platforms'
// and CRMs' webhooks, the call tracker, the API's events) is written to
// the Journal and answered at once with what its handler would answer
// without the database; the tracker scripts are served; /healthz says the
// process is up, /readyz that it is not ready; everything else (the admin
// pages, the API's reads) answers 503 "upgrading: step N of M" with
// Retry-After. Once the migrations are done, Finish replays the journal
// through the live handlers, each request with the time and client
// address it arrived with, and then hands every request to them.
type Upgrade struct {
	journal *Journal
	log     *slog.Logger
	now     func() time.Time
	// addr reads the client's address and https as the live server does
	// (the trusted proxies).
	addr    *Server
	scripts http.Handler

	step, total atomic.Int64
	replaying   atomic.Bool
	live        atomic.Pointer[http.Handler]
	// accepted counts the requests journaled (for the log and the
	// measurements).
	accepted atomic.Int64
}

// UpgradeOptions are the dependencies of an Upgrade.
type UpgradeOptions struct {
	Journal        *Journal
	Logger         *slog.Logger
	Now            func() time.Time
	TrustedProxies []netip.Prefix
}

// upgradeRetry is the Retry-After of a refused request: a step of a
// migration on a large database takes minutes.
const upgradeRetry = 30

// NewUpgrade returns the handler that answers while the database is
// migrated.
func NewUpgrade(o UpgradeOptions) *Upgrade {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	scripts := http.NewServeMux()
	// The tracker scripts are embedded: a page loads them as usual.
	for _, rt := range webforms.New(source.Deps{}).Routes() {
		if strings.HasPrefix(rt.Pattern, "GET ") {
			h := rt.Handler
			scripts.Handle(rt.Pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = h(w, r) }))
		}
	}
	return &Upgrade{journal: o.Journal, log: o.Logger, now: o.Now, addr: &Server{proxies: o.TrustedProxies},
		scripts: scripts}
}

// Step records the migration step under way: the n-th of total
// (store.MigrateOptions.Step).
func (u *Upgrade) Step(n, total, version int) {
	u.step.Store(int64(n))
	u.total.Store(int64(total))
	u.log.Info("migrating the database while the intake is journaled", "step", n, "of", total, "version", version)
}

// Accepted is how many requests were journaled.
func (u *Upgrade) Accepted() int64 { return u.accepted.Load() }

// ServeHTTP answers one request: live once Finish handed over, else as the
// upgrade does.
func (u *Upgrade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := u.live.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/"):
		u.intake(w, r)
	case r.Method == http.MethodOptions && strings.HasPrefix(r.URL.Path, "/v1/"):
		u.preflight(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/healthz":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case r.Method == http.MethodGet && r.URL.Path == "/readyz":
		u.refuse(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/t.") && strings.HasSuffix(r.URL.Path, ".js"):
		u.scripts.ServeHTTP(w, r)
	default:
		u.refuse(w, r)
	}
}

// status is the words of the refusal: which step runs.
func (u *Upgrade) status() string {
	if n := u.step.Load(); n > 0 && !u.replaying.Load() {
		return fmt.Sprintf("upgrading: step %d of %d", n, u.total.Load())
	}
	return "upgrading: replaying the requests received during the upgrade"
}

// refuse answers 503 with Retry-After: the database is not ready.
func (u *Upgrade) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", fmt.Sprint(upgradeRetry))
	if strings.HasPrefix(r.URL.Path, "/admin") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "CleanAds is "+u.status()+". This page will work again when the upgrade is done; try again in a minute.\n")
		return
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": u.status()})
}

// preflight lets a browser post to the intake: the origin is checked
// against the site when the request is replayed (the handlers do), and
// what the answer says needs no hiding.
func (u *Upgrade) preflight(w http.ResponseWriter, r *http.Request) {
	if !u.allowOrigin(w, r) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	w.WriteHeader(http.StatusNoContent)
}

func (u *Upgrade) allowOrigin(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Credentials", "true")
	return true
}

// intake journals the request and answers it.
func (u *Upgrade) intake(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, source.DefaultBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "the request body is too large"})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the request body was cut off"})
		return
	}
	rec := &journalRecord{At: u.now().UTC(), IP: u.addr.clientIP(r), HTTPS: u.addr.isHTTPS(r), Method: r.Method,
		Target: r.URL.RequestURI(), Host: r.Host, Header: r.Header.Clone(), Body: body}
	// Hop-by-hop and transport headers mean nothing at replay.
	for _, h := range []string{"Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Expect"} {
		rec.Header.Del(h)
	}
	switch err := u.journal.append(rec); {
	case errors.Is(err, errJournalClosed):
		// The replay finished while this request was read: serve it live.
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		(*u.live.Load()).ServeHTTP(w, r)
		return
	case err != nil:
		u.log.ErrorContext(r.Context(), "upgrade journal", "err", err)
		u.refuse(w, r)
		return
	}
	u.accepted.Add(1)
	u.answer(w, r)
}

// upgradeAccepted is the body of a journaled request's answer where the
// handler's own would need the database.
var upgradeAccepted = map[string]any{"accepted": true, "upgrading": true}

// answer is what a journaled request is told: its handler's answer where
// that needs no database, else 202 Accepted saying it was kept.
func (u *Upgrade) answer(w http.ResponseWriter, r *http.Request) {
	browser := r.URL.Path == "/v1/collect" || r.URL.Path == "/v1/leads"
	if browser {
		u.allowOrigin(w, r)
	}
	switch {
	case r.URL.Path == "/v1/collect":
		// The visit is stored at replay; the visitor's cookies, the
		// PageView's event id and the form token need the database, so
		// t.js is told no consent (no pixel for this page view) and gets
		// no token.
		source.JSON(w, http.StatusOK, map[string]any{"consent": false, "form_token": "", "lead_event": "Lead", "upgrading": true})
	case r.URL.Path == "/v1/leads" && isFormPost(r):
		// A form's post gets the thank-you page; its redirect needs the
		// site's origins, which are in the database.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "<!doctype html><meta charset=utf-8><title>Thank you</title><p>Thank you. We received your message.</p>\n")
	case strings.HasPrefix(r.URL.Path, "/v1/webhooks/") || r.URL.Path == "/v1/calls":
		// The platforms and CRMs retry anything but a 200; they read
		// nothing of the body.
		source.JSON(w, http.StatusOK, upgradeAccepted)
	default:
		source.JSON(w, http.StatusAccepted, upgradeAccepted)
	}
}

// isFormPost tells an HTML form's post from JSON.
func isFormPost(r *http.Request) bool {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data"
}

// ReplayStats say what Finish replayed.
type ReplayStats struct {
	// Replayed is how many requests went through the handlers; Failed
	// how many of them were refused or failed there (logged each).
	Replayed, Failed int
	Took             time.Duration
}

// Finish replays the journal through live, the server's handler, in the
// order the requests arrived, each with the time it arrived (at sets the
// clock the handlers read, for the one request; nil leaves the clock
// alone) and the client address and https it came with, then removes the
// journal and hands every request to live. Requests that arrive meanwhile
// are journaled and replayed too, so the order holds.
func (u *Upgrade) Finish(ctx context.Context, live http.Handler, at func(time.Time) (reset func())) (ReplayStats, error) {
	start := time.Now()
	u.replaying.Store(true)
	var st ReplayStats
	off := u.journal.replayedTo()
	for {
		size := u.journal.written()
		end, err := u.journal.scan(off, func(rec *journalRecord, next int64) error {
			status, err := u.replayOne(ctx, live, rec, at)
			if err != nil {
				return err
			}
			st.Replayed++
			if status >= 300 {
				st.Failed++
			}
			return u.journal.markReplayed(next)
		})
		if err != nil {
			return st, err
		}
		if end < size {
			// Every byte up to size was written whole before the scan: a
			// record there that does not read back is damage, not a
			// write under way.
			return st, fmt.Errorf("web: upgrade journal %s: the record at byte %d is damaged; the requests after it are not replayed",
				u.journal.path, end)
		}
		off = end
		done, err := u.journal.closeIfDone(off, func() { u.live.Store(&live) })
		if err != nil {
			return st, err
		}
		if done {
			st.Took = time.Since(start)
			return st, nil
		}
	}
}

// replayAttempts is how many times a request whose replay fails on the
// server's side (5xx: the database did not answer) is tried.
const replayAttempts = 3

// replayOne replays rec and returns its status. A refusal (4xx: a wrong
// key or signature, an unknown site) is logged: the request stores
// nothing, as it would have stored nothing when it arrived. A failure of
// the server (5xx) is tried again, then kept in the journal's .failed
// file and logged, so that nothing is dropped unseen.
func (u *Upgrade) replayOne(ctx context.Context, live http.Handler, rec *journalRecord, at func(time.Time) func()) (int, error) {
	var status int
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var err error
		status, err = replay(ctx, live, rec, at)
		if err != nil {
			// Not a request (a record this build cannot read back):
			// kept, not replayed.
			status = http.StatusBadRequest
			u.keepFailed(rec, err)
			return status, nil
		}
		if status < 500 || attempt == replayAttempts {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	switch {
	case status >= 500:
		u.keepFailed(rec, fmt.Errorf("status %d", status))
	case status >= 300:
		u.log.Warn("a request received during the upgrade was refused at replay",
			"method", rec.Method, "path", pathOf(rec.Target), "status", status, "at", rec.At)
	}
	return status, nil
}

// keepFailed appends rec to the journal's .failed file (JSON lines) and
// logs where it is.
func (u *Upgrade) keepFailed(rec *journalRecord, why error) {
	path := u.journal.path + ".failed"
	err := appendLine(path, rec)
	u.log.Error("a request received during the upgrade failed at replay; kept for inspection",
		"method", rec.Method, "path", pathOf(rec.Target), "at", rec.At, "err", why, "kept_in", path, "keep_err", err)
}

// Serve hands every request to live without a replay: there was no
// journal to replay.
func (u *Upgrade) Serve(live http.Handler) { u.live.Store(&live) }

// replay runs one journaled request through h and returns its status.
func replay(ctx context.Context, h http.Handler, rec *journalRecord, at func(time.Time) func()) (int, error) {
	req, err := rec.request()
	if err != nil {
		return 0, fmt.Errorf("web: upgrade journal: %w", err)
	}
	req = req.WithContext(context.WithValue(ctx, replayKey{}, rec))
	if at != nil {
		defer at(rec.At)()
	}
	w := &replayWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, nil
}

// pathOf is a request URI's path: the query may carry a site's id, never
// personal data, but the path is all the log needs.
func pathOf(target string) string {
	p, _, _ := strings.Cut(target, "?")
	return p
}

// replayKey marks a replayed request's context; its value is the
// *journalRecord.
type replayKey struct{}

// replayed returns the journal record a request is replayed from, nil for
// a request off the network.
func replayed(r *http.Request) *journalRecord {
	rec, _ := r.Context().Value(replayKey{}).(*journalRecord)
	return rec
}

// replayWriter keeps a replayed request's status; the answer has nobody to
// go to.
type replayWriter struct {
	header http.Header
	status int
}

func (w *replayWriter) Header() http.Header { return w.header }
func (w *replayWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *replayWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// UpgradeClock is the clock the use cases, the sources and the web server
// read: the real time, but a replayed request's arrival while it is
// replayed, so that it is stored as if it had been handled then.
type UpgradeClock struct {
	mu sync.RWMutex
	at *time.Time
}

// Now is the time.
func (c *UpgradeClock) Now() time.Time {
	c.mu.RLock()
	at := c.at
	c.mu.RUnlock()
	if at != nil {
		return *at
	}
	return time.Now()
}

// Set makes Now answer t until reset is called.
func (c *UpgradeClock) Set(t time.Time) (reset func()) {
	c.mu.Lock()
	c.at = &t
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.at = nil
		c.mu.Unlock()
	}
}
