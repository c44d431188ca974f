package jobscript

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
)

// slurm2205 is sbatch's option table in Slurm 22.05.8: the rows of
// common_options (src/common/slurm_opt.c) that have a name and a set_func
// or set_func_sbatch, in that array's order, as "name short has_arg".
// (Extracted by reading slurm_opt.c at tag slurm-22-05-8-1; x11 has no name
// in builds without X11 support, Debian's included.)
const slurm2205 = `account A req
acctg-freq - req
array a req
batch - req
begin b req
bb - req
bbf - req
cluster-constraint - req
chdir D req
cluster - req
clusters M req
comment - req
container - req
context - req
contiguous - none
constraint C req
core-spec S req
cores-per-socket - req
cpu-freq - req
cpus-per-gpu - req
cpus-per-task c req
deadline - req
delay-boot - req
dependency d req
distribution m req
error e req
exclude x req
exclusive - opt
export - req
export-file - req
extra-node-info B req
get-user-env - opt
gid - req
gpu-bind - req
gpu-freq - req
gpus G req
gpus-per-node - req
gpus-per-socket - req
gpus-per-task - req
gres - req
gres-flags - req
help h none
hint - req
hold H none
ignore-pbs - none
input i req
job-name J req
kill-on-invalid-dep - req
licenses L req
mail-type - req
mail-user - req
mcs-label - req
mem - req
mem-bind - req
mem-per-cpu - req
mem-per-gpu - req
mincpus - req
network - req
nice - opt
no-kill k opt
no-requeue - none
nodefile F req
nodelist w req
nodes N req
ntasks n req
ntasks-per-core - req
ntasks-per-gpu - req
ntasks-per-node - req
ntasks-per-socket - req
ntasks-per-tres - req
open-mode - req
output o req
overcommit O none
oversubscribe s none
parsable - none
partition p req
power - req
prefer - req
priority - req
profile - req
propagate - opt
qos q req
quiet Q none
reboot - none
requeue - none
reservation - req
signal - req
sockets-per-node - req
spread-job - none
switches - req
tasks-per-node - req
test-only - none
thread-spec - req
threads-per-core - req
time t req
time-min - req
tmp - req
uid - req
use-min-nodes - none
verbose v none
version V none
usage - none
wait W none
wait-all-nodes - req
wckey - req
wrap - req`

func TestTableIsSbatchs(t *testing.T) {
	kind := map[string]getopt.ArgKind{"none": none, "req": req, "opt": opt}
	var want, got []string
	for _, l := range strings.Split(slurm2205, "\n") {
		f := strings.Fields(l)
		short := f[1]
		if short == "-" {
			short = ""
		}
		want = append(want, f[0]+" "+short+" "+kind[f[2]].String())
	}
	if len(want) != 106 {
		t.Fatalf("reference table has %d rows, want 106", len(want))
	}
	for _, d := range options {
		if d.ext || d.cmds&Sbatch == 0 {
			continue
		}
		short := ""
		if d.Short != 0 {
			short = string(rune(d.Short))
		}
		got = append(got, d.Name+" "+short+" "+d.Arg.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sbatch's options (-Slurm 22.05 +ours):\n%s", diff)
	}
}

// samples gives each option a valid value, to check that every option of
// sbatch's table is accepted on the command line and in a script.
var samples = map[string]string{
	"account": "lab", "acctg-freq": "30", "array": "0-3", "batch": "feat", "begin": "now+60",
	"bb": "spec", "bbf": "file", "cluster-constraint": "c", "chdir": "/tmp", "cluster": "anchor",
	"clusters": "anchor", "comment": "x", "container": "/b", "context": "ctx", "constraint": "a100",
	"core-spec": "1", "cores-per-socket": "2", "cpu-freq": "high", "cpus-per-gpu": "4",
	"cpus-per-task": "2", "deadline": "now+3600", "delay-boot": "10", "dependency": "afterok:1",
	"distribution": "block", "error": "e.log", "exclude": "gpu02", "exclusive": "user",
	"export": "ALL", "export-file": "env.txt", "extra-node-info": "1:2:1", "get-user-env": "10L",
	"gid": "lab", "gpu-bind": "closest", "gpu-freq": "high", "gpus": "1", "gpus-per-node": "1",
	"gpus-per-socket": "1", "gpus-per-task": "1", "gres": "gpu:1", "gres-flags": "enforce-binding",
	"hint": "nomultithread", "input": "in.txt", "job-name": "j", "kill-on-invalid-dep": "yes",
	"licenses": "l:1", "mail-type": "ALL", "mail-user": "a@b", "mcs-label": "m", "mem": "1G",
	"mem-bind": "local", "mem-per-cpu": "1G", "mem-per-gpu": "1G", "mincpus": "2", "network": "n",
	"nice": "10", "no-kill": "set", "nodefile": "hosts", "nodelist": "gpu01", "nodes": "1",
	"ntasks": "2", "ntasks-per-core": "1", "ntasks-per-gpu": "1", "ntasks-per-node": "2",
	"ntasks-per-socket": "1", "ntasks-per-tres": "1", "open-mode": "append", "output": "o.log",
	"partition": "gpu", "power": "level", "prefer": "a100", "priority": "10", "profile": "none",
	"propagate": "ALL", "qos": "normal", "reservation": "r", "signal": "USR1@30",
	"sockets-per-node": "1", "switches": "1", "tasks-per-node": "2", "thread-spec": "1",
	"threads-per-core": "1", "time": "10", "time-min": "5", "tmp": "1G", "uid": "alice",
	"wait-all-nodes": "1", "wckey": "w", "wrap": "true",
	"gpu-mem": "10G", "batch-size": "8", "checkpoint-interval": "5:30",
}

func TestEveryOptionIsAccepted(t *testing.T) {
	exits := map[string]bool{"help": true, "usage": true, "version": true}
	// Options that gres_job_state_validate refuses alone, with what they
	// need (each checked against real sbatch 22.05).
	with := map[string]string{
		"mem-per-gpu":     "--gpus=1",
		"gpus-per-socket": "--sockets-per-node=1",
		"gpus-per-task":   "--ntasks=1",
		"ntasks-per-gpu":  "--gpus=1",
		"ntasks-per-tres": "--gpus=1",
	}
	for _, d := range options {
		if d.cmds&Sbatch == 0 {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			arg := "--" + d.Name
			if d.Arg != none {
				v, ok := samples[d.Name]
				if !ok {
					t.Fatalf("no sample value for --%s", d.Name)
				}
				arg += "=" + v
			}
			args := []string{arg, "job.sh"}
			if d.Name == "wrap" {
				args = args[:1]
			}
			if w, ok := with[d.Name]; ok {
				args = append([]string{w}, args...)
			}
			cl, err := ParseCommandLine(args)
			if err != nil {
				t.Fatalf("command line %q: %v", args, err)
			}
			if exits[d.Name] {
				if cl.Action == Submit {
					t.Fatalf("%s: Action = Submit, want it to stop sbatch", arg)
				}
				return
			}
			r, err := Parse(Input{Script: []byte("#!/bin/sh\ntrue\n"), Command: cl, Now: corpusNow})
			if err != nil {
				t.Fatalf("%s on the command line: %v", arg, err)
			}
			plain, _ := ParseCommandLine([]string{"job.sh"})
			if w, ok := with[d.Name]; ok {
				plain, _ = ParseCommandLine([]string{w, "job.sh"})
			}
			base, err := Parse(Input{Script: []byte("#!/bin/sh\ntrue\n"), Command: plain, Now: corpusNow})
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Equal(base, r) && d.Name != "verbose" && d.Name != "quiet" {
				t.Errorf("%s left no trace in the request", arg)
			}
			if d.early {
				return // ignored in a script
			}
			magic := "#SBATCH"
			if d.ext {
				magic = "#SLITE"
			}
			script := "#!/bin/sh\n" + magic + " " + arg + " " + with[d.Name] + "\ntrue\n"
			cl, _ = ParseCommandLine([]string{"job.sh"})
			if _, err := Parse(Input{Script: []byte(script), Command: cl, Now: corpusNow}); err != nil {
				t.Fatalf("%s in a script: %v", arg, err)
			}
		})
	}
}

func TestUnknownOptionsAreRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an srun-only option", []string{"--cpu-bind=cores", "job.sh"}, "sbatch: unrecognized option '--cpu-bind=cores'\n"},
		{"a salloc-only option", []string{"--bell", "job.sh"}, "sbatch: unrecognized option '--bell'\n"},
		{"an env-only option has no name", []string{"--switch-req=1", "job.sh"}, "sbatch: unrecognized option '--switch-req=1'\n"},
		{"an srun-only letter", []string{"-l", "job.sh"}, "sbatch: invalid option -- 'l'\n"},
		{"an abbreviated extension", []string{"--yield", "job.sh"}, "sbatch: unrecognized option '--yield'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCommandLine(tt.args)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseCommandLine(%q) error = %v, want *Error", tt.args, err)
			}
			want := tt.want + "Try \"sbatch --help\" for more information\n"
			if diff := cmp.Diff(want, e.Stderr("sbatch")); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if e.Exit != 255 || e.Kind != KindUsage {
				t.Errorf("Kind, Exit = %v, %d; want KindUsage, 255", e.Kind, e.Exit)
			}
		})
	}
}

// TestEachCommandsTable checks the per-command column: each command's table
// has Slurm 22.05's count of rows (sbatch's 106 and slurm-lite's 4, srun's
// 131, salloc's 95) and no name twice, which getopt could not tell apart.
func TestEachCommandsTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Command
		rows int
	}{{"sbatch", Sbatch, 110}, {"srun", Srun, 131}, {"salloc", Salloc, 95}} {
		tab := Table(tc.c)
		if len(tab) != tc.rows {
			t.Errorf("%s's table has %d rows, want %d", tc.name, len(tab), tc.rows)
		}
		seen := map[string]bool{}
		for _, o := range tab {
			if seen[o.Name] {
				t.Errorf("%s's table has --%s twice", tc.name, o.Name)
			}
			seen[o.Name] = true
		}
	}
}
