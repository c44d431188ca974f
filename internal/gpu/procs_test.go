package gpu

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A /proc tree written by the test: HostProcs reads files, nothing else.
func TestHostProcs(t *testing.T) {
	root := t.TempDir()
	write := func(pid int, name, text string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(100, "status", "Name:\tpython\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n")
	write(100, "environ", "HOME=/root\x00SLURM_JOB_ID=42\x00SLURM_JOB_NAME=train\x00")
	write(100, "stat", "100 (python) R 1 100 100 0 -1")
	write(101, "status", "Name:\tx\nUid:\t4242424\t4242424\t4242424\t4242424\n")
	write(101, "environ", "HOME=/home/x\x00")
	write(101, "cgroup", "0::/slurm/uid_1000/job_77/step_batch\n")
	write(101, "stat", "101 (my (odd) name) Z 1 101 101 0 -1")
	write(102, "cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n")
	write(102, "environ", "SLURM_JOB_ID=\x00")
	write(103, "cgroup", "12:pids:/job_9x/\n")

	tests := []struct {
		name     string
		pid      int
		wantUser string
		wantJob  string
		alive    bool
	}{
		{"a job's process: SLURM_JOB_ID from its environment", 100, "root", "42", true},
		{"a job's process found by its cgroup; an owner without a name keeps the uid; a zombie", 101, "4242424", "77", false},
		{"an ordinary login session's process: no job (an empty SLURM_JOB_ID is none)", 102, "", "", false},
		{"a cgroup element that only looks like a job", 103, "", "", false},
	}
	h := HostProcs{Root: root}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := h.User(tt.pid)
			j, _ := h.JobID(tt.pid)
			if u != tt.wantUser || j != tt.wantJob || h.Alive(tt.pid) != tt.alive {
				t.Errorf("User, JobID, Alive = %q, %q, %v; want %q, %q, %v", u, j, h.Alive(tt.pid), tt.wantUser, tt.wantJob, tt.alive)
			}
		})
	}
	if _, err := h.User(999); err == nil {
		t.Errorf("User of a missing process: no error")
	}
	if _, err := h.JobID(999); err == nil {
		t.Errorf("JobID of a missing process: no error")
	}
}
