package e2e

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
	"github.com/slurm-lite/slurm-lite/internal/sreport"
)

// helpIO runs a command in-process with no environment and no daemon:
// --help, --usage and --version must need neither.
func helpIO() (cli.IO, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return cli.IO{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv:   func(string) (string, bool) { return "", false },
		Now:      func() time.Time { return time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC) },
		ReadFile: os.ReadFile,
	}, &out, &errb
}

// TestHelpUsageVersion: each command's --help exits 0 with its help on
// stdout, --usage prints Slurm's "Usage:" line (scontrol's --usage is its
// help, as in Slurm), and --version prints the Slurm release followed.
func TestHelpUsageVersion(t *testing.T) {
	commands := []struct {
		name string
		run  func([]string, cli.IO) int
		// helpStart is how Slurm's help begins; usageIsHelp: --usage
		// prints the help.
		helpStart   string
		usageIsHelp bool
	}{
		{name: "sbatch", run: sbatch.Main, helpStart: "Usage: sbatch [OPTIONS(0)...]"},
		{name: "squeue", run: squeue.Main, helpStart: "Usage: squeue [OPTIONS]"},
		{name: "scancel", run: scancel.Main, helpStart: "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]"},
		{name: "sacct", run: sacct.Main, helpStart: "sacct [<OPTION>]"},
		{name: "scontrol", run: scontrol.Main, helpStart: "scontrol [<OPTION>] [<COMMAND>]", usageIsHelp: true},
		{name: "sreport", run: sreport.Main, helpStart: "sreport [<OPTION>] [<COMMAND>]", usageIsHelp: true},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			sio, out, errb := helpIO()
			if code := c.run([]string{"--help"}, sio); code != 0 || errb.Len() > 0 {
				t.Fatalf("--help: exit %d, stderr %q", code, errb)
			}
			help := out.String()
			if !strings.HasPrefix(help, c.helpStart) {
				t.Errorf("--help begins %q, want %q", firstLine(help), c.helpStart)
			}

			sio, out, errb = helpIO()
			if code := c.run([]string{"--usage"}, sio); code != 0 || errb.Len() > 0 {
				t.Fatalf("--usage: exit %d, stderr %q", code, errb)
			}
			switch usage := out.String(); {
			case c.usageIsHelp:
				if diff := cmp.Diff(help, usage); diff != "" {
					t.Errorf("--usage differs from --help (-help +usage):\n%s", diff)
				}
			case !strings.HasPrefix(usage, "Usage: "+c.name+" "):
				t.Errorf("--usage begins %q, want %q", firstLine(usage), "Usage: "+c.name+" ")
			case len(usage) >= len(help):
				t.Errorf("--usage (%d bytes) is not briefer than --help (%d bytes)", len(usage), len(help))
			}

			sio, out, _ = helpIO()
			if code := c.run([]string{"--version"}, sio); code != 0 {
				t.Fatalf("--version: exit %d", code)
			}
			if diff := cmp.Diff("slurm 22.05.8\n", out.String()); diff != "" {
				t.Errorf("--version (-want +got):\n%s", diff)
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestSbatchHelpOptionsParse: every long option sbatch's help names is
// one sbatch takes, slurm-lite's own included.
func TestSbatchHelpOptionsParse(t *testing.T) {
	names := clitest.LongOptions(sbatch.HelpText)
	for _, want := range []string{"gpu-mem", "yieldable", "batch-size"} {
		if !slices.Contains(names, want) {
			t.Errorf("sbatch --help does not name slurm-lite's --%s", want)
		}
	}
	for _, name := range names {
		if !sbatchTakes(name) {
			t.Errorf("sbatch --help names --%s, which sbatch does not take", name)
		}
	}
}

// sbatchTakes reports whether sbatch's parser knows --name (with or
// without a value).
func sbatchTakes(name string) bool {
	_, err := jobscript.ParseCommandLine([]string{"--" + name, "1", "script.sh"})
	return err == nil || !strings.Contains(err.Error(), "unrecognized option")
}
