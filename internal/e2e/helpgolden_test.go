package e2e

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
	"github.com/slurm-lite/slurm-lite/internal/sacctmgr"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/sinfo"
	"github.com/slurm-lite/slurm-lite/internal/sprio"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
	"github.com/slurm-lite/slurm-lite/internal/srun"
	"github.com/slurm-lite/slurm-lite/internal/sshare"
)

var updateHelp = flag.Bool("update-help", false, "rewrite testdata/help from the commands' output")

// TestHelpGolden: every command's --help and --usage, and scontrol's and
// sacctmgr's "help" command, byte for byte as testdata/help records them:
// Slurm 22.05's text (the recorded goldens hold none: each file was
// checked against Slurm's source, src/<command>/opt.c and the like) and,
// where slurm-lite adds options, fields or commands, its section after
// Slurm's. A change to a help text shows here as a diff to review;
// go test -run TestHelpGolden -update-help rewrites the files.
func TestHelpGolden(t *testing.T) {
	commands := map[string]func([]string, cli.IO) int{
		"sbatch": sbatch.Main, "squeue": squeue.Main, "scancel": scancel.Main,
		"scontrol": scontrol.Main, "sacct": sacct.Main, "sinfo": sinfo.Main,
		"sshare": sshare.Main, "sprio": sprio.Main, "sacctmgr": sacctmgr.Main,
		"srun": srun.Main, "salloc": srun.Salloc,
	}
	runs := []struct {
		file string
		cmd  string
		args []string
	}{
		{"scontrol_help_command.txt", "scontrol", []string{"help"}},
		{"sacctmgr_help_command.txt", "sacctmgr", []string{"help"}},
	}
	for name := range commands {
		runs = append(runs,
			struct {
				file string
				cmd  string
				args []string
			}{name + "_help.txt", name, []string{"--help"}},
			struct {
				file string
				cmd  string
				args []string
			}{name + "_usage.txt", name, []string{"--usage"}})
	}
	for _, r := range runs {
		t.Run(r.file, func(t *testing.T) {
			sio, out, errb := helpIO()
			if code := commands[r.cmd](r.args, sio); code != 0 || errb.Len() > 0 {
				t.Fatalf("%s %v: exit %d, stderr %q", r.cmd, r.args, code, errb)
			}
			path := filepath.Join("testdata", "help", r.file)
			if *updateHelp {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestHelpGolden -update-help writes it)", err)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("%s %v differs from %s (-want +got):\n%s", r.cmd, r.args, path, diff)
			}
		})
	}
}
