package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/gpu/gputest"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// webDaemon is a real daemon on a mock DGX A100 with the web listener
// on a free port of the loopback and a job mapping directory.
type webDaemon struct {
	*nvmlDaemon
	url  string // "http://127.0.0.1:PORT/"
	stop func()
}

// utilOf is the utilization each mock GPU reports: GPU i, 10*i+3 percent.
func utilOf(i int) int { return 10*i + 3 }

// newWebMachine is a mock DGX A100 whose GPUs report utilizations.
func newWebMachine() *gputest.Machine {
	m := gputest.DGXA100()
	for i := range m.Server.Devices {
		u := uint32(utilOf(i))
		m.Dev(i).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: u}, nvml.SUCCESS
		}
	}
	return m
}

// startWebDaemon starts a daemon over dir's state (a restart when dir has
// one) on machine m, on clock (nil: the real one), with extra lines among
// its top-level keys (tables may follow them there; a [Web] table there
// replaces the default, Listen = "127.0.0.1:0"). stop ends it, leaving
// its jobs running; the test's cleanup cancels them and stops it.
func startWebDaemon(t testing.TB, dir string, m *gputest.Machine, clock Clock, extra ...string) *webDaemon {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	conf := filepath.Join(dir, "conf.toml")
	webTable := "[Web]\nListen = \"127.0.0.1:0\"\n"
	for _, e := range extra {
		if strings.Contains("\n"+e, "\n[Web]") {
			webTable = ""
		}
	}
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q
KillWait          = 1
GPUSampleInterval = 1
JobMappingDir     = %q
%s

[Node]
NodeName   = "gpu01"
CPUs       = 8
RealMemory = "8G"
GPUs       = "nvml"

%s`, filepath.Join(dir, "d.sock"), filepath.Join(dir, "state"), filepath.Join(dir, "map"), strings.Join(extra, "\n"), webTable)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nd := &nvmlDaemon{t: t, dir: dir, m: m, logs: &syncBuffer{}}
	stop := nd.run(Options{ConfigPath: conf, Exe: exe, Clock: clock, OpenNVML: func(o gpu.Options) *gpu.Inventory {
		o.ReleaseTimeout = 5 * time.Second
		return gpu.FromNVML(nd.m.Lib(), o)
	}}, true)
	// The address chosen for port 0 is in the log line that says where
	// the dashboard is.
	var url string
	addr := regexp.MustCompile(`msg="web listening" metrics=http://\S+ dashboard=(http://\S+/)`)
	nd.waitFor(func() bool {
		m := addr.FindStringSubmatch(nd.logs.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, "the web listener's log line")
	return &webDaemon{nvmlDaemon: nd, url: url, stop: stop}
}

// get is GET path on the listener.
func (wd *webDaemon) get(path string) string {
	wd.t.Helper()
	resp, err := http.Get(wd.url + strings.TrimPrefix(path, "/"))
	if err != nil {
		wd.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		wd.t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

// getAs is GET path on the listener with the Host header host, as a
// browser sends it for a page of that name: the status and the body.
func (wd *webDaemon) getAs(host, path string) (int, string) {
	wd.t.Helper()
	req, err := http.NewRequest("GET", wd.url+strings.TrimPrefix(path, "/"), nil)
	if err != nil {
		wd.t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		wd.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		wd.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (wd *webDaemon) dashboard() web.State {
	wd.t.Helper()
	var st web.State
	if err := json.Unmarshal([]byte(wd.get("/api/dashboard")), &st); err != nil {
		wd.t.Fatal(err)
	}
	return st
}

// metricsHave waits until every line is a sample of /metrics.
func (wd *webDaemon) metricsHave(lines ...string) {
	wd.t.Helper()
	var body string
	missing := lines
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		body = wd.get("/metrics")
		missing = nil
		for _, l := range lines {
			if !strings.Contains(body, "\n"+l+"\n") {
				missing = append(missing, l)
			}
		}
		if len(missing) == 0 {
			return
		}
	}
	wd.t.Fatalf("/metrics lacks:\n%s\n\nit has:\n%s", strings.Join(missing, "\n"), body)
}

// mapping is the job mapping directory: file name -> content.
func (wd *webDaemon) mapping() map[string]string {
	wd.t.Helper()
	entries, err := os.ReadDir(filepath.Join(wd.dir, "map"))
	if err != nil {
		wd.t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(wd.dir, "map", e.Name()))
		if err == nil {
			out[e.Name()] = string(b)
		}
	}
	return out
}

func (wd *webDaemon) waitMapping(want map[string]string, what string) {
	wd.t.Helper()
	var got map[string]string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = wd.mapping(); fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
	}
	wd.t.Fatalf("%s: the job mapping is %v, want %v", what, got, want)
}

// gpuLine is a per-GPU sample line for GPU g (as the node reports it)
// with the jobs and users on it.
func gpuLine(metric string, nvmlIndex int, g api.GPU, jobs, users string, v string) string {
	return fmt.Sprintf(`%s{UUID=%q,gpu="%d",job=%q,type=%q,user=%q} %s`, metric, g.UUID, nvmlIndex, jobs, g.Type, users, v)
}

func float(v uint64) string { return strconv.FormatFloat(float64(v), 'g', -1, 64) }

// The metrics follow jobs as they start, wait and end; the job mapping
// names each GPU's jobs by NVML index; a restart leaves it right.
func TestWebMetricsAndJobMapping(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := newWebMachine()
	wd := startWebDaemon(t, dir, m, nil)
	whole := wd.submit("exec sleep 120", "--gpus=1")
	shared := wd.submit("exec sleep 120", "--gpu-mem=10G", "-t", "30")
	big := wd.submit("exec sleep 120", "--gpus=8", "-t", "60")
	jw := wd.waitState(whole, slurm.Running)
	js := wd.waitState(shared, slurm.Running)
	wd.waitFor(func() bool { return wd.job(big).Reason == slurm.ReasonResources }, "the 8-GPU job waiting for resources")
	if len(jw.Alloc.GPUs) != 1 || len(js.Alloc.GPUs) != 1 {
		t.Fatalf("allocations: %v, %v", jw.Alloc.GPUs, js.Alloc.GPUs)
	}
	nw, ns := wd.devOf(jw.Alloc.GPUs[0].UUID), wd.devOf(js.Alloc.GPUs[0].UUID)
	var gw, gs api.GPU
	for _, g := range wd.node().GPUs {
		switch g.UUID {
		case jw.Alloc.GPUs[0].UUID:
			gw = g
		case js.Alloc.GPUs[0].UUID:
			gs = g
		}
	}
	ids := func(id uint32) string { return strconv.Itoa(int(id)) }
	wd.metricsHave(
		"slurm_lite_up 1",
		"slurm_queue_running 2",
		"slurm_queue_pending 1",
		"slurm_gpus_total 8",
		"slurm_gpus_alloc 2",
		"slurm_gpus_idle 6",
		"slurm_gpus_utilization 0.25",
		"slurm_cpus_total 8",
		"slurm_cpus_alloc 2",
		`slurm_account_jobs_running{account="lab"} 2`,
		`slurm_account_jobs_pending{account="lab"} 1`,
		`slurm_user_jobs_running{user="root"} 2`,
		`slurm_user_jobs_pending{user="root"} 1`,
		`slurm_partition_jobs_pending{partition="gpu"} 1`,
		`slurm_lite_user_fairshare{account="lab",user="root"} 1`,
		"slurm_nodes_mix 1",
		"slurm_scheduler_threads 1",
		"slurm_scheduler_queue_size 1",
		"slurm_lite_preemptions_total 0",
		"slurm_lite_yields_total 0",
		gpuLine("slurm_lite_gpu_memory_total_bytes", nw, gw, ids(whole), "root", float(gw.MemoryTotal)),
		gpuLine("slurm_lite_gpu_memory_reserved_bytes", nw, gw, ids(whole), "root", float(gw.MemoryTotal)),
		gpuLine("slurm_lite_gpu_memory_used_bytes", nw, gw, ids(whole), "root", float(gputest.IdleUsed)),
		gpuLine("slurm_lite_gpu_utilization_percent", nw, gw, ids(whole), "root", strconv.Itoa(utilOf(nw))),
		gpuLine("slurm_lite_gpu_memory_reserved_bytes", ns, gs, ids(shared), "root", float(10<<30)),
		gpuLine("slurm_lite_gpu_utilization_percent", ns, gs, ids(shared), "root", strconv.Itoa(utilOf(ns))),
	)
	// The dashboard's data: the queue's reason in words, with the
	// scheduler's numbers, and the plan's expected start (the two running
	// jobs' limits: the whole-GPU job has none, so the plan has no start).
	st := wd.dashboard()
	bj := wd.job(big)
	var row web.Job
	for _, j := range st.Jobs {
		if j.ID == ids(big) {
			row = j
		}
	}
	if row.State != "PENDING" || row.Reason != "Resources" || row.Why != web.Why("Resources", bj.ReasonDetail) ||
		row.GPUs != 8 || row.Limit != 3600 || row.Priority != bj.Priority || row.ExpectedStart != unixTime(bj.ExpectedStart) {
		t.Errorf("the queue's row for job %d: %+v (squeue's job: %+v)", big, row, bj)
	}

	// dcgm-exporter's mapping: one file per GPU in use, by NVML index.
	wd.waitMapping(map[string]string{strconv.Itoa(nw): ids(whole) + "\n", strconv.Itoa(ns): ids(shared) + "\n"}, "two jobs running")
	// One ends: its file goes, its GPU's metrics lose the job.
	if err := wd.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{ids(whole)}}, nil); err != nil {
		t.Fatal(err)
	}
	wd.waitState(whole, slurm.Cancelled)
	wd.waitMapping(map[string]string{strconv.Itoa(ns): ids(shared) + "\n"}, "after job "+ids(whole)+"'s end")
	wd.metricsHave(
		"slurm_queue_cancelled 1",
		gpuLine("slurm_lite_gpu_memory_reserved_bytes", nw, gw, "", "", "0"),
	)

	// A restart: a file that a crash left (job 99 on GPU 7) is not kept;
	// the running job's is.
	wd.stop()
	stale := (ns + 1) % 8
	if err := os.WriteFile(filepath.Join(dir, "map", strconv.Itoa(stale)), []byte("99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd = startWebDaemon(t, dir, m, nil)
	wd.waitMapping(map[string]string{strconv.Itoa(ns): ids(shared) + "\n"}, "after a restart")
	wd.metricsHave(
		"slurm_queue_running 1",
		gpuLine("slurm_lite_gpu_memory_reserved_bytes", ns, gs, ids(shared), "root", float(10<<30)),
	)
}

// The listener is off by default, refuses a taken address before the
// daemon takes its socket, and the dashboard's data never carries a
// job's script or environment.
func TestWebRefusalsAndSecrets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("SocketPath = %q\nStateSaveLocation = %q\n[Node]\nGPUs = \"none\"\n[Web]\nListen = %q\n",
		filepath.Join(dir, "d.sock"), filepath.Join(dir, "state"), taken.Addr().String())), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{ConfigPath: conf, Log: io.Discard})
	want := fmt.Sprintf(`[Web] Listen = %q: the address is already in use (another daemon or program listens there); choose another port: `, taken.Addr().String())
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a daemon on a taken web address: %v, want %s...", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused daemon left its socket: %v", err)
	}

	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil)
	id := wd.submit("echo hunter2-in-the-script; exec sleep 120", "--gpus=1", "--job-name=train")
	wd.waitState(id, slurm.Running)
	// A pending job with a secret in its environment too.
	cl, err := jobscript.ParseCommandLine([]string{"--gpus=8", "job.sh"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\nexec sleep 120 # hunter2-in-a-pending-script\n"),
		Command: cl, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.c.Do(context.Background(), "POST", api.PathJobs, api.Submit{Request: *req,
		Env: []string{"PATH=/usr/bin:/bin", "API_TOKEN=hunter2-in-the-environment"}, Cwd: wd.dir}, &api.Submitted{}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/dashboard", "/metrics", "/", "/app.js"} {
		if body := wd.get(path); strings.Contains(body, "hunter2") {
			t.Errorf("GET %s shows a job's script:\n%s", path, body)
		}
	}
	st := wd.dashboard()
	var names []string
	for _, j := range st.Jobs {
		names = append(names, j.Name)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[job.sh train]" {
		t.Errorf("the jobs' names: %v", names)
	}

	// The queue in priority order, not submission order: a later job
	// with a lower nice value comes first, one with a higher one last.
	if os.Geteuid() != 0 {
		t.Log("not root: no negative --nice, the queue's order is not checked")
		return
	}
	low := wd.submit("exec true", "--gpus=8", "--nice=100")
	high := wd.submit("exec true", "--gpus=8", "--nice=-100")
	var order []string
	wd.waitFor(func() bool {
		order = nil
		for _, j := range wd.dashboard().Jobs {
			if j.State == "PENDING" {
				order = append(order, j.ID)
			}
		}
		var jobs []api.Job
		if err := wd.c.Do(context.Background(), "GET", api.PathJobs, nil, &jobs); err != nil {
			t.Fatal(err)
		}
		prio := map[string]uint32{}
		for _, j := range jobs {
			prio[strconv.Itoa(int(j.ID))] = j.Priority
		}
		// (once a pass has ranked the two new ones)
		return len(order) == 3 && prio[strconv.Itoa(int(high))] > prio[order[1]] && prio[order[1]] > prio[strconv.Itoa(int(low))]
	}, "three jobs queued and ranked")
	wantOrder := []string{strconv.Itoa(int(high)), strconv.Itoa(int(id + 1)), strconv.Itoa(int(low))}
	if fmt.Sprint(order) != fmt.Sprint(wantOrder) {
		t.Errorf("the queue's order: %v, want %v (by priority)", order, wantOrder)
	}
}

// BenchmarkWebScrape is a Prometheus scrape, and a dashboard load, of a
// real daemon with 1,000 jobs queued behind one running (README's
// figure). Each reads the store's cache, the published view and the fair
// share tree; the loop is not involved.
func BenchmarkWebScrape(b *testing.B) {
	wd := startWebDaemon(b, b.TempDir(), newWebMachine(), nil)
	run := wd.submit("exec sleep 300", "--gpus=8", "-t", "60")
	wd.waitState(run, slurm.Running)
	for i := range 1000 {
		wd.submit("exec true", "--gpus=1", "-t", strconv.Itoa(10+i%50))
	}
	wd.waitFor(func() bool { st := wd.dashboard(); return len(st.Jobs)+st.QueueHidden == 1001 }, "1,001 jobs on the dashboard")
	for _, path := range []string{"/metrics", "/api/dashboard"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			size := 0
			for b.Loop() {
				size = len(wd.get(path))
			}
			b.ReportMetric(float64(size), "bytes/op")
		})
	}
}

// A preemption and a yield count; the yield shows in the page's events
// with who and when.
func TestWebCountsPreemptionsAndYields(t *testing.T) {
	t.Parallel()
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil, `
[[Partition]]
PartitionName = "gpu"
Default       = true
PriorityTier  = 1

[[Partition]]
PartitionName = "scavenger"
PriorityTier  = 0
PreemptMode   = "REQUEUE"
GraceTime     = 0
`)
	filler := wd.submit("exec sleep 120", "--gpus=8", "-p", "scavenger", "--requeue")
	wd.waitState(filler, slurm.Running)
	wd.metricsHave("slurm_lite_preemptions_total 0", "slurm_gpus_alloc 8")
	urgent := wd.submit("echo started > urgent.out; trap 'exit 0' TERM; sleep 120 & wait", "--gpus=1")
	wd.waitState(urgent, slurm.Running)
	wd.metricsHave(
		"slurm_lite_preemptions_total 1",
		"slurm_queue_running 1",
		"slurm_queue_pending 1",
		`slurm_partition_jobs_pending{partition="scavenger"} 1`,
		"slurm_gpus_alloc 1",
	)
	// scontrol yield: the job stops cleanly on SIGTERM and is requeued.
	wd.waitFor(func() bool { _, err := os.Stat(filepath.Join(wd.dir, "urgent.out")); return err == nil }, "the job's trap set")
	var y api.Yielded
	if err := wd.c.Do(context.Background(), "POST", api.PathYield, api.Yield{Job: strconv.Itoa(int(urgent))}, &y); err != nil {
		t.Fatal(err)
	}
	wd.metricsHave("slurm_lite_yields_total 1", "slurm_lite_preemptions_total 1")
	var ev web.Event
	wd.waitFor(func() bool {
		for _, e := range wd.dashboard().Events {
			if e.Action == "yield" {
				ev = e
				return true
			}
		}
		return false
	}, "the yield among the page's events")
	if ev.Who != "root" || ev.JobID != urgent || ev.Time == 0 {
		t.Errorf("the yield's event: %+v", ev)
	}
}

// Under PrivateData "jobs" the anonymous page and metrics show no job, as
// squeue shows another user none: only counts, which count them all (the
// GPU in use, the queue's length). TestWebShowsTheAnonymousViewerNoSecrets
// walks every route after every kind of event.
func TestWebUnderPrivateDataJobs(t *testing.T) {
	t.Parallel()
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil, `PrivateData = ["jobs"]`)
	id := wd.submit("exec sleep 120", "--gpus=1", "--job-name=secret-project")
	wd.waitState(id, slurm.Running)
	wd.submit("exec sleep 120", "--gpus=8", "--job-name=secret-sweep")
	wd.metricsHave("slurm_queue_running 1", "slurm_queue_pending 1", "slurm_gpus_alloc 1", "slurm_scheduler_queue_size 1")
	// (sshare's rows still name users: PrivateData "usage" hides those.)
	if body := wd.get("/api/dashboard"); strings.Contains(body, "secret-") {
		t.Errorf("the page's data under PrivateData=jobs names a job:\n%s", body)
	}
	for _, l := range strings.Split(wd.get("/metrics"), "\n") {
		if strings.HasPrefix(l, "slurm_user_") || strings.HasPrefix(l, "slurm_account_jobs") || strings.HasPrefix(l, "slurm_partition_jobs") ||
			strings.HasPrefix(l, "slurm_lite_gpu_memory") && !strings.Contains(l, `job="",`) {
			t.Errorf("a metric under PrivateData=jobs shows a job: %s", l)
		}
	}
	st := wd.dashboard()
	used := 0
	for _, g := range st.GPUs {
		if len(g.Jobs) > 0 {
			t.Errorf("GPU %d under PrivateData=jobs names its jobs: %+v", g.Index, g.Jobs)
		}
		if g.InUse {
			used++
		}
	}
	if !st.Private || len(st.Jobs) != 0 || used != 1 || st.States["RUNNING"] != 1 || st.States["PENDING"] != 1 || st.CPUsAlloc != 1 {
		t.Errorf("the page's data under PrivateData=jobs: %+v", st)
	}
}

// A page elsewhere that points a name of its own at the machine (DNS
// rebinding) reaches the daemon's listener with that name as Host: every
// route refuses it (421) and says which key to set, and the log names the
// configuration file. The names of [Web] AllowedHosts and the loopback's
// are answered; on 0.0.0.0 with none listed, the machine's hostname.
func TestWebAnswersOnlyItsOwnNames(t *testing.T) {
	t.Parallel()
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil, `[Web]
Listen       = "127.0.0.1:0"
AllowedHosts = ["gpubox.lab.example"]`)
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(wd.url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range web.Paths() {
		for _, host := range []string{"evil.example:" + port, "127.0.0.1.evil.example", "gpubox.lab.example.evil.example:" + port} {
			code, body := wd.getAs(host, path)
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "[Web]\nAllowedHosts = [") || strings.Contains(body, `"jobs"`) {
				t.Errorf("GET %s with Host %q: %d\n%s", path, host, code, body)
			}
		}
		for _, host := range []string{"gpubox.lab.example:" + port, "GPUBOX.lab.example", "localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port} {
			if code, body := wd.getAs(host, path); code != http.StatusOK {
				t.Errorf("GET %s with Host %q: %d %s, want 200", path, host, code, body)
			}
		}
	}
	if want := `msg="web: refused a request for a name that is not this listener's (421); if it is this machine's, list it in [Web] AllowedHosts" host=evil.example config=` +
		filepath.Join(wd.dir, "conf.toml"); !strings.Contains(wd.logs.String(), want) {
		t.Errorf("the daemon's log has no line %s", want)
	}

	// On every address, with no AllowedHosts: the machine's own name too.
	name, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname: %v", err)
	}
	wd = startWebDaemon(t, t.TempDir(), newWebMachine(), nil, "[Web]\nListen = \"0.0.0.0:0\"")
	for host, want := range map[string]int{name: 200, wd.url[len("http://") : len(wd.url)-1]: 200, "evil.example": http.StatusMisdirectedRequest} {
		if code, body := wd.getAs(host, "/api/dashboard"); code != want {
			t.Errorf("on 0.0.0.0: GET /api/dashboard with Host %q: %d %s, want %d", host, code, body, want)
		}
	}
}
