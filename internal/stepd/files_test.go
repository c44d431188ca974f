package stepd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestStdPaths(t *testing.T) {
	base := func() *Spec {
		return &Spec{JobID: 40, Name: "train", User: Credential{Name: "alice"}, NodeName: "gpu01", WorkDir: "/home/alice/run"}
	}
	array := func(s *Spec) { s.JobID, s.ArrayJobID, s.ArrayTaskID, s.ArrayTaskCount = 45, 44, 3, 4 }
	tests := []struct {
		name string
		spec func(*Spec)
		want Paths
	}{
		{"the default is slurm-%j.out for both, input /dev/null", func(*Spec) {},
			Paths{"/home/alice/run/slurm-40.out", "/home/alice/run/slurm-40.out", "/dev/null"}},
		{"an array task's default is slurm-%A_%a.out", array,
			Paths{"/home/alice/run/slurm-44_3.out", "/home/alice/run/slurm-44_3.out", "/dev/null"}},
		{"--output alone takes standard error too", func(s *Spec) { s.Output = "logs/%x-%u-%N.%j" },
			Paths{"/home/alice/run/logs/train-alice-gpu01.40", "/home/alice/run/logs/train-alice-gpu01.40", "/dev/null"}},
		{"--error and --input, absolute", func(s *Spec) { s.Error, s.Input = "/tmp/%j.err", "/data/in.txt" },
			Paths{"/home/alice/run/slurm-40.out", "/tmp/40.err", "/data/in.txt"}},
		{"%A_%a of an array task, padded", func(s *Spec) { array(s); s.Output = "r-%A_%4a.out" },
			Paths{"/home/alice/run/r-44_0003.out", "/home/alice/run/r-44_0003.out", "/dev/null"}},
		{"%a of a job that is not an array is NO_VAL, as Slurm's", func(s *Spec) { s.Output = "r-%A_%a.out" },
			Paths{"/home/alice/run/r-40_4294967294.out", "/home/alice/run/r-40_4294967294.out", "/dev/null"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.spec(s)
			if diff := cmp.Diff(tc.want, StdPaths(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutputFiles: --output and --error in directories that do not exist
// yet are made; standard error goes to its own file; truncate by default.
func TestOutputFiles(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho to-out\necho to-err >&2\ncat\n")
	j.spec.Output = "out/%j/o.txt"
	j.spec.Error = filepath.Join(j.work, "err", "%x.err")
	j.spec.Input = "in.txt"
	if err := os.WriteFile(filepath.Join(j.work, "in.txt"), []byte("from-input\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outName := fmt.Sprintf("out/%d/o.txt", j.spec.JobID)
	if err := os.MkdirAll(filepath.Join(j.work, "err"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.work, "err", "test.err"), []byte("old content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j.start()
	if st := j.wait(); st.State != slurm.Completed {
		t.Fatalf("state %s\nlog:\n%s", st.State, j.log())
	}
	got := []string{j.read(outName), j.read("err/test.err")}
	if diff := cmp.Diff([]string{"to-out\nfrom-input\n", "to-err\n"}, got); diff != "" {
		t.Errorf("output, error (-want +got):\n%s", diff)
	}
}

func TestLaunchFailure(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho never\n")
	j.spec.Output = "/proc/no/such/dir/out.txt"
	j.start()
	st := j.wait()
	got := []string{string(st.State), st.ExitCode, string(st.Batch.State), st.Batch.ExitCode, string(st.Reason)}
	want := []string{"FAILED", "0:53", "CANCELLED", "0:53", "JobLaunchFailure"}
	if diff := cmp.Diff(want, got); diff != "" || !strings.Contains(st.Error, "/proc/no") {
		t.Errorf("(-want +got):\n%s\nerror: %s", diff, st.Error)
	}
}

// TestExecFailures: slurmstepd's messages when the working directory is
// missing (the job runs in /tmp) or the script cannot be executed (the
// job fails with errno as its exit code).
func TestExecFailures(t *testing.T) {
	t.Run("a missing working directory", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, "#!/bin/sh\npwd\n")
		out := filepath.Join(j.work, "out.txt")
		j.spec.Output, j.spec.WorkDir = out, filepath.Join(j.work, "gone")
		j.start()
		st := j.wait()
		want := fmt.Sprintf("slurmstepd-gpu01: error: couldn't chdir to `%s': No such file or directory: going to /tmp instead\n/tmp\n",
			j.spec.WorkDir)
		if diff := cmp.Diff(want, j.read("out.txt")); diff != "" || st.State != slurm.Completed {
			t.Errorf("state %s, output (-want +got):\n%s", st.State, diff)
		}
	})
	t.Run("a script whose interpreter does not exist", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, "#!/no/such/shell\necho never\n").start()
		st := j.wait()
		if st.State != slurm.Failed || st.ExitCode != "2:0" ||
			!strings.HasPrefix(j.out(), "slurmstepd-gpu01: error: execve(): ") || !strings.HasSuffix(j.out(), "/slurm_script: No such file or directory\n") {
			t.Errorf("state %s %s, output %q; want FAILED 2:0 and execve's error", st.State, st.ExitCode, j.out())
		}
	})
}

// TestScriptEnvironment: the batch script sees JobEnv's environment plus
// SLURM_TASK_PID, its own pid, and runs the spool copy with its arguments.
func TestScriptEnvironment(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\nenv > env.txt\nprintf '%s|' \"$0\" \"$#\" \"$1\" \"$2\" \"$$\" > args.txt\n")
	j.spec.Args = []string{"one", "two words"}
	j.spec.GPUs, j.spec.CPUs = []int{1}, []int{0}
	j.spec.ConfPath = "/etc/slurm-lite/slurm-lite.toml"
	j.start()
	st := j.wait()
	var got []string
	for _, kv := range strings.Split(strings.TrimSpace(j.read("env.txt")), "\n") {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"PWD", "SHLVL", "_", "OLDPWD"}, name) {
			got = append(got, kv)
		}
	}
	want := append(JobEnv(j.spec, j.spec.SubmitEnv), "SLURM_TASK_PID="+strconv.Itoa(st.JobPID))
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	args := strings.Split(j.read("args.txt"), "|")
	if len(args) != 6 || filepath.Base(args[0]) != spoolName || args[1] != "2" || args[2] != "one" || args[3] != "two words" ||
		args[4] != strconv.Itoa(st.JobPID) {
		t.Errorf("$0 $# $1 $2 $$ = %q; want the spool copy, 2 arguments, pid %d", j.read("args.txt"), st.JobPID)
	}
	if _, err := os.Stat(filepath.Dir(args[0])); !os.IsNotExist(err) {
		t.Errorf("spool directory left after the job: %v", err)
	}
}

// TestRunsAsUser: a root supervisor runs the job as its user, with the
// user's groups; the output and its missing directories are the user's.
func TestRunsAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody: ", err)
	}
	t.Parallel()
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	j := newJob(t, "#!/bin/sh\nid -u; id -g; id -G; umask\n")
	// The job's user must reach its working directory.
	for _, d := range []string{filepath.Dir(j.work), filepath.Dir(filepath.Dir(j.work))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(j.work, 0o777); err != nil {
		t.Fatal(err)
	}
	j.spec.User = Credential{Name: "nobody", UID: uint32(uid), GID: uint32(gid), Groups: []uint32{uint32(gid), 4242}, Home: u.HomeDir}
	j.spec.Output = "made/by/job/%u.out"
	umask := uint32(0o027)
	j.spec.Umask = &umask
	j.start()
	st := j.wait()
	out := j.read("made/by/job/nobody.out")
	want := fmt.Sprintf("%d\n%d\n%d 4242\n0027\n", uid, gid, gid)
	if diff := cmp.Diff(want, out); diff != "" || st.State != slurm.Completed {
		t.Errorf("state %s; id -u, -g, -G, umask (-want +got):\n%s\nlog:\n%s", st.State, diff, j.log())
	}
	for _, p := range []string{"made", "made/by/job", "made/by/job/nobody.out"} {
		fi, err := os.Stat(filepath.Join(j.work, p))
		if err != nil {
			t.Fatal(err)
		}
		sys := fi.Sys().(*syscall.Stat_t)
		wantMode := os.FileMode(0o750)
		if !fi.IsDir() {
			wantMode = 0o640
		}
		if int(sys.Uid) != uid || fi.Mode().Perm() != wantMode {
			t.Errorf("%s: owner %d mode %v, want %d %v", p, sys.Uid, fi.Mode().Perm(), uid, wantMode)
		}
	}
	if os.Getuid() != 0 {
		t.Errorf("the supervisor's test process lost root")
	}
}

// TestWriteFileAtomic: a reader sees the old content or the new, never a
// part, and no temporary file stays.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StatusFile)
	a, b := bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<17)
	if err := writeFileAtomic(path, a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil || !(bytes.Equal(got, a) || bytes.Equal(got, b)) {
				t.Errorf("read %d bytes, err %v: a torn file", len(got), err)
				return
			}
		}
	}()
	for i := 0; i < 50; i++ {
		if err := writeFileAtomic(path, [][]byte{a, b}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	ents, _ := os.ReadDir(dir)
	fi, _ := os.Stat(path)
	if len(ents) != 1 || fi.Mode().Perm() != 0o600 {
		t.Errorf("%d files in the directory, mode %v; want the status alone, 0600", len(ents), fi.Mode().Perm())
	}
}

func TestSpecRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "job")
	s := recordedJob(12)
	s.Script, s.Args, s.TimeLimit = "/var/lib/slurm-lite/jobs/12/script", []string{"a"}, 90e9
	arrayTask(s, 10, 2, []int{0, 1, 2}, "0-2")
	if err := WriteSpec(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSpec(filepath.Join(dir, SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("(-wrote +read):\n%s", diff)
	}
	if fi, _ := os.Stat(filepath.Join(dir, SpecFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("spec mode %v, want 0600", fi.Mode().Perm())
	}
	bad := *s
	bad.WorkDir, bad.Rlimits, bad.User = "relative", map[string]uint64{"FOO": 1}, Credential{}
	if err := WriteSpec(dir, &bad); err == nil || !strings.Contains(err.Error(), `work_dir "relative" is not absolute`) ||
		!strings.Contains(err.Error(), `rlimit "FOO"`) || !strings.Contains(err.Error(), "user name is empty") {
		t.Errorf("bad spec: %v", err)
	}
}

// TestProcessSettings: the script runs pinned to its CPUs, with the
// submitter's soft limits and umask.
func TestProcessSettings(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/bash\ngrep Cpus_allowed_list /proc/self/status | cut -f2\nulimit -Sn\nulimit -Sc\numask\n")
	j.spec.CPUs = []int{0}
	j.spec.Rlimits = map[string]uint64{"NOFILE": 100, "CORE": 0}
	umask := uint32(0o077)
	j.spec.Umask = &umask
	j.start()
	if st := j.wait(); st.State != slurm.Completed {
		t.Fatalf("state %s; output:\n%s", st.State, j.out())
	}
	if diff := cmp.Diff("0\n100\n0\n0077\n", j.out()); diff != "" {
		t.Errorf("CPUs, open files, core size, umask (-want +got):\n%s", diff)
	}
}

// TestNonRootSupervisor: a supervisor that is not root runs the job as
// itself, whatever user the spec names, and says so; it tracks the job as
// a subreaper where it may not make cgroups.
func TestNonRootSupervisor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting a supervisor as another user needs root")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody: ", err)
	}
	t.Parallel()
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	j := newJob(t, "#!/bin/sh\nid -u\n")
	root := filepath.Dir(j.dir)
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	// nobody cannot run the test binary where go test built it.
	bin := filepath.Join(root, "stepd.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	j.spec.User = Credential{Name: "someone", UID: 1234, GID: 1234}
	j.spec.SpoolDir = j.work
	if err := WriteSpec(j.dir, j.spec); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{j.dir, j.work, j.spec.Script, filepath.Join(j.dir, SpecFile)} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "run", filepath.Join(j.dir, SpecFile))
	cmd.Env = supervisorEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("supervisor as nobody: %v %s\nlog:\n%s", err, out, j.log())
	}
	st, err := ReadStatus(j.dir)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, j.log())
	}
	if st.State != slurm.Completed || j.out() != u.Uid+"\n" || st.Tracking != TrackSubreaper ||
		len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "only a root supervisor switches users") {
		t.Errorf("state %s, output %q, tracking %s (%s), warnings %q; want COMPLETED as %s, subreaper, a warning",
			st.State, j.out(), st.Tracking, st.TrackingDetail, st.Warnings, u.Uid)
	}
}

func TestSpoolCopiesTheScriptFromTheSpecOrItsFile(t *testing.T) {
	const text = "#!/bin/sh\necho hello\n"
	stored := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(stored, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	self := Credential{Name: "me", UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	tests := []struct {
		name string
		spec Spec
	}{
		{"the text in the spec", Spec{JobID: 7, User: self, ScriptText: text, SpoolDir: t.TempDir()}},
		{"a stored file named by the spec", Spec{JobID: 7, User: self, Script: stored, SpoolDir: t.TempDir()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, script, err := makeSpool(&tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			b, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(script)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %v %s", filepath.Base(script), fi.Mode().Perm(), b)
			if diff := cmp.Diff(fmt.Sprintf("%s %v %s", spoolName, os.FileMode(0o500), text), got); diff != "" {
				t.Errorf("spool copy (-want +got):\n%s", diff)
			}
		})
	}
}
