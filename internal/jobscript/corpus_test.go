package jobscript

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the want.json sections of testdata/corpus from the results")

// corpusNow is the submission time of every corpus case.
var corpusNow = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// TestCorpus walks testdata/corpus. Each case is a txtar archive:
//
//	comment      what the case is, and which Slurm source or document it follows
//	-- args --   sbatch's arguments, one per line (default: "job.sh")
//	-- env --    the submitter's environment, NAME=value per line (optional)
//	-- script -- the script's content (absent with --wrap)
//	-- want.json --          the Request, without its "script" field, or
//	-- stderr -- and -- exit --  what sbatch prints and its exit code
//	-- location --           optionally, the Error's Location()
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Errorf("corpus has %d cases, want at least 40", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			runCase(t, f)
		})
	}
}

func runCase(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := parseTxtar(data)
	sec := map[string]string{}
	for _, f := range ar.Files {
		sec[f.Name] = string(f.Data)
	}
	args := []string{"job.sh"}
	if a, ok := sec["args"]; ok {
		args = strings.Split(strings.TrimSuffix(a, "\n"), "\n")
		if a == "" {
			args = nil
		}
	}
	env := map[string]string{}
	for _, l := range strings.Split(sec["env"], "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	req, err := parseAll(args, []byte(sec["script"]), getenv)

	if wantStderr, ok := sec["stderr"]; ok {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("got request %+v, error %v; want an *Error", req, err)
		}
		if diff := cmp.Diff(wantStderr, e.Stderr("sbatch")); diff != "" {
			t.Errorf("stderr (-want +got):\n%s", diff)
		}
		wantExit, _ := strconv.Atoi(strings.TrimSpace(sec["exit"]))
		if e.Exit != wantExit {
			t.Errorf("exit = %d, want %d", e.Exit, wantExit)
		}
		if loc, ok := sec["location"]; ok && strings.TrimSpace(loc) != e.Location() {
			t.Errorf("location = %q, want %q", e.Location(), strings.TrimSpace(loc))
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v\n%s", err, stderrOf(err))
	}
	wantScript := sec["script"]
	if req.HasWrap {
		wantScript = WrapScript(req.Wrap)
	}
	if req.Script != wantScript {
		t.Errorf("Request.Script = %q, want the script as submitted %q", req.Script, wantScript)
	}
	req.Script = ""
	if *update {
		writeWant(t, path, ar, req)
		return
	}
	wantJSON, ok := sec["want.json"]
	if !ok {
		t.Fatalf("case has neither want.json nor stderr")
	}
	var want Request
	dec := json.NewDecoder(strings.NewReader(wantJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("want.json: %v", err)
	}
	if diff := cmp.Diff(&want, req); diff != "" {
		t.Errorf("Request (-want +got):\n%s", diff)
	}
}

// parseAll runs both passes as the sbatch command will.
func parseAll(args []string, script []byte, getenv func(string) (string, bool)) (*Request, error) {
	cl, err := ParseCommandLine(args)
	if err != nil {
		return nil, err
	}
	if cl.Action != Submit {
		return nil, errors.New("not a submission")
	}
	return Parse(Input{Script: script, Command: cl, Env: getenv, Now: corpusNow})
}

func stderrOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Stderr("sbatch")
	}
	return ""
}

func writeWant(t *testing.T, path string, ar *archive, req *Request) {
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	found := false
	for i := range ar.Files {
		if ar.Files[i].Name == "want.json" {
			ar.Files[i].Data, found = b, true
		}
	}
	if !found {
		ar.Files = append(ar.Files, archiveFile{Name: "want.json", Data: b})
	}
	if err := os.WriteFile(path, ar.format(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// archive is a txtar archive (golang.org/x/tools/txtar's format: a comment,
// then files introduced by "-- name --" lines). The module does not depend
// on x/tools, and the format takes twenty lines.
type archive struct {
	Comment []byte
	Files   []archiveFile
}

type archiveFile struct {
	Name string
	Data []byte
}

func parseTxtar(data []byte) *archive {
	ar := &archive{}
	cur := &ar.Comment
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if name, ok := bytes.CutPrefix(line, []byte("-- ")); ok && bytes.HasSuffix(name, []byte(" --")) {
			ar.Files = append(ar.Files, archiveFile{Name: string(bytes.TrimSuffix(name, []byte(" --")))})
			cur = &ar.Files[len(ar.Files)-1].Data
			continue
		}
		*cur = append(append(*cur, line...), '\n')
	}
	return ar
}

func (ar *archive) format() []byte {
	var b bytes.Buffer
	b.Write(ar.Comment)
	for _, f := range ar.Files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
