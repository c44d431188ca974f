package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The recorded cluster's users and groups (golden/README.md).
var (
	recordedUIDs   = map[string]uint32{"root": 0, "alice": 1001, "bob": 1002}
	recordedGroups = map[uint32]string{0: "root", 1001: "alice", 1002: "bob"}
)

// goldenStdout reads the stdout section of a golden file.
func goldenStdout(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := strings.Cut(string(b), "--- stdout ---\n")
	out, _, _ = strings.Cut(out, "--- stderr ---")
	return out
}

// TestSacctJSONAll rebuilds every run of golden sacct_json_all (sacct
// --json over a whole day: completed, failed, cancelled, requeued,
// preempted and timed-out runs, array tasks, refused submissions) as the
// store keeps runs, prints them back, and compares job by job. What
// slurm-lite does not measure is left out of the comparison: the disk,
// virtual memory and page counters of sampled steps, and their CPU count,
// whose unit 22.05's sampling leaves unclear.
func TestSacctJSONAll(t *testing.T) {
	var golden struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(goldenStdout(t, "sacct_json_all.txt")), &golden); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("anchor.toml", []byte("ClusterName = \"anchor\"\nTRESBillingWeights = \"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{View: config.ViewOf(cfg), Node: &cfg.Node, GroupName: func(gid uint32) string { return recordedGroups[gid] }}
	userName := func(uid uint32) string {
		for name, id := range recordedUIDs {
			if id == uid {
				return name
			}
		}
		return ""
	}
	if len(golden.Jobs) != 42 {
		t.Fatalf("golden has %d runs, want 42", len(golden.Jobs))
	}
	for _, g := range golden.Jobs {
		rec := recordFromJSON(t, g)
		name := strconv.Itoa(int(rec.Job.ID)) + " " + string(rec.Job.State)
		var got struct {
			Jobs []map[string]any `json:"jobs"`
		}
		out := SacctJSON([]jobrec.Record{rec}, env, userName)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: our output is not JSON: %v\n%s", name, err, out)
		}
		want := comparable(g)
		if diff := cmp.Diff(want, comparable(got.Jobs[0])); diff != "" {
			t.Errorf("run %s (-golden +ours):\n%s", name, diff)
		}
	}
}

// comparable drops what the comparison leaves out (see TestSacctJSONAll).
func comparable(job map[string]any) map[string]any {
	b, _ := json.Marshal(job)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	// 22.05 sets the scheduling flags on some requeued and preempted runs
	// and not on others; slurm-lite sets them on every run that started.
	if st := c["state"].(map[string]any)["current"]; st == "REQUEUED" || st == "PREEMPTED" {
		delete(c, "flags")
	}
	for _, s := range c["steps"].([]any) {
		tres := s.(map[string]any)["tres"].(map[string]any)
		for _, dir := range []string{"requested", "consumed"} {
			usage := tres[dir].(map[string]any)
			for k, list := range usage {
				var kept []any
				for _, item := range list.([]any) {
					m := item.(map[string]any)
					switch m["type"] {
					case "fs", "vmem", "pages":
						continue
					case "cpu":
						delete(m, "count")
					}
					kept = append(kept, m)
				}
				usage[k] = kept
			}
		}
	}
	return c
}

// recordFromJSON builds the store's run from one job of the golden dump.
func recordFromJSON(t *testing.T, g map[string]any) jobrec.Record {
	t.Helper()
	num := func(v any) int64 {
		f, _ := v.(float64)
		return int64(f)
	}
	at := func(v any) time.Time {
		if n := num(v); n != 0 {
			return time.Unix(n, 0)
		}
		return time.Time{}
	}
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	tm := obj(g["time"])
	arr := obj(g["array"])
	user := g["user"].(string)
	j := jobrec.Job{
		ID: uint32(num(g["job_id"])), ArrayJobID: uint32(num(arr["job_id"])), ArrayTaskID: jobrec.NoTask,
		User: user, UID: recordedUIDs[user], GID: recordedUIDs[user],
		Account: g["account"].(string), Partition: g["partition"].(string), QOS: g["qos"].(string),
		Name: g["name"].(string), State: slurm.JobState(obj(g["state"])["current"].(string)),
		Reason: slurm.Reason(obj(g["state"])["reason"].(string)),
		Submit: at(tm["submission"]), Eligible: at(tm["eligible"]), Start: at(tm["start"]), End: at(tm["end"]),
		Priority:  uint32(num(g["priority"])),
		SubmitDir: g["working_directory"].(string),
		Request:   jobscript.Request{NTasks: 1},
	}
	if id, ok := arr["task_id"].(float64); ok {
		j.ArrayTaskID = int(id)
	}
	j.ArrayLimit = int(num(obj(obj(obj(arr["limits"])["max"])["running"])["tasks"]))
	if l, ok := tm["limit"].(float64); ok {
		j.TimeLimit = time.Duration(l) * time.Minute
	}
	if u, ok := g["kill_request_user"].(string); ok {
		uid := recordedUIDs[u]
		j.CancelledBy = &uid
	}
	if num(g["allocation_nodes"]) == 1 && g["nodes"] == "None assigned" {
		j.Restarts = 1 // allocated in an earlier run
	}
	mem := uint64(num(obj(g["required"])["memory"]))
	if mem > 1000 {
		j.Request.MemPerNode = &mem
	} else {
		j.Request.MemPerCPU = &mem
	}
	for _, item := range obj(g["tres"])["requested"].([]any) {
		if m := obj(item); m["type"] == "gres" {
			j.Request.GPUs = []jobscript.Gres{{Name: "gpu", Count: uint64(num(m["count"]))}}
		}
	}
	if g["nodes"] == "None assigned" {
		j.Start = time.Time{}
	} else {
		j.Alloc = jobrec.Alloc{Node: g["nodes"].(string), CPUs: []int{0}, Mem: int64(mem) << 20}
	}
	j.ExitCode = exitFromJSON(obj(g["exit_code"]))
	rec := jobrec.Record{Job: j, Latest: true}
	for _, sv := range g["steps"].([]any) {
		s := obj(sv)
		st, stepTime := obj(s["step"]), obj(s["time"])
		cpu := func(k string) time.Duration {
			c := obj(stepTime[k])
			return time.Duration(num(c["seconds"]))*time.Second + time.Duration(num(c["microseconds"]))*time.Microsecond
		}
		step := jobrec.Step{JobID: j.ID, ID: stepID(st["id"]), Name: st["name"].(string),
			State: slurm.JobState(s["state"].(string)), Start: at(stepTime["start"]), End: at(stepTime["end"]),
			ExitCode: exitFromJSON(obj(s["exit_code"])), NTasks: int(num(obj(s["tasks"])["count"])),
			UserCPU: cpu("user"), SystemCPU: cpu("system")}
		for _, item := range obj(obj(s["tres"])["requested"])["max"].([]any) {
			if m := obj(item); m["type"] == "mem" {
				step.MaxRSS = num(m["count"])
			}
		}
		rec.Steps = append(rec.Steps, step)
	}
	return rec
}

func stepID(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return v.(string)
}

func exitFromJSON(e map[string]any) jobrec.ExitCode {
	if sig, ok := e["signal"].(map[string]any); ok {
		return jobrec.ExitCode{Signal: int(sig["signal_id"].(float64))}
	}
	return jobrec.ExitCode{}
}

func TestStrsignal(t *testing.T) {
	for sig, want := range map[int]string{9: "Killed", 15: "Terminated", 11: "Segmentation fault", 34: "Real-time signal 0", 99: "Unknown signal 99"} {
		if got := strsignal(sig); got != want {
			t.Errorf("strsignal(%d) = %q, want %q", sig, got, want)
		}
	}
}
