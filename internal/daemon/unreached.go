package daemon

import (
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A request to a running job's supervisor (a yield's signal, a requeue's
// or a cancel's stop, scancel --signal) can race the job's own end:
//
//  1. the handler reads the job: RUNNING;
//  2. the script exits; its supervisor writes status.json, closes (and so
//     removes) its control socket and exits;
//  3. the handler dials the socket: "job supervisor not reachable at
//     .../stepd.sock: no such file or directory";
//  4. the loop records the end (finish.go) a moment later.
//
// The socket's words mean nothing to the user who asked, and its path is
// in a directory they cannot read. unreached is what happened in their
// terms: the job ended (its state and exit code, from the status the
// supervisor left), its supervisor died without a word (the job is lost:
// NODE_FAIL), or the supervisor is there and did not answer. The raw
// error stays in Error, for the daemon's log.
type unreached struct {
	job uint32
	// ended is the job's final status when it has ended.
	ended *stepd.Status
	// lost: no supervisor and no status; the loop records it NODE_FAIL.
	lost bool
	err  error
}

func (u *unreached) Error() string { return fmt.Sprintf("job %d's supervisor: %v", u.job, u.err) }
func (u *unreached) Unwrap() error { return u.err }

// whyUnreached says why a call to j's supervisor failed with err. A
// supervisor that is ending writes the job's status before it closes its
// socket; one still there without a status is given a moment to finish.
func (d *Daemon) whyUnreached(j store.Job, err error) *unreached {
	dir := d.runDir(j.ID, j.Restarts)
	u := &unreached{job: j.ID, err: err}
	deadline := clock.After(2 * time.Second) // real: a real process's exit
	for {
		if st, serr := stepd.ReadStatus(dir); serr == nil {
			u.ended = &st
			return u
		}
		if !stepd.Supervised(dir) {
			// Read once more: it may have written its status and exited
			// between the two looks.
			if st, serr := stepd.ReadStatus(dir); serr == nil {
				u.ended = &st
			} else {
				u.lost = true
			}
			return u
		}
		if deadline.Passed() {
			return u
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// code is Slurm's error number for the request: a job that has ended
// (or is lost, which ends it) leaves nothing to act on,
// ESLURM_ALREADY_DONE; a supervisor that did not answer leaves the job as
// it was, ESLURM_TRANSITION_STATE_NO_UPDATE ("try again later").
func (u *unreached) code() slurm.Errno {
	if u.ended != nil || u.lost {
		return slurm.ErrAlreadyDone
	}
	return slurm.ErrTransitionStateNoUpdate
}

// tell is the sentence for the user whose what ("yield", "requeue",
// "cancel", "signal") did not reach the job; then is what follows from
// the job's end for them ("nothing to yield").
func (u *unreached) tell(what, then string) string {
	switch {
	case u.ended != nil:
		return fmt.Sprintf("job %d ended while the %s was being sent (%s %s); %s", u.job, what, u.ended.State, u.ended.ExitCode, then)
	case u.lost:
		return fmt.Sprintf("job %d's supervisor exited without recording how the job ended, while the %s was being sent: the job is lost, recorded as NODE_FAIL (and requeued if it may be); %s",
			u.job, what, then)
	}
	return fmt.Sprintf("job %d's supervisor is running but did not answer the %s; nothing was changed: try again in a moment (the daemon's log has what the supervisor said)", u.job, what)
}
