package scontrol

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
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
			if _, err := slurmtime.ParseSize(val, slurmtime.MiB); err != nil {
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
	if err := s.client.Do(ctx, "POST", api.PathYield, y, &out); err != nil {
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	fmt.Fprintln(s.sio.Stdout, yieldReport(out))
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
		fmt.Fprintf(&b, " GpuMem=%s", slurmtime.FormatSize(slurmtime.Bytes(y.GPUMem)))
	}
	return b.String()
}

func withWords(next string) string {
	if next == "" {
		return ""
	}
	return " with" + next
}
