// Package slurmdcmd is slurmd-lite's own command line: run the daemon,
// check the configuration, read a job as sbatch would, simulate a trace,
// export to real Slurm, and the job supervisor's entry. It lives apart from
// the Slurm commands (internal/sbatch, internal/squeue, ...) so that they do not link kong, and the
// daemon's machinery (cgo, SQLite, NVML) is wired in by cmd/slurmd-lite.
package slurmdcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/export"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/sim"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// slurmdArgs are slurmd-lite's subcommands. Unlike the Slurm commands, whose
// options must parse exactly as getopt_long parses them, the daemon's command
// line is our own, so kong reads it.
type slurmdArgs struct {
	Config string `short:"f" name:"config-file" help:"Configuration file (default: $SLURM_LITE_CONF, else /etc/slurm-lite/slurm-lite.toml, else built-in defaults)." type:"path"`

	Foreground bool `short:"D" help:"Run in the foreground (the daemon always does; for systemd and habit)."`
	Fresh      bool `xor:"start" help:"Start over where the state database is missing or empty but earlier jobs left traces (job directories, the job id mark): their directories are moved aside and they are forgotten; job ids continue. Refused while their supervisors run."`
	Rebuild    bool `xor:"start" help:"Rebuild a missing or empty state database from the job directories: every job that started is put back (a running one reattached, an ended one with its real exit code); jobs that never started are reported lost, by id. Job ids continue."`

	Run       struct{} `cmd:"" default:"1" help:"Run the daemon."`
	CheckConf struct{} `cmd:"" name:"config" help:"Check the configuration and print what is in force."`
	Parse     struct {
		Brief bool     `help:"One line per job instead of the whole request."`
		Args  []string `arg:"" optional:"" passthrough:"" help:"sbatch's arguments: options, then the script and its arguments."`
	} `cmd:"" help:"Read a job as sbatch would and print the request it makes, as JSON; submit nothing."`

	Simulate sim.Flags    `cmd:"" help:"Replay a workload trace through the scheduling core and compare policies."`
	Export   export.Flags `cmd:"" help:"Write slurm.conf, gres.conf, cgroup.conf and sacctmgr.sh for real Slurm from this configuration (-f)."`
}

// Daemon is what slurmd-lite runs besides its own subcommands: the daemon
// and the job supervisor. They live in packages that need cgo (NVML) and
// the process machinery, which the other commands must not link, so the
// main wires them in.
type Daemon struct {
	// Run runs the daemon with the configuration at path ("" to look);
	// fresh is --fresh, rebuild --rebuild.
	Run func(path string, fresh, rebuild bool) int
	// Stepd is `slurmd-lite stepd ...`, the per-job supervisor.
	Stepd func(args []string) int
	// Live replays a trace on a real daemon (simulate --live): internal/
	// livereplay, which starts one.
	Live sim.LiveRunner
}

// Main is the slurmd-lite command.
func Main(args []string, sio cmdio.IO, dm Daemon) int {
	// The supervisor's arguments are its own, and it must start fast.
	if len(args) > 0 && args[0] == "stepd" && dm.Stepd != nil {
		return dm.Stepd(args[1:])
	}
	var a slurmdArgs
	exit := -1
	parser, err := kong.New(&a,
		kong.Name("slurmd-lite"),
		kong.Description("The slurm-lite daemon: one GPU machine, Slurm's commands."),
		kong.Writers(sio.Stdout, sio.Stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.Vars{"profiles": sim.ProfilesDefault},
	)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: %v\n", err)
		return 1
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help
	}
	if err != nil {
		if arg, ok := exportArgument(err); ok {
			fmt.Fprintln(sio.Stderr, export.Unexpected(arg))
			return 2
		}
		fmt.Fprintf(sio.Stderr, "slurmd-lite: error: %v\n", err)
		return 2
	}
	// The command's first word: kong names positional arguments after it
	// ("parse <args>").
	cmd, _, _ := strings.Cut(kctx.Command(), " ")
	switch cmd {
	case "config":
		return checkConfig(a.Config, sio)
	case "parse":
		return parseJob(a.Parse.Args, a.Parse.Brief, sio)
	case "simulate":
		return sim.Command(a.Simulate, sio.Stdout, sio.Stderr, dm.Live)
	case "export":
		return export.Command(a.Export, a.Config, sio.Stdout, sio.Stderr)
	default:
		if dm.Run == nil {
			fmt.Fprintln(sio.Stderr, "slurmd-lite: error: this build has no daemon")
			return 1
		}
		return dm.Run(a.Config, a.Fresh, a.Rebuild)
	}
}

// exportArgument is the argument of kong's "unexpected argument" error
// when export was the command: a directory given without --dir.
func exportArgument(err error) (string, bool) {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil || pe.Context.Selected() == nil || pe.Context.Selected().Name != "export" {
		return "", false
	}
	return strings.CutPrefix(pe.Error(), "unexpected argument ")
}

// checkConfig loads the configuration as the daemon would and prints a
// summary of what is in force, so an admin can check a file before a restart.
func checkConfig(path string, sio cmdio.IO) int {
	cfg, used, err := config.Find(path)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: error: %v\n", err)
		return 1
	}
	if host, err := config.DetectHost(); err == nil {
		cfg.ApplyHost(host)
	}
	if used == "" {
		used = "(none: built-in defaults)"
	}
	w := sio.Stdout
	fmt.Fprintf(w, "Configuration  %s\n", used)
	fmt.Fprintf(w, "ClusterName    %s\n", cfg.ClusterName)
	fmt.Fprintf(w, "SocketPath     %s\n", cfg.SocketPath)
	fmt.Fprintf(w, "StateSave      %s\n", cfg.StateSaveLocation)
	n := cfg.Node
	fmt.Fprintf(w, "Node           %s CPUs=%d RealMemory=%d GPUs=%s\n", n.NodeName, n.CPUs, n.RealMemory/slurmsyntax.MiB, n.GPUs)
	if n.GPUs == config.GPUsSimulated {
		for _, g := range n.SimulatedGPUs {
			fmt.Fprintf(w, "  simulated    %d x %s %s\n", g.Count, g.Type, slurmsyntax.FormatSize(g.Memory))
		}
	}
	fmt.Fprintf(w, "Scheduling     %s %s %s\n", cfg.SchedulerType, cfg.PriorityType, cfg.PreemptType)
	for _, p := range cfg.Partitions {
		def := ""
		if p.Default {
			def = "*"
		}
		fmt.Fprintf(w, "Partition      %s%s MaxTime=%s DefaultTime=%s PriorityTier=%d PreemptMode=%s\n",
			p.PartitionName, def, slurmsyntax.FormatDuration(p.MaxTime), slurmsyntax.FormatDuration(p.DefaultLimit()),
			p.PriorityTier, p.PreemptMode)
	}
	for _, q := range cfg.QOS {
		fmt.Fprintf(w, "QOS            %s UsageFactor=%g\n", q.Name, q.UsageFactor)
	}
	for _, acct := range cfg.Accounts {
		fmt.Fprintf(w, "Account        %s Parent=%s Shares=%d\n", acct.Name, acct.Parent, acct.Shares)
	}
	if len(cfg.Accounts) == 0 {
		fmt.Fprintln(w, "Account        (none configured: every user shares one account equally)")
	}
	var users []string
	for _, u := range cfg.Users {
		users = append(users, fmt.Sprintf("%s@%s:%d", u.Name, u.Account, u.Shares))
	}
	if len(users) > 0 {
		fmt.Fprintf(w, "Users          %s\n", strings.Join(users, " "))
	}
	printCgroups(cfg, sio)
	return printInForce(cfg, sio)
}

// parseJob prints the request sbatch would make, for a user asking "what
// did my script ask for?" and for the demo.
func parseJob(args []string, brief bool, sio cmdio.IO) int {
	req, code := sbatch.ReadJob("sbatch", args, sio)
	if req == nil {
		return code
	}
	if brief {
		fmt.Fprintln(sio.Stdout, briefRequest(req))
		return 0
	}
	out, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: error: %v\n", err)
		return 1
	}
	fmt.Fprintf(sio.Stdout, "%s\n", out)
	return 0
}

// briefRequest is one line naming what a job asks for, in sbatch's option
// names, leaving out what was not given.
func briefRequest(r *jobscript.Request) string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	name := r.ScriptName
	if name == "" {
		name = "(wrap)"
	}
	b.WriteString(name + ":")
	add("job-name", r.JobName)
	add("partition", r.Partition)
	add("account", r.Account)
	add("gpus", gresList(r.GPUs))
	add("gres", gresList(r.Gres))
	add("gpus-per-node", gresList(r.GPUsPerNode))
	if r.CPUsPerTask > 0 {
		add("cpus-per-task", fmt.Sprint(r.CPUsPerTask))
	}
	if r.NTasksSet {
		add("ntasks", fmt.Sprint(r.NTasks))
	}
	if r.MemPerNode != nil {
		add("mem", fmt.Sprintf("%dM", *r.MemPerNode))
	}
	if r.MemPerCPU != nil {
		add("mem-per-cpu", fmt.Sprintf("%dM", *r.MemPerCPU))
	}
	if r.MemPerGPU != nil {
		add("mem-per-gpu", fmt.Sprintf("%dM", *r.MemPerGPU))
	}
	if r.TimeLimit != 0 {
		add("time", slurmsyntax.FormatDuration(r.TimeLimit.Duration()))
	}
	if r.Array != nil {
		add("array", r.Array.Spec)
	}
	add("output", r.Output)
	if r.GPUMem > 0 {
		add("gpu-mem", slurmsyntax.FormatSize(r.GPUMem))
	}
	if r.Yieldable {
		add("yieldable", "yes")
	}
	return b.String()
}

func gresList(gs []jobscript.Gres) string {
	var parts []string
	for _, g := range gs {
		parts = append(parts, g.String())
	}
	return strings.Join(parts, ",")
}
