package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ceiling is the bare handler the figures are compared with: it reads the
// body and answers 204, the least any Go HTTP server does for a POST.
func ceiling() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
}

// graphStandIn answers POST /{version}/{pixel}/events as Meta does when it
// accepts every event: events_received is the number of events in data. It
// checks only that the body is a request of at most 1000 events with a
// token, so the server's delivery path, not the stand-in, is measured.
type graphStandIn struct {
	events, requests atomic.Int64
}

func (g *graphStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 3 || parts[2] != "events" {
		http.Error(w, `{"error":{"message":"Unknown path","type":"OAuthException","code":803}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Data        []json.RawMessage `json:"data"`
		AccessToken string            `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		r.ParseForm()
		req.AccessToken = r.Form.Get("access_token")
		if d := r.Form.Get("data"); d != "" {
			err = json.Unmarshal([]byte(d), &req.Data)
		}
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"Invalid parameter","type":"OAuthException","code":100}}`)
			return
		}
	}
	if len(req.Data) == 0 || len(req.Data) > 1000 || req.AccessToken == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Invalid parameter","type":"OAuthException","code":100,"error_subcode":2804019}}`)
		return
	}
	n := g.requests.Add(1)
	g.events.Add(int64(len(req.Data)))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"events_received":%d,"messages":[],"fbtrace_id":"Aload%08d"}`, len(req.Data), n)
}

// serve runs those of the ceiling, the Graph stand-in and the floor that
// were asked for until ctx ends, then prints how many events the stand-in
// received.
func serve(ctx context.Context, o *options, stdout io.Writer) error {
	type srv struct {
		name string
		s    *http.Server
		ln   net.Listener
	}
	var list []srv
	g := &graphStandIn{}
	type handler struct {
		name, addr string
		h          http.Handler
	}
	handlers := []handler{{"ceiling", o.serve, ceiling()}, {"graph", o.graph, g}}
	if o.floor != "" {
		db, err := openFloor(ctx, o.floorDB)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		defer db.Close()
		handlers = append(handlers, handler{"floor", o.floor, floor(db)})
	}
	for _, a := range handlers {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			return err
		}
		list = append(list, srv{a.name, &http.Server{Handler: a.h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}, ln})
		fmt.Fprintf(stdout, "%s listening on http://%s\n", a.name, ln.Addr())
	}
	errc := make(chan error, len(list))
	for _, s := range list {
		go func() { errc <- s.s.Serve(s.ln) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, s := range list {
		s.s.Shutdown(sctx)
	}
	if o.graph != "" {
		fmt.Fprintf(stdout, "graph received %d events in %d requests\n", g.events.Load(), g.requests.Load())
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
