// Command gpucheck runs the GPU inventory against the real NVIDIA driver
// and prints what it sees: for machines that have a GPU, where the tests
// (which never need one) cannot go.
//
//	go run ./internal/gpu/gpucheck [-types a100,h100] [-samples 20]
//
// It starts nothing and changes nothing: it samples, picks the freest GPU
// as a placement would, asks whether a fake job with no processes has
// released that GPU, and times a sample. It exits 0 when it saw at least
// one usable GPU, 1 when NVML works but nothing can be offered or the node
// would be drained, 2 when there are no GPUs at all.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
)

func main() {
	types := flag.String("types", "", "configured short GPU types, comma-separated (e.g. a100)")
	samples := flag.Int("samples", 20, "samples to time")
	flag.Parse()
	os.Exit(run(os.Stdout, *types, *samples))
}

func run(w io.Writer, types string, samples int) int {
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

	now := time.Now()
	job := gpu.Job{ID: "gpucheck", GPUs: []string{freest.UUID}, Ended: now}
	rel := inv.Sample(now, []gpu.Job{job}).Releases[job.ID]
	fmt.Fprintf(w, "release:  fake job with no processes on GPU %d: released=%v survivors=%v pending=%d drained=%d\n",
		freest.Index, rel.Released, rel.Survivors, len(rel.Pending), len(rel.Drained))

	if samples > 0 {
		start := time.Now()
		for range samples {
			inv.Sample(time.Now(), nil)
		}
		fmt.Fprintf(w, "cost:     %v per sample (mean of %d, %d GPUs, real NVML)\n",
			time.Since(start)/time.Duration(samples), samples, len(snap.GPUs))
	}
	return 0
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
