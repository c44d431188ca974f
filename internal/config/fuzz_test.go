package config

import (
	"errors"
	"os"
	"testing"
)

// FuzzParse: any input gives a config or an Errors whose every entry has
// the file name and a line within the input, and never a panic; a config
// it gives, written out by WriteTOML, reads back the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(goldenCluster))
	if data, err := os.ReadFile(examplePath); err == nil {
		f.Add(data)
	}
	f.Add([]byte("[[Partition]]\nPartitionName = \"a\"\nMaxTim = 1\n"))
	f.Add([]byte("a = [{b = 1}, {c = '''x\ny'''}]\n[x.y]\n[[x.y.z]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.toml", data)
		if err == nil {
			if c == nil || c.DefaultPartition() == nil {
				t.Fatalf("no error, but config %v has no default partition", c)
			}
			roundTrip(t, c)
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %T %v is not a non-empty Errors", err, err)
		}
		lineCount := 1
		for _, b := range data {
			if b == '\n' {
				lineCount++
			}
		}
		for _, e := range es {
			if e.File != "f.toml" || e.Line < 0 || e.Line > lineCount || e.Msg == "" {
				t.Fatalf("bad error entry %+v for a %d-line input", e, lineCount)
			}
		}
	})
}
