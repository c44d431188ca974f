// Package web is the daemon's optional HTTP listener ([Web] Listen):
// /metrics in Prometheus' text format (prometheus-slurm-exporter's
// slurm_* names, then slurm-lite's own), a read-only dashboard at /, and
// the dashboard's data at /api/dashboard.
//
// It reads a Source, which the daemon implements from what its loop has
// published, so that a scrape or a page load never waits on the
// scheduling loop nor makes it wait. The page is plain HTML, CSS and a
// little JavaScript embedded in the binary (no framework, no build step);
// it polls /api/dashboard. usage.html shows a month's GPU-hours by
// account and user from /api/usage, for a PI who does not use sreport.
// Nothing served carries a job's script,
// environment or --wrap command: State has no field for them. What it
// carries is what the daemon's anonymous viewer may see (a viewer like
// any other, who owns no job): the daemon builds State through the same
// rule as its socket API's answers. The listener answers only to the
// names it is configured for (Hosts): a page on another site cannot read
// it through DNS rebinding.
//
// Only this package imports client_golang (internal/importrules): the
// Slurm commands never link it.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed static
var static embed.FS

// stateTimeout bounds one read of the source: a stuck store read fails
// the scrape rather than piling up scrapes.
const stateTimeout = 10 * time.Second

// Handler serves the metrics, the dashboard and its data from src.
func Handler(src Source, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes(src, log) {
		mux.Handle("GET "+r.path, r.h)
	}
	return mux
}

// route is one path Handler serves (GET and HEAD only: the listener is
// read-only).
type route struct {
	path string
	h    http.Handler
}

// routes are what Handler serves; Paths lists them.
func routes(src Source, log *slog.Logger) []route {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{src: src, timeout: stateTimeout})
	sub, _ := fs.Sub(static, "static")
	files := http.FileServer(http.FS(sub))
	return []route{
		{"/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorHandling: promhttp.ContinueOnError,
			// One scrape at a time reads the state; Prometheus scrapes
			// every 15 s or more.
			MaxRequestsInFlight: 4,
		})},
		{"/api/dashboard", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
			defer cancel()
			st, err := src.State(ctx)
			if err != nil {
				log.Warn("dashboard: reading the daemon's state", "err", err)
				http.Error(w, "reading the daemon's state: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(w).Encode(forPage(st))
		})},
		{"/api/usage", usageHandler(src, log)},
		{"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The page may be framed by no one and loads nothing from
			// elsewhere.
			w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			files.ServeHTTP(w, r)
		})},
	}
}

// Paths are the paths Handler serves, each file of the page included
// (the files under "/"): a test that asks for each asks every route.
func Paths() []string {
	var paths []string
	for _, r := range routes(nil, nil) {
		paths = append(paths, r.path)
	}
	_ = fs.WalkDir(static, "static", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			paths = append(paths, strings.TrimPrefix(p, "static"))
		}
		return nil
	})
	return paths
}

// PageQueue is how many pending jobs the page lists: a phone polling a
// thousand rows every two seconds would read 300 kB each time for rows no
// one scrolls to.
const PageQueue = 200

// forPage is st with the queue cut after PageQueue pending jobs (Jobs
// lists the running ones first, then the queue in order). st is not
// changed.
func forPage(st *State) *State {
	pending := 0
	for i, j := range st.Jobs {
		if j.State != "PENDING" {
			continue
		}
		if pending++; pending > PageQueue {
			cut := *st
			cut.Jobs = st.Jobs[:i:i]
			for _, rest := range st.Jobs[i:] {
				if rest.State == "PENDING" {
					cut.QueueHidden++
				} else {
					cut.Jobs = append(cut.Jobs, rest)
				}
			}
			return &cut
		}
	}
	return st
}

// Server is a running listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen opens addr (HOST:PORT; port 0 picks a free one). Its error says
// what is wrong and what to change: the address is taken, or is not one
// this machine has.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("[Web] Listen = %q: the address is already in use (another daemon or program listens there); choose another port: %w", addr, err)
	case err != nil:
		return nil, fmt.Errorf("[Web] Listen = %q: cannot listen there; give an address of this machine, such as \"127.0.0.1:9341\": %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until Shutdown, answering only requests whose Host
// hosts allows.
func Serve(ln net.Listener, h http.Handler, hosts *Hosts) *Server {
	s := &Server{ln: ln, srv: &http.Server{Handler: hosts.guard(h), ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Addr is the address served, with the port chosen when Listen had 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops serving, letting requests in progress finish until ctx
// ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
