package config

import (
	"os"
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestCommentLinesChangeNothing: the TOML parser reads the same tree, and
// makes the same errors at the same lines, with the comment lines emptied
// (withoutCommentLines) as with them.
func TestCommentLinesChangeNothing(t *testing.T) {
	example, err := os.ReadFile("../../examples/slurm-lite.toml")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"the example":         string(example),
		"comments in arrays":  "a = [\n  # one\n  1,\n\t# two\n  2,\n]\n# end\n",
		"a multi-line string": "s = \"\"\"\n# kept: part of the string\nx\"\"\"\n# a comment\n",
		"a literal one":       "s = '''\n  # kept\n'''\n",
		"CRLF lines":          "# c\r\na = 1 # after\r\n  # c2\r\n",
		"a control character": "a = 1\n# bad \x01 comment\n",
		"a DEL":               "# bad \x7f\na = 1\n",
		"invalid UTF-8":       "a = 1\n\n# bad \xff\n",
		"a syntax error":      "# c\n# c\na = \n",
		"no final newline":    "a = 1\n# c",
	} {
		t.Run(name, func(t *testing.T) {
			var want, got map[string]any
			_, werr := toml.Decode(data, &want)
			_, gerr := toml.Decode(withoutCommentLines([]byte(data)), &got)
			if werr != nil || gerr != nil {
				if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
					t.Fatalf("errors differ: with the comments %v, without %v", werr, gerr)
				}
				var wpe, gpe toml.ParseError
				wpe, _ = werr.(toml.ParseError)
				gpe, _ = gerr.(toml.ParseError)
				if wpe.Position.Line != gpe.Position.Line {
					t.Fatalf("error lines differ: %d and %d", wpe.Position.Line, gpe.Position.Line)
				}
				return
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("trees differ:\nwith the comments    %v\nwithout them %v", want, got)
			}
		})
	}
}
