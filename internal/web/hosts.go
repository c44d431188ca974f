package web

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
)

// Hosts is the names the listener answers to. A page on another site can
// point a name of its own at this machine's address (DNS rebinding): the
// user's browser then takes the listener for that site, and the page may
// read it. Its requests still carry that name as their Host, so the
// listener answers only requests whose Host (with or without a port) is
//
//  1. the host of [Web] Listen;
//  2. a loopback name or address: localhost, 127.0.0.0/8, ::1 (not the
//     names under .localhost: a resolver that asks DNS for them would let
//     a hostile DNS server answer);
//  3. a name or address of [Web] AllowedHosts;
//  4. on a wildcard Listen (0.0.0.0, [::]): 0.0.0.0 and :: themselves,
//     and with no AllowedHosts this machine's hostname and addresses;
//
// and any other with 421 Misdirected Request, saying which key to set.
type Hosts struct {
	listen   string          // Listen's host, normalised; "" for a wildcard
	wildcard bool            // Listen's host is 0.0.0.0, [::] or empty
	allowed  map[string]bool // AllowedHosts, normalised
	log      *slog.Logger
	config   string // the configuration file, for the log's hint

	// own lists this machine's names and addresses (rule 4); tests
	// replace it.
	own func() []string

	mu      sync.Mutex
	ownAt   clock.Stopwatch // runs from ownSeen's reading
	ownSeen map[string]bool
	logged  map[string]bool
}

// ownEvery is how long the machine's names and addresses are reused: a
// lease may change an address, a page poll every 2 s must not list the
// interfaces each time.
const ownEvery = 30 * time.Second

// maxLogged bounds the refused names logged, one line each: a page that
// tries many names must not fill the log.
const maxLogged = 32

// NewHosts is the rule for a listener on listen ([Web] Listen, HOST:PORT)
// with [Web] AllowedHosts allowed; refusals are logged to log, naming
// configPath.
func NewHosts(listen string, allowed []string, configPath string, log *slog.Logger) *Hosts {
	h := &Hosts{allowed: map[string]bool{}, log: log, config: configPath, own: ownNames}
	host := listen
	if i := strings.LastIndexByte(listen, ':'); i >= 0 {
		host = listen[:i]
	}
	h.listen = normalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip := net.ParseIP(h.listen); h.listen == "" || ip != nil && ip.IsUnspecified() {
		h.listen, h.wildcard = "", true
	}
	for _, a := range allowed {
		h.allowed[normalHost(strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"))] = true
	}
	return h
}

// normalHost is a host name or address as compared: lower case, without
// a final dot, an IP address in its canonical form.
func normalHost(s string) string {
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if ip := net.ParseIP(s); ip != nil {
		return ip.String()
	}
	return s
}

// hostOf is the host of a request's Host header, without its port or an
// IPv6 address's brackets.
func hostOf(hostHeader string) string {
	h := hostHeader
	switch {
	case strings.HasPrefix(h, "["):
		if end := strings.IndexByte(h, ']'); end > 0 {
			h = h[1:end]
		}
	case strings.Count(h, ":") == 1:
		h = h[:strings.IndexByte(h, ':')]
	}
	return normalHost(h)
}

// Allows reports whether a request whose Host header is hostHeader is
// answered.
func (h *Hosts) Allows(hostHeader string) bool {
	host := hostOf(hostHeader)
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified() && h.wildcard) {
		// (0.0.0.0 reaches this machine only: what the log line of a
		// wildcard Listen shows.)
		return true
	}
	if host == "localhost" || host == h.listen || h.allowed[host] {
		return true
	}
	if !h.wildcard || len(h.allowed) > 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ownSeen == nil || h.ownAt.Elapsed() > ownEvery {
		h.ownSeen = map[string]bool{}
		for _, n := range h.own() {
			h.ownSeen[normalHost(n)] = true
		}
		h.ownAt = clock.Start()
	}
	return h.ownSeen[host]
}

// ownNames are this machine's hostname and the addresses of its
// interfaces.
func ownNames() []string {
	var out []string
	if name, err := os.Hostname(); err == nil {
		out = append(out, name)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP.String())
		}
	}
	return out
}

// guard answers next only for requests whose Host h allows.
func (h *Hosts) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.Allows(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		h.logRefusal(r.Host)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusMisdirectedRequest)
		fmt.Fprint(w, refusal(hostOf(r.Host)))
	})
}

// refusal is the body of a 421: what was refused, why, and which key
// to set. It names no path of this machine: a page that reads it is the
// one being refused.
func refusal(host string) string {
	if host == "" {
		return "slurm-lite: this request names no host (no Host header); send it to the address the dashboard listens on.\n"
	}
	return fmt.Sprintf("slurm-lite: the dashboard does not answer to the name %q. It answers to the host of [Web] Listen, "+
		"to localhost and loopback addresses, and to the names in [Web] AllowedHosts, so that a page on another site "+
		"cannot read it by pointing a name of its own at this machine (DNS rebinding).\n"+
		"If %q is a name of this machine, list it in slurmd-lite's configuration and restart slurmd-lite:\n\n"+
		"[Web]\nAllowedHosts = [%q]\n", host, host, host)
}

// logRefusal logs the first refusal of each name, up to maxLogged names.
func (h *Hosts) logRefusal(hostHeader string) {
	if h.log == nil {
		return
	}
	host := hostOf(hostHeader)
	h.mu.Lock()
	if h.logged == nil {
		h.logged = map[string]bool{}
	}
	first := !h.logged[host] && len(h.logged) < maxLogged
	if first {
		h.logged[host] = true
	}
	h.mu.Unlock()
	if first {
		h.log.Warn("web: refused a request for a name that is not this listener's (421); if it is this machine's, list it in [Web] AllowedHosts",
			"host", host, "config", h.config)
	}
}
