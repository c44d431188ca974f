package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitShortSpec(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		prefix string
		toks   []specToken
	}{
		{
			name:   "text before the first % comes first; width, justification and suffix per field",
			spec:   "id=%.18i %9P|%q",
			prefix: "id=",
			toks: []specToken{
				{right: true, width: 18, letter: 'i', suffix: " ", raw: ".18i "},
				{width: 9, letter: 'P', suffix: "|", raw: "9P|"},
				{letter: 'q', raw: "q"},
			},
		},
		{
			name: "runs of % vanish as with strtok, and a token may end before its letter",
			spec: "%%%i%%.5",
			toks: []specToken{{letter: 'i', raw: "i"}, {right: true, width: 5, raw: ".5"}},
		},
		{name: "no % at all is all prefix", spec: "plain", prefix: "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix, toks := splitShortSpec(tt.spec)
			if prefix != tt.prefix {
				t.Errorf("prefix %q, want %q", prefix, tt.prefix)
			}
			if diff := cmp.Diff(tt.toks, toks, cmp.AllowUnexported(specToken{})); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
		})
	}
}
