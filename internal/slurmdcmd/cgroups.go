package slurmdcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// printCgroups is `slurmd-lite config`'s line on job cgroups: where they
// go and whether --mem is enforced, as the running daemon found at its
// start; without a daemon at the configured socket, what one started
// from here would find. Where --mem cannot be enforced, a warning on
// stderr says why and what to do, as the daemon's log does.
func printCgroups(cfg *config.Config, sio cmdio.IO) {
	cg, from := daemonCgroups(cfg.SocketPath)
	if cg == nil {
		d := stepd.ProbeDelegation()
		cg = &api.Cgroups{Base: d.Base, Controllers: d.Controllers, Memory: d.Memory, Problem: d.Problem, Fix: d.Fix}
		from = "for a daemon started here: slurmd-lite is not running"
	}
	var line string
	switch {
	case cg.Base == "":
		line = "none: --mem NOT enforced"
	case cg.Memory:
		line = fmt.Sprintf("%s/job_* with %s: --mem enforced", cg.Base, strings.Join(cg.Controllers, " "))
	default:
		line = fmt.Sprintf("%s/job_* without a memory controller: --mem NOT enforced", cg.Base)
	}
	fmt.Fprintf(sio.Stdout, "Job cgroups    %s (%s)\n", line, from)
	if !cg.Memory {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: warning: --mem, --mem-per-cpu and --mem-per-gpu are not enforced: %s; fix: %s\n", cg.Problem, cg.Fix)
	}
}

// daemonCgroups asks the daemon at socket what it found of cgroups; nil
// when no daemon answers there (or one too old to say).
func daemonCgroups(socket string) (*api.Cgroups, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var conf api.Config
	if err := sockclient.New(socket).Do(ctx, "GET", api.PathConfig, nil, &conf); err != nil || conf.Cgroups == nil {
		return nil, ""
	}
	return conf.Cgroups, "the running daemon's, since its start at " + conf.Boot.Local().Format("2006-01-02T15:04:05")
}
