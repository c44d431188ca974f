package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// The client commands (squeue, scancel, sacct, scontrol) run as real
// processes against a fake slurmd-lite: the test process serves canned jobs
// on a socket through the real localapi server, built to reproduce the
// situations the golden files were recorded in. testdata/client holds the
// scripts; they need the commands below, which TestScripts lacks.
func TestClientScripts(t *testing.T) {
	t.Parallel() // beside the other groups of scripts (waitingTests)
	runScripts(t, testscript.Params{
		Dir: "testdata/client",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"golden":     cmdGolden,
			"goldenlike": cmdGoldenLike,
			"fakeslurmd": cmdFakeDaemon,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLURM_LITE_CONF", "")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv(testClockEnv, strconv.FormatInt(recordedNow().UnixNano(), 10))
			return nil
		},
	})
}

// fakeState is what the fake daemon serves, computed afresh for every
// request from the time of the request (so that a job "started 9 s ago"
// shows 0:09).
type fakeState struct {
	jobs    []api.Job
	records []jobrec.Record
	// results answers cancel and control requests, by action ("cancel",
	// "hold", ...) and job string; a job string missing here succeeds.
	results map[string]map[string]api.Result
}

// scenario builds a fakeState at a moment; args are the scenario's own
// options from the script (key=value).
type scenario func(now time.Time, args map[string]string) fakeState

var scenarios = map[string]scenario{}

// cmdFakeDaemon starts a fake slurmd-lite serving a scenario:
//
//	fakeslurmd SCENARIO [key=value...]
//
// It writes a configuration (the recorded cluster's) pointing at its
// socket, sets SLURM_LITE_CONF to it, and logs every request to
// $WORK/requests.log as "METHOD PATH?QUERY BODY".
func cmdFakeDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: fakeslurmd SCENARIO [key=value...]")
	}
	sc, ok := scenarios[args[0]]
	if !ok {
		ts.Fatalf("no scenario %q", args[0])
	}
	opts := map[string]string{}
	for _, kv := range args[1:] {
		k, v, _ := strings.Cut(kv, "=")
		opts[k] = v
	}
	// Unix socket paths are short (108 bytes): not under $WORK.
	dir, err := os.MkdirTemp("", "sl")
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Defer(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // a shared daemon's socket directory
		ts.Fatalf("%v", err)
	}
	sock := filepath.Join(dir, "s.sock")
	conf := filepath.Join(ts.Getenv("WORK"), "slurm-lite.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("SocketPath = %q\n", sock)+testConfig), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("SLURM_LITE_CONF", conf)
	ln, err := localapi.Listen(sock, localapi.AccessFor(os.Geteuid()))
	if err != nil {
		ts.Fatalf("listen: %v", err)
	}
	at, err := strconv.ParseInt(ts.Getenv(testClockEnv), 10, 64)
	if err != nil {
		ts.Fatalf("%s: %v", testClockEnv, err)
	}
	d := &fakeDaemon{scenario: sc, opts: opts, log: filepath.Join(ts.Getenv("WORK"), "requests.log"),
		now: stoppedAt(at)}
	srv := &localapi.Server{Routes: localapi.Routes{
		{Method: "GET", Path: api.PathJobs, Handler: localapi.Func(d.listJobs)},
		{Method: "GET", Path: api.PathAccounting, Handler: localapi.Func(d.accounting)},
		{Method: "POST", Path: api.PathCancel, Handler: localapi.Func(d.cancel)},
		{Method: "POST", Path: api.PathControl, Handler: localapi.Func(d.control)},
	}}
	for _, add := range fakeRouteHooks { // other commands' endpoints (nodes_fake_test.go)
		srv.Routes = append(srv.Routes, add(d)...)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		ts.Fatalf("serve: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	ts.Defer(func() { srv.Close() })
}

type fakeDaemon struct {
	scenario scenario
	opts     map[string]string
	log      string
	// now is the clock the scenario is computed at, the one the commands
	// run under (testclock_test.go).
	now func() time.Time
	mu  sync.Mutex
}

func (d *fakeDaemon) record(method, path, query string, body any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	line := method + " " + path
	if query != "" {
		line += "?" + query
	}
	if body != nil {
		b, _ := json.Marshal(body)
		line += " " + string(b)
	}
	f, err := os.OpenFile(d.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
}

func (d *fakeDaemon) state() fakeState { return d.scenario(d.now(), d.opts) }

// idMatch is the daemon's side of the id parameter: a job id N matches
// jobs whose id or array id is N.
func idMatch(ids []string, id, arrayID uint32) bool {
	if len(ids) == 0 {
		return true
	}
	for _, s := range ids {
		n, _, _ := strings.Cut(s, "_")
		v, err := strconv.ParseUint(n, 10, 32)
		if err == nil && (uint32(v) == id || (arrayID != 0 && uint32(v) == arrayID)) {
			return true
		}
	}
	return false
}

func anyOf(want []string, got string) bool { return len(want) == 0 || slices.Contains(want, got) }

func (d *fakeDaemon) listJobs(ctx context.Context, req *localapi.Request[struct{}]) ([]api.Job, error) {
	d.record("GET", api.PathJobs, req.Query.Encode(), nil)
	return d.jobsFor(req.Query), nil
}

// jobsFor is the daemon's job list filtered by a query.
func (d *fakeDaemon) jobsFor(q url.Values) []api.Job {
	out := []api.Job{}
	for _, j := range d.state().jobs {
		if idMatch(q["id"], j.ID, j.ArrayJobID) && anyOf(q["user"], j.User) && anyOf(q["partition"], j.Partition) &&
			anyOf(q["name"], j.Name) && anyOf(q["state"], string(j.State)) {
			out = append(out, j)
		}
	}
	return out
}

func (d *fakeDaemon) accounting(ctx context.Context, req *localapi.Request[struct{}]) ([]jobrec.Record, error) {
	q := req.Query
	d.record("GET", api.PathAccounting, q.Encode(), nil)
	out := []jobrec.Record{}
	for _, r := range d.state().records {
		j := r.Job
		if !r.Latest && q.Get("dups") != "1" {
			continue
		}
		if idMatch(q["id"], j.ID, j.ArrayJobID) && anyOf(q["state"], string(j.State)) && anyOf(q["name"], j.Name) &&
			(q.Get("allusers") == "1" || anyOf(q["user"], j.User)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// answer is the fake's cancel and control: an unknown id is Slurm's 2017;
// a finished job 2021 (cancel); another user's job, when the scenario runs
// as someone else (as=alice), 2002 (cancel, requeue) or 2010 (hold,
// release); anything else succeeds, unless the scenario says otherwise.
func (d *fakeDaemon) answer(action string, jobs []string) api.Results {
	st := d.state()
	caller := d.opts["as"]
	if caller == "" {
		caller = "root"
	}
	var out api.Results
	for _, s := range jobs {
		r, ok := st.results[action][s]
		if !ok {
			r = fakeResult(action, s, st.jobs, caller)
		}
		r.Job = s
		out.Results = append(out.Results, r)
	}
	return out
}

func fakeResult(action, s string, jobs []api.Job, caller string) api.Result {
	var hit *api.Job
	for i := range jobs {
		if idMatch([]string{s}, jobs[i].ID, jobs[i].ArrayJobID) {
			hit = &jobs[i]
			break
		}
	}
	switch {
	case hit == nil:
		return api.Result{Code: 2017, Error: "Invalid job id specified"}
	case caller != "root" && hit.User != caller && (action == "hold" || action == "release"):
		return api.Result{Code: 2010, Error: "Invalid user id"}
	case caller != "root" && hit.User != caller:
		return api.Result{Code: 2002, Error: "Access/permission denied"}
	case action == "cancel" && hit.State.Finished():
		return api.Result{Code: 2021, Error: "Job/step already completing or completed"}
	}
	return api.Result{}
}

func (d *fakeDaemon) cancel(ctx context.Context, req *localapi.Request[api.Cancel]) (api.Results, error) {
	d.record("POST", api.PathCancel, "", req.Body)
	return d.answer("cancel", req.Body.Jobs), nil
}

func (d *fakeDaemon) control(ctx context.Context, req *localapi.Request[api.Control]) (api.Results, error) {
	d.record("POST", api.PathControl, "", req.Body)
	return d.answer(req.Body.Action, req.Body.Jobs), nil
}

// cmdGoldenLike is golden for outputs that hold what cannot match: the
// golden's command line may be replaced (for "su alice -c ..." recordings),
// and each mask is a regular expression whose matches are replaced by "*"
// in both outputs before they are compared; a mask written s/RE/REPL/
// replaces RE's matches by REPL instead ($1 names a group), for columns
// masked by their position:
//
//	goldenlike NAME [-run 'COMMAND'] [MASK...]
func cmdGoldenLike(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: goldenlike NAME [-run COMMAND] [MASK...]")
	}
	g, err := readGolden(filepath.Join(goldenDir, args[0]+".txt"))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	name, rest := args[0], args[1:]
	if len(rest) >= 2 && rest[0] == "-run" {
		g.command, rest = rest[1], rest[2:]
	}
	type masking struct {
		re   *regexp.Regexp
		repl string
	}
	var masks []masking
	for _, m := range rest {
		if body, ok := strings.CutPrefix(m, "s/"); ok && strings.HasSuffix(body, "/") && strings.Count(body, "/") >= 2 {
			i := strings.LastIndex(body[:len(body)-1], "/")
			masks = append(masks, masking{regexp.MustCompile(body[:i]), body[i+1 : len(body)-1]})
			continue
		}
		masks = append(masks, masking{regexp.MustCompile(m), "*"})
	}
	mask := func(s string) string {
		for _, m := range masks {
			s = m.re.ReplaceAllString(s, m.repl)
		}
		return s
	}
	stdout, stderr, exit := runGoldenCommand(ts, g.command)
	if got, want := mask(stdout), mask(g.stdout); got != want {
		ts.Fatalf("%s: stdout differs from Slurm's (masked)\nwant:\n%s\ngot:\n%s\ndiff (-want +got):\n%s", name, want, got, lineDiff(want, got))
	}
	if got, want := mask(stderr), mask(g.stderr); got != want {
		ts.Fatalf("%s: stderr differs from Slurm's (masked)\nwant:\n%s\ngot:\n%s", name, want, got)
	}
	if exit != g.exit {
		ts.Fatalf("%s: exit code %d, Slurm's was %d", name, exit, g.exit)
	}
}

// runGoldenCommand runs a command line in the script's work directory, with
// the script's environment, as cmdGolden does, but through bash: the
// recordings were made in bash, and some use its $'\x1f' quoting.
func runGoldenCommand(ts *testscript.TestScript, command string) (stdout, stderr string, exit int) {
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = ts.Getenv("WORK")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); ts.Getenv(name) == "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for _, name := range []string{"PATH", "HOME", "SLURM_LITE_CONF", "WORK", "TMPDIR", testClockEnv, testClockOffsetEnv} {
		cmd.Env = append(cmd.Env, name+"="+ts.Getenv(name))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("running %q: %v", command, err)
		}
		exit = ee.ExitCode()
	}
	return out.String(), errb.String(), exit
}

// lineDiff lists the lines that differ, for long outputs.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n-%q\n+%q\n", i+1, a, c)
		}
	}
	return b.String()
}

// testConfig is the recorded cluster (golden/slurm.conf.txt) in
// slurm-lite's terms, with billing by CPU and EnforcePartLimits=NO (Slurm's
// default) as the recording had them.
const testConfig = `ClusterName = "anchor"
TRESBillingWeights = ""
EnforcePartLimits = "NO"

[Node]
NodeName   = "gpu01"
CPUs       = 16
RealMemory = "64000M"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "80G"
Count  = 4

[[Partition]]
PartitionName = "gpu"
Default       = true
PriorityTier  = 1

[[Partition]]
PartitionName = "scavenger"
PriorityTier  = 0
PreemptMode   = "REQUEUE"

[[Account]]
Name  = "lab"
Users = ["alice", "bob", "root"]
`
