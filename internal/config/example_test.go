package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const examplePath = "../../examples/slurm-lite.toml"

// schemaKeys lists every key of the schema as a path, "*" standing for
// any element of an array of tables.
func schemaKeys(t reflect.Type, prefix []string) [][]string {
	var keys [][]string
	for _, f := range fieldsOf(t) {
		path := append(prefix[:len(prefix):len(prefix)], f.key)
		ft := t.Field(f.index).Type
		switch {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(ft, path)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(ft.Elem(), append(path, "*"))...)
		default:
			keys = append(keys, path)
		}
	}
	return keys
}

// firstGiven returns the first key the file gave that matches pattern
// ("*" matching any "#N"), and its line; line 0 if none does.
func firstGiven(p *parser, pattern []string) (first keyPath, line int) {
	for k := range p.given {
		path := keyPath(strings.Split(k, "\x00"))
		if len(path) != len(pattern) {
			continue
		}
		match := true
		for i := range path {
			if !(pattern[i] == path[i] || pattern[i] == "*" && strings.HasPrefix(path[i], "#")) {
				match = false
				break
			}
		}
		if l := p.lines.line(path); match && (line == 0 || l < line) {
			first, line = path, l
		}
	}
	return first, line
}

// commentAbove returns the comment lines right above line (1-based).
func commentAbove(src []string, line int) string {
	var block []string
	for i := line - 2; i >= 0 && strings.HasPrefix(strings.TrimSpace(src[i]), "#"); i-- {
		block = append(block, src[i])
	}
	return strings.Join(block, "\n")
}

// TestExampleDocumentsEveryKey keeps examples/slurm-lite.toml and the
// schema in step: the example must be valid and set every key, with a
// comment above each key's first use that gives its default (or says it
// is required), and above the
// key or its table the Slurm setting it corresponds to.
func TestExampleDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	_, p := parse("slurm-lite.toml", data)
	if len(p.errs) > 0 {
		t.Fatalf("the example is not valid:\n%v", p.errs)
	}
	src := strings.Split(string(data), "\n")
	keys := schemaKeys(reflect.TypeOf(Config{}), nil)
	if len(keys) < 60 {
		t.Fatalf("walked only %d schema keys; the walk is broken", len(keys))
	}
	slurmName := regexp.MustCompile(`slurm\.conf|sacctmgr|gres\.conf|slurm-lite only`)
	for _, k := range keys {
		name := strings.Join(k, ".")
		path, line := firstGiven(p, k)
		if line == 0 {
			t.Errorf("the example does not set %s", name)
			continue
		}
		own := commentAbove(src, line)
		if !strings.Contains(own, "Default") && !strings.Contains(own, "Required") {
			t.Errorf("slurm-lite.toml:%d: %s has no comment above it giving its default (or saying it is required)", line, name)
		}
		table := ""
		if len(path) > 1 {
			table = commentAbove(src, p.lines.line(path[:len(path)-1]))
		}
		if !slurmName.MatchString(own) && !slurmName.MatchString(table) {
			t.Errorf("slurm-lite.toml:%d: neither %s nor its table says which Slurm setting it is (or \"slurm-lite only\")", line, name)
		}
	}
}
