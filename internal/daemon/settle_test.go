package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A stop that reaches a job after its script ended by itself (the
// supervisor then sets no ending) leaves the job's own end: a job that
// completed is COMPLETED with its exit code, not requeued to run again,
// and a waiting scontrol yield hears how it ended. Seen live when a pass
// yielded a job in the milliseconds between its last line and the
// daemon hearing of its end.
func TestAStopThatCameTooLateLeavesTheJobsOwnEnd(t *testing.T) {
	for _, after := range []stopKind{stopYield, stopRequeue, stopPreempt} {
		t.Run(after.String(), func(t *testing.T) {
			d := drainDaemon(t, t.TempDir())
			d.gpuUse, d.releasing = map[uint32]gpu.Usage{}, map[uint32]gpu.Job{}
			ctx := context.Background()
			req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"), Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now().Add(-time.Minute)
			ids, err := d.st.Submit(ctx, []store.NewJob{{Job: store.Job{User: "root", Account: "lab", Partition: "gpu",
				Name: "late", Request: *req, Requeue: true, State: slurm.Running, Start: start}, Script: "#!/bin/sh\ntrue\n"}})
			if err != nil {
				t.Fatal(err)
			}
			j, err := d.st.Job(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			plan := &yieldPlan{done: make(chan stepd.Status, 1)}
			in := stopIntent{kind: after}
			if after == stopYield {
				in.yield = plan
			}
			st := stepd.Status{JobID: j.ID, State: slurm.Completed, ExitCode: "0:0", Start: start, End: time.Now()}
			if err := d.settle(ctx, j, st, in); err != nil {
				t.Fatal(err)
			}
			got, err := d.st.Job(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != slurm.Completed || got.Restarts != 0 || got.ExitCode.String() != "0:0" {
				t.Errorf("after a %s that came too late the job is %s (exit %s, %d restarts); want COMPLETED 0:0, never requeued",
					after, got.State, got.ExitCode, got.Restarts)
			}
			if after != stopYield {
				return
			}
			select {
			case heard := <-plan.done:
				if heard.State != slurm.Completed {
					t.Errorf("scontrol yield heard %s, want COMPLETED", heard.State)
				}
			default:
				t.Error("a waiting scontrol yield heard nothing")
			}
		})
	}
}
