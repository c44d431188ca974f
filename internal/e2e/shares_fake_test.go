package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// sshare, sprio and sacctmgr run as real processes against a fake
// slurmd-lite that serves the configuration, the fair-share tree, the
// priority factors and the jobs of a scenario recorded in the golden files
// (testdata/shares). The fake is apart from fakeslurmd's because those
// commands ask other questions.
func TestShareScripts(t *testing.T) {
	t.Parallel() // beside the other groups of scripts (waitingTests)
	runScripts(t, testscript.Params{
		Dir: "testdata/shares",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"golden":     cmdGolden,
			"goldenlike": cmdGoldenLike,
			"fakeshares": cmdFakeShares,
		},
		Condition: condition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLURM_LITE_CONF", "")
			env.Setenv("HOME", env.WorkDir)
			return nil
		},
	})
}

// shareState is what the fake serves.
type shareState struct {
	shares     []api.ShareRow
	priorities []api.PriorityRow
	jobs       []api.Job
}

// shareScenarios build a state at a moment.
var shareScenarios = map[string]func(now time.Time) shareState{
	"idle":        idleShares,
	"anchor":      anchorShares,
	"after-usage": afterUsageShares,
	"queue":       queueShares,
}

// sharesConfig is the recorded cluster with its shares: account lab with
// root (1 share), alice (2) and bob (1).
const sharesConfig = testConfig + `
[[User]]
Name    = "alice"
Account = "lab"
Shares  = 2
`

// cmdFakeShares starts the fake daemon:
//
//	fakeshares SCENARIO [CONFIG-FILE]
//
// It writes a configuration pointing at its socket (the recorded cluster's,
// or CONFIG-FILE's contents after it), sets SLURM_LITE_CONF to it and logs
// each request to $WORK/requests.log as "GET PATH?QUERY".
func cmdFakeShares(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: fakeshares SCENARIO [CONFIG-FILE]")
	}
	sc, ok := shareScenarios[args[0]]
	if !ok {
		ts.Fatalf("no scenario %q", args[0])
	}
	text := sharesConfig
	if len(args) == 2 {
		text = ts.ReadFile(args[1])
	}
	dir, err := os.MkdirTemp("", "sl")
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Defer(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // as a shared daemon's socket directory
		ts.Fatalf("%v", err)
	}
	sock := filepath.Join(dir, "s.sock")
	text = fmt.Sprintf("SocketPath = %q\n", sock) + text
	conf := filepath.Join(ts.Getenv("WORK"), "slurm-lite.toml")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
	cfg, err := config.Parse(conf, []byte(text))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("SLURM_LITE_CONF", conf)
	ln, err := localapi.Listen(sock, localapi.AccessFor(os.Geteuid()))
	if err != nil {
		ts.Fatalf("listen: %v", err)
	}
	logPath := filepath.Join(ts.Getenv("WORK"), "requests.log")
	logReq := func(path, query string) {
		if query != "" {
			path += "?" + query
		}
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, "GET "+path)
			f.Close()
		}
	}
	srv := &localapi.Server{Routes: localapi.Routes{
		{Method: "GET", Path: api.PathConfig, Handler: localapi.Func(
			func(ctx context.Context, req *localapi.Request[struct{}]) (api.Config, error) {
				logReq(api.PathConfig, req.Query.Encode())
				return api.Config{Config: cfg, Path: conf}, nil
			})},
		{Method: "GET", Path: api.PathShares, Handler: localapi.Func(
			func(ctx context.Context, req *localapi.Request[struct{}]) ([]api.ShareRow, error) {
				logReq(api.PathShares, req.Query.Encode())
				return sc(time.Now()).shares, nil
			})},
		{Method: "GET", Path: api.PathPriorities, Handler: localapi.Func(
			func(ctx context.Context, req *localapi.Request[struct{}]) ([]api.PriorityRow, error) {
				logReq(api.PathPriorities, req.Query.Encode())
				return sc(time.Now()).priorities, nil
			})},
		{Method: "GET", Path: api.PathJobs, Handler: localapi.Func(
			func(ctx context.Context, req *localapi.Request[struct{}]) ([]api.Job, error) {
				logReq(api.PathJobs, req.Query.Encode())
				out := []api.Job{}
				for _, j := range sc(time.Now()).jobs {
					if anyOf(req.Query["state"], string(j.State)) {
						out = append(out, j)
					}
				}
				return out, nil
			})},
	}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		ts.Fatalf("serve: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	ts.Defer(func() { srv.Close() })
}

// shareRow is a row of the fake tree; LevelFS is +Inf for "no usage yet"
// and NaN for the root, as the daemon's JSON says with its two flags.
func shareRow(depth int, account, user string, raw int, norm, usage, normUsage, eff, fs, level float64) api.ShareRow {
	r := api.ShareRow{Account: account, User: user, Depth: depth, RawShares: raw, NormShares: norm,
		RawUsage: usage, NormUsage: normUsage, EffectvUsage: eff, FairShare: fs, LevelFS: level}
	switch {
	case math.IsNaN(level):
		r.LevelFS, r.LevelFSNone = 0, true
	case math.IsInf(level, 1):
		r.LevelFS, r.LevelFSInf = 0, true
	}
	// Through JSON, as the daemon sends it.
	b, _ := json.Marshal(r)
	var out api.ShareRow
	json.Unmarshal(b, &out)
	return out
}

var (
	inf = math.Inf(1)
	nan = math.NaN()
)

// idleShares is the tree before any usage and any job (sshare_a,
// sshare_l, ...).
func idleShares(now time.Time) shareState {
	return shareState{shares: []api.ShareRow{
		shareRow(0, "root", "", 0, 0, 0, 1, 1, 0, nan),
		shareRow(1, "root", "root", 1, 0.5, 0, 0, 0, 1, inf),
		shareRow(1, "lab", "", 1, 0.5, 0, 0, 0, 0, inf),
		shareRow(2, "lab", "alice", 2, 0.5, 0, 0, 0, 1, inf),
		shareRow(2, "lab", "bob", 1, 0.25, 0, 0, 0, 1, inf),
		shareRow(2, "lab", "root", 1, 0.25, 0, 0, 0, 1, inf),
	}}
}

// anchorShares is the tree before any usage with jobs 27, 28 and the array
// 31 pending behind 25 and 26 (sprio_*): each pending job's factors are
// 10000 of fair share and 1000 of partition.
func anchorShares(now time.Time) shareState {
	st := idleShares(now)
	st.jobs = anchorJobs(now)
	prio := func(id, user string) api.PriorityRow {
		return api.PriorityRow{JobID: id, Partition: "gpu", User: user, Account: "lab", Priority: 11000,
			FairShare: 10000, PartitionPrio: 1000, QOS: "normal"}
	}
	// The array's pending record comes as one row per task, as the daemon
	// scores each task; sprio shows the record once.
	st.priorities = []api.PriorityRow{prio("27", "alice"), prio("28", "bob"),
		prio("31_0", "root"), prio("31_1", "root"), prio("31_2", "root"), prio("31_3", "root")}
	return st
}

// afterUsageShares is the tree of sshare_after_usage_*: usage charged to
// alice, bob and lab's root (their effective usage as of the last decay
// pass, their raw usage decayed since), with one job of root's running
// in lab since now (1 CPU, 1000M, no limit).
func afterUsageShares(now time.Time) shareState {
	return shareState{
		shares: []api.ShareRow{
			shareRow(0, "root", "", 0, 0, 111.4, 1, 1, 0, nan),
			shareRow(1, "root", "root", 1, 0.5, 0, 0, 0, 1, inf),
			shareRow(1, "lab", "", 1, 0.5, 111.4, 1, 1, 0, 0.5),
			shareRow(2, "lab", "alice", 2, 0.5, 79.9, 8.0/11, 8.0/11, 0.25, 0.6875),
			shareRow(2, "lab", "bob", 1, 0.25, 9.9, 1.0/11, 1.0/11, 0.75, 2.75),
			shareRow(2, "lab", "root", 1, 0.25, 21.6, 2.0/11, 2.0/11, 0.5, 1.375),
		},
		jobs: []api.Job{newJob(40, "bigrun").running(now, 0).build()},
	}
}

// queueShares is a queue recorded on real Slurm 22.05 for sprio's options
// (testdata/shares/sprio_queue.txtar): root's job 1 runs on every GPU, so
// root's fair share fell to 0.25; alice's 2 and bob's 3 (in two
// partitions) wait, with root's array 4 (0-3) and job 5 (nice 100). Each
// has waited long enough for an age factor of 0.41005.
func queueShares(now time.Time) shareState {
	const age = 0.41005
	prio := func(id, part, user string, fs float64, nice int) api.PriorityRow {
		total := uint32(age + fs + 1000 - float64(nice))
		return api.PriorityRow{JobID: id, Partition: part, User: user, Account: "lab", Priority: total,
			Age: age, FairShare: fs, PartitionPrio: 1000, QOS: "normal", Nice: nice}
	}
	return shareState{
		priorities: []api.PriorityRow{
			prio("2", "gpu", "alice", 10000, 0),
			prio("3", "gpu", "bob", 10000, 0), prio("3", "scavenger", "bob", 10000, 0),
			prio("4_0", "gpu", "root", 2500, 0), prio("4_1", "gpu", "root", 2500, 0),
			prio("4_2", "gpu", "root", 2500, 0), prio("4_3", "gpu", "root", 2500, 0),
			prio("5", "gpu", "root", 2500, 100),
		},
		jobs: []api.Job{
			newJob(1, "wrap").running(now.Add(-time.Minute), 0).gpus(4).build(),
			newJob(2, "wrap").user("alice").gpus(2).pending(slurm.ReasonResources).build(),
			newJob(3, "wrap").user("bob").gpus(1).build(),
			newJob(4, "wrap").gpus(1).arrayRecord([]int{0, 1, 2, 3}, 0).build(),
			newJob(5, "wrap").gpus(1).build(),
		},
	}
}
