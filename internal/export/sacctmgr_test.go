package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// fakeSacctmgr is a sacctmgr that records its arguments, one call a line.
// `show` lists something when $FAKE_EXISTS is set (everything exists), and
// always for `show tres` (slurmctld has registered them); `modify` says
// "Nothing modified" and fails when $FAKE_UNCHANGED is set, as sacctmgr does
// for a value already in place.
const fakeSacctmgr = `#!/bin/bash
echo "$*" >>"$FAKE_LOG"
args=" $* "
if [[ $args == *" show "* ]]; then
	if [[ $args == *" tres "* || -n ${FAKE_EXISTS:-} ]]; then echo x; fi
	exit 0
fi
if [[ $args == *" modify "* && -n ${FAKE_UNCHANGED:-} ]]; then
	echo " Nothing modified"
	exit 1
fi
exit 0
`

// runSacctmgrScript runs the generated sacctmgr.sh against the fake and
// returns the calls that change something (add, modify).
func runSacctmgrScript(t *testing.T, script string, env ...string) ([]string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run sacctmgr.sh with")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "sacctmgr")
	if err := os.WriteFile(fake, []byte(fakeSacctmgr), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "sacctmgr.sh")
	if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log")
	cmd := exec.Command(bash, sh)
	cmd.Env = append(os.Environ(), append(env, "SACCTMGR="+fake, "FAKE_LOG="+log)...)
	out, runErr := cmd.CombinedOutput()
	if runErr != nil {
		t.Logf("sacctmgr.sh said:\n%s", out)
	}
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var changes []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "-i ") {
			changes = append(changes, strings.TrimPrefix(l, "-i "))
		}
	}
	return changes, runErr
}

func TestSacctmgrScript(t *testing.T) {
	cfg := loaded(t, "../../examples/slurm-lite.toml")
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	script := files[Sacctmgr]
	setAll := []string{
		"modify cluster where name=lab set MaxSubmitJobs=5000",
		"modify qos where name=normal set Priority=0 MaxTRESPerUser=gres/gpu=4 MaxTRESPerJob=cpu=32,gres/gpu=4 MaxJobsPerUser=20 MaxSubmitJobsPerUser=100 MaxWall=2-00:00:00 UsageFactor=1 Flags=DenyOnLimit",
		"modify account where name=lab cluster=lab set Parent=root",
		"modify account where name=lab cluster=lab set Fairshare=1",
		"modify user where name=alice account=lab cluster=lab set Fairshare=2",
		"modify user where name=alice set DefaultAccount=lab QOS=normal",
		"modify user where name=root account=lab cluster=lab set Fairshare=1",
		"modify user where name=root set DefaultAccount=lab",
		"modify user where name=bob account=lab cluster=lab set Fairshare=1",
		"modify user where name=bob set DefaultAccount=lab",
	}
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{
			name: "an empty database: everything is added, then every value set",
			want: []string{
				"add cluster lab", setAll[0], "add qos normal", setAll[1],
				"add account lab Parent=root Fairshare=1", setAll[2], setAll[3],
				"add user alice Account=lab Fairshare=2", setAll[4], setAll[5],
				"add user root Account=lab Fairshare=1", setAll[6], setAll[7],
				"add user bob Account=lab Fairshare=1", setAll[8], setAll[9],
			},
		},
		{
			name: "a second run: nothing is added again, every value is set",
			env:  []string{"FAKE_EXISTS=1"},
			want: setAll,
		},
		{
			name: "values already in place: sacctmgr's 'Nothing modified' is no error",
			env:  []string{"FAKE_EXISTS=1", "FAKE_UNCHANGED=1"},
			want: setAll,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runSacctmgrScript(t, script, tt.env...)
			if err != nil {
				t.Fatalf("sacctmgr.sh: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sacctmgr calls (-want +got):\n%s", diff)
			}
		})
	}
}

// Before slurmctld has registered gres/gpu, QOS limits naming it would be
// refused: the script stops after the cluster and says what to do.
func TestSacctmgrScriptBeforeSlurmctld(t *testing.T) {
	cfg := loaded(t, "../../examples/slurm-lite.toml")
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	noTRES := strings.Replace(fakeSacctmgr, `$args == *" tres "* || `, "", 1)
	script := files[Sacctmgr]
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "sacctmgr")
	if err := os.WriteFile(fake, []byte(noTRES), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "SACCTMGR="+fake, "FAKE_LOG="+filepath.Join(dir, "log"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("sacctmgr.sh succeeded without gres TRES:\n%s", out)
	}
	if want := "gres/gpu is no TRES yet: start slurmctld with this slurm.conf"; !strings.Contains(string(out), want) {
		t.Errorf("sacctmgr.sh said:\n%s\nwant %q", out, want)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	if strings.Contains(string(log), "qos") {
		t.Errorf("sacctmgr.sh went on to the QOS:\n%s", log)
	}
}

// The script waits only for the gres TRES its QOS limits name: the
// example's limits name gres/gpu, so a slurmctld that registered no
// gres/shard (a slurm.conf without shards) does not stop it, as it did;
// without gres limits it waits for none.
func TestSacctmgrScriptWaitsOnlyForTheTRESItsLimitsName(t *testing.T) {
	noShard := strings.Replace(fakeSacctmgr, `$args == *" tres "* || `, `($args == *" tres "* && $args != *" name=shard "*) || `, 1)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name     string
		noLimits bool
		says     string
	}{
		{"limits on gres/gpu", false, "# The QOS limits below name gres/gpu: slurmctld must have registered it.\n"},
		{"no gres limits", true, "# No QOS limit names a gres TRES: nothing here waits for slurmctld to register one.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loaded(t, "../../examples/slurm-lite.toml")
			for i := range cfg.QOS {
				if tc.noLimits {
					cfg.QOS[i].MaxTRESPerUser, cfg.QOS[i].MaxTRESPerJob = nil, nil
				}
			}
			files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
			script := files[Sacctmgr]
			if !strings.Contains(script, tc.says) {
				t.Errorf("sacctmgr.sh does not say %q", tc.says)
			}
			dir := t.TempDir()
			fake := filepath.Join(dir, "sacctmgr")
			if err := os.WriteFile(fake, []byte(noShard), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, "-c", script)
			cmd.Env = append(os.Environ(), "SACCTMGR="+fake, "FAKE_LOG="+filepath.Join(dir, "log"))
			if out, err := cmd.CombinedOutput(); err != nil || !strings.HasSuffix(string(out), "sacctmgr.sh: done\n") {
				t.Errorf("sacctmgr.sh without gres/shard registered: %v\n%s", err, out)
			}
		})
	}
}

// MaxJobCountPerUser goes to the cluster association's MaxSubmitJobs, as a
// count; no limit clears it, so that a later export brings that over too.
func TestSacctmgrScriptMaxJobCountPerUser(t *testing.T) {
	for _, tc := range []struct {
		share config.Share
		want  []string
	}{
		{"30%", []string{
			"# sets none of its own. MaxJobCountPerUser (\"30%\" of MaxJobCount 200) is its\n# MaxSubmitJobs: Slurm counts",
			"\nupdate cluster where name=\"$cluster\" set MaxSubmitJobs=60\n",
		}},
		{"150", []string{
			"# sets none of its own. MaxJobCountPerUser (150) is its\n",
			"\nupdate cluster where name=\"$cluster\" set MaxSubmitJobs=150\n",
		}},
		{"0", []string{
			"# sets none of its own. MaxJobCountPerUser = 0 (no limit): MaxSubmitJobs is cleared.\n",
			"\nupdate cluster where name=\"$cluster\" set MaxSubmitJobs=-1\n",
		}},
	} {
		cfg := defaults()
		cfg.MaxJobCount, cfg.MaxJobCountPerUser = 200, tc.share
		files, _, _ := generated(t, cfg, Input{})
		for _, want := range tc.want {
			if !strings.Contains(files[Sacctmgr], want) {
				t.Errorf("MaxJobCountPerUser %q: sacctmgr.sh lacks %q:\n%s", tc.share, want, files[Sacctmgr])
			}
		}
	}
}

// An account's budget (GrpTRESMins) and its other limits are set on its
// association, as sacctmgr takes them, after its shares.
func TestSacctmgrScriptSetsGrpTRESMins(t *testing.T) {
	cfg := loaded(t, "../../examples/slurm-lite.toml")
	cfg.Accounts[0].GrpTRESMins = config.TRES{"gres/gpu": 6000, "cpu": 60000}
	cfg.Accounts[0].GrpTRES = config.TRES{"gres/gpu": 2}
	cfg.Accounts[0].MaxTRESMinsPerJob = config.TRES{"gres/gpu": 2880}
	cfg.Accounts[0].MaxJobs = 4
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	got, err := runSacctmgrScript(t, files[Sacctmgr], "FAKE_EXISTS=1")
	if err != nil {
		t.Fatalf("sacctmgr.sh: %v", err)
	}
	want := []string{
		"modify account where name=lab cluster=lab set Fairshare=1",
		"modify account where name=lab cluster=lab set GrpTRES=gres/gpu=2 GrpTRESMins=cpu=60000,gres/gpu=6000 MaxTRESMinsPerJob=gres/gpu=2880 MaxJobs=4",
	}
	for i, l := range got {
		if l == want[0] {
			if diff := cmp.Diff(want, got[i:min(i+2, len(got))]); diff != "" {
				t.Errorf("sacctmgr calls (-want +got):\n%s", diff)
			}
			return
		}
	}
	t.Fatalf("no %q among the calls:\n%s", want[0], strings.Join(got, "\n"))
}
