package localapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzMatch checks the router on any path: it never panics, and a match
// captures values that, put back into the pattern, give the path again.
func FuzzMatch(f *testing.F) {
	for _, p := range []string{"/v1/jobs/7", "/v1/jobs/held", "/v1/jobs/a%2Fb", "/v1//jobs", "/v1/jobs/%zz", "", "/", "/v1/jobs/7/steps/0", "/v1/jobs/./7", "/v1/jobs/7/"} {
		f.Add(p)
	}
	// Each handler answers its pattern and what it captured, each quoted on
	// a line of its own: a captured value may hold any byte (%0A is a
	// newline, %C3 half a character).
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strconv.Quote(r.Pattern) + "\n" + strconv.Quote(r.PathValue("id")) + "\n" + strconv.Quote(r.PathValue("step"))))
	})
	tbl, err := compile(Routes{
		{Method: "GET", Path: "/v1/jobs/{id}", Handler: h},
		{Method: "GET", Path: "/v1/jobs/held", Handler: h},
		{Method: "GET", Path: "/v1/jobs/{id}/steps/{step}", Handler: h},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		u, err := url.ParseRequestURI(path)
		if err != nil {
			return // the server answers 400 before any routing
		}
		r := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
		if !tbl.answers(r) {
			return
		}
		rec := httptest.NewRecorder()
		tbl.mux.ServeHTTP(rec, r)
		got := strings.Split(rec.Body.String(), "\n")
		if rec.Code != http.StatusOK || len(got) != 3 {
			t.Fatalf("%q answered %d %q", path, rec.Code, rec.Body)
		}
		for i, q := range got {
			if got[i], err = strconv.Unquote(q); err != nil {
				t.Fatalf("%q answered %q", path, rec.Body)
			}
		}
		pattern, id, step := got[0], got[1], got[2]
		segs := strings.Split(u.EscapedPath()[1:], "/")
		for i, s := range segs {
			v, err := url.PathUnescape(s)
			if err != nil {
				t.Fatalf("matched %q with a segment that does not unescape", path)
			}
			segs[i] = v
		}
		switch len(segs) {
		case 3:
			if segs[2] != "held" && (pattern != "GET /v1/jobs/{id}" || id != segs[2]) {
				t.Errorf("%q: %s id %q, want id %q", path, pattern, id, segs[2])
			}
			if segs[2] == "held" && pattern != "GET /v1/jobs/held" {
				t.Errorf("%q matched %s, not the literal", path, pattern)
			}
		case 5:
			if id != segs[2] || step != segs[4] {
				t.Errorf("%q: id %q step %q", path, id, step)
			}
		default:
			t.Errorf("%q matched with %d segments", path, len(segs))
		}
	})
}
