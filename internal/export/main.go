package export

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	realclock "github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// description is the long help of `slurmd-lite export --help`.
const description = `Writes slurm.conf, gres.conf, cgroup.conf and sacctmgr.sh into DIR: the
configuration that reproduces this machine's partitions, GPUs, shards,
weights, preemption, QOS limits and shares on real Slurm. Where the
configuration uses them, also job_submit.lua ([[Route]]s), prometheus.yml
(/metrics), jobmap-prolog.sh and jobmap-epilog.sh (JobMappingDir), and
strigger.sh with webhook.sh (the webhooks' drains). The top of slurm.conf
lists what real Slurm does not have, what it does instead and what a lab
loses. docs/migrate.md walks through the move. The configuration read is
slurmd-lite's -f (default: $SLURM_LITE_CONF, else
/etc/slurm-lite/slurm-lite.toml, else built-in defaults).`

// Flags are `slurmd-lite export`'s options. internal/slurmdcmd reads them
// with kong (the tags are kong's; this package does not link it), and
// passes slurmd-lite's own -f as the configuration.
type Flags struct {
	Dir        string `help:"Where to write the files (made if missing)." default:"." placeholder:"DIR"`
	AutoDetect bool   `name:"autodetect" help:"gres.conf says AutoDetect=nvml instead of one File= line per GPU (for a Slurm built with NVML)."`
	Nodes      string `help:"Write the node as a template for several identical machines, e.g. gpu[01-04] (default: this node's name)." placeholder:"HOSTLIST"`
	Controller string `help:"The host running slurmctld and slurmdbd (default: the first node)." placeholder:"HOST"`
	Force      bool   `help:"Replace files of these names that exist in DIR."`
}

// Help is the long description kong prints above the options.
func (Flags) Help() string { return description }

// Unexpected is the error of an argument given without an option: most
// likely the output directory, which --dir names. slurmd-lite's command
// line says it in place of kong's plain "unexpected argument" (export
// takes no positional argument, so that --help shows none).
func Unexpected(arg string) string {
	return fmt.Sprintf("slurmd-lite export: unexpected argument %q: the output directory is given with --dir (see slurmd-lite export --help)", arg)
}

// options are what run needs: the flags and the configuration's path.
type options struct {
	config, dir, nodes, controller string
	autodetect, force              bool
}

// Command is `slurmd-lite export` with its options read; config is the
// configuration file ("" to look where the daemon looks).
func Command(f Flags, config string, stdout, stderr io.Writer) int {
	if f.Dir == "" {
		fmt.Fprintln(stderr, "slurmd-lite export: --dir needs a directory")
		return 2
	}
	names, err := run(options{config: config, dir: f.Dir, nodes: f.Nodes, controller: f.Controller,
		autodetect: f.AutoDetect, force: f.Force})
	if err != nil {
		fmt.Fprintf(stderr, "slurmd-lite export: %v\n", err)
		return 1
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return 0
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
	in := Input{
		ConfigPath: path, GPUs: gpus, GPUNote: note,
		Nodes: o.nodes, Controller: o.controller, AutoDetect: o.autodetect,
	}
	if !cfg.HasAccounts() || cfg.AllowUnlistedUsers {
		in.ImplicitUsers, in.ImplicitKnown = implicitUsers(cfg)
	}
	in.Reservations = daemonReservations(cfg)
	files, err := Generate(cfg, in)
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
	snap := inv.Sample(realclock.Real{}.Now(), nil) // the sample's time is not written
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

// implicitUsers asks the running daemon which users hold the implicit
// account's association (those it has seen); ok is false when no daemon
// answers at the configuration's socket within a few seconds.
func implicitUsers(cfg *config.Config) (users []string, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var ac api.Config
	if err := sockclient.New(cfg.SocketPath).Do(ctx, "GET", api.PathConfig, nil, &ac); err != nil {
		return nil, false
	}
	return ac.ImplicitUsers, true
}

// daemonReservations asks the running daemon for its advance reservations;
// none when no daemon answers within a few seconds (they live in its
// state, not in the configuration).
func daemonReservations(cfg *config.Config) []api.Reservation {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var all api.Reservations
	if err := sockclient.New(cfg.SocketPath).Do(ctx, "GET", api.PathReservations, nil, &all); err != nil {
		return nil
	}
	return all.List
}
