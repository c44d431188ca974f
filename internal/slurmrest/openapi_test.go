package slurmrest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "remake openapi.json from the recording")

// recordedSpec is slurmrestd's /openapi/v3 as recorded.
func recordedSpec(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "rest_openapi_v3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(b), "\n\n")
	var spec map[string]any
	if err := json.Unmarshal([]byte(body), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// served is the route table's paths and methods, as the spec writes them.
func served() map[string][]string {
	out := map[string][]string{}
	for _, rt := range (&server{}).routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		out[path] = append(out[path], strings.ToLower(method))
	}
	return out
}

// refs collects the schema names v refers to.
func refs(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				into[strings.TrimPrefix(s, "#/components/schemas/")] = true
			}
			refs(e, into)
		}
	case []any:
		for _, e := range x {
			refs(e, into)
		}
	}
}

// trim is spec with only the methods of paths slurm-lite serves and the
// schemas they reach.
func trim(spec map[string]any) map[string]any {
	paths := spec["paths"].(map[string]any)
	kept := map[string]any{}
	for p, methods := range served() {
		ops := map[string]any{}
		for _, m := range methods {
			if op, ok := paths[p].(map[string]any)[m]; ok {
				ops[m] = op
			}
		}
		kept[p] = ops
	}
	schemas := spec["components"].(map[string]any)["schemas"].(map[string]any)
	need := map[string]bool{}
	refs(kept, need)
	for grew := true; grew; {
		grew = false
		for n := range need {
			more := map[string]bool{}
			refs(schemas[n], more)
			for m := range more {
				if !need[m] {
					need[m], grew = true, true
				}
			}
		}
	}
	keptSchemas := map[string]any{}
	for n := range need {
		keptSchemas[n] = schemas[n]
	}
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	out["paths"] = kept
	comp := map[string]any{}
	for k, v := range spec["components"].(map[string]any) {
		comp[k] = v
	}
	comp["schemas"] = keptSchemas
	out["components"] = comp
	return out
}

// TestOpenAPISpec: /openapi/v3 is slurmrestd's recorded specification cut
// to what slurm-lite serves: every route in it, every method of it as
// recorded, every schema it refers to present.
func TestOpenAPISpec(t *testing.T) {
	want := trim(recordedSpec(t))
	if *update {
		b, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("openapi.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(openapiSpec), &got); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("openapi.json is not the recording cut to the routes; run go test ./internal/slurmrest -run OpenAPI -update")
	}
	paths := got["paths"].(map[string]any)
	for p, methods := range served() {
		for _, m := range methods {
			if _, ok := paths[p].(map[string]any)[m]; !ok {
				t.Errorf("%s %s is served but not in slurmrestd's specification", strings.ToUpper(m), p)
			}
		}
	}
	need := map[string]bool{}
	refs(got, need)
	schemas := got["components"].(map[string]any)["schemas"].(map[string]any)
	var missing []string
	for n := range need {
		if _, ok := schemas[n]; !ok {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("schemas referred to and missing: %v", missing)
	}
}
