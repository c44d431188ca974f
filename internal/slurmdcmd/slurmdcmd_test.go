package slurmdcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	sio := cmdio.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) (string, bool) { return "", false }, Now: time.Now, ReadFile: os.ReadFile}
	rc := Main(args, sio, Daemon{})
	return rc, out.String(), errb.String()
}

// The simulator and the exporter are subcommands of the one kong command
// line: their help, their flags and their errors.
func TestSimulateAndExportAreKongSubcommands(t *testing.T) {
	rc, out, _ := run(t, "simulate", "--help")
	if rc != 0 || !strings.Contains(out, "--trace=FILE") || !strings.Contains(out, "Policies: P0 FIFO") {
		t.Errorf("simulate --help: exit %d, output:\n%s", rc, out)
	}
	rc, out, _ = run(t, "export", "--help")
	if rc != 0 || !strings.Contains(out, "--dir=DIR") || !strings.Contains(out, "--autodetect") {
		t.Errorf("export --help: exit %d, output:\n%s", rc, out)
	}
	rc, _, errs := run(t, "simulate", "--bogus")
	if rc != 2 || !strings.Contains(errs, "unknown flag --bogus") {
		t.Errorf("simulate --bogus: exit %d, stderr %q", rc, errs)
	}
	rc, _, errs = run(t, "simulate", "--policy", "P9", "--trace", "x.csv")
	if rc != 1 || !strings.Contains(errs, `unknown policy "P9"`) {
		t.Errorf("simulate --policy P9: exit %d, stderr %q", rc, errs)
	}
	rc, _, errs = run(t, "simulate", "--trace", "x.csv", "--live")
	if rc != 1 || !strings.Contains(errs, "--live needs the daemon") {
		t.Errorf("simulate --live without a daemon: exit %d, stderr %q", rc, errs)
	}
}

// export --help shows what export takes, and nothing it does not: an
// argument without an option is refused, saying that --dir names the
// output directory (issue 24: the usage line showed "[<unexpected> ...]").
func TestExportHelpAndAStrayArgument(t *testing.T) {
	rc, out, _ := run(t, "export", "--help")
	if rc != 0 || !strings.HasPrefix(out, "Usage: slurmd-lite export [flags]\n") || strings.Contains(out, "unexpected") || strings.Contains(out, "Arguments:") {
		t.Errorf("export --help: exit %d, output:\n%s", rc, out)
	}
	rc, out, errs := run(t, "export", "out")
	want := `slurmd-lite export: unexpected argument "out": the output directory is given with --dir (see slurmd-lite export --help)` + "\n"
	if rc != 2 || out != "" || errs != want {
		t.Errorf("export out: exit %d, stdout %q, stderr %q; want exit 2 and %q", rc, out, errs, want)
	}
	// Another command's stray argument keeps kong's own words.
	rc, _, errs = run(t, "config", "out")
	if rc != 2 || errs != "slurmd-lite: error: unexpected argument out\n" {
		t.Errorf("config out: exit %d, stderr %q", rc, errs)
	}
}

// export reads slurmd-lite's own -f, before or after the subcommand.
func TestExportReadsTheDaemonsConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.toml")
	if err := os.WriteFile(conf, []byte("ClusterName = \"kongtest\"\n[Node]\nNodeName = \"gpu01\"\nGPUs = \"none\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{
		{"-f", conf, "export", "--dir", filepath.Join(dir, "a")},
		{"export", "--dir", filepath.Join(dir, "b"), "-f", conf},
	} {
		rc, out, errs := run(t, args...)
		if rc != 0 || !strings.Contains(out, "slurm.conf") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, rc, out, errs)
		}
		b, err := os.ReadFile(filepath.Join(dir, string(rune('a'+i)), "slurm.conf"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "ClusterName=kongtest") {
			t.Errorf("%v: slurm.conf does not come from %s:\n%s", args, conf, b)
		}
	}
}

// slurmd-lite config says which directory the daemon would refuse to
// start with (one another user could replace), with the fix, and exits 1;
// a directory still to be made is fine: the daemon makes it.
func TestConfigRefusesDirectoriesOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	write := func(mapDir string) string {
		conf := filepath.Join(dir, "conf.toml")
		body := "StateSaveLocation = \"" + dir + "/state\"\nJobMappingDir = \"" + mapDir + "\"\n[Node]\nGPUs = \"none\"\n"
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return conf
	}
	rc, _, errs := run(t, "-f", write(filepath.Join(open, "map")), "config")
	want := "slurmd-lite: error: JobMappingDir " + open + "/map: directory " + open + " is writable by other users (mode 0777)"
	if rc != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "slurmd-lite refuses to start with it") {
		t.Errorf("a JobMappingDir under a directory all may write: exit %d, stderr:\n%s\nwant exit 1 and %q", rc, errs, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Errorf("slurmd-lite config made the state directory")
	}
	rc, _, errs = run(t, "-f", write(filepath.Join(dir, "map")), "config")
	if rc != 0 || strings.Contains(errs, "error") {
		t.Errorf("directories still to be made: exit %d, stderr:\n%s", rc, errs)
	}
}

// slurmd-lite config's summary and its file say the same DefaultTime: a
// partition without one gets its MaxTime, and the file says so rather
// than "0" (issue 24); the file reads back as the same limits.
func TestConfigDefaultTimeAgrees(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.toml")
	body := "StateSaveLocation = \"" + dir + "/state\"\n[Node]\nGPUs = \"none\"\n" +
		"[[Partition]]\nPartitionName = \"gpu\"\nDefault = true\nMaxTime = \"2-00:00:00\"\n" +
		"[[Partition]]\nPartitionName = \"scavenger\"\n" +
		"[[Partition]]\nPartitionName = \"short\"\nMaxTime = \"4:00:00\"\nDefaultTime = \"1:00:00\"\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs := run(t, "-f", conf, "config")
	if rc != 0 {
		t.Fatalf("config: exit %d, stderr:\n%s", rc, errs)
	}
	summary, file, _ := strings.Cut(out, "# Every setting in force")
	for _, want := range []string{
		"Partition      gpu* MaxTime=2-00:00:00 DefaultTime=2-00:00:00 ",
		"Partition      scavenger MaxTime=UNLIMITED DefaultTime=UNLIMITED ",
		"Partition      short MaxTime=4:00:00 DefaultTime=1:00:00 ",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	limits := func(file string) string {
		var got []string
		for _, l := range strings.Split(file, "\n") {
			if strings.HasPrefix(l, "DefaultTime = ") || strings.HasPrefix(l, "MaxTime = ") {
				got = append(got, l)
			}
		}
		return strings.Join(got, "\n")
	}
	want := strings.Join([]string{`MaxTime = "2-00:00:00"`, `DefaultTime = "2-00:00:00"`, `MaxTime = "UNLIMITED"`,
		`DefaultTime = "UNLIMITED"`, `MaxTime = "4:00:00"`, `DefaultTime = "1:00:00"`}, "\n")
	if got := limits(file); got != want {
		t.Errorf("the file's limits:\n%s\nwant:\n%s", got, want)
	}
	// The file reads back as the same limits.
	_, file, _ = strings.Cut(file, "\n")
	back := filepath.Join(dir, "back.toml")
	if err := os.WriteFile(back, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = run(t, "-f", back, "config")
	summary2, file2, _ := strings.Cut(out, "# Every setting in force")
	if rc != 0 || limits(file2) != want || !strings.Contains(summary2, "Partition      scavenger MaxTime=UNLIMITED DefaultTime=UNLIMITED ") {
		t.Errorf("the file read back: exit %d, stderr %s, output:\n%s", rc, errs, out)
	}
}
