// Command gpucheck runs the GPU inventory against the real NVIDIA driver
// and prints what it sees: for machines that have a GPU, where the tests
// (which never need one) cannot go.
//
//	go run ./internal/gpu/gpucheck [-types a100,h100] [-samples 20]
//
// It samples, picks the freest GPU as a placement would, and then runs a
// real job there: a command that holds GPU memory (-job; by default a
// PyTorch one-liner when python3 can import torch), started with the
// placement's CUDA_VISIBLE_DEVICES. It checks that NVML sees the job's
// process on the GPU it was placed on (CUDA's numbering and the
// inventory's agree), kills it, and times the release confirmation. Last,
// it times a sample. It exits 0 when all of that went right (or no job
// could be run, which it says), 1 when NVML works but nothing can be
// offered, the node would be drained, or the job check failed, 2 when
// there are no GPUs at all.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
)

func main() {
	types := flag.String("types", "", "configured short GPU types, comma-separated (e.g. a100)")
	samples := flag.Int("samples", 20, "samples to time")
	job := flag.String("job", "", "a shell command that holds GPU memory for a minute (default: a PyTorch one-liner when torch is installed; \"none\" to skip)")
	flag.Parse()
	cmd := *job
	if cmd == "" && exec.Command("python3", "-c", "import torch").Run() == nil {
		cmd = torchJob
	}
	os.Exit(run(os.Stdout, *types, *samples, cmd))
}

// torchJob holds 1 GiB on the one GPU it sees for a minute.
const torchJob = `python3 -c 'import torch, time; x = torch.ones(1 << 28, device="cuda"); torch.cuda.synchronize(); time.sleep(60)'`

func run(w io.Writer, types string, samples int, jobCmd string) int {
	var opts gpu.Options
	if types != "" {
		opts.Types = strings.Split(types, ",")
	}
	inv := gpu.FromNVML(nvml.New(), opts)
	defer inv.Close()

	snap := inv.Sample(time.Now(), nil)
	fmt.Fprintf(w, "mode:     %s\ncomment:  %s\n", snap.Mode, snap.Comment)
	if snap.Driver != "" {
		fmt.Fprintf(w, "driver:   %s\n", snap.Driver)
	}
	if snap.NodeDrain != "" {
		fmt.Fprintf(w, "DRAIN:    the node would be drained: %s\n", snap.NodeDrain)
	}
	for _, warn := range snap.Warnings {
		fmt.Fprintf(w, "warning:  %s\n", warn)
	}
	if len(snap.GPUs) == 0 {
		if snap.NodeDrain != "" {
			return 1
		}
		return 2
	}
	fmt.Fprintf(w, "Gres:     %s\n\n", gpu.Gres(snap.GPUs))
	table(w, snap)

	freest, ok := pickFreest(snap.GPUs)
	if !ok {
		fmt.Fprintln(w, "\nplacement: no GPU can be offered")
		return 1
	}
	fmt.Fprintf(w, "\nplacement: the freest GPU is %d (%s), %s free; a job there gets %s\n",
		freest.Index, freest.UUID, gib(freest.MemoryFree), strings.Join(gpu.CUDAEnv([]int{freest.Index}), " "))

	code := 0
	if jobCmd == "" || jobCmd == "none" {
		fmt.Fprintln(w, "job:      skipped (no -job command, and python3 cannot import torch)")
	} else if !realJob(w, inv, freest, jobCmd, nil) {
		code = 1
	}

	if samples > 0 {
		start := time.Now()
		for range samples {
			inv.Sample(time.Now(), nil)
		}
		fmt.Fprintf(w, "cost:     %v per sample (mean of %d, %d GPUs, real NVML)\n",
			time.Since(start)/time.Duration(samples), samples, len(snap.GPUs))
	}
	return code
}

// realJob runs cmd as a job placed on g, as the daemon would start it, and
// reports whether NVML saw it there (and nowhere else) and confirmed the
// release once it was killed. started, when not nil, is told the job's pid
// (tests put it on a mock GPU).
func realJob(w io.Writer, inv *gpu.Inventory, g gpu.GPU, cmd string, started func(pid int)) bool {
	c := exec.Command("sh", "-c", "exec "+cmd)
	c.Env = append(os.Environ(), gpu.CUDAEnv([]int{g.Index})...)
	// The job's own output goes straight to ours: sharing w would race
	// with the report (exec copies into w from a goroutine).
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintf(w, "job:      FAIL: starting %q: %v\n", cmd, err)
		return false
	}
	if started != nil {
		started(c.Process.Pid)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	kill := func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	defer kill()
	job := gpu.Job{ID: "gpucheck", PIDs: []int{c.Process.Pid}, GPUs: []string{g.UUID}}
	fmt.Fprintf(w, "job:      pid %d started with %s\n", c.Process.Pid, strings.Join(gpu.CUDAEnv([]int{g.Index}), " "))

	var seen gpu.JobSample
	deadline := time.Now().Add(90 * time.Second)
	for {
		snap := inv.Sample(time.Now(), []gpu.Job{job})
		if js := snap.Jobs[job.ID]; js.Total() > 0 {
			seen = js
			break
		}
		select {
		case <-exited:
			fmt.Fprintf(w, "job:      FAIL: the job exited before NVML saw it on a GPU\n")
			return false
		default:
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(w, "job:      FAIL: NVML did not show the job on any GPU within 90s\n")
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
	ok := true
	for uuid, mem := range seen.Memory {
		where := "the GPU it was placed on"
		if uuid != g.UUID {
			where, ok = "ANOTHER GPU: CUDA's numbering and the inventory's disagree", false
		}
		fmt.Fprintf(w, "job:      NVML shows it holding %s on %s (%s)\n", gib(mem), uuid, where)
	}

	kill()
	<-exited
	ended := time.Now()
	job.Ended = ended
	for {
		rel := inv.Sample(time.Now(), []gpu.Job{job}).Releases[job.ID]
		if rel.Released {
			fmt.Fprintf(w, "release:  confirmed %v after the job was killed\n", time.Since(ended).Round(time.Millisecond))
			break
		}
		if len(rel.Drained) > 0 {
			fmt.Fprintf(w, "release:  FAIL: the GPU was drained, its memory not back (survivors %v)\n", rel.Survivors)
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return ok
}

func table(w io.Writer, snap gpu.Snapshot) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IDX\tNVML\tUUID\tPCI\tMODEL\tTYPE\tTOTAL\tUSED\tFREE\tFOREIGN\tUTIL\tSTATE\tPEERS")
	for _, g := range snap.GPUs {
		state := string(g.State)
		if g.Reason != "" {
			state += " (" + g.Reason + ")"
		}
		util := "n/a"
		if g.Utilization >= 0 {
			util = fmt.Sprintf("%d%%", g.Utilization)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n",
			g.Index, g.NVMLIndex, g.UUID, g.PCIBusID, g.Model, g.Type,
			gib(g.MemoryTotal), gib(g.MemoryUsed), gib(g.MemoryFree), gib(g.Foreign), util, state, len(g.Peers))
	}
	tw.Flush()
	for _, g := range snap.GPUs {
		for _, p := range g.Processes {
			who := "foreign"
			if p.JobID != "" {
				who = "job " + p.JobID
			}
			fmt.Fprintf(w, "  GPU %d: pid %d user %q %s (%s)\n", g.Index, p.PID, p.User, gib(p.Memory), who)
		}
	}
}

// pickFreest is a placement in miniature: among the GPUs that may be
// offered, the one with the most free memory (the lowest index on a tie).
func pickFreest(gpus []gpu.GPU) (gpu.GPU, bool) {
	var best gpu.GPU
	found := false
	for _, g := range gpus {
		if g.Offered() && (!found || g.MemoryFree > best.MemoryFree) {
			best, found = g, true
		}
	}
	return best, found
}

func gib(b uint64) string { return fmt.Sprintf("%.1fG", float64(b)/(1<<30)) }
