// Package clitest holds what the commands' tests share.
package clitest

import (
	"slices"
	"strings"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/getopt"
)

// HelpNamesOptions checks that the long options a help text names are
// options the command takes, so that the help sends nobody to an option it
// refuses.
func HelpNamesOptions(t *testing.T, name, help string, opts []getopt.Option) {
	t.Helper()
	for _, long := range LongOptions(help) {
		// getopt_long takes any unambiguous prefix (--job for --jobs).
		known := false
		for _, o := range opts {
			known = known || strings.HasPrefix(o.Name, long)
		}
		if !known {
			t.Errorf("%s --help names --%s, which %s does not take", name, long, name)
		}
	}
}

// LongOptions are the "--name" words of a help text, in order, once each.
func LongOptions(help string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(help, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == ':' || r == '[' || r == ']' || r == '(' || r == ')' || r == '=' || r == '\''
	}) {
		name, ok := strings.CutPrefix(strings.TrimSuffix(f, "."), "--")
		if !ok || name == "" || strings.ContainsAny(name, "<>\"") {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
