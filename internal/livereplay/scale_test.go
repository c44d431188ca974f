package livereplay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sim"
)

// TestScalesThatCannotBeHonouredAreRefused: the daemon counts whole
// seconds, so a replay is exact only at a scale where every time it
// hands the daemon is whole (issue 24 item 12: at --scale 0.5 a trace of
// odd seconds matched no job, each job's end rounded up). Such a scale is
// refused before anything starts, naming the first time that is not
// whole and the nearest scales that would do.
func TestScalesThatCannotBeHonouredAreRefused(t *testing.T) {
	p4, err := sim.LookupPolicies("P4")
	if err != nil {
		t.Fatal(err)
	}
	odd, err := sim.ReadTrace("odd.csv", strings.NewReader("job_id,submit_s,account,num_gpus,duration_s,time_limit_s\no0,0,alpha,1,20,40\no1,10,beta,2,15,40\n"))
	if err != nil {
		t.Fatal(err)
	}
	odd7, err := sim.ReadTrace("odd7.csv", strings.NewReader("job_id,submit_s,account,num_gpus,duration_s,time_limit_s\no0,0,alpha,1,20,40\no1,10,beta,2,15,40\no2,20,gamma,1,7,40\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		trace *sim.Trace
		scale float64
		want  string
	}{
		{"times in tens of seconds at 0.1", smallTrace(t), 0.1, ""},
		{"and at 0.3", smallTrace(t), 0.3, ""},
		{"but not at 0.05", smallTrace(t), 0.05,
			"--scale 0.05 cannot be replayed exactly: the daemon counts whole seconds, and trace job j00's time limit (small.csv:2), 30 trace seconds, would be 1.5 seconds at this scale " +
				"(its job would end on the next whole second, and every later decision move with it); the times of this replay are whole at multiples of 0.1; the nearest: --scale 0.1"},
		{"a job of 15 seconds at 0.5", odd, 0.5,
			"--scale 0.5 cannot be replayed exactly: the daemon counts whole seconds, and trace job o1's duration (odd.csv:3), 15 trace seconds, would be 7.5 seconds at this scale " +
				"(its job would end on the next whole second, and every later decision move with it); the times of this replay are whole at multiples of 0.2; the nearest: --scale 0.4 or 0.6"},
		{"and at 0.4", odd, 0.4, ""},
		{"a job of 7 seconds besides leaves whole scales only", odd7, 0.5,
			"--scale 0.5 cannot be replayed exactly: the daemon counts whole seconds, and trace job o1's duration (odd7.csv:3), 15 trace seconds, would be 7.5 seconds at this scale " +
				"(its job would end on the next whole second, and every later decision move with it); the times of this replay are whole at multiples of 1; the nearest: --scale 1"},
		{"which it replays", odd7, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := CheckScale(tc.trace, p4[0], options(), tc.scale); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeptDirectories: --keep takes a new or empty directory, never one
// that holds another replay's files; a socket whose path under it would
// be too long for a Unix socket goes to a temporary directory of its own.
func TestKeptDirectories(t *testing.T) {
	base := t.TempDir()
	short, err := os.MkdirTemp("/tmp", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	dir, sock, cleanup, err := workDir(filepath.Join(short, "P4"))
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if dir != filepath.Join(short, "P4") || sock != filepath.Join(dir, "d.sock") {
		t.Errorf("a short directory: dir %s, socket %s", dir, sock)
	}
	if err := os.WriteFile(filepath.Join(dir, "daemon.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := workDir(dir); err == nil || !strings.Contains(err.Error(), "is not empty: give a new directory") {
		t.Errorf("a directory that holds a replay's files: %v", err)
	}
	long := filepath.Join(base, strings.Repeat("d", 90), "P4")
	dir, sock, cleanup, err = workDir(long)
	if err != nil {
		t.Fatal(err)
	}
	if dir != long || !strings.HasPrefix(sock, "/tmp/slite-live-") || len(sock) > 100 {
		t.Errorf("a long directory: dir %s, socket %s", dir, sock)
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(sock)); err == nil {
		t.Errorf("the socket's temporary directory %s is left behind", filepath.Dir(sock))
	}
	if _, err := os.Stat(long); err != nil {
		t.Errorf("the kept directory is gone: %v", err)
	}
}

// A replay whose recalculation period the daemon cannot take at the scale
// (its CalcPeriod is whole minutes, at least one, as Slurm's) is refused
// before any daemon starts, saying what to give instead; one it can take
// is written into the daemon's configuration.
func TestCalcPeriodMustComeToWholeMinutes(t *testing.T) {
	tr, err := sim.ReadTrace("t.csv", strings.NewReader("job_id,submit_s,account,num_gpus,duration_s,time_limit_s\nj0,0,alpha,1,10,20\n"))
	if err != nil {
		t.Fatal(err)
	}
	pols, _ := sim.LookupPolicies("P2")
	opt := options()
	opt.Setup.CalcPeriod = 5 * time.Minute
	_, err = Run(context.Background(), tr, pols[0], opt, Options{Scale: 0.1})
	want := "--scale 0.1 makes Priority.CalcPeriod 5 trace minutes 30s of wall time, and the daemon's is whole minutes, at least one, as Slurm's: give --recalc pass"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("period 5 min at scale 0.1: %v, want an error saying %q", err, want)
	}
	opt.Setup.CalcPeriod = 20 * time.Minute
	if conf := Config(tr, pols[0], opt, 0.1, "/d", "/d/s", "me"); !strings.Contains(conf, "Recalc = \"period\"\nCalcPeriod = \"2\"\n") {
		t.Errorf("period 20 min at scale 0.1: the configuration has no CalcPeriod of 2 minutes:\n%s", conf)
	}
	opt.Setup.CalcPeriod = 0
	if conf := Config(tr, pols[0], opt, 0.1, "/d", "/d/s", "me"); !strings.Contains(conf, "Recalc = \"pass\"\n") {
		t.Errorf("every pass: the configuration says otherwise:\n%s", conf)
	}
}
