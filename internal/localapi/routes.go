package localapi

import (
	"fmt"
	"net/http"
	"net/url"
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

// table is Routes compiled: the patterns, each with its handlers by method.
type table []pattern

type pattern struct {
	path    string
	segs    []string // literal segments, or "{name}" for a captured one
	methods map[string]http.Handler
}

var (
	versionSeg = regexp.MustCompile(`^v[1-9][0-9]*$`)
	nameSeg    = regexp.MustCompile(`^\{[A-Za-z_][A-Za-z0-9_]*\}$`)
	methodRe   = regexp.MustCompile(`^[A-Z]+$`)
)

// compile checks the table: every path versioned and well formed, no method
// and path twice. A bad table is the daemon's bug, found when it starts.
func compile(routes Routes) (table, error) {
	var t table
	byPath := map[string]int{}
	for _, r := range routes {
		if !methodRe.MatchString(r.Method) {
			return nil, fmt.Errorf("route %q %q: the method must be an HTTP method in capitals", r.Method, r.Path)
		}
		if r.Handler == nil {
			return nil, fmt.Errorf("route %s %s has no handler", r.Method, r.Path)
		}
		segs, err := splitPattern(r.Path)
		if err != nil {
			return nil, fmt.Errorf("route %s %q: %w", r.Method, r.Path, err)
		}
		i, ok := byPath[r.Path]
		if !ok {
			i = len(t)
			byPath[r.Path] = i
			t = append(t, pattern{path: r.Path, segs: segs, methods: map[string]http.Handler{}})
		}
		if _, dup := t[i].methods[r.Method]; dup {
			return nil, fmt.Errorf("route %s %s is in the table twice", r.Method, r.Path)
		}
		t[i].methods[r.Method] = r.Handler
	}
	return t, nil
}

func splitPattern(path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("the path must start with /")
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) < 2 || !versionSeg.MatchString(segs[0]) {
		return nil, fmt.Errorf("the path must start with a version, as in /v1/jobs")
	}
	names := map[string]bool{}
	for _, s := range segs[1:] {
		switch {
		case s == "":
			return nil, fmt.Errorf("the path has an empty segment")
		case strings.ContainsAny(s, "{}"):
			if !nameSeg.MatchString(s) {
				return nil, fmt.Errorf("segment %q: a captured segment is a whole segment {name}", s)
			}
			if names[s] {
				return nil, fmt.Errorf("segment %s is captured twice", s)
			}
			names[s] = true
		case s != url.PathEscape(s):
			return nil, fmt.Errorf("segment %q needs escaping; use plain words", s)
		}
	}
	return segs, nil
}

// match finds what answers method on the escaped path. Of the patterns that
// fit the path, the most specific wins: at the first segment where two
// differ, a literal beats a capture. found is false when no pattern fits;
// h is nil when one fits but not with this method, and allow lists those it
// has.
func (t table) match(method, escapedPath string) (h http.Handler, values map[string]string, allow []string, found bool) {
	if !strings.HasPrefix(escapedPath, "/") {
		return nil, nil, nil, false
	}
	segs := strings.Split(escapedPath[1:], "/")
	var best *pattern
	for i := range t {
		p := &t[i]
		if fits(p.segs, segs) && (best == nil || moreSpecific(p.segs, best.segs)) {
			best = p
		}
	}
	if best == nil {
		return nil, nil, nil, false
	}
	h, ok := best.methods[method]
	if !ok {
		for m := range best.methods {
			allow = append(allow, m)
		}
		slices.Sort(allow)
		return nil, nil, allow, true
	}
	for i, s := range best.segs {
		if captured(s) {
			if values == nil {
				values = map[string]string{}
			}
			// fits checked that it unescapes.
			values[s[1:len(s)-1]], _ = url.PathUnescape(segs[i])
		}
	}
	return h, values, nil, true
}

func captured(seg string) bool { return strings.HasPrefix(seg, "{") }

func fits(pat, segs []string) bool {
	if len(pat) != len(segs) {
		return false
	}
	for i, p := range pat {
		if captured(p) {
			v, err := url.PathUnescape(segs[i])
			if err != nil || v == "" {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return true
}

func moreSpecific(a, b []string) bool {
	for i := range a {
		if ca, cb := captured(a[i]), captured(b[i]); ca != cb {
			return !ca
		}
	}
	return false
}
