package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/cleanads/cleanads/internal/source"
)

// clientIP returns the visitor's address: the peer's, unless the peer is a
// trusted proxy, in which case X-Forwarded-For is read from the right,
// skipping trusted proxies, and X-Real-IP is the fallback. A header from an
// untrusted peer is never believed.
func (s *Server) clientIP(r *http.Request) string {
	if rec := replayed(r); rec != nil {
		return rec.IP // as it was read when the request arrived
	}
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return ""
	}
	if !s.trusted(peer) {
		return peer.String()
	}
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		hops := strings.Split(strings.Join(xff, ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(source.StripPort(hops[i])))
			if err != nil {
				break
			}
			a = a.Unmap()
			if !s.trusted(a) {
				return a.String()
			}
			peer = a
		}
		return peer.String()
	}
	if xr := strings.TrimSpace(r.Header.Get("X-Real-IP")); xr != "" {
		if a, err := netip.ParseAddr(xr); err == nil {
			return a.Unmap().String()
		}
	}
	return peer.String()
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// isHTTPS tells whether the browser reached us over https: directly, or
// through a trusted proxy that says so in X-Forwarded-Proto.
func (s *Server) isHTTPS(r *http.Request) bool {
	if rec := replayed(r); rec != nil {
		return rec.HTTPS
	}
	if r.TLS != nil {
		return true
	}
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !s.trusted(peer) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
