package export

import (
	"fmt"
	"strings"
)

// slurmConf is a slurm.conf (or gres.conf) read back as Slurm reads it:
// global Key=Value lines, and lines that begin with NodeName= or
// PartitionName= (or, in gres.conf, NodeName= with Name=) as records of
// space-separated Key=Value words. Comments and blank lines are skipped.
type slurmConf struct {
	Globals    map[string]string
	Nodes      []map[string]string
	Partitions []map[string]string
	// Lines are the setting lines, in order, for checks of order and count.
	Lines []string
}

// parseConf parses text; a line that is neither a comment nor Key=Value, or
// a global key given twice, is an error (Slurm would take the last value,
// which would hide a generator bug).
func parseConf(text string) (slurmConf, error) {
	c := slurmConf{Globals: map[string]string{}}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c.Lines = append(c.Lines, line)
		first, _, ok := strings.Cut(line, "=")
		if !ok || first == "" || strings.ContainsAny(first, " \t") {
			return c, fmt.Errorf("line %d: %q is not Key=Value", i+1, line)
		}
		if first == "NodeName" || first == "PartitionName" || strings.Contains(line, " Name=") {
			rec := map[string]string{}
			for _, w := range strings.Fields(line) {
				k, v, ok := strings.Cut(w, "=")
				if !ok {
					return c, fmt.Errorf("line %d: word %q is not Key=Value", i+1, w)
				}
				if _, dup := rec[k]; dup {
					return c, fmt.Errorf("line %d: %s given twice", i+1, k)
				}
				rec[k] = v
			}
			if first == "PartitionName" {
				c.Partitions = append(c.Partitions, rec)
			} else {
				c.Nodes = append(c.Nodes, rec)
			}
			continue
		}
		if strings.Contains(line, " ") {
			return c, fmt.Errorf("line %d: %q: a global setting with spaces", i+1, line)
		}
		k, v, _ := strings.Cut(line, "=")
		if _, dup := c.Globals[k]; dup {
			return c, fmt.Errorf("line %d: %s given twice", i+1, k)
		}
		c.Globals[k] = v
	}
	return c, nil
}

// pick returns m's values for keys, leaving out keys m lacks, for cmp.Diff
// against a wanted subset (a missing key then shows in the diff).
func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// keysOf lists the keys of want, for pick.
func keysOf(want map[string]string) []string {
	var ks []string
	for k := range want {
		ks = append(ks, k)
	}
	return ks
}
