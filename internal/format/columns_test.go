package format

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testField is a field of the engine's tests: its row is a string.
type testField = field[string, struct{}]

var testFields = []*testField{
	{letter: 'v', names: []string{"value"}, header: "VALUE", value: func(r string) string { return r }},
	{letter: 'w', names: []string{"wide"}, header: "WIDE_HEADER", headWhole: true, whole: true, value: func(r string) string { return r }},
	{names: []string{"numtask"}, prefix: true, header: "N", value: func(string) string { return "1" }},
}

func TestColumnsEngine(t *testing.T) {
	tests := []struct {
		name            string
		parse           func() (columns[string, struct{}], []string)
		header, line    string
		unknownReported []string
	}{
		{
			name: "-o: prefix, widths, justification and suffixes; whole fields overflow only to the right; an unknown letter stays as typed",
			parse: func() (columns[string, struct{}], []string) {
				var bad []string
				cs := parseShort(testFields, "x=%.3v|%-2q%.4w%4w.", func(t specToken) bool { bad = append(bad, t.raw); return true })
				return cs, bad
			},
			header:          "x=VAL|%-2qWIDE_HEADERWIDE.\n",
			line:            "x=abc|%-2qabcdefabcd.\n",
			unknownReported: []string{"-2q"},
		},
		{
			name: "-O: width 20 without ':', strtol's width and suffix, a prefix name, an unknown name's suffix alone",
			parse: func() (columns[string, struct{}], []string) {
				return parseLong(testFields, "value,wide:.2|,numtasks:1,nope:3;", nil)
			},
			header:          "VALUE               WIDE_HEADER|N;\n",
			line:            "abcdef              abcdef|1;\n",
			unknownReported: []string{"nope"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, unknown := tt.parse()
			if diff := cmp.Diff(tt.header, cs.header()); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.line, string(cs.appendLine(nil, "abcdef"))); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unknownReported, unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllSpec(t *testing.T) {
	if got := allSpec(""); !strings.HasPrefix(got, "%a|%b|") || !strings.HasSuffix(got, "|%Y|%Z") {
		t.Errorf("squeue's %%all = %q", got)
	}
	if got := allSpec(" "); !strings.HasSuffix(got, "|%z|%A |%B ") && !strings.HasSuffix(got, "|%Z ") {
		t.Errorf("sinfo's %%all = %q", got)
	}
}
