package scontrol

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// yieldTimeout bounds how long scontrol waits for a yield: the job's grace
// time, its processes' end and the GPUs' release.
const yieldTimeout = 30 * time.Minute

// yield is `scontrol yield JOBID|Gpu=INDEX [BatchSize=N] [Gpus=N]
// [GpuMem=SIZE] [Grace=SECS] [NoWait]`: checkpoint, stop, give the GPUs
// away, requeue; it prints what happened.
func (s *scontrolArgs) yield(argv []string) {
	var y api.Yield
	for _, arg := range argv[1:] {
		key, val, hasVal := strings.Cut(arg, "=")
		switch {
		case arg == "--no-wait" || arg == "NoWait":
			y.NoWait = true
		case !hasVal && y.Job == "" && y.GPU == "":
			y.Job = arg
		case strings.EqualFold(key, "JobId") || strings.EqualFold(key, "Job"):
			y.Job = val
		case strings.EqualFold(key, "Gpu"):
			y.GPU = val
		case strings.EqualFold(key, "BatchSize"), strings.EqualFold(key, "Gpus"), strings.EqualFold(key, "Grace"):
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				s.fail("Invalid %s value: %s (a whole number)", key, val)
				return
			}
			switch {
			case strings.EqualFold(key, "BatchSize"):
				y.BatchSize = &n
			case strings.EqualFold(key, "Gpus"):
				y.GPUs = &n
			default:
				y.Grace = &n
			}
		case strings.EqualFold(key, "GpuMem"):
			if _, err := slurmsyntax.ParseSize(val, slurmsyntax.MiB); err != nil {
				s.fail("Invalid GpuMem value: %s (a size such as 16G)", val)
				return
			}
			y.GPUMem = val
		default:
			s.fail("Invalid yield argument: %s (use JOBID or Gpu=INDEX, then BatchSize=N Gpus=N GpuMem=SIZE Grace=SECS NoWait)", arg)
			return
		}
	}
	if y.Job == "" && y.GPU == "" {
		s.fail("yield needs a job id or Gpu=INDEX: scontrol yield JOBID [BatchSize=N] [Gpus=N] [GpuMem=SIZE] [Grace=SECS] [NoWait]")
		return
	}
	if !s.connect() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), yieldTimeout)
	defer cancel()
	var out api.Yielded
	progress := !y.NoWait && s.sio.IsTerminal(s.sio.Stdout)
	var shown int
	if progress {
		// A person watches: say what the daemon is doing while the yield
		// waits (the grace time may be minutes), one line per step.
		done := make(chan error, 1)
		go func() { done <- s.client.Do(ctx, "POST", api.PathYield, y, &out) }()
		shown = s.pollYield(ctx, y, done)
		if err := <-done; err != nil {
			s.exit = cli.DaemonError("scontrol", err, s.sio)
			return
		}
	} else if err := s.client.Do(ctx, "POST", api.PathYield, y, &out); err != nil {
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	if progress {
		// Steps too quick for the polls are told now, so a terminal always
		// sees every step, in order.
		for _, st := range out.Steps[min(shown, len(out.Steps)):] {
			fmt.Fprintln(s.sio.Stdout, stepLine(st))
		}
	}
	fmt.Fprintln(s.sio.Stdout, yieldReport(out))
}

// yieldPoll is how often a terminal's scontrol yield asks how far the
// yield has come.
const yieldPoll = 250 * time.Millisecond

// pollYield prints the steps of the yield in progress as the daemon
// takes them, until done (the yield's answer) has come; it puts the answer
// back for the caller and returns how many steps it printed. A failed
// poll prints nothing: the answer says what went wrong.
func (s *scontrolArgs) pollYield(ctx context.Context, y api.Yield, done chan error) int {
	q := url.Values{}
	if y.Job != "" {
		q.Set("job", y.Job)
	} else {
		q.Set("gpu", y.GPU)
	}
	shown := 0
	tick := time.NewTicker(yieldPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			done <- err
			return shown
		case <-tick.C:
		}
		var steps []api.YieldStep
		if err := s.client.Do(ctx, "GET", api.PathYieldSteps+"?"+q.Encode(), nil, &steps); err != nil {
			continue
		}
		for _, st := range steps[min(shown, len(steps)):] {
			fmt.Fprintln(s.sio.Stdout, stepLine(st))
		}
		shown = max(shown, len(steps))
	}
}

// stepLine is a terminal's line for one step of a yield.
func stepLine(st api.YieldStep) string {
	switch st.Step {
	case "signalled":
		return fmt.Sprintf("Job %d: sent %s, waiting for its checkpoint (grace %ds)...", st.JobID, st.Signal, st.GraceSeconds)
	case "stopped":
		took := time.Duration(st.Seconds * float64(time.Second)).Round(time.Second)
		if !st.Clean {
			return fmt.Sprintf("Job %d: killed after its grace time (%s); waiting for its GPUs to be released...", st.JobID, took)
		}
		return fmt.Sprintf("Job %d: exited after %s; waiting for its GPUs to be released...", st.JobID, took)
	}
	return fmt.Sprintf("Job %d: %s...", st.JobID, st.Step)
}

func (s *scontrolArgs) fail(format string, a ...any) {
	s.exit = 1
	fmt.Fprintf(s.sio.Stderr, "scontrol: error: "+format+"\n", a...)
}

// yieldReport is the one line scontrol prints for a yield:
// "Job 42 yielded 2 GPUs (0,1) in 14s, exited cleanly; requeued with
// BatchSize=16 Gpus=1; yielded for job 57" (the job its GPUs go to).
func yieldReport(y api.Yielded) string {
	next := requestWords(y)
	if y.Pending {
		if next == "" {
			return fmt.Sprintf("Job %d is pending; its request is unchanged", y.JobID)
		}
		return fmt.Sprintf("Job %d is pending; it will run with%s", y.JobID, next)
	}
	gpus := make([]string, len(y.GPUs))
	for i, g := range y.GPUs {
		gpus[i] = strconv.Itoa(g)
	}
	noun := "GPUs"
	if len(y.GPUs) == 1 {
		noun = "GPU"
	}
	held := fmt.Sprintf("%d %s (%s)", len(y.GPUs), noun, strings.Join(gpus, ","))
	if len(y.GPUs) == 0 {
		held = "no GPUs"
	}
	forJob := ""
	if y.For != 0 {
		forJob = fmt.Sprintf(" for job %d", y.For)
	}
	if !y.Waited {
		line := fmt.Sprintf("Job %d is yielding %s; it will be requeued%s", y.JobID, held, withWords(next))
		if forJob != "" {
			line += "; yielded" + forJob
		}
		return line
	}
	if y.Ended != "" {
		return fmt.Sprintf("Job %d had already ended (%s) when the yield reached it: it was not requeued; it held %s", y.JobID, y.Ended, held)
	}
	how := "exited cleanly"
	if !y.Clean {
		how = "did not exit on its own and was killed: progress since its last checkpoint is lost"
	}
	line := fmt.Sprintf("Job %d yielded %s in %s, %s; requeued%s", y.JobID, held,
		time.Duration(y.StopSeconds*float64(time.Second)).Round(time.Second), how, withWords(next))
	if forJob != "" {
		line += "; yielded" + forJob
	}
	if !y.Released {
		line += " (GPU memory not confirmed free yet)"
	}
	return line
}

func requestWords(y api.Yielded) string {
	var b strings.Builder
	if y.BatchSize > 0 {
		fmt.Fprintf(&b, " BatchSize=%d", y.BatchSize)
	}
	if y.NumGPUs > 0 {
		fmt.Fprintf(&b, " Gpus=%d", y.NumGPUs)
	}
	if y.GPUMem > 0 {
		fmt.Fprintf(&b, " GpuMem=%s", slurmsyntax.FormatSize(slurmsyntax.Bytes(y.GPUMem)))
	}
	return b.String()
}

func withWords(next string) string {
	if next == "" {
		return ""
	}
	return " with" + next
}
