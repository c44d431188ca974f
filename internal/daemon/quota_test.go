package daemon

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// An account with GrpTRESMins=gres/gpu=60 runs one 1-GPU job for its
// budget; at 80 % and at 100 % its users get a mail (MailProg) and the
// webhooks a BUDGET_80 and a BUDGET_100; the next job waits with
// AssocGrpGRESMinutes and a detail naming the minutes used and the reset;
// /metrics has the budget; after PriorityUsageResetPeriod's reset (DAILY:
// the next midnight of the daemon's clock) the job starts. A real daemon
// with mock GPUs and real jobs, on a fake clock: an hour and a day pass in
// no time. The jobs run throughout (held by a file): a supervisor records
// a run's end on the machine's clock, not the daemon's.
func TestGrpTRESMinsBudgetWaitsForTheReset(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	me := userdb.Name(uint32(os.Getuid()))
	// Whole seconds, as the records keep them; at 10:00 local, so that an
	// hour's run ends before midnight.
	now := time.Now()
	clock := &fakeClock{t: time.Date(now.Year(), now.Month(), now.Day(), 10, 0, 0, 0, time.Local)}
	dir := t.TempDir()
	mailLog := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "fakemail")
	script := "#!/bin/sh\nprintf '%s|%s\\n' \"$2\" \"$3\" >> " + mailLog + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := &hookServer{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	wd := startWebDaemon(t, dir, newWebMachine(), clock, fmt.Sprintf(`MailProg = %q

[[Notify]]
URL    = %q
Events = ["BUDGET_80", "BUDGET_100"]

[Priority]
DecayHalfLife    = "0"
UsageResetPeriod = "DAILY"

[[Account]]
Name        = "lab"
Users       = [%q]
GrpTRESMins = "gres/gpu=60"
`, prog, srv.URL, me))
	nd := wd.nvmlDaemon
	release := filepath.Join(dir, "release")
	hold := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.1; done", release)
	first := nd.submit(hold, "--gpus=1", "--time=3-0", "--account=lab")
	nd.waitState(first, slurm.Running)
	reset := sched.NextUsageReset("DAILY", clock.Now(), time.Local)
	resets := reset.Format("2006-01-02T15:04:05")
	mails := func(want string) {
		t.Helper()
		var got []byte
		nd.waitFor(func() bool { got, _ = os.ReadFile(mailLog); return string(got) == want }, "the mails:\n"+want+"\nhave:\n"+string(got))
	}

	// 48 minutes: 80 % of the budget is used.
	clock.advance(48 * time.Minute)
	mail80 := "Slurm budget: account lab has used 80% of its GrpTRESMins gres/gpu=60 (48 minutes); usage resets at " + resets + "|" + me + "\n"
	mails(mail80)
	// Its webhook too, before the budget is spent: the hook refuses its
	// first call, and BUDGET_100 would otherwise be delivered while the
	// notifier waits to try BUDGET_80 again (seen with tests running in
	// parallel).
	nd.waitFor(func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		for _, b := range hook.bodies {
			if b.Budget != nil && b.Event == "BUDGET_80" {
				return true
			}
		}
		return false
	}, "the BUDGET_80 webhook")

	// An hour of the clock: the budget is spent. The second job waits.
	clock.advance(13 * time.Minute)
	mail100 := "Slurm budget: account lab has used all of its GrpTRESMins gres/gpu=60 (61 minutes); usage resets at " + resets + "|" + me + "\n"
	mails(mail80 + mail100)
	second := nd.submit(hold, "--gpus=1", "--time=1:00:00", "--account=lab")
	var j api.Job
	nd.waitFor(func() bool { j = nd.job(second); return j.Reason == slurm.ReasonAssocGrpGRESMinutes }, "the second job to wait on the budget")
	if j.State != slurm.Pending {
		t.Fatalf("second job %s, want PENDING", j.State)
	}
	wantDetail := "account lab has used 61 of its GrpTRESMins gres/gpu=60 minutes, 0 left; usage resets at " + resets
	if j.ReasonDetail != wantDetail {
		t.Errorf("reason detail %q\nwant %q", j.ReasonDetail, wantDetail)
	}
	wd.metricsHave(`slurm_lite_account_gpu_minutes_limit{account="lab"} 60`,
		`slurm_lite_account_gpu_minutes_used{account="lab"} 61`)
	var events []string
	nd.waitFor(func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		events = nil
		for _, b := range hook.bodies {
			if b.Budget != nil {
				events = append(events, fmt.Sprintf("%s %s %s %d/%d %v", b.Event, b.Budget.Account, b.Budget.TRES, b.Budget.Used, b.Budget.Limit, b.Budget.Users))
			}
		}
		return len(events) == 2
	}, "both budget webhooks")
	wantEvents := []string{"BUDGET_80 lab gres/gpu 48/60 [" + me + "]", "BUDGET_100 lab gres/gpu 61/60 [" + me + "]"}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("webhook budget events (-want +got):\n%s", diff)
	}

	// Past midnight the budget counts from the reset: one minute of the
	// first job, and the second starts beside it.
	clock.advance(reset.Sub(clock.Now()) + time.Minute)
	nd.waitState(second, slurm.Running)
	wd.metricsHave(`slurm_lite_account_gpu_minutes_used{account="lab"} 1`)
	// (The jobs end at the cleanup: their records' ends would be the
	// machine's clock, hours before the fake one, out of the view.)
	if !strings.Contains(nd.logs.String(), "Priority.UsageResetPeriod") {
		t.Errorf("the log does not say usage was cleared")
	}
}

// The runs a budget counts are kept between passes: a run that ends is
// taken from the pass's job list; a run a requeue archived (gone from the
// list as it was) makes the next pass read the store again, so it still
// counts; a reset (a new window) reads it again too.
func TestBudgetRunsKeepEndedAndRequeuedRuns(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := config.Default()
	d := &Daemon{st: st}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	alloc := store.Alloc{Node: "gpu01", CPUs: []int{0}, GPUs: []store.GPUAlloc{{UUID: "GPU-0"}}}
	ids, err := st.Submit(ctx, []store.NewJob{{Job: store.Job{User: "alice", Account: "lab", Partition: "gpu", QOS: "normal",
		Request: *req, Requeue: true, State: slurm.Running, Start: t0, Alloc: alloc}, Script: "#!/bin/sh\ntrue\n"}})
	if err != nil {
		t.Fatal(err)
	}
	list := func() []*store.Job {
		jobs, err := st.JobRefs(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	ends := func(runs []sched.Run) []string {
		var out []string
		for _, r := range runs {
			out = append(out, fmt.Sprintf("%d:%s", r.Job.ID, r.End.Format("15:04")))
		}
		return out
	}
	node := sched.Node{Name: "gpu01"}
	runs, err := d.budgetRunsAt(ctx, cfg, node, t0.Add(-time.Hour), list())
	if err != nil || !cmp.Equal(ends(runs), []string{"1:00:00"}) {
		t.Fatalf("first pass: %v %v, want job 1 running", ends(runs), err)
	}
	// A requeue at 10:00 archives the run and puts the job back to pending.
	if err := st.Update(ctx, func(tx *store.Tx) error { _, err := tx.Requeue(ids[0], t0.Add(time.Hour)); return err }); err != nil {
		t.Fatal(err)
	}
	runs, err = d.budgetRunsAt(ctx, cfg, node, t0.Add(-time.Hour), list())
	if err != nil || !cmp.Equal(ends(runs), []string{"1:10:00"}) {
		t.Fatalf("after the requeue: %v %v, want job 1's archived run ended at 10:00", ends(runs), err)
	}
	// It is kept: the next pass's list does not show it.
	runs, err = d.budgetRunsAt(ctx, cfg, node, t0.Add(-time.Hour), nil)
	if err != nil || !cmp.Equal(ends(runs), []string{"1:10:00"}) {
		t.Fatalf("kept: %v %v", ends(runs), err)
	}
	// A reset after the run's end: read again, nothing ended since counts.
	runs, err = d.budgetRunsAt(ctx, cfg, node, t0.Add(2*time.Hour), list())
	if err != nil || len(runs) != 0 {
		t.Fatalf("after a reset: %v %v, want none", ends(runs), err)
	}
}
