package localapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzMatch checks the router on any path: it never panics, and a match
// captures values that, put back into the pattern, give the path again.
func FuzzMatch(f *testing.F) {
	for _, p := range []string{"/v1/jobs/7", "/v1/jobs/held", "/v1/jobs/a%2Fb", "/v1//jobs", "/v1/jobs/%zz", "", "/", "/v1/jobs/7/steps/0"} {
		f.Add(p)
	}
	h := http.NotFoundHandler()
	tbl, err := compile(Routes{
		{Method: "GET", Path: "/v1/jobs/{id}", Handler: h},
		{Method: "GET", Path: "/v1/jobs/held", Handler: h},
		{Method: "GET", Path: "/v1/jobs/{id}/steps/{step}", Handler: h},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got, values, _, found := tbl.match("GET", path)
		if !found || got == nil {
			return
		}
		segs := strings.Split(path[1:], "/")
		for i, s := range segs {
			v, err := url.PathUnescape(s)
			if err != nil {
				t.Fatalf("matched %q with a segment that does not unescape", path)
			}
			segs[i] = v
		}
		switch len(segs) {
		case 3:
			if segs[2] != "held" && values["id"] != segs[2] {
				t.Errorf("%q: id %q, want %q", path, values["id"], segs[2])
			}
			if segs[2] == "held" && values != nil {
				t.Errorf("%q matched the capture, not the literal: %v", path, values)
			}
		case 5:
			if values["id"] != segs[2] || values["step"] != segs[4] {
				t.Errorf("%q: values %v", path, values)
			}
		default:
			t.Errorf("%q matched with %d segments", path, len(segs))
		}
	})
}
