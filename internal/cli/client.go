package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/sockclient/gobanswer"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The job queries the commands make, which slurmd-lite answers:
//
// GET /v1/jobs (api.PathJobs) -> []api.Job: the pending, running and
// completing jobs, and those finished within MinJobAge, each array's pending
// record as one row. Every query parameter narrows the list and may be
// repeated (any value matches); the commands filter again, so a daemon may
// ignore a parameter it cannot apply:
//
//	id         a job id N, or "A_T": the jobs whose id or array id is N
//	           (resp. A); for "A_T" the daemon may narrow to task T and the
//	           pending record holding it
//	user       a user name
//	partition  a partition name
//	name       a job name
//	state      a long state name (PENDING, RUNNING, ...)
//
// An unknown id is not an error: the answer is just shorter. squeue and
// scontrol ask with one id alone when they were given one, and say "Invalid
// job id specified" when nothing comes back, as slurm_load_job does.
//
// GET /v1/accounting (api.PathAccounting) -> []store.Record, for sacct:
//
//	id         as above, repeated (the runs of those jobs or tasks)
//	user       a user name, repeated; absent with allusers=1
//	allusers   1: every user's jobs (otherwise the caller's own)
//	state      a long state name, repeated
//	name       a job name, repeated
//	since      RFC 3339 (with fractions of a second): runs not ended before it
//	until      RFC 3339 (with fractions): runs submitted by it
//	dups       1: the earlier runs of requeued jobs too (sacct -D)
//	usage      1: the runs are read as usage (sreport): PrivateData=usage
//	           hides other users' runs from a normal user too
//
// POST /v1/jobs/cancel (api.PathCancel) api.Cancel -> api.Results, one result
// per job string sent, in order; Code is Slurm's errno (2017 for an unknown
// id, 2021 for a finished job, 2002 for another user's job). The commands
// send job ids only and do the filtering themselves, as scancel 22.05 does.
//
// POST /v1/jobs/control (api.PathControl) api.Control -> api.Results, as for
// cancel: hold, release and requeue of each job string.

// Dial finds the daemon's socket in the configuration.
func Dial(prog string, sio IO) (*sockclient.Client, *config.Config, int) {
	cfg, path, err := config.Find("")
	if err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
		return nil, nil, 1
	}
	return client(cfg.SocketPath, cfg.MessageTimeout, path, sio), cfg, 0
}

// DialView is Dial for a command that needs only the configuration's
// View (squeue, sacct, scancel): from the daemon's settings file where it
// is the configuration's, which saves parsing the TOML file, else from the
// file, with Dial's errors (config.FindView).
func DialView(prog string, sio IO) (*sockclient.Client, *config.View, int) {
	v, path, err := config.FindView()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
		return nil, nil, 1
	}
	return client(v.SocketPath, v.MessageTimeout, path, sio), v, 0
}

// client is the daemon's client at socket, for the configuration at path.
func client(socket string, timeout time.Duration, path string, sio IO) *sockclient.Client {
	c := sockclient.New(socket)
	env, _ := sio.Getenv(config.EnvVar)
	c.SetAdvice(func() string { return config.NoDaemonAdvice(path, env) })
	// A stopped or wedged daemon: the command says so after
	// MessageTimeout instead of waiting for it (sockclient's answer.go).
	c.SetMessageTimeout(timeout)
	return c
}

// RequestTimeout bounds one question to the daemon; a yield can take
// long, so control requests get more.
const RequestTimeout = 2 * time.Minute

// GetJobs asks the daemon for jobs.
func GetJobs(c *sockclient.Client, q url.Values) ([]api.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	path := api.PathJobs
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var jobs []api.Job
	// In gob: thousands of jobs decode in a tenth of JSON's time.
	err := gobanswer.Do(ctx, c, "GET", path, nil, &jobs)
	return jobs, err
}

// Post sends a cancel or control request.
func Post(c *sockclient.Client, path string, in any) (api.Results, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	var out api.Results
	err := c.Do(ctx, "POST", path, in, &out)
	return out, err
}

// Strerror is slurm_strerror as the commands print it: Slurm's words for
// code (internal/slurm's table), else the daemon's, else "Unknown error N".
// A refusal without a Slurm code (0) prints the daemon's words.
func Strerror(code slurm.Errno, words string) string {
	if w, ok := code.Words(); ok && code != slurm.Success {
		return w
	}
	if words != "" {
		return words
	}
	return code.Error()
}

// ResultWords is what a command prints for one failed result.
func ResultWords(r api.Result) string { return Strerror(r.Code, r.Error) }

// PrintResultHint prints slurm-lite's line after a failed result's, when
// the daemon gave one (what happened in the user's terms: a job that ended
// while the request was on its way).
func PrintResultHint(r api.Result, sio IO) {
	if r.Hint != "" {
		fmt.Fprintf(sio.Stderr, "slurm-lite: %s\n", r.Hint)
	}
}

// DaemonError prints a failed request as the commands do: Slurm's words
// for a refusal the daemon made in Slurm's terms, its own message
// otherwise, and the unreachable daemon's advice.
func DaemonError(prog string, err error, sio IO) int {
	var ue *sockclient.UnreachableError
	var na *sockclient.NotAnsweringError
	var le *api.Error
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, ue.Error())
	case errors.As(err, &na):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, na.Error())
	case errors.As(err, &le) && le.Code != 0:
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, Strerror(le.Code, le.Message))
		PrintHint(prog, le, sio)
	case errors.As(err, &le):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, le.Message)
		PrintHint(prog, le, sio)
	default:
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
	}
	return 1
}

// PrintHint prints slurm-lite's line after a refusal in Slurm's words:
// what was asked, what exists, the fix. It comes after Slurm's own lines,
// which tools parse, never instead of them, and says it is slurm-lite's
// ("slurm-lite: ..."), so that a tool taking the last "prog: error:" line
// still finds Slurm's.
func PrintHint(prog string, le *api.Error, sio IO) {
	if le.Hint != "" {
		fmt.Fprintf(sio.Stderr, "slurm-lite: %s\n", le.Hint)
	}
}

// NewEnv is the output environment of a command: its clock, the
// configuration and this machine's group names.
func NewEnv(sio IO, cfg *config.Config) *format.Env {
	env := &format.Env{Now: sio.Now(), GroupName: groupName}
	if cfg != nil {
		env.View, env.Node = config.ViewOf(cfg), &cfg.Node
	}
	return env
}

// NewViewEnv is NewEnv for a command that holds only the View.
func NewViewEnv(sio IO, v *config.View) *format.Env {
	return &format.Env{Now: sio.Now(), View: v, GroupName: groupName}
}

func groupName(gid uint32) string {
	return userdb.GroupName(gid)
}

// UserID is Slurm's uid_from_string: a user name, or a number. Names the
// configuration lists count too, with the uid unknown (-1), so that a lab's
// users are known before their first login on this machine.
func UserID(name string, cfg *config.View) (int64, bool) {
	if u, err := userdb.ByName(name); err == nil {
		return int64(u.UID), true
	}
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int64(id), true
	}
	if cfg != nil && cfg.HasUser(name) {
		return -1, true
	}
	return 0, false
}

// UserMatch is who a -u filter stands for.
type UserMatch struct {
	Name string
	UID  int64 // -1: match by name
}

// Matches reports whether a job's user is the one m stands for.
func (m UserMatch) Matches(name string, uid uint32) bool {
	if m.UID >= 0 {
		return int64(uid) == m.UID
	}
	return name == m.Name
}

// Me is the calling user, for --me.
func Me() UserMatch {
	uid := os.Geteuid()
	m := UserMatch{UID: int64(uid)}
	m.Name = userdb.Name(uint32(uid))
	return m
}

// LoadJobsError prints a failed job listing as Slurm's commands do
// (slurm_perror("slurm_load_jobs error")), or the daemon's advice when
// there is no daemon.
func LoadJobsError(prog string, err error, sio IO) int {
	var le *api.Error
	if errors.As(err, &le) && le.Code != 0 {
		fmt.Fprintf(sio.Stderr, "slurm_load_jobs error: %s\n", Strerror(le.Code, le.Message))
		return 1
	}
	return DaemonError(prog, err, sio)
}

// GetJSON asks the daemon one GET question.
func GetJSON(c *sockclient.Client, path string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.Do(ctx, "GET", path, nil, out)
}
