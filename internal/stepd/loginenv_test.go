package stepd

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// homeWith makes a home directory whose files are files (name: content).
func homeWith(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// me is the current user with home as their home and shell as their
// login shell.
func me(t *testing.T, home, shell string) Credential {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return Credential{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: home, Shell: shell}
}

// A profile that prints, sets PATH and exports variables (one over two
// lines, one Slurm drops); the login shell runs it, as su - would.
const noisyProfile = `echo "welcome to the lab machine"
printf 'no newline at the end'
PATH="$HOME/bin:$PATH"
export FROM_PROFILE=yes
export TWO_LINES="first
second"
export DISPLAY=:0
`

func TestTheLoginEnvironmentIsWhatTheProfileExports(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"/bin/sh", "/bin/bash"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(shell); err != nil {
				t.Skip(err)
			}
			home := homeWith(t, map[string]string{".profile": noisyProfile})
			u := me(t, home, shell)
			env, err := readLoginEnv(u, loginPathUser, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"HOME":         home,
				"LOGNAME":      u.Name,
				"USER":         u.Name,
				"MAIL":         "/var/mail/" + u.Name,
				"SHELL":        shell,
				"FROM_PROFILE": "yes",
				"TWO_LINES":    "first\nsecond",
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("%s=%q, want %q (all: %q)", k, env[k], v, env)
				}
			}
			if !strings.HasPrefix(env["PATH"], home+"/bin:") {
				t.Errorf("PATH=%q, want the profile's %s/bin first", env["PATH"], home)
			}
			for _, k := range discardedLoginVars {
				if _, ok := env[k]; ok {
					t.Errorf("%s is in the login environment; Slurm drops it", k)
				}
			}
			for k := range env {
				if strings.Contains(k, "welcome") || strings.Contains(k, "newline") {
					t.Errorf("the profile's output %q was taken for a variable", k)
				}
			}
		})
	}
}

func TestALoginEnvironmentThatCannotBeReadSaysWhy(t *testing.T) {
	t.Parallel()
	// Only the shell that hangs is meant to meet its timeout: the others
	// get a minute, so that a loaded machine slow to start a shell does
	// not make a failing one look like a hanging one.
	tests := []struct {
		name    string
		profile string
		shell   string
		timeout time.Duration
		want    string
	}{
		{"a profile that hangs", "sleep 60\n", "/bin/sh", 300 * time.Millisecond, "/bin/sh did not finish within 300ms"},
		{"a shell that fails", "", "/bin/false", time.Minute, "/bin/false -c failed (exit status 1) before printing the environment"},
		{"a shell that prints nothing", "", "/bin/true", time.Minute, "/bin/true printed no environment"},
		{"no such shell", "", "/nonexistent/shell", time.Minute, "starting /nonexistent/shell: No such file or directory"},
		{"a profile that exits", "exit 3\n", "/bin/sh", time.Minute, "/bin/sh -c failed (exit status 3) before printing the environment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := homeWith(t, map[string]string{".profile": tc.profile})
			start := time.Now()
			_, err := readLoginEnv(me(t, home, tc.shell), loginPathUser, tc.timeout)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if d := time.Since(start); tc.timeout < time.Second && d > 20*time.Second {
				t.Errorf("took %v: the timeout did not end the shell", d)
			}
		})
	}
}

func TestLoadsLoginAsSbatchSetsSlurmGetUserEnv(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--export=ALL"}, false},
		{[]string{"--get-user-env"}, true},
		{[]string{"--get-user-env=10L"}, true},
		{[]string{"--export=NONE"}, true},
		{[]string{"--export=PATH,FOO"}, true},
		{[]string{"--export=ALL,FOO=bar"}, true},
	}
	for _, tc := range tests {
		r := parseRequest(t, tc.args...)
		s := &Spec{Options: Options{Export: r.Export, GetUserEnv: r.GetUserEnv != nil}}
		if got := s.loadsLogin(); got != tc.want {
			t.Errorf("%v: loadsLogin %v, want %v", tc.args, got, tc.want)
		}
		has := slicesContains(JobEnv(s, nil), "SLURM_GET_USER_ENV=1")
		if has != tc.want {
			t.Errorf("%v: SLURM_GET_USER_ENV=1 in the job's environment: %v, want %v", tc.args, has, tc.want)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestAJobGetsItsUsersLoginEnvironment runs jobs through the supervisor
// and the launcher: with --export=NONE the job's PATH and variables are
// the profile's; with --get-user-env and --export=ALL sbatch's own win
// (golden/job_get_user_env_L_submit_path_alice.txt); a profile that
// hangs leaves the job the login defaults and a line in its error file.
func TestAJobGetsItsUsersLoginEnvironment(t *testing.T) {
	t.Parallel()
	const dump = "#!/bin/sh\nenv | sort\n"
	type tc struct {
		name    string
		export  string
		gue     bool
		profile string
		timeout time.Duration
		want    []string // lines the job prints
		not     []string
	}
	tests := []tc{
		{name: "--export=NONE", export: "NONE", profile: noisyProfile,
			want: []string{"FROM_PROFILE=yes", "SHELL=/bin/sh", "SLURM_GET_USER_ENV=1", "SLURM_EXPORT_ENV=NONE", "MAIL=/var/mail/"},
			not:  []string{"SUBMIT_ONLY=1", "DISPLAY="}},
		{name: "--get-user-env with --export=ALL", gue: true, profile: noisyProfile,
			want: []string{"FROM_PROFILE=yes", "SUBMIT_ONLY=1", "PATH=/usr/bin:/bin\n", "SLURM_GET_USER_ENV=1", "SHELL=/bin/sh"}},
		{name: "a profile that hangs", export: "NONE", profile: "sleep 60\nexport FROM_PROFILE=yes\n", timeout: 500 * time.Millisecond,
			want: []string{"slurm-lite: ", "could not be read: /bin/sh did not finish within 500ms", "PATH=" + loginPathUser, "SHELL=/bin/sh"},
			not:  []string{"FROM_PROFILE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, dump)
			home := homeWith(t, map[string]string{".profile": tc.profile})
			j.spec.User.Home, j.spec.User.Shell = home, "/bin/sh"
			j.spec.LoginPath = loginPathUser // as for a user who is not root
			j.spec.LoginEnvTimeout = tc.timeout
			j.spec.SubmitEnv = []string{"PATH=/usr/bin:/bin", "SUBMIT_ONLY=1"}
			j.spec.Options.GetUserEnv = tc.gue
			if tc.export != "" {
				j.spec.Options.Export = parseRequest(t, "--export="+tc.export).Export
			}
			j.start()
			st := j.wait()
			if st.ExitCode != "0:0" {
				t.Fatalf("exit %s; log:\n%s", st.ExitCode, j.log())
			}
			out := j.out()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the job's output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("the job's output has %q:\n%s", n, out)
				}
			}
			if tc.profile == noisyProfile && tc.export == "NONE" && !strings.Contains(out, "PATH="+home+"/bin:") {
				t.Errorf("PATH is not the profile's:\n%s", out)
			}
		})
	}
}

// parseRequest is sbatch's request for args.
func parseRequest(t *testing.T, args ...string) *jobscript.Request {
	t.Helper()
	cl, err := jobscript.ParseCommandLine(append(args, "x.sh"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n"), Command: cl})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
