package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// options are the command's flags.
type options struct {
	serve, graph string // serve mode: ceiling and Graph stand-in addresses

	floor      string   // serve the floor handler here
	floorDB    string   // its database: a SQLite file or a postgres:// URL
	urls       []string // the targets; connection i goes to urls[i % len(urls)]
	kind       string   // bare, collect or leads
	site       string
	origin     string
	conns      int
	duration   time.Duration
	rate       float64 // requests per second over all connections; 0 = as fast as possible
	saveTokens string  // collect: write "visitor token" lines here
	tokens     string  // leads: read them from here
	timeout    time.Duration
	quiet      bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("cleanads-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.serve, "serve", "", "serve the ceiling handler (read the body, answer 204) on this address")
	fs.StringVar(&o.graph, "graph", "", "serve a lean Graph API stand-in on this address")
	fs.StringVar(&o.floor, "floor", "", "serve the floor handler (one durable row per request, through the store's InTx) on this address")
	fs.StringVar(&o.floorDB, "floor-db", "", "the floor's database: a SQLite file (created if missing) or a postgres:// URL (required with -floor)")
	fs.Func("url", "base URL of the target, e.g. http://127.0.0.1:8080; repeat it for several nodes (the connections are split evenly)", func(v string) error {
		o.urls = append(o.urls, v)
		return nil
	})
	fs.StringVar(&o.kind, "kind", "bare", "traffic: bare (POST a small body to the URL), collect or leads")
	fs.StringVar(&o.site, "site", "dent", "site id (collect, leads)")
	fs.StringVar(&o.origin, "origin", "https://www.istanbuldis.example", "the Origin header (one of the site's origins)")
	fs.IntVar(&o.conns, "c", 32, "keep-alive connections, each with one request in flight")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "how long to send")
	fs.Float64Var(&o.rate, "rate", 0, "target requests/s over all connections (0: as fast as the server answers)")
	fs.StringVar(&o.saveTokens, "save-tokens", "", "collect: add the visitor ids and form tokens received to this file")
	fs.StringVar(&o.tokens, "tokens", "", "leads: use the visitor ids and form tokens in this file, each once (those used are removed from it)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.BoolVar(&o.quiet, "q", false, "print only the summary line")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.serve != "" || o.graph != "" || o.floor != "" {
		if o.floor != "" && o.floorDB == "" {
			return nil, errors.New("-floor: needs -floor-db, the SQLite file or PostgreSQL URL to write to")
		}
		return o, nil
	}
	var errs []error
	if len(o.urls) == 0 {
		errs = append(errs, errors.New("-url: want an http:// URL (https is not supported: measure the server, not TLS)"))
	}
	for _, v := range o.urls {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			errs = append(errs, fmt.Errorf("-url %q: want an http:// URL (https is not supported: measure the server, not TLS)", v))
		}
	}
	switch o.kind {
	case "bare", "collect", "leads":
	default:
		errs = append(errs, fmt.Errorf("-kind %q: want bare, collect or leads", o.kind))
	}
	if o.conns < 1 || o.conns > 10000 {
		errs = append(errs, errors.New("-c: want 1 to 10000 connections"))
	} else if o.conns < len(o.urls) {
		errs = append(errs, fmt.Errorf("-c: %d connections cannot reach %d URLs", o.conns, len(o.urls)))
	}
	if o.duration <= 0 {
		errs = append(errs, errors.New("-d: want a positive duration"))
	}
	if o.rate < 0 {
		errs = append(errs, errors.New("-rate: must not be negative"))
	}
	return o, errors.Join(errs...)
}

// result is what a run measured.
type result struct {
	elapsed   time.Duration
	ok        int            // 2xx and 3xx answers
	byStatus  map[int]int    // every answer by status
	netErrors map[string]int // failures without an answer, by kind
	lat       []time.Duration
}

// worker is one keep-alive connection with one request in flight at a time.
type worker struct {
	o      *options
	host   string // host:port of its URL
	gen    generator
	conn   net.Conn
	br     *bufio.Reader
	lat    []time.Duration
	status map[int]int
	errs   map[string]int
}

// load runs the workers for the duration and gathers what they measured.
// With a target rate every connection sends on its own schedule (rate/c per
// second), and latency counts from when a request was due, not from when it
// went out, so a stalled server cannot hide its queue (coordinated
// omission). With several URLs connection i sends to the i-th modulo their
// number, so the load is split evenly over the nodes.
func load(ctx context.Context, o *options) (*result, error) {
	shared, err := newShared(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	workers := make([]*worker, o.conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		target := o.urls[i%len(o.urls)]
		u, _ := url.Parse(target)
		host := u.Host
		if u.Port() == "" {
			host += ":80"
		}
		w := &worker{o: o, host: host, gen: newGenerator(o, shared, target, i), status: map[int]int{}, errs: map[string]int{}}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, start, i)
		}()
	}
	wg.Wait()
	res := &result{elapsed: time.Since(start), byStatus: map[int]int{}, netErrors: map[string]int{}}
	for _, w := range workers {
		if w.conn != nil {
			w.conn.Close()
		}
		res.lat = append(res.lat, w.lat...)
		for k, v := range w.status {
			res.byStatus[k] += v
			if k < 400 {
				res.ok += v
			}
		}
		for k, v := range w.errs {
			res.netErrors[k] += v
		}
	}
	if err := shared.save(); err != nil {
		return nil, err
	}
	slices.Sort(res.lat)
	return res, nil
}

func (w *worker) loop(ctx context.Context, start time.Time, i int) {
	var interval time.Duration
	next := start
	if w.o.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(w.o.conns) / w.o.rate)
		// Spread the connections' schedules over one interval.
		next = start.Add(interval * time.Duration(i) / time.Duration(w.o.conns))
	}
	for ctx.Err() == nil {
		due := time.Now()
		if interval > 0 {
			if d := time.Until(next); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
			due = next
			next = next.Add(interval)
		}
		req, ok := w.gen.next()
		if !ok {
			w.errs["out of form tokens"]++
			return
		}
		status, body, err := w.do(req)
		if ctx.Err() != nil && err != nil {
			return // cut off by the end of the run: not an error of the server
		}
		if err != nil {
			w.errs[errKind(err)]++
			w.close()
			continue
		}
		w.lat = append(w.lat, time.Since(due))
		w.status[status]++
		w.gen.answered(status, body)
	}
}

// request is one HTTP request, already written out as bytes.
type request struct{ raw []byte }

// response is the part of an answer the generators look at.
type response struct {
	header http.Header
	body   []byte
}

// do sends one request on the worker's connection (dialling when it has
// none) and reads the whole answer. The request bytes are prepared ahead,
// and the answer is parsed by net/http's ReadResponse: the client costs
// little, so the server gets most of the machine.
func (w *worker) do(req request) (int, *response, error) {
	if w.conn == nil {
		c, err := net.DialTimeout("tcp", w.host, w.o.timeout)
		if err != nil {
			return 0, nil, err
		}
		w.conn, w.br = c, bufio.NewReaderSize(c, 16<<10)
	}
	w.conn.SetDeadline(time.Now().Add(w.o.timeout))
	if _, err := w.conn.Write(req.raw); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(w.br, nil)
	if err != nil {
		return 0, nil, err
	}
	var r *response
	if w.gen.wantsBody() {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, nil, err
		}
		r = &response{header: resp.Header, body: b}
	} else if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	if resp.Close {
		w.close()
	}
	return resp.StatusCode, r, nil
}

func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
		w.conn, w.br = nil, nil
	}
}

func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	return "network"
}

// percentile of sorted latencies, p in [0, 100].
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// print writes the human summary (unless -q) and one machine-readable line
// starting with "result" for scripts.
func (r *result) print(w io.Writer, o *options) {
	rps := float64(r.ok) / r.elapsed.Seconds()
	p50, p90, p99 := percentile(r.lat, 50), percentile(r.lat, 90), percentile(r.lat, 99)
	var maxLat time.Duration
	if len(r.lat) > 0 {
		maxLat = r.lat[len(r.lat)-1]
	}
	errs := 0
	var statuses []string
	codes := make([]int, 0, len(r.byStatus))
	for c := range r.byStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		statuses = append(statuses, fmt.Sprintf("%d:%d", c, r.byStatus[c]))
		if c >= 400 {
			errs += r.byStatus[c]
		}
	}
	var neterrs []string
	for k, v := range r.netErrors {
		neterrs = append(neterrs, fmt.Sprintf("%s:%d", strings.ReplaceAll(k, " ", "_"), v))
		errs += v
	}
	sort.Strings(neterrs)
	if !o.quiet {
		target := "max"
		if o.rate > 0 {
			target = fmt.Sprintf("%.0f/s", o.rate)
		}
		fmt.Fprintf(w, "%s %s: %d connections, %s, rate %s\n", o.kind, strings.Join(o.urls, " "), o.conns, r.elapsed.Round(time.Millisecond), target)
		fmt.Fprintf(w, "  requests/s %.0f (ok %d, errors %d)\n", rps, r.ok, errs)
		fmt.Fprintf(w, "  latency ms p50 %s  p90 %s  p99 %s  max %s\n", ms(p50), ms(p90), ms(p99), ms(maxLat))
		fmt.Fprintf(w, "  by status %s", strings.Join(statuses, " "))
		if len(neterrs) > 0 {
			fmt.Fprintf(w, "; without an answer %s", strings.Join(neterrs, " "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "result kind=%s rps=%.0f ok=%d errors=%d p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s status=%s neterr=%s\n",
		o.kind, rps, r.ok, errs, ms(p50), ms(p90), ms(p99), ms(maxLat), strings.Join(statuses, ","), strings.Join(neterrs, ","))
}
