package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSlurmJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"an empty list closes at its key's indent", jsonObject{{"errors", []any{}}},
			"{\n  \"errors\": [\n  ]\n}"},
		{"slashes, quotes and control characters are escaped", "a/b \"c\"\t\x01",
			`"a\/b \"c\"\t\u0001"`},
		{"a whole float keeps one decimal, null and booleans", []any{2.0, 0.25, nil, true},
			"[\n  2.0,\n  0.25,\n  null,\n  true\n]"},
		{"nesting indents two spaces a level", jsonObject{{"a", jsonObject{{"b", []any{"x"}}}}},
			"{\n  \"a\": {\n    \"b\": [\n      \"x\"\n    ]\n  }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, slurmJSON(tt.v)); diff != "" {
				t.Errorf("slurmJSON (-want +got):\n%s", diff)
			}
		})
	}
}
