package web

import "net/http"

// routes is the map of the application: every route, with its middleware.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	public := func(h http.HandlerFunc) http.Handler { return s.cors(limitBody(h)) }
	api := func(h http.HandlerFunc) http.Handler { return limitBody(s.requireAPIKey(h)) }

	// Operations.
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)

	// Public, browser-facing.
	mux.Handle("GET /t.js", newScript(trackerJS, "public, max-age=300"))
	mux.Handle("GET /t.v1.js", newScript(trackerJS, "public, max-age=31536000, immutable"))
	mux.Handle("POST /v1/collect", public(s.collect))
	mux.Handle("OPTIONS /v1/collect", public(s.preflight))
	mux.Handle("POST /v1/leads", public(s.leadCreate))
	mux.Handle("OPTIONS /v1/leads", public(s.preflight))

	// API (site API key).
	mux.Handle("GET /v1/leads/{id}", api(s.leadGet))
	mux.Handle("POST /v1/leads/{id}/events", api(s.leadEventCreate))
	mux.Handle("POST /v1/events", api(s.eventCreate))

	// Webhooks: WhatsApp Cloud API (Meta's handshake and signature), call
	// trackers (call token or API key).
	mux.HandleFunc("GET /v1/webhooks/whatsapp", s.whatsAppVerify)
	mux.HandleFunc("POST /v1/webhooks/whatsapp", s.whatsAppReceive)
	mux.Handle("POST /v1/calls", limitBody(s.requireCallAuth(http.HandlerFunc(s.callCreate))))

	return s.recoverPanics(s.logRequests(mux))
}
