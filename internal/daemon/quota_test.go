package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// An account with GrpTRESMins=gres/gpu=60 runs one 1-GPU job for its
// budget; the next waits with AssocGrpGRESMinutes and a detail naming the
// minutes used and the reset; after PriorityUsageResetPeriod's reset
// (DAILY: the next midnight of the daemon's clock) it starts. A real
// daemon with simulated GPUs and real jobs, on a fake clock: an hour and a
// day pass in no time. The jobs run throughout (held by a file): a
// supervisor records a run's end on the machine's clock, not the daemon's.
func TestGrpTRESMinsBudgetWaitsForTheReset(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	me := userdb.Name(uint32(os.Getuid()))
	// Whole seconds, as the records keep them; at 10:00 local, so that an
	// hour's run ends before midnight.
	now := time.Now()
	clock := &fakeClock{t: time.Date(now.Year(), now.Month(), now.Day(), 10, 0, 0, 0, time.Local)}
	dir := t.TempDir()
	wd := startWebDaemon(t, dir, newWebMachine(), clock, fmt.Sprintf(`[Priority]
DecayHalfLife    = "0"
UsageResetPeriod = "DAILY"

[[Account]]
Name        = "lab"
Users       = [%q]
GrpTRESMins = "gres/gpu=60"
`, me))
	nd := wd.nvmlDaemon
	release := filepath.Join(dir, "release")
	hold := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.1; done", release)
	first := nd.submit(hold, "--gpus=1", "--time=3-0", "--account=lab")
	nd.waitState(first, slurm.Running)

	// An hour of the clock: the budget is spent. The second job waits.
	clock.advance(61 * time.Minute)
	second := nd.submit(hold, "--gpus=1", "--time=1:00:00", "--account=lab")
	reset := sched.NextUsageReset("DAILY", clock.Now(), time.Local)
	var j api.Job
	nd.waitFor(func() bool { j = nd.job(second); return j.Reason == slurm.ReasonAssocGrpGRESMinutes }, "the second job to wait on the budget")
	if j.State != slurm.Pending {
		t.Fatalf("second job %s, want PENDING", j.State)
	}
	wd.metricsHave(`slurm_lite_account_gpu_minutes_limit{account="lab"} 60`,
		`slurm_lite_account_gpu_minutes_used{account="lab"} 61`)
	wantDetail := "account lab has used 61 of its GrpTRESMins gres/gpu=60 minutes, 0 left; usage resets at " + reset.Format("2006-01-02T15:04:05")
	if j.ReasonDetail != wantDetail {
		t.Errorf("reason detail %q\nwant %q", j.ReasonDetail, wantDetail)
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
