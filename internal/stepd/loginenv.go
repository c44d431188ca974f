package stepd

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A job that asks for its user's login environment (--get-user-env, or
// --export other than ALL, which sbatch turns into SLURM_GET_USER_ENV=1)
// gets what the user's login shell makes of their profile: slurmd's
// _get_user_env runs env_array_user_default, which runs
//
//	su - USER -c "/bin/echo; ...; /bin/echo START; env; /bin/echo STOP"
//
// and lays the job's environment over what came out. The launcher does the
// same as the job's user, in the job's cgroup (a cancel ends it with the
// job): it runs the user's login shell as a login shell ("-bash") in their
// home directory with the environment su - gives it (HOME, SHELL, USER,
// LOGNAME, MAIL and login.defs' PATH; Debian's PAM adds MAIL), and reads
// "env -0" between two marks, so that whatever the profile prints is left
// out. slurmd gives it 120 seconds whatever --get-user-env's own timeout
// says (slurmd's req.c); past them, or when the shell fails, the job runs
// with the login defaults of loginEnv, and its error file says why (slurmd
// says it in its own log only).

// loginTimeout is slurmd's: env_array_user_default(..., 120, ...).
const loginTimeout = 120 * time.Second

// loginOutputMax bounds what is read of the shell's output (Slurm's
// ENV_BUFSIZE is 256 KiB).
const loginOutputMax = 1 << 20

// The marks around env's output (env_array_user_default's starttoken and
// stoptoken).
const (
	loginStart = "XXXXSLURMSTARTPARSINGHEREXXXX"
	loginStop  = "XXXXSLURMSTOPPARSINGHEREXXXXX"
)

// discardedLoginVars are the variables of the login environment that
// Slurm drops (_discard_env): the job's own take their place.
var discardedLoginVars = []string{"DISPLAY", "ENVIRONMENT", "HOSTNAME"}

// loadsLogin reports whether the job's environment starts from its user's
// login environment: sbatch sets SLURM_GET_USER_ENV=1 for --get-user-env
// and for any --export but ALL (sbatch.c's _fill_job_desc_from_opts).
func (s *Spec) loadsLogin() bool {
	if s.Options.GetUserEnv {
		return true
	}
	return !exportAll(s.Options.Export)
}

// loginRequest is what the launcher needs to read the login environment
// and make the job's environment over it.
type loginRequest struct {
	Spec    *Spec         `json:"spec"`
	Timeout time.Duration `json:"timeout"`
}

// newLoginRequest is s's loginRequest, or nil when the job does not load
// the login environment. The spec travels without what the environment
// does not need (the script, the daemon's record).
func newLoginRequest(s *Spec) *loginRequest {
	if !s.loadsLogin() {
		return nil
	}
	c := *s
	c.Script, c.ScriptText, c.Record = "", "", nil
	return &loginRequest{Spec: &c, Timeout: cmp.Or(s.LoginEnvTimeout, loginTimeout)}
}

// jobEnv is the job's environment made over the login environment the
// launcher read (jobEnvWithLogin), or, when it could not
// be read, over the login defaults (JobEnv), with the sentence that says
// why for the job's error file.
func (r *loginRequest) jobEnv() (env []string, why string) {
	s := r.Spec
	login, err := readLoginEnv(s.User, loginPath(s), r.Timeout)
	if err != nil {
		return JobEnv(s, s.SubmitEnv), fmt.Sprintf("slurm-lite: %s's login environment (asked by %s) could not be read: %v; "+
			"the job has the login defaults instead (HOME, LOGNAME, MAIL, PATH, SHELL, USER)",
			s.User.Name, loginAskedBy(s), err)
	}
	return jobEnvWithLogin(s, s.SubmitEnv, login), ""
}

// loginAskedBy names the option that made the job load the login
// environment.
func loginAskedBy(s *Spec) string {
	if s.Options.GetUserEnv {
		return "--get-user-env"
	}
	if x := s.Options.Export; x != nil && x.Spec != "" {
		return "--export=" + x.Spec
	}
	return "--export"
}

// readLoginEnv runs u's login shell as a login shell and returns the
// environment it exports, less discardedLoginVars. It runs as the caller
// (the launcher, already the job's user).
func readLoginEnv(u Credential, path string, timeout time.Duration) (map[string]string, error) {
	shell := cmp.Or(u.Shell, "/bin/sh")
	envCmd := ""
	for _, p := range []string{"/bin/env", "/usr/bin/env"} {
		if _, err := os.Stat(p); err == nil {
			envCmd = p
			break
		}
	}
	if envCmd == "" {
		return nil, errors.New("no env command (/bin/env, /usr/bin/env)")
	}
	script := fmt.Sprintf("/bin/echo; /bin/echo; /bin/echo; /bin/echo %s; %s -0; /bin/echo; /bin/echo %s", loginStart, envCmd, loginStop)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return nil, err
	}
	defer devnull.Close()
	cmd := &exec.Cmd{
		Path:   shell,
		Args:   []string{"-" + filepath.Base(shell), "-c", script},
		Env:    loginShellEnv(u, path),
		Dir:    u.Home,
		Stdin:  devnull,
		Stdout: w,
		Stderr: devnull,
		// Its own process group, so that a timeout ends whatever the
		// profile started too (env_array_user_default's kill(-child)).
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if fi, err := os.Stat(u.Home); err != nil || !fi.IsDir() {
		cmd.Dir = "/"
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %s", shell, cError(err))
	}
	deadline := time.Now().Add(timeout)
	_ = r.SetReadDeadline(deadline)
	out, rerr := io.ReadAll(io.LimitReader(r, loginOutputMax+1))
	// Whatever is left of the profile's processes goes with the shell.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	werr := cmd.Wait()
	switch {
	case errors.Is(rerr, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("%s did not finish within %v", shell, timeout)
	case rerr != nil:
		return nil, fmt.Errorf("reading what %s printed: %w", shell, rerr)
	case len(out) > loginOutputMax:
		return nil, fmt.Errorf("%s printed more than %d bytes", shell, loginOutputMax)
	}
	env, ok := parseLoginOutput(out)
	if !ok {
		if werr != nil {
			return nil, fmt.Errorf("%s -c failed (%v) before printing the environment", shell, werr)
		}
		return nil, fmt.Errorf("%s printed no environment", shell)
	}
	return env, nil
}

// loginShellEnv is the environment su - gives the login shell.
func loginShellEnv(u Credential, path string) []string {
	return []string{
		"HOME=" + u.Home,
		"LOGNAME=" + u.Name,
		"MAIL=/var/mail/" + u.Name,
		"PATH=" + path,
		"SHELL=" + cmp.Or(u.Shell, "/bin/sh"),
		"USER=" + u.Name,
	}
}

// parseLoginOutput finds env -0's output between the marks.
func parseLoginOutput(out []byte) (map[string]string, bool) {
	start := []byte("\n" + loginStart + "\n")
	i := bytes.Index(out, start)
	if i < 0 {
		return nil, false
	}
	body := out[i+len(start):]
	j := bytes.LastIndex(body, []byte("\n"+loginStop+"\n"))
	if j < 0 {
		return nil, false
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(body[:j], []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" {
			continue
		}
		env[k] = v
	}
	for _, k := range discardedLoginVars {
		delete(env, k)
	}
	return env, true
}
