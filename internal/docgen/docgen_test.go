package docgen

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
	"github.com/slurm-lite/slurm-lite/internal/sacctmgr"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/sinfo"
	"github.com/slurm-lite/slurm-lite/internal/slurmdcmd"
	"github.com/slurm-lite/slurm-lite/internal/sprio"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
	"github.com/slurm-lite/slurm-lite/internal/sreport"
	"github.com/slurm-lite/slurm-lite/internal/srun"
	"github.com/slurm-lite/slurm-lite/internal/sshare"
)

var update = flag.Bool("update", false, "rewrite man/slurm-lite.toml.5, completion/slurm-lite.bash and packaging/slurm-lite.toml")

const (
	top            = "../.."
	configPagePath = top + "/man/slurm-lite.toml.5"
	completionPath = top + "/completion/slurm-lite.bash"
	shippedPath    = top + "/packaging/slurm-lite.toml"
)

// checkFile compares a generated file with the committed one, or rewrites
// it under -update.
func checkFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/docgen -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is not what internal/docgen makes now: run go test ./internal/docgen -update and commit it (-committed +now):\n%s", path, diff)
	}
}

// TestConfigPage: man/slurm-lite.toml.5 is made from the example, and
// names every key the example sets (internal/config's tests make the
// example name every key of the schema).
func TestConfigPage(t *testing.T) {
	src, err := os.ReadFile(top + "/examples/slurm-lite.toml")
	if err != nil {
		t.Fatal(err)
	}
	page := ConfigPage(string(src))
	checkFile(t, configPagePath, page)
	keyLine := regexp.MustCompile(`(?m)^([A-Za-z_]+) *=`)
	for _, m := range keyLine.FindAllStringSubmatch(string(src), -1) {
		if !strings.Contains(page, `\fB`+m[1]+`\fR =`) && !strings.Contains(page, "\n"+m[1]+" =") {
			t.Errorf("slurm-lite.toml(5) does not describe %s", m[1])
		}
	}
}

// TestShippedConfig: packaging/slurm-lite.toml is made from the example,
// and is safe to install as it is: it reads as the built-in defaults, so
// nothing site-specific (a simulated GPU, a checkpoint path, a made-up
// webhook, a node's size) is in force until the administrator writes it.
func TestShippedConfig(t *testing.T) {
	src, err := os.ReadFile(top + "/examples/slurm-lite.toml")
	if err != nil {
		t.Fatal(err)
	}
	shipped := ShippedConfig(string(src))
	checkFile(t, shippedPath, shipped)
	got, err := config.Parse("slurm-lite.toml", []byte(shipped))
	if err != nil {
		t.Fatalf("the shipped configuration does not parse: %v", err)
	}
	if diff := cmp.Diff(config.Default(), got); diff != "" {
		t.Errorf("the shipped configuration is not the built-in defaults (-defaults +shipped):\n%s", diff)
	}
	// Every key of the example is there, commented, for the administrator
	// to uncomment.
	keyLine := regexp.MustCompile(`(?m)^([A-Za-z_]+) *=.*$`)
	for _, m := range keyLine.FindAllString(string(src), -1) {
		if !strings.Contains(shipped, "\n#"+m+"\n") {
			t.Errorf("the shipped configuration lacks the example's line %q, commented out", m)
		}
	}
}

// TestManPagesLint: every page in man/ formats without a warning
// (groff -ww), where groff is installed.
func TestManPagesLint(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed")
	}
	pages, _ := filepath.Glob(top + "/man/*.[158]")
	if len(pages) != 4 {
		t.Errorf("man/ holds %d pages, want 4: %v", len(pages), pages)
	}
	for _, p := range pages {
		var stderr bytes.Buffer
		cmd := exec.Command(groff, "-man", "-ww", "-z", "-t", p)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff -man -ww %s: %v\n%s", filepath.Base(p), err, stderr.String())
		}
	}
}

func helpIO() (cli.IO, *bytes.Buffer) {
	var out bytes.Buffer
	return cli.IO{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
		Getenv:   func(string) (string, bool) { return "", false },
		Now:      func() time.Time { return time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC) },
		ReadFile: os.ReadFile,
	}, &out
}

// slurmdSubcommands are slurmd-lite's commands (stepd is the supervisor's
// own, not a person's).
var slurmdSubcommands = []string{"run", "config", "parse", "simulate", "export"}

// slurmdHelp is slurmd-lite's --help and each of its commands'.
func slurmdHelp(t *testing.T) string {
	var all strings.Builder
	for _, args := range append([][]string{{"--help"}}, func() [][]string {
		var a [][]string
		for _, c := range slurmdSubcommands {
			a = append(a, []string{c, "--help"})
		}
		return a
	}()...) {
		sio, out := helpIO()
		if code := slurmdcmd.Main(args, sio, slurmdcmd.Daemon{}); code != 0 {
			t.Fatalf("slurmd-lite %v: exit %d\n%s", args, code, out)
		}
		all.WriteString(out.String())
	}
	return all.String()
}

// TestSlurmdPage: slurmd-lite(8) names each of its commands and every
// option they take.
func TestSlurmdPage(t *testing.T) {
	b, err := os.ReadFile(top + "/man/slurmd-lite.8")
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(b), `\-`, "-")
	help := slurmdHelp(t)
	for _, opt := range Options(help) {
		if !strings.Contains(page, strings.TrimSuffix(opt, "=")) {
			t.Errorf("slurmd-lite(8) does not name %s (slurmd-lite --help does)", opt)
		}
	}
	for _, c := range slurmdSubcommands {
		if !strings.Contains(page, ".B "+c+"\n") && !strings.Contains(page, ".B "+c+" ") {
			t.Errorf("slurmd-lite(8) does not describe the command %s", c)
		}
	}
}

// extraOptions are options the commands take that Slurm's --help leaves
// out, worth completing.
var extraOptions = map[string][]string{
	"squeue":  {"--me"},
	"scancel": {"--me"},
	"sprio":   {"--sort="},
}

func commandHelps(t *testing.T) []Command {
	mains := []struct {
		name string
		main func([]string, cli.IO) int
	}{
		{"sbatch", sbatch.Main}, {"squeue", squeue.Main}, {"scancel", scancel.Main},
		{"scontrol", scontrol.Main}, {"sinfo", sinfo.Main}, {"sacct", sacct.Main},
		{"sacctmgr", sacctmgr.Main}, {"sshare", sshare.Main}, {"sprio", sprio.Main}, {"sreport", sreport.Main},
		{"srun", srun.Main}, {"salloc", srun.Salloc},
	}
	var cmds []Command
	for _, m := range mains {
		sio, out := helpIO()
		if code := m.main([]string{"--help"}, sio); code != 0 {
			t.Fatalf("%s --help: exit %d\n%s", m.name, code, out)
		}
		c := Command{Name: m.name, Help: out.String(), Extra: extraOptions[m.name]}
		for _, e := range c.Extra {
			// Each is one the command takes: given before --help, it is
			// parsed first, and an unknown one fails.
			arg := e
			if strings.HasSuffix(e, "=") {
				arg += "1"
			}
			sio, out := helpIO()
			if code := m.main([]string{arg, "--help"}, sio); code != 0 {
				t.Errorf("%s does not take %s, which the completion offers: exit %d\n%s", m.name, e, code, out)
			}
		}
		if m.name == "sreport" {
			c.Words = []string{"cluster", "job", "user"}
			c.After = map[string][]string{"cluster": {"AccountUtilizationByUser", "UserUtilizationByAccount", "Utilization"},
				"job": {"SizesByAccount"}, "user": {"TopUsage"}}
		}
		if m.name == "scontrol" {
			c.Words = []string{"create", "delete", "help", "hold", "holdu", "ping", "release", "requeue", "show", "token", "uhold", "update", "version", "yield"}
			c.After = map[string][]string{"show": {"assoc_mgr", "config", "hostlist", "hostlistsorted", "hostnames", "job", "node", "partition", "reservation"},
				"create": {"reservation"}, "delete": {"reservation"}}
		}
		cmds = append(cmds, c)
	}
	return append(cmds, Command{Name: "slurmd-lite", Help: slurmdHelp(t), Words: slurmdSubcommands})
}

// TestCompletion: completion/slurm-lite.bash is made from the commands'
// help (each command's tests check its help against its option table),
// and completes in bash as a person would see it.
func TestCompletion(t *testing.T) {
	cmds := commandHelps(t)
	script := Completion(cmds)
	checkFile(t, completionPath, script)
	for _, c := range cmds {
		if len(Options(c.Help)) < 2 {
			t.Errorf("%s: the completion offers %d options", c.Name, len(Options(c.Help)))
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"sbatch", "--gpu-m"}, []string{"--gpu-mem="}},
		{[]string{"sbatch", "--yield"}, []string{"--yieldable"}},
		{[]string{"sinfo", "--gp"}, []string{"--gpus"}},
		{[]string{"scontrol", "yi"}, []string{"yield"}},
		{[]string{"scontrol", "-d", "sh"}, []string{"show"}},
		{[]string{"scontrol", "show", "jo"}, []string{"job"}},
		{[]string{"scontrol", "show", "job", "x"}, nil},
		{[]string{"squeue", "--sta"}, []string{"--start", "--states="}},
		{[]string{"squeue", "--m"}, []string{"--me"}},
		{[]string{"slurmd-lite", "sim"}, []string{"simulate"}},
		{[]string{"slurmd-lite", "simulate", "--pol"}, []string{"--policy="}},
		{[]string{"srun", "--pt"}, []string{"--pty"}},
	} {
		words := make([]string, len(tc.words))
		for i, w := range tc.words {
			words[i] = "'" + w + "'"
		}
		prog := ". " + completionPath + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_slurm_lite " + tc.words[0] + "\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.words, err, out)
		}
		got := strings.Fields(string(out))
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("completing %q: got %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// TestMakeInstall: make install-docs puts the man pages and the
// completion (with a link per command) under DESTDIR/PREFIX, and make
// install includes it (make -n: building the commands is another test's).
func TestMakeInstall(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	dest := t.TempDir()
	out, err := exec.Command(makeBin, "-C", top, "install-docs", "DESTDIR="+dest, "PREFIX=/usr").CombinedOutput()
	if err != nil {
		t.Fatalf("make install-docs: %v\n%s", err, out)
	}
	want := []string{
		"usr/share/man/man1/slurm-lite-gpus.1", "usr/share/man/man1/slurm-lite-yield.1",
		"usr/share/man/man5/slurm-lite.toml.5", "usr/share/man/man8/slurmd-lite.8",
		"usr/share/bash-completion/completions/slurm-lite",
	}
	for _, c := range []string{"sacct", "sacctmgr", "salloc", "sbatch", "scancel", "scontrol", "sinfo",
		"slurmd-lite", "sprio", "sreport", "squeue", "srun", "sshare"} {
		want = append(want, "usr/share/bash-completion/completions/"+c)
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, rel)
		}
		return err
	})
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("make install-docs installed (-want +got):\n%s", diff)
	}
	for _, f := range want {
		b, err := os.ReadFile(filepath.Join(dest, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v, %d bytes", f, err, len(b))
		}
	}
	if l, err := os.Readlink(filepath.Join(dest, "usr/share/bash-completion/completions/sbatch")); err != nil || l != "slurm-lite" {
		t.Errorf("completions/sbatch links to %q (%v), want slurm-lite", l, err)
	}
	// The unit's Documentation= names pages that install-docs installs
	// (systemctl help slurmd-lite opens them).
	unit, err := os.ReadFile(filepath.Join(top, "examples/slurmd-lite.service"))
	if err != nil {
		t.Fatal(err)
	}
	docs := regexp.MustCompile(`(?m)^Documentation=(.*)$`).FindSubmatch(unit)
	if docs == nil {
		t.Fatal("examples/slurmd-lite.service has no Documentation= line")
	}
	for _, ref := range strings.Fields(string(docs[1])) {
		m := regexp.MustCompile(`^man:([A-Za-z0-9_.-]+)\(([1-8])\)$`).FindStringSubmatch(ref)
		if m == nil {
			t.Errorf("the unit's Documentation= %q is not a man:PAGE(SECTION) that make install-docs installs", ref)
			continue
		}
		if page := fmt.Sprintf("usr/share/man/man%s/%s.%s", m[2], m[1], m[2]); !slices.Contains(want, page) {
			t.Errorf("the unit's Documentation= %s is not installed (no %s)", ref, page)
		}
	}
	// install-config puts the shipped file in place once, and never over
	// the administrator's.
	etc := filepath.Join(dest, "etc/slurm-lite/slurm-lite.toml")
	for i, want := range []string{"", "ClusterName = \"ours\"\n"} {
		if out, err := exec.Command(makeBin, "-C", top, "install-config", "DESTDIR="+dest).CombinedOutput(); err != nil {
			t.Fatalf("make install-config: %v\n%s", err, out)
		}
		got, err := os.ReadFile(etc)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if shipped, _ := os.ReadFile(shippedPath); !bytes.Equal(got, shipped) {
				t.Errorf("make install-config installed %s, not packaging/slurm-lite.toml", etc)
			}
		} else if string(got) != want {
			t.Errorf("make install-config wrote over the administrator's file: %q", got)
		}
		if err := os.WriteFile(etc, []byte("ClusterName = \"ours\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dry, err := exec.Command(makeBin, "-n", "-C", top, "install", "DESTDIR=/nonexistent", "PREFIX=/usr").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n install: %v\n%s", err, dry)
	}
	for _, w := range []string{"/nonexistent/usr/share/man/man8/", "/nonexistent/usr/bin/"} {
		if !strings.Contains(string(dry), w) {
			t.Errorf("make install does not install into %s:\n%s", w, dry)
		}
	}
}
