package daemon

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
)

// A pid NVML reports is killed only when it is a real process of the
// job: never 0 (kill(0) ends the caller's process group), 1, the daemon or
// its group, nor a process that started after the job ended.
func TestOnlyVerifiedSurvivorsAreKilled(t *testing.T) {
	// A process of its own group, as a job's is (the supervisor's
	// setsid), started now.
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	ended := time.Now().Add(time.Minute)

	for _, c := range []struct {
		what  string
		pid   int
		ended time.Time
		want  bool
	}{
		{"pid 0 (NVML could not see it)", 0, ended, false},
		{"pid 1", 1, ended, false},
		{"the daemon itself", os.Getpid(), ended, false},
		{"a process of the daemon's group", os.Getppid(), ended, false},
		{"no such process", 1 << 30, ended, false},
		{"a process started after the job ended", pid, time.Now().Add(-time.Hour), false},
		{"a job ended with no end time", pid, time.Time{}, false},
		{"the job's own process", pid, ended, true},
	} {
		if c.what == "a process of the daemon's group" {
			// The test binary's parent may be in another group; a child
			// in ours is the case to check.
			same := exec.Command("sleep", "30")
			if err := same.Start(); err != nil {
				t.Fatal(err)
			}
			c.pid = same.Process.Pid
			defer func() { same.Process.Kill(); same.Wait() }()
		}
		if got := survivorOf(c.pid, c.ended); got != c.want {
			t.Errorf("%s (pid %d): killable %v, want %v", c.what, c.pid, got, c.want)
		}
	}
}

// TestARunAgainIsNotItsOwnSurvivor: a job requeued or resumed runs again
// under the same id, which is how the GPU sample knows its processes; the
// earlier run's release is no longer waited on (its "survivors" would be
// the new run's processes, killed), unless the running run in the list is
// the ended one itself, read just before its end.
func TestARunAgainIsNotItsOwnSurvivor(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	releasing := map[uint32]gpu.Job{
		7:  {ID: "7", Ended: t0},                   // runs again 40 ms later
		8:  {ID: "8", Ended: t0},                   // the list still shows the ended run
		9:  {ID: "9", Ended: t0},                   // not running: still released
		10: {ID: "10", Ended: t0.Add(time.Second)}, // runs again at the very moment
	}
	running := map[uint32]time.Time{
		7:  t0.Add(40 * time.Millisecond),
		8:  t0.Add(-time.Hour),
		10: t0.Add(time.Second),
		11: t0,
	}
	got := foldRestarted(releasing, running)
	if !slices.Equal(got, []uint32{7, 10}) {
		t.Errorf("folded %v, want [7 10]", got)
	}
	if _, ok := releasing[8]; !ok {
		t.Error("the release of job 8's ended run was dropped because a stale list showed it running")
	}
	if _, ok := releasing[9]; !ok {
		t.Error("job 9's release was dropped, and it is not running")
	}
	if len(releasing) != 2 {
		t.Errorf("releasing keeps %d jobs, want 2 (8 and 9)", len(releasing))
	}
}
