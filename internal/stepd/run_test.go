package stepd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestRunExitCode(t *testing.T) {
	tests := []struct {
		name   string
		script string
		state  slurm.JobState
		exit   string
	}{
		{"a script that exits 0 completes", "#!/bin/sh\necho hello\n", slurm.Completed, "0:0"},
		{"a script that exits 3 fails with 3:0", "#!/bin/sh\necho hello\nexit 3\n", slurm.Failed, "3:0"},
		{"a script killed by a signal fails with 0:SIG", "#!/bin/sh\necho hello\nkill -SEGV $$\n", slurm.Failed, "0:11"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, tc.script).start()
			st := j.wait()
			got := []string{string(st.State), st.ExitCode, string(st.Batch.State), st.Batch.ExitCode, j.out()}
			want := []string{string(tc.state), tc.exit, string(tc.state), tc.exit, "hello\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state, exit code, batch state, batch exit, output (-want +got):\n%s\nlog:\n%s", diff, j.log())
			}
			if !strings.Contains(j.log(), "process tracking") {
				t.Errorf("log does not say which process tracking is used:\n%s", j.log())
			}
		})
	}
}
