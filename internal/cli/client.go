package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
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
//
// POST /v1/jobs/cancel (api.PathCancel) api.Cancel -> api.Results, one result
// per job string sent, in order; Code is Slurm's errno (2017 for an unknown
// id, 2021 for a finished job, 2002 for another user's job). The commands
// send job ids only and do the filtering themselves, as scancel 22.05 does.
//
// POST /v1/jobs/control (api.PathControl) api.Control -> api.Results, as for
// cancel: hold, release and requeue of each job string.

// dial finds the daemon's socket in the configuration.
func dial(prog string, sio IO) (*localapi.Client, *config.Config, int) {
	cfg, _, err := config.Find("")
	if err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
		return nil, nil, 1
	}
	c := localapi.NewClient(cfg.SocketPath)
	// A stopped or wedged daemon: the command says so after
	// MessageTimeout instead of waiting for it (sockclient's answer.go).
	c.SetMessageTimeout(cfg.MessageTimeout)
	return c, cfg, 0
}

// requestTimeout bounds one question to the daemon; a yield can take
// long, so control requests get more.
const requestTimeout = 2 * time.Minute

// getJobs asks the daemon for jobs.
func getJobs(c *localapi.Client, q url.Values) ([]api.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	path := api.PathJobs
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var jobs []api.Job
	// In gob: thousands of jobs decode in a tenth of JSON's time.
	err := c.DoGob(ctx, "GET", path, nil, &jobs)
	return jobs, err
}

// post sends a cancel or control request.
func post(c *localapi.Client, path string, in any) (api.Results, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var out api.Results
	err := c.Do(ctx, "POST", path, in, &out)
	return out, err
}

// strerror is slurm_strerror as the commands print it: Slurm's words for
// code (internal/slurm's table), else the daemon's, else "Unknown error N".
// A refusal without a Slurm code (0) prints the daemon's words.
func strerror(code slurm.Errno, words string) string {
	if w, ok := code.Words(); ok && code != slurm.Success {
		return w
	}
	if words != "" {
		return words
	}
	return code.Error()
}

// resultWords is what a command prints for one failed result.
func resultWords(r api.Result) string { return strerror(r.Code, r.Error) }

// daemonError prints a failed request as the commands do: Slurm's words
// for a refusal the daemon made in Slurm's terms, its own message
// otherwise, and the unreachable daemon's advice.
func daemonError(prog string, err error, sio IO) int {
	var ue *localapi.UnreachableError
	var na *localapi.NotAnsweringError
	var le *localapi.Error
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, ue.Error())
	case errors.As(err, &na):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, na.Error())
	case errors.As(err, &le) && le.Code != 0:
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, strerror(le.Code, le.Message))
	case errors.As(err, &le):
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, le.Message)
	default:
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
	}
	return 1
}

// newEnv is the output environment of a command: its clock, the
// configuration and this machine's group names.
func newEnv(sio IO, cfg *config.Config) *format.Env {
	return &format.Env{Now: sio.Now(), Config: cfg, GroupName: groupName}
}

func groupName(gid uint32) string {
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10))
	if err != nil {
		return ""
	}
	return g.Name
}

// userID is Slurm's uid_from_string: a user name, or a number. Names the
// configuration lists count too, with the uid unknown (-1), so that a lab's
// users are known before their first login on this machine.
func userID(name string, cfg *config.Config) (int64, bool) {
	if u, err := user.Lookup(name); err == nil {
		id, _ := strconv.ParseInt(u.Uid, 10, 64)
		return id, true
	}
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return int64(id), true
	}
	if cfg != nil {
		for _, u := range cfg.Users {
			if u.Name == name {
				return -1, true
			}
		}
	}
	return 0, false
}

// userMatch is who a -u filter stands for.
type userMatch struct {
	name string
	uid  int64 // -1: match by name
}

func (m userMatch) matches(name string, uid uint32) bool {
	if m.uid >= 0 {
		return int64(uid) == m.uid
	}
	return name == m.name
}

// me is the calling user, for --me.
func me() userMatch {
	uid := os.Geteuid()
	m := userMatch{uid: int64(uid)}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		m.name = u.Username
	}
	return m
}
