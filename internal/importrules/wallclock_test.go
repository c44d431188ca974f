package importrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A job's times, its events and everything else slurm-lite stores or
// shows are read from one clock: the daemon's, injected (clock.Clock), as
// slurmctld's time decides a job's times in Slurm (docs/architecture.md,
// "One clock"). The machine's clock is read directly only in the files
// below, each for its reason; anything else that must wait or measure
// real time uses clock.Deadline or clock.Stopwatch, which give durations
// and yes-or-no answers, never a time of day. Test files (_test.go) are
// allowed: a test drives or reads clocks as it must.
//
// What counts as a read (wallClockReads): time.Now, time.Since and
// time.Until, called or passed as a value, and a value received from a
// timer's channel (t := <-time.After(d), case t := <-ticker.C) and kept.
// Waiting itself (time.Sleep, time.After, NewTimer, NewTicker, AfterFunc
// with the value dropped) reads nothing that can be stored.
var wallClockAllowed = map[string]string{
	"internal/clock/clock.go": "the clock itself: clock.Real, Deadline and Stopwatch",
	// The tests' clock a file moves (only tests import it): the machine's
	// time plus the file's seconds.
	"internal/clock/clocktest/clocktest.go": "the end-to-end tests' and the supervisor's tests' file clock",
	"internal/cmdio/cmdio.go":               "the commands' clock (cmdio.IO.Now), as Slurm's commands read their own time for a running job's elapsed time; tests inject theirs",
	// The supervisor is a process of its own that measures what only it
	// can: when its processes ended and how long they took to go (kept
	// as durations, and in status.json as the only witness of an end no
	// daemon saw), its time limit on the monotonic clock, and the lines
	// it writes into the job's output as slurmstepd does ("CANCELLED AT").
	"internal/stepd/supervisor.go": "the supervisor's own measurements (see above)",
	"internal/stepd/clock.go":      "the supervisor's clock for the time limit and KillWait: the machine's monotonic clock",
	"internal/stepd/adopt.go":      "the supervisor's own measurements of an adopted (interactive) job",
	"internal/stepd/identity.go":   "the supervisor's identity: when its process started, to tell it from a reused pid",
	"internal/stepd/control.go":    "the supervisor's control socket's deadlines (net.Conn takes a time of day)",
	"internal/stepd/loginenv.go":   "the supervisor's bound on a login shell's run (--get-user-env)",
	// Measuring tools, not the daemon or a command: their output is a
	// measurement of real time.
	"internal/benchsys/system.go":       "make bench: timings of real processes",
	"internal/livereplay/livereplay.go": "the live replay: the real daemon's timings against a recording",
	"internal/sim/main.go":              "the simulator's report of its own wall time",
	"internal/gpu/gpucheck/main.go":     "gpucheck: a diagnostic tool timing NVML calls on this machine",
}

// TestWallClockReads fails when a file not in wallClockAllowed reads the
// machine's clock, naming the file and line, and when an allowed file no
// longer does (the list stays as short as the code).
func TestWallClockReads(t *testing.T) {
	root := moduleRoot(t)
	readers := map[string][]string{}
	fset := token.NewFileSet()
	eachBuiltFile(t, root, fset, func(rel string, f *ast.File) {
		if at := wallClockReads(fset, f); len(at) > 0 {
			readers[rel] = at
		}
	})
	var files []string
	for f := range readers {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, ok := wallClockAllowed[f]; !ok {
			t.Errorf("%s reads the machine's clock (%s): a time that is stored or shown comes from the daemon's clock "+
				"(clock.Clock, d.now(), Tx.Now, cmdio.IO.Now); a real wait or measurement uses clock.Deadline or "+
				"clock.Stopwatch. If this file must read it, add it to wallClockAllowed with why (docs/architecture.md, \"One clock\")",
				f, strings.Join(readers[f], ", "))
		}
	}
	for f := range wallClockAllowed {
		if len(readers[f]) == 0 {
			t.Errorf("%s is in wallClockAllowed but reads no clock: take it off the list", f)
		}
	}
}

// eachBuiltFile parses each Go file of the module that is built into a
// binary (no _test.go file, nothing under testdata or a dot directory)
// and calls fn with it and its path from root, slash-separated; it
// returns how many it parsed.
func eachBuiltFile(t *testing.T, root string, fset *token.FileSet, fn func(rel string, f *ast.File)) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if name := e.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		n++
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wallClockReads are the places in f that read the machine's clock, as
// "line N: what".
func wallClockReads(fset *token.FileSet, f *ast.File) []string {
	timeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" || timeName == "_" {
		return nil
	}
	isTime := func(e ast.Expr, names ...string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == timeName && slices.Contains(names, sel.Sel.Name)
	}
	var out []string
	add := func(n ast.Node, what string) {
		out = append(out, "line "+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if isTime(n, "Now", "Since", "Until") {
				add(n, timeName+"."+n.Sel.Name)
			}
		case *ast.AssignStmt:
			// v := <-timer's channel, with v kept.
			if len(n.Rhs) != 1 || len(n.Lhs) == 0 {
				return true
			}
			u, ok := n.Rhs[0].(*ast.UnaryExpr)
			if !ok || u.Op != token.ARROW {
				return true
			}
			if id, ok := n.Lhs[0].(*ast.Ident); ok && id.Name == "_" {
				return true
			}
			timerChan := false
			switch c := u.X.(type) {
			case *ast.CallExpr:
				timerChan = isTime(c.Fun, "After", "Tick")
			case *ast.SelectorExpr:
				timerChan = c.Sel.Name == "C"
			}
			if timerChan {
				add(n, "a timer's time kept")
			}
		}
		return true
	})
	return out
}
