package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIndexLines(t *testing.T) {
	src := lines(
		`# a comment with [brackets] and key = "value"`, // 1
		`Top = "a # not a comment"`,                     // 2
		`Multi = """`,                                   // 3
		`[NotATable]`,                                   // 4
		`Fake = 1"""`,                                   // 5
		`Literal = '''x`,                                // 6
		`y'''`,                                          // 7
		`List = [`,                                      // 8
		`  "a", # one`,                                  // 9
		`  "b",`,                                        // 10
		`]`,                                             // 11
		`Inline = { a = 1, "b.c" = 'x' }`,               // 12
		`dotted.key = true`,                             // 13
		`[Node]`,                                        // 14
		`CPUs = 4`,                                      // 15
		`[[Node.SimulatedGPU]]`,                         // 16
		`Type = "a"`,                                    // 17
		`[[Node.SimulatedGPU]]`,                         // 18
		`Type = "b"`,                                    // 19
		`[[Partition]]`,                                 // 20
		`PartitionName = "p1"`,                          // 21
		`[[Partition]]`,                                 // 22
		``,                                              // 23
		`  PartitionName = "p2" # indented`,             // 24
		`Tables = [{ x = 1 },`,                          // 25
		`  { x = 2 }]`,                                  // 26
	)
	ix := indexLines(src)
	at := func(path string) int { return ix.line(keyPath(strings.Split(path, "."))) }
	got := map[string]int{}
	want := map[string]int{
		"Top": 2, "Multi": 3, "NotATable": 0, "Fake": 0, "Literal": 6,
		"List": 8, "List.#0": 9, "List.#1": 10,
		"Inline": 12, "Inline.a": 12, "dotted": 13, "dotted.key": 13,
		"Node": 14, "Node.CPUs": 15,
		"Node.SimulatedGPU": 16, "Node.SimulatedGPU.#0.Type": 17, "Node.SimulatedGPU.#1": 18, "Node.SimulatedGPU.#1.Type": 19,
		"Partition.#0.PartitionName": 21, "Partition.#1": 22, "Partition.#1.PartitionName": 24,
		"Partition.#1.Tables.#0.x": 25, "Partition.#1.Tables.#1.x": 26,
		// An unknown key falls back to its nearest known ancestor.
		"Partition.#1.Nope": 22,
	}
	for k := range want {
		got[k] = at(k)
	}
	got["Inline.b.c"] = ix.line(keyPath{"Inline", "b.c"})
	want["Inline.b.c"] = 12
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestIndexLinesEndsOnBrokenInput(t *testing.T) {
	// Parse only indexes documents toml accepted, but the scanner must not
	// hang or panic on anything.
	for _, src := range []string{"[", "[[", "a = [", "a = {", `a = "`, "a = '''", `"`, "=", "a.", "[a.", "\\", "a = [{b = ["} {
		indexLines(src)
	}
}
