package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// A requeue that reaches a supervisor whose batch script has just ended by
// itself (its processes still going: the supervisor takes no stop, and
// replies so) is not a requeue, and the caller is not told it is: it hears
// that the job ended while the requeue was being sent, and the job keeps
// its own end. Here a fake supervisor answers so, its status already
// written, as a real one is a moment later.
func TestARequeueTheSupervisorDidNotTakeIsNotSaidToSucceed(t *testing.T) {
	d, conf := raceDaemon(t)
	id := runningJob(t, d, nil)
	dir := d.runDir(id, 0)
	ln, err := net.Listen("unix", filepath.Join(dir, stepd.SocketFile))
	if err != nil {
		t.Skipf("a socket there: %v", err)
	}
	defer ln.Close()
	done := make(chan stepd.Request, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var req stepd.Request
		if json.NewDecoder(c).Decode(&req) != nil {
			return
		}
		final := stepd.Status{JobID: id, State: slurm.Completed, ExitCode: "0:0", Start: time.Now().Add(-time.Minute), End: time.Now()}
		b, _ := json.Marshal(final)
		_ = os.WriteFile(filepath.Join(dir, stepd.StatusFile), b, 0o600)
		// Ending nil: the script had ended; the stop was not taken.
		_ = json.NewEncoder(c).Encode(stepd.Reply{Status: &stepd.Status{JobID: id, State: slurm.Completing}})
		done <- req
	}()
	stderr, code := command(t, conf, scontrol.Main, "requeue", fmt.Sprint(id))
	want := "Job can not be altered now, try again later for job 1\n" +
		"slurm-lite: job 1 ended while the requeue was being sent (COMPLETED 0:0); once its end is recorded, scontrol requeue 1 requeues it as an ended job\n"
	if stderr != want || code != 1 {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", code, stderr, want)
	}
	select {
	case req := <-done:
		if req.Op != stepd.OpCancel || req.Why != stepd.WhyRequeue {
			t.Errorf("the supervisor was asked %+v, want a requeue's cancel", req)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the supervisor was never asked")
	}
	if j, err := d.st.Job(context.Background(), id); err != nil || j.State != slurm.Running || j.Restarts != 0 {
		t.Errorf("job after the request: %s, %d restarts, %v; want RUNNING as it was, for the loop to record its own end", j.State, j.Restarts, err)
	}
}
