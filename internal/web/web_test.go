package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type fixed struct {
	st  *State
	err error
}

func (f fixed) State(context.Context) (*State, error) { return f.st, f.err }

func (f fixed) Usage(_ context.Context, month time.Time) (*Usage, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &Usage{Cluster: "lab", Month: month.Format("2006-01"), Accounts: []AccountUsage{}}, nil
}

// box is a made-up moment: two GPUs, one whole-GPU job, two jobs sharing
// the other, two pending (one on a dependency), a yield and a cancel.
func box() *State {
	return &State{
		Time: 1_000_000, Cluster: "lab", Node: "gpu01", NodeState: "MIXED", CPUs: 16, CPUsAlloc: 6,
		Mem: 64 << 30, MemAlloc: 8 << 30,
		GPUs: []GPU{
			{Index: 0, NVMLIndex: 0, UUID: "GPU-0", Type: "a100", State: "UP", MemTotal: 80 << 30, MemUsed: 70 << 30,
				MemReserved: 80 << 30, Util: 93, InUse: true, Jobs: []GPUJob{{ID: "7", User: "alice", Account: "vision", Start: 999_000, End: 1_003_600}}},
			{Index: 1, NVMLIndex: 1, UUID: "GPU-1", Type: "a100", State: "UP", MemTotal: 80 << 30, MemUsed: 30 << 30,
				MemReserved: 40 << 30, Util: -1, InUse: true, Jobs: []GPUJob{
					{ID: "8", User: "bob", Account: "nlp", Start: 999_500, Mem: 20 << 30},
					{ID: "9", User: "alice", Account: "vision", Start: 999_800, Mem: 20 << 30}}},
			{Index: 2, NVMLIndex: 2, UUID: "GPU-2", Type: "a100", State: "DRAINED", Reason: "xid 79", MemTotal: 80 << 30, Util: 0, Jobs: []GPUJob{}},
		},
		Jobs: []Job{
			{ID: "7", User: "alice", Account: "vision", Partition: "gpu", State: "RUNNING", CPUs: 4, GPUs: 1},
			{ID: "8", User: "bob", Account: "nlp", Partition: "gpu", State: "RUNNING", CPUs: 1, GPUs: 1},
			{ID: "9", User: "alice", Account: "vision", Partition: "gpu", State: "RUNNING", CPUs: 1, GPUs: 1},
			{ID: "10", User: "bob", Account: "nlp", Partition: "gpu", State: "PENDING", Reason: "Resources", CPUs: 1, GPUs: 2},
			{ID: "11", User: "bob", Account: "nlp", Partition: "long", State: "PENDING", Reason: "Dependency", CPUs: 1, GPUs: 1},
		},
		States: map[string]int{"RUNNING": 3, "PENDING": 2, "COMPLETED": 4, "FAILED": 1, "TIMEOUT": 1},
		Shares: []Share{{Account: "root"}, {Account: "nlp", RawShares: 1}, {Account: "nlp", User: "bob", RawShares: 1, FairShare: 0.25},
			{Account: "vision", RawShares: 1}, {Account: "vision", User: "alice", RawShares: 1, FairShare: 0.75}},
		Events:      []Event{{Time: 999_900, Who: "alice", Action: "yield", JobID: 5, Detail: "stopped in 3s"}},
		Sched:       Sched{Cycles: 120, LastCycle: 250.5, MeanCycle: 300, CyclesPerMinute: 12, Backfill: true, Depth: 2},
		Yields:      1,
		Preemptions: 2,
		GPUSeconds:  map[string]float64{"nlp": 3600, "vision": 7200.5},
		Reservations: []Reservation{{Name: "deadline", Start: 1_003_600, End: 1_010_800, GPUs: 2},
			{Name: "evenings", Start: 999_000, End: 1_002_600, Active: true, GPUs: 3, Flags: "DAILY"}},
		Budgets: []Budget{{Account: "nlp", Used: 48.5, Limit: 60, Resets: 1_000_800}},
	}
}

func get(t *testing.T, h http.Handler, path string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Header(), rec.Body.String()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// samples is the exposition without its comments.
func samples(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func TestMetricsOfABox(t *testing.T) {
	code, hdr, body := get(t, Handler(fixed{st: box()}, quiet()), "/metrics")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %q\n%s", code, hdr.Get("Content-Type"), body)
	}
	want := `slurm_account_cpus_running{account="nlp"} 1
slurm_account_cpus_running{account="vision"} 5
slurm_account_fairshare{account="nlp"} 0
slurm_account_fairshare{account="root"} 0
slurm_account_fairshare{account="vision"} 0
slurm_account_jobs_pending{account="nlp"} 2
slurm_account_jobs_pending{account="vision"} 0
slurm_account_jobs_running{account="nlp"} 1
slurm_account_jobs_running{account="vision"} 2
slurm_account_jobs_suspended{account="nlp"} 0
slurm_account_jobs_suspended{account="vision"} 0
slurm_cpus_alloc 6
slurm_cpus_idle 10
slurm_cpus_other 0
slurm_cpus_total 16
slurm_gpus_alloc 2
slurm_gpus_idle 1
slurm_gpus_total 3
slurm_gpus_utilization 0.6666666666666666
slurm_lite_account_gpu_minutes_limit{account="nlp"} 60
slurm_lite_account_gpu_minutes_used{account="nlp"} 48.5
slurm_lite_account_gpu_seconds_total{account="nlp"} 3600
slurm_lite_account_gpu_seconds_total{account="vision"} 7200.5
slurm_lite_gpu_memory_reserved_bytes{UUID="GPU-0",gpu="0",job="7",type="a100",user="alice"} 8.589934592e+10
slurm_lite_gpu_memory_reserved_bytes{UUID="GPU-1",gpu="1",job="8,9",type="a100",user="bob,alice"} 4.294967296e+10
slurm_lite_gpu_memory_reserved_bytes{UUID="GPU-2",gpu="2",job="",type="a100",user=""} 0
slurm_lite_gpu_memory_total_bytes{UUID="GPU-0",gpu="0",job="7",type="a100",user="alice"} 8.589934592e+10
slurm_lite_gpu_memory_total_bytes{UUID="GPU-1",gpu="1",job="8,9",type="a100",user="bob,alice"} 8.589934592e+10
slurm_lite_gpu_memory_total_bytes{UUID="GPU-2",gpu="2",job="",type="a100",user=""} 8.589934592e+10
slurm_lite_gpu_memory_used_bytes{UUID="GPU-0",gpu="0",job="7",type="a100",user="alice"} 7.516192768e+10
slurm_lite_gpu_memory_used_bytes{UUID="GPU-1",gpu="1",job="8,9",type="a100",user="bob,alice"} 3.221225472e+10
slurm_lite_gpu_memory_used_bytes{UUID="GPU-2",gpu="2",job="",type="a100",user=""} 0
slurm_lite_gpu_up{UUID="GPU-0",gpu="0",state="UP",type="a100"} 1
slurm_lite_gpu_up{UUID="GPU-1",gpu="1",state="UP",type="a100"} 1
slurm_lite_gpu_up{UUID="GPU-2",gpu="2",state="DRAINED",type="a100"} 0
slurm_lite_gpu_utilization_percent{UUID="GPU-0",gpu="0",job="7",type="a100",user="alice"} 93
slurm_lite_gpu_utilization_percent{UUID="GPU-2",gpu="2",job="",type="a100",user=""} 0
slurm_lite_preemptions_total 2
slurm_lite_reservation_active{reservation="deadline"} 0
slurm_lite_reservation_active{reservation="evenings"} 1
slurm_lite_reservation_end_time_seconds{reservation="deadline"} 1.0108e+06
slurm_lite_reservation_end_time_seconds{reservation="evenings"} 1.0026e+06
slurm_lite_reservation_gpus{reservation="deadline",state="INACTIVE"} 2
slurm_lite_reservation_gpus{reservation="evenings",state="ACTIVE"} 3
slurm_lite_reservation_start_time_seconds{reservation="deadline"} 1.0036e+06
slurm_lite_reservation_start_time_seconds{reservation="evenings"} 999000
slurm_lite_up 1
slurm_lite_user_fairshare{account="nlp",user="bob"} 0.25
slurm_lite_user_fairshare{account="vision",user="alice"} 0.75
slurm_lite_yields_total 1
slurm_node_cpu_alloc{node="gpu01",status="mixed"} 6
slurm_node_cpu_idle{node="gpu01",status="mixed"} 10
slurm_node_cpu_other{node="gpu01",status="mixed"} 0
slurm_node_cpu_total{node="gpu01",status="mixed"} 16
slurm_node_mem_alloc{node="gpu01",status="mixed"} 8192
slurm_node_mem_total{node="gpu01",status="mixed"} 65536
slurm_nodes_alloc 0
slurm_nodes_comp 0
slurm_nodes_down 0
slurm_nodes_drain 0
slurm_nodes_err 0
slurm_nodes_fail 0
slurm_nodes_idle 0
slurm_nodes_maint 0
slurm_nodes_mix 1
slurm_nodes_resv 0
slurm_partition_jobs_pending{partition="gpu"} 1
slurm_partition_jobs_pending{partition="long"} 1
slurm_queue_cancelled 0
slurm_queue_completed 4
slurm_queue_completing 0
slurm_queue_configuring 0
slurm_queue_failed 1
slurm_queue_node_fail 0
slurm_queue_pending 2
slurm_queue_pending_dependency 1
slurm_queue_preempted 0
slurm_queue_running 3
slurm_queue_suspended 0
slurm_queue_timeout 1
slurm_scheduler_backfill_depth_mean 2
slurm_scheduler_backfill_last_cycle 250.5
slurm_scheduler_backfill_mean_cycle 300
slurm_scheduler_cycle_per_minute 12
slurm_scheduler_last_cycle 250.5
slurm_scheduler_mean_cycle 300
slurm_scheduler_queue_size 2
slurm_scheduler_threads 1
slurm_user_cpus_running{user="alice"} 5
slurm_user_cpus_running{user="bob"} 1
slurm_user_jobs_pending{user="alice"} 0
slurm_user_jobs_pending{user="bob"} 2
slurm_user_jobs_running{user="alice"} 2
slurm_user_jobs_running{user="bob"} 1
slurm_user_jobs_suspended{user="alice"} 0
slurm_user_jobs_suspended{user="bob"} 0
`
	if diff := cmp.Diff(want, samples(body)); diff != "" {
		t.Errorf("GET /metrics samples (-want +got):\n%s", diff)
	}
	for _, line := range []string{
		"# HELP slurm_queue_pending Jobs PENDING (squeue --states=all).",
		"# TYPE slurm_queue_pending gauge",
		"# HELP slurm_scheduler_last_cycle Planning time of the last scheduling pass, in microseconds.",
		"# HELP slurm_nodes_mix Nodes whose sinfo state is MIX* (1 or 0: this is one node).",
		"# TYPE slurm_lite_yields_total counter",
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("GET /metrics has no line %q", line)
		}
	}
}

// Under PrivateData "jobs" the daemon gives the anonymous viewer no job
// (the GPUs in use say so without naming theirs): the metrics name none,
// and count every GPU in use all the same.
func TestMetricsUnderPrivateDataJobs(t *testing.T) {
	st := box()
	st.Private, st.Jobs, st.Events = true, nil, nil
	for i := range st.GPUs {
		st.GPUs[i].Jobs = []GPUJob{}
	}
	_, _, body := get(t, Handler(fixed{st: st}, quiet()), "/metrics")
	// (sshare's rows stay: PrivateData "usage" hides those.)
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "slurm_user_jobs") || strings.HasPrefix(l, "slurm_account_jobs") ||
			strings.HasPrefix(l, "slurm_lite_gpu_memory") && !strings.Contains(l, `job="",type="a100",user=""}`) {
			t.Errorf("PrivateData=jobs: a metric names a job or its user: %s", l)
		}
	}
	for _, want := range []string{
		`slurm_lite_gpu_memory_used_bytes{UUID="GPU-1",gpu="1",job="",type="a100",user=""} 3.221225472e+10`,
		"slurm_gpus_alloc 2", "slurm_gpus_idle 1", "slurm_queue_running 3", "slurm_queue_pending 2",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("PrivateData=jobs: no line %s:\n%s", want, body)
		}
	}
}

func TestMetricsWhenTheStateCannotBeRead(t *testing.T) {
	code, _, body := get(t, Handler(fixed{err: errors.New("database is locked")}, quiet()), "/metrics")
	if code != 200 || !strings.Contains(body, "slurm_lite_up 0\n") {
		t.Errorf("GET /metrics with a failing source: %d\n%s", code, body)
	}
	code, _, body = get(t, Handler(fixed{err: errors.New("database is locked")}, quiet()), "/api/dashboard")
	if code != http.StatusServiceUnavailable || body != "reading the daemon's state: database is locked\n" {
		t.Errorf("GET /api/dashboard with a failing source: %d %q", code, body)
	}
}

func TestDashboardData(t *testing.T) {
	code, hdr, body := get(t, Handler(fixed{st: box()}, quiet()), "/api/dashboard")
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/dashboard: %d %q", code, hdr.Get("Content-Type"))
	}
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.GPUs) != 3 || st.GPUs[1].Jobs[1].ID != "9" || st.Jobs[3].Reason != "Resources" || st.GPUSeconds["vision"] != 7200.5 {
		t.Errorf("GET /api/dashboard lost something:\n%s", body)
	}
}

func TestDashboardPage(t *testing.T) {
	h := Handler(fixed{st: box()}, quiet())
	for _, c := range []struct{ path, ctype, has string }{
		{"/", "text/html; charset=utf-8", `<script src="app.js"></script>`},
		{"/app.js", "text/javascript; charset=utf-8", "api/dashboard"},
		{"/style.css", "text/css; charset=utf-8", "prefers-color-scheme"},
	} {
		code, hdr, body := get(t, h, c.path)
		if code != 200 || hdr.Get("Content-Type") != c.ctype || !strings.Contains(body, c.has) {
			t.Errorf("GET %s: %d %q, has %q: %v", c.path, code, hdr.Get("Content-Type"), c.has, strings.Contains(body, c.has))
		}
		if hdr.Get("Content-Security-Policy") != "default-src 'self'; frame-ancestors 'none'" {
			t.Errorf("GET %s: CSP %q", c.path, hdr.Get("Content-Security-Policy"))
		}
	}
	// Read-only: nothing but GET (and HEAD).
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/dashboard", strings.NewReader("{}")))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/dashboard: %d, want 405", rec.Code)
	}
}

func TestWhy(t *testing.T) {
	for _, c := range []struct{ reason, detail, want string }{
		{"Resources", "needs 2 GPUs, 0 free", "waiting for GPUs, CPUs or memory to free up (needs 2 GPUs, 0 free)"},
		{"Priority", "", "jobs of higher priority are ahead of it"},
		{"SomethingNew", "", "SomethingNew"},
	} {
		if got := Why(c.reason, c.detail); got != c.want {
			t.Errorf("Why(%q, %q) = %q, want %q", c.reason, c.detail, got, c.want)
		}
	}
}

func TestListenRefusals(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	_, err = Listen(addr)
	if err == nil || !strings.HasPrefix(err.Error(), `[Web] Listen = "`+addr+`": the address is already in use (another daemon or program listens there); choose another port: `) {
		t.Errorf("Listen on a taken address: %v", err)
	}
	_, err = Listen("192.0.2.1:9341") // TEST-NET-1: no machine's own
	if err == nil || !strings.HasPrefix(err.Error(), `[Web] Listen = "192.0.2.1:9341": cannot listen there; give an address of this machine, such as "127.0.0.1:9341": `) {
		t.Errorf("Listen on another machine's address: %v", err)
	}
}

func TestDashboardDataCutsALongQueue(t *testing.T) {
	st := box()
	for i := range PageQueue + 5 {
		st.Jobs = append(st.Jobs, Job{ID: strconv.Itoa(100 + i), State: "PENDING", Reason: "Priority"})
	}
	st.Jobs = append(st.Jobs, Job{ID: "999", State: "RUNNING"}) // (out of order: kept all the same)
	_, _, body := get(t, Handler(fixed{st: st}, quiet()), "/api/dashboard")
	var got State
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	pending := 0
	for _, j := range got.Jobs {
		if j.State == "PENDING" {
			pending++
		}
	}
	// box() has 2 pending; 205 more: 200 listed, 7 counted.
	if pending != PageQueue || got.QueueHidden != 7 || got.Jobs[len(got.Jobs)-1].ID != "999" || len(st.Jobs) != 3+2+PageQueue+5+1 {
		t.Errorf("the page's data: %d pending listed, %d hidden, last %q; the state keeps %d jobs", pending, got.QueueHidden,
			got.Jobs[len(got.Jobs)-1].ID, len(st.Jobs))
	}
	// The metrics count every one.
	_, _, metrics := get(t, Handler(fixed{st: st}, quiet()), "/metrics")
	if !strings.Contains(metrics, "\nslurm_partition_jobs_pending{partition=\"\"} 205\n") {
		t.Errorf("metrics: %s", metrics)
	}
}
