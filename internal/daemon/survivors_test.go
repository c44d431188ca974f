package daemon

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
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
