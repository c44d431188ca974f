package slurmsyntax

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandPattern(t *testing.T) {
	plain := PatternVars{JobID: 42, ArrayJobID: 42, ArrayTaskID: -1, JobName: "train", User: "alice", Node: "gpu01", StepID: -1}
	task := PatternVars{JobID: 31, ArrayJobID: 26, ArrayTaskID: 5, JobName: "arr", User: "bob", Node: "gpu01", StepID: -1}
	step := PatternVars{JobID: 42, ArrayTaskID: -1, StepID: 3, TaskID: 7, NodeID: 0, Node: "gpu01"}
	tests := []struct {
		name    string
		pattern string
		vars    PatternVars
		want    string
	}{
		{name: "job id", pattern: "slurm-%j.out", vars: plain, want: "slurm-42.out"},
		{name: "name, user, node", pattern: "%x-%u-%N.log", vars: plain, want: "train-alice-gpu01.log"},
		{name: "array job and task", pattern: "slurm-%A_%a.out", vars: task, want: "slurm-26_5.out"},
		{name: "%A is the job id when not an array", pattern: "%A", vars: plain, want: "42"},
		{name: "%a is NO_VAL when not an array", pattern: "slurm-%A_%a.out", vars: plain, want: "slurm-42_4294967294.out"},
		{name: "zero padding", pattern: "out-%4a-%3j", vars: task, want: "out-0005-031"},
		{name: "padding never cuts", pattern: "%1j", vars: plain, want: "42"},
		{name: "padding stops at ten", pattern: "%12j", vars: plain, want: "0000000042"},
		{name: "NO_VAL is wider than its padding", pattern: "%4a", vars: plain, want: "4294967294"},
		{name: "names are never padded", pattern: "%8x", vars: plain, want: "train"},
		{name: "the batch step", pattern: "%s", vars: plain, want: "batch"},
		{name: "%J of the batch step is the job id", pattern: "%J", vars: plain, want: "42"},
		{name: "%J of a step adds the step", pattern: "%J", vars: step, want: "42.3"},
		{name: "a padded step", pattern: "%2s", vars: step, want: "03"},
		{name: "task and node index", pattern: "%t-%n-%3t", vars: step, want: "7-0-007"},
		{name: "a doubled percent is one", pattern: "100%%-%j", vars: plain, want: "100%-42"},
		{name: "three percents", pattern: "%%%j", vars: plain, want: "%42"},
		{name: "an unknown letter stays", pattern: "a%qb", vars: plain, want: "a%qb"},
		{name: "an unknown letter after a width keeps the width's last digit", pattern: "a%12qb", vars: plain, want: "a2qb"},
		{name: "a trailing percent stays", pattern: "out%", vars: plain, want: "out%"},
		{name: "a trailing width keeps its last digit", pattern: "out%12", vars: plain, want: "out2"},
		{name: "a backslash turns expansion off", pattern: `out\%j`, vars: plain, want: "out%j"},
		{name: "a doubled backslash is one", pattern: `a\\b%j`, vars: plain, want: `a\b%j`},
		{name: "no percent", pattern: "/tmp/log.txt", vars: plain, want: "/tmp/log.txt"},
		{name: "a number other than the task is /dev/null", pattern: "3", vars: plain, want: "/dev/null"},
		{name: "the task's own number is a file of that name", pattern: "0", vars: plain, want: "0"},
		{name: "empty", pattern: "", vars: plain, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ExpandPattern(tt.pattern, tt.vars)); diff != "" {
				t.Errorf("ExpandPattern(%q) (-want +got):\n%s", tt.pattern, diff)
			}
		})
	}
}

func TestShowPattern(t *testing.T) {
	meta := PatternVars{JobID: 31, ArrayJobID: 31, ArrayTaskID: -1, JobName: "arr", User: "root"}
	task := PatternVars{JobID: 26384, ArrayJobID: 26383, ArrayTaskID: 0, JobName: "arrenv", User: "root"}
	tests := []struct {
		name    string
		pattern string
		vars    PatternVars
		want    string
	}{
		// scontrol_show_job_array.txt: a pending array shows NO_VAL.
		{name: "a pending array", pattern: "slurm-%A_%a.out", vars: meta, want: "slurm-31_4294967294.out"},
		// scontrol_show_jobid_dd_array_task_running.txt
		{name: "a running task", pattern: "arr-%A_%a.out", vars: task, want: "arr-26383_0.out"},
		{name: "job, user and name", pattern: "%x/%u/%j.log", vars: meta, want: "arr/root/31.log"},
		{name: "no widths", pattern: "%4j", vars: meta, want: "%4j"},
		{name: "no %% or %N", pattern: "%%-%N", vars: meta, want: "%%-%N"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ShowPattern(tt.pattern, tt.vars)); diff != "" {
				t.Errorf("ShowPattern(%q) (-want +got):\n%s", tt.pattern, diff)
			}
		})
	}
}
