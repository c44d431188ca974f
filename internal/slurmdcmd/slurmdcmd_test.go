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
