package localapi

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Route is one entry of the handler table: a method, a versioned path, and
// what answers it.
type Route struct {
	// Method is an HTTP method in capitals: GET, POST, PUT, DELETE.
	Method string
	// Path starts with its version, /v1/, and may name segments to capture:
	// /v1/jobs/{id}. Handlers read captured values with PathValue.
	Path string
	// Handler answers; Func makes one that takes a decoded, validated body.
	Handler http.Handler
}

// Routes is the daemon's handler table.
type Routes []Route

// table is Routes compiled: a net/http ServeMux with one "METHOD /path"
// pattern per route, which picks the route and sets its PathValues, and
// the table's methods, which a path is asked about for a 405's Allow.
type table struct {
	mux     *http.ServeMux
	methods []string // sorted
}

var (
	versionSeg = regexp.MustCompile(`^v[1-9][0-9]*$`)
	nameSeg    = regexp.MustCompile(`^\{[A-Za-z_][A-Za-z0-9_]*\}$`)
	methodRe   = regexp.MustCompile(`^[A-Z]+$`)
)

// compile checks the table: every path versioned and well formed, no method
// and path twice, no two patterns that ServeMux finds in conflict. A bad
// table is the daemon's bug, found when it starts.
func compile(routes Routes) (*table, error) {
	t := &table{mux: http.NewServeMux()}
	seen := map[string]bool{}
	for _, r := range routes {
		if !methodRe.MatchString(r.Method) {
			return nil, fmt.Errorf("route %q %q: the method must be an HTTP method in capitals", r.Method, r.Path)
		}
		if r.Handler == nil {
			return nil, fmt.Errorf("route %s %s has no handler", r.Method, r.Path)
		}
		if err := checkPattern(r.Path); err != nil {
			return nil, fmt.Errorf("route %s %q: %w", r.Method, r.Path, err)
		}
		pattern := r.Method + " " + r.Path
		if seen[pattern] {
			return nil, fmt.Errorf("route %s %s is in the table twice", r.Method, r.Path)
		}
		seen[pattern] = true
		if err := handle(t.mux, pattern, r.Handler); err != nil {
			return nil, fmt.Errorf("route %s %s: %w", r.Method, r.Path, err)
		}
		if !slices.Contains(t.methods, r.Method) {
			t.methods = append(t.methods, r.Method)
		}
	}
	slices.Sort(t.methods)
	return t, nil
}

// handle is mux.Handle with its panic (a pattern in conflict with an
// earlier one) returned as an error.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// checkPattern holds a route's path to what the table allows: a version
// first, then plain words or whole captured segments {name}.
func checkPattern(path string) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("the path must start with /")
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) < 2 || !versionSeg.MatchString(segs[0]) {
		return fmt.Errorf("the path must start with a version, as in /v1/jobs")
	}
	names := map[string]bool{}
	for _, s := range segs[1:] {
		switch {
		case s == "":
			return fmt.Errorf("the path has an empty segment")
		case strings.ContainsAny(s, "{}"):
			if !nameSeg.MatchString(s) {
				return fmt.Errorf("segment %q: a captured segment is a whole segment {name}", s)
			}
			if names[s] {
				return fmt.Errorf("segment %s is captured twice", s)
			}
			names[s] = true
		case s != url.PathEscape(s):
			return fmt.Errorf("segment %q needs escaping; use plain words", s)
		}
	}
	return nil
}

// answers says whether a route answers r: its method and its path, taken
// as it came. ServeMux would redirect a path that is not clean ("//",
// "/./") to the clean one, and answer HEAD with a GET route; the table
// answers neither.
func (t *table) answers(r *http.Request) bool {
	if !clean(r.URL.EscapedPath()) {
		return false
	}
	_, pattern := t.mux.Handler(r)
	method, _, _ := strings.Cut(pattern, " ")
	return pattern != "" && method == r.Method
}

// allowed lists the methods that routes with r's path have, sorted: none
// when no route has the path (404), else the Allow of a 405.
func (t *table) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range t.methods {
		r2 := r.WithContext(r.Context())
		r2.Method = m
		if t.answers(r2) {
			allow = append(allow, m)
		}
	}
	return allow
}

// clean is whether p is an escaped path that ServeMux takes as it is:
// absolute, without empty, "." or ".." segments (a trailing slash is
// kept, and matches no route).
func clean(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
