// Command testprogress turns `go test -json` into a line as each package
// starts and ends, for `make unit` on a terminal: the end-to-end package
// runs for minutes, and plain `go test` prints nothing until it is over.
// A failing test's own output is printed whole, as go test prints it.
// It exits 1 when a package failed or did not build.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	const module = "github.com/slurm-lite/slurm-lite/"
	short := func(pkg string) string { return strings.TrimPrefix(pkg, module) }
	// Output is kept per test (and per package, for build errors) until
	// the test ends: printed if it failed, dropped if it passed.
	kept := map[string]*strings.Builder{}
	key := func(e event) string { return e.Package + "\x00" + e.Test }
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			// go test's own lines that are not JSON (build errors of a
			// package with no test binary): as they are.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		switch e.Action {
		case "start":
			fmt.Fprintf(out, "testing %s...\n", short(e.Package))
		case "output":
			b := kept[key(e)]
			if b == nil {
				b = &strings.Builder{}
				kept[key(e)] = b
			}
			b.WriteString(e.Output)
		case "pass", "skip":
			delete(kept, key(e))
			if e.Test == "" && e.Action == "pass" {
				fmt.Fprintf(out, "ok   %s %.1fs\n", short(e.Package), e.Elapsed)
			}
		case "fail":
			failed = true
			if b := kept[key(e)]; b != nil {
				io.WriteString(out, b.String())
				delete(kept, key(e))
			}
			if e.Test == "" {
				fmt.Fprintf(out, "FAIL %s %.1fs\n", short(e.Package), e.Elapsed)
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}
