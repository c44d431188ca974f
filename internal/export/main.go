package export

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
)

const usage = `Usage: slurmd-lite export [-f CONFIG] [--dir DIR] [--autodetect]
                          [--nodes HOSTLIST] [--controller HOST] [--force]

Writes slurm.conf, gres.conf, cgroup.conf and sacctmgr.sh into DIR: the
configuration that reproduces this machine's partitions, GPUs, shards,
weights, preemption, QOS limits and shares on real Slurm. The top of
slurm.conf lists what real Slurm does not have and what it does instead.
docs/migrate.md walks through the move.

Options:
  -f CONFIG          the configuration (default: $SLURM_LITE_CONF, else
                     /etc/slurm-lite/slurm-lite.toml, else built-in defaults)
  --dir DIR          where to write the files (default: the current directory;
                     made if missing)
  --autodetect       gres.conf says AutoDetect=nvml instead of one File= line
                     per GPU (for a Slurm built with NVML)
  --nodes HOSTLIST   write the node as a template for several identical
                     machines, e.g. gpu[01-04] (default: this node's name)
  --controller HOST  the host running slurmctld and slurmdbd (default: the
                     first node)
  --force            replace files of these names that exist in DIR
`

// options are the command line's.
type options struct {
	config, dir, nodes, controller string
	autodetect, force              bool
}

// Main is `slurmd-lite export`.
func Main(args []string, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "slurmd-lite export: %v\n", err)
		return 2
	}
	names, err := run(opts)
	if err != nil {
		fmt.Fprintf(stderr, "slurmd-lite export: %v\n", err)
		return 1
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return 0
}

func parseArgs(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.config, "f", "", "")
	fs.StringVar(&o.dir, "dir", ".", "")
	fs.StringVar(&o.nodes, "nodes", "", "")
	fs.StringVar(&o.controller, "controller", "", "")
	fs.BoolVar(&o.autodetect, "autodetect", false, "")
	fs.BoolVar(&o.force, "force", false, "")
	help := false
	fs.BoolVar(&help, "h", false, "")
	fs.BoolVar(&help, "help", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%v (see slurmd-lite export --help)", err)
	}
	if help {
		return o, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: the output directory is given with --dir (see slurmd-lite export --help)", fs.Arg(0))
	}
	if o.dir == "" {
		return o, fmt.Errorf("--dir needs a directory")
	}
	return o, nil
}

// run loads the configuration as the daemon does, reads the GPUs, and
// writes the files; it returns the paths written.
func run(o options) ([]string, error) {
	cfg, path, err := config.Find(o.config)
	if err != nil {
		return nil, err
	}
	host, err := config.DetectHost()
	if err != nil {
		return nil, fmt.Errorf("reading this machine's CPUs and memory: %w", err)
	}
	cfg.ApplyHost(host)
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	gpus, note, err := machineGPUs(cfg)
	if err != nil {
		return nil, err
	}
	files, err := Generate(cfg, Input{
		ConfigPath: path, GPUs: gpus, GPUNote: note,
		Nodes: o.nodes, Controller: o.controller, AutoDetect: o.autodetect,
	})
	if err != nil {
		return nil, err
	}
	return writeFiles(o.dir, files, o.force)
}

// machineGPUs reads the GPUs the configuration names, through the same
// inventory the daemon uses (so types are named alike): the simulated list,
// or one NVML sample. Without a driver that is no GPUs and a note saying why.
func machineGPUs(cfg *config.Config) ([]GPU, string, error) {
	opts := gpu.Options{Types: cfg.Node.ShortGPUTypes()}
	var inv *gpu.Inventory
	switch cfg.Node.GPUs {
	case config.GPUsNone:
		return nil, "GPUs = \"none\" in the configuration: no GPUs", nil
	case config.GPUsSimulated:
		var sims []gpu.SimGPU
		for _, g := range cfg.Node.SimulatedGPUs {
			sims = append(sims, gpu.SimGPU{Type: g.Type, Memory: uint64(g.Memory), Count: g.Count})
		}
		var err error
		if inv, err = gpu.Simulated(sims, opts); err != nil {
			return nil, "", err
		}
	default:
		inv = gpu.FromDriver(opts)
	}
	defer inv.Close()
	snap := inv.Sample(time.Now(), nil)
	return fromSnapshot(snap), snap.Comment, nil
}

// fromSnapshot keeps the GPUs present, in the snapshot's (PCI bus) order.
// The device file of a GPU is /dev/nvidiaN with N its NVML index, which is
// its minor number on ordinary machines.
func fromSnapshot(s gpu.Snapshot) []GPU {
	var out []GPU
	for _, g := range s.GPUs {
		if g.Index < 0 || g.NVMLIndex < 0 {
			continue
		}
		out = append(out, GPU{Type: g.Type, Memory: g.MemoryTotal, Minor: g.NVMLIndex})
	}
	return out
}
