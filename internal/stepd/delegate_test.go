package stepd

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each reason --mem cannot be enforced comes with its own fix.
func TestExplainNoMemory(t *testing.T) {
	self := os.Getpid()
	busy := &os.PathError{Op: "write", Path: "/sys/fs/cgroup/lab/cgroup.subtree_control", Err: syscall.EBUSY}
	tests := []struct {
		name       string
		base       string
		avail      []string
		foreign    []int
		enableErr  error
		onV1       bool
		wantReason string
		wantFix    string
	}{
		{"a hybrid setup: memory is cgroup v1's", "/sys/fs/cgroup/unified", nil, nil, nil, true,
			"the memory controller is mounted as cgroup v1 (a hybrid cgroup setup), and job cgroups are cgroup v2's",
			"boot with cgroup v2 alone (the kernel parameter systemd.unified_cgroup_hierarchy=1)"},
		{"the kernel has none", "/", []string{"pids"}, nil, nil, false,
			"the kernel offers no memory controller (cgroup_disable=memory?)",
			"boot without cgroup_disable=memory"},
		{"the parent gives none", "/sys/fs/cgroup/lab/slurm", []string{"pids", "cpuset"}, nil, nil, false,
			`cgroup /sys/fs/cgroup/lab/slurm is not given the memory controller (its cgroup.controllers: "pids cpuset")`,
			"run slurmd-lite under systemd with the shipped unit (examples/slurmd-lite.service: Delegate=yes), or give it the controller: echo +memory > /sys/fs/cgroup/lab/cgroup.subtree_control"},
		{"another program's process shares the cgroup", "/sys/fs/cgroup/lab", []string{"memory"}, []int{self}, busy, false,
			fmt.Sprintf("processes of other programs share slurmd-lite's cgroup /sys/fs/cgroup/lab: %d (stepd.test), and cgroup v2 gives controllers only to the children of a cgroup with no processes of its own", self),
			"run slurmd-lite in a cgroup of its own: under systemd with the shipped unit (examples/slurmd-lite.service: Delegate=yes), or move those processes out"},
		{"turning it on failed", "/sys/fs/cgroup/lab", []string{"memory"}, nil, busy, false,
			"turning on memory in /sys/fs/cgroup/lab/cgroup.subtree_control: device or resource busy",
			"run slurmd-lite as root or under systemd with the shipped unit (Delegate=yes), or: echo +memory > /sys/fs/cgroup/lab/cgroup.subtree_control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, fix := explainNoMemory(tt.base, tt.avail, tt.foreign, tt.enableErr, tt.onV1)
			if diff := cmp.Diff(tt.wantReason, reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFix, fix); diff != "" {
				t.Errorf("fix (-want +got):\n%s", diff)
			}
		})
	}
}

// Release gives the base back only where this start moved the daemon out
// of it and turned controllers on: a daemon systemd started in its leaf
// (DelegateSubgroup=) leaves them for the next one.
func TestReleaseOnlyWhatThisStartDid(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/cgroup.subtree_control"
	for _, tt := range []struct {
		name string
		d    Delegation
		want string
	}{
		{"moved and turned on: off in reverse order", Delegation{Base: dir, Moved: true, Enabled: []string{"memory", "pids"}}, "-pids -memory"},
		{"started in its leaf", Delegation{Base: dir, Enabled: []string{"memory"}}, ""},
		{"moved, nothing turned on", Delegation{Base: dir, Moved: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tt.d.Release(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(file)
			if string(b) != tt.want {
				t.Errorf("wrote %q, want %q", b, tt.want)
			}
		})
	}
}
