package jobscript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no script and no command line makes the parser
// panic, and that what it accepts is consistent.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/corpus/*.txtar")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		ar := parseTxtar(data)
		var script, args string
		for _, fl := range ar.Files {
			switch fl.Name {
			case "script":
				script = string(fl.Data)
			case "args":
				args = strings.TrimSuffix(string(fl.Data), "\n")
			}
		}
		f.Add([]byte(script), args, "")
	}
	f.Add([]byte("#!/bin/sh\n#SBATCH -J \"a\\\"b\" --time=1-2:3:4 -N 1-1k\n"), "--wrap=x", "SBATCH_EXCLUSIVE=")
	f.Fuzz(func(t *testing.T, script []byte, args, env string) {
		var argv []string
		if args != "" {
			argv = strings.Split(args, "\n")
		}
		vars := map[string]string{}
		for _, l := range strings.Split(env, "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				vars[k] = v
			}
		}
		cl, err := ParseCommandLine(argv)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("ParseCommandLine error %v is not a complete *Error", err)
			}
			return
		}
		if cl.Action != Submit {
			return
		}
		r, err := Parse(Input{Script: script, Command: cl, Env: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		}, Now: corpusNow})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %v is %T, want *Error", err, err)
			}
			if e.Kind != KindGresHelp && (e.Msg == "" || e.Exit == 0) {
				t.Fatalf("incomplete error %+v", e)
			}
			_ = e.Stderr("sbatch")
			return
		}
		if !cl.HasWrap && r.Script != string(script) {
			t.Fatalf("Request.Script differs from the script")
		}
		if r.JobName == "" && !strings.HasSuffix(r.ScriptPath, "/") && !strings.ContainsAny(string(script)+args+env, "jJ") {
			// Only an empty --job-name (-J, --j..., SBATCH_JOB_NAME) or a
			// script path ending in "/" (Slurm's base_name is then empty)
			// leaves the name empty.
			t.Fatalf("empty job name")
		}
		if r.NTasks < 0 || r.Nodes.Min > 1 || r.Nodes.Min < 0 {
			t.Fatalf("accepted an impossible layout: %d tasks, nodes %+v", r.NTasks, r.Nodes)
		}
	})
}
