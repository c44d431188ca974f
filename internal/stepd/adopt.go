package stepd

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// Adopt mode: the supervisor of an interactive job (srun or salloc
// outside a job, Spec.Adopt). The daemon launches it as it launches a
// batch job's, but no script runs: the job is its caller's processes.
//
//	daemon                                supervisor
//	Launch(spec: Adopt, Caller) ────────▶ lock, socket, cgroup or not,
//	                                      adopt Caller: into the cgroup,
//	                                      watched through a pidfd;
//	                                      stepd.json (JobPID: the caller)
//	GET /v1/alloc ─ Call(OpAdopt PID) ──▶ adopt PID as well (idempotent)
//	                                      time limit, cancel, signals
//	                                      as for a batch job
//	POST /v1/alloc/end ─ Call(OpFinish) ▶ SIGKILL to all but the caller;
//	                                      once they are gone: status.json,
//	                                      then the reply
//	loop records the end ◀─────────────── exits once the caller has
//	                                      (the cgroup is removed then)
//
// A caller that dies before it says how its command ended ends the job:
// as its ending says (TIMEOUT after the time limit, CANCELLED after a
// cancel) or CANCELLED, and what it left is killed at once.
//
// Without a cgroup the caller is not the supervisor's descendant, so the
// job is the caller, its descendants and the process groups they made
// (noted every groupsEvery, so that a group orphaned by the caller's death
// is still found).

// groupsEvery is how often the process groups of the callers'
// descendants are noted, without a cgroup.
const groupsEvery = time.Second

// adoption is what an interactive job's supervisor keeps of its caller.
type adoption struct {
	// caller is the first process adopted: its death ends the job.
	caller int
	// callerFD is the caller's pidfd (-1 when none is open).
	callerFD int
	// exit is the caller's command's exit, from OpFinish; finishedBy the
	// process that said it (spared, with the caller, the end's SIGKILL).
	exit       string
	finishedBy int
	// replies are the OpFinish calls waiting for the final status.
	replies []chan Reply
}

// startAdopted is startJob for an interactive job: stepd.json, and the
// caller adopted when the spec names it.
func (sv *supervisor) startAdopted() error {
	sv.start = time.Now()
	sv.adopt = &adoption{callerFD: -1}
	sv.callerGone = make(chan int, 1)
	if sv.tr.cgroup == "" {
		t := time.NewTicker(groupsEvery)
		sv.groupsC = t.C
	}
	if sv.spec.Caller > 0 {
		sv.adoptPID(sv.spec.Caller)
	}
	return sv.writeAdoptIdentity()
}

func (sv *supervisor) writeAdoptIdentity() error {
	sv.id.JobPID, sv.id.Tracking, sv.id.Cgroup = sv.adopt.caller, sv.tr.mode(), sv.tr.cgroup
	return writeIdentity(sv.dir, sv.id)
}

// adoptPID makes pid one of the job's processes, and the first one its
// caller, watched through a pidfd. It says how pid is tracked.
func (sv *supervisor) adoptPID(pid int) string {
	a := sv.adopt
	first := a.caller == 0
	if first {
		a.caller = pid
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			// Gone already (ESRCH), or a kernel without pidfds: polled.
			sv.log.Printf("job %d: caller %d: pidfd: %v", sv.spec.JobID, pid, err)
		} else {
			a.callerFD = fd
		}
		go watchCaller(pid, a.callerFD, sv.callerGone, sv.done)
	}
	how := sv.tr.adoptRoot(pid)
	if sv.tr.cgroup == "" && sv.groupsC == nil {
		// The cgroup could not take it: process groups from now on.
		sv.groupsC = time.NewTicker(groupsEvery).C
	}
	sv.log.Printf("job %d: adopted pid %d (%s)", sv.spec.JobID, pid, how)
	if first || sv.id.Cgroup != sv.tr.cgroup {
		if err := sv.writeAdoptIdentity(); err != nil {
			sv.warn("identity not written; a restarted daemon may call the job lost: %v", err)
		}
	}
	return how
}

// watchCaller reports on gone when pid has ended, through its pidfd, or
// by polling /proc where there is none; it stops once done is closed.
func watchCaller(pid, fd int, gone chan<- int, done <-chan struct{}) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		select {
		case <-done:
			return
		default:
		}
		if fd >= 0 {
			n, err := unix.Poll(fds, 1000)
			if err != nil && !errors.Is(err, unix.EINTR) {
				break
			}
			if n > 0 {
				break
			}
			continue
		}
		if !procfs.Alive(pid) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	gone <- pid
}

// callerEnded is the loop's: the caller has exited. Before OpFinish, that
// ends the job (as its ending says, else CANCELLED), and what it left is
// killed now.
func (sv *supervisor) callerEnded(pid int) {
	if sv.mainDone {
		sv.adopt.finishedBy = 0
		return
	}
	sv.log.Printf("job %d: its caller %d ended without a word: ending the job", sv.spec.JobID, pid)
	if sv.ending == nil {
		sv.ending = &Ending{At: time.Now()} // ended by no one: CANCELLED
	}
	sv.mainDone, sv.mainEnd = true, time.Now()
	sv.adopt.exit = "0:9"
	sv.stopKillTimer()
	sv.kill()
}

// finishAdopted is OpFinish: the caller's command ended with r.Exit.
// What it left is killed now, but the caller and the process that asks,
// which exit by themselves; the reply waits for the final status. It
// reports false when it answered at once (an error).
func (sv *supervisor) finishAdopted(c call) bool {
	if sv.adopt == nil {
		c.reply <- Reply{Error: "not an interactive job: nothing to finish"}
		return true
	}
	if _, _, err := parseExit(c.req.Exit); err != nil {
		c.reply <- Reply{Error: err.Error()}
		return true
	}
	sv.adopt.replies = append(sv.adopt.replies, c.reply)
	if sv.mainDone {
		return true // finished already: the reply comes with the status
	}
	sv.mainDone, sv.mainEnd = true, time.Now()
	sv.adopt.exit, sv.adopt.finishedBy = c.req.Exit, c.req.PID
	sv.log.Printf("job %d: the caller's command ended: %s", sv.spec.JobID, c.req.Exit)
	sv.stopKillTimer()
	sv.kill()
	return true
}

func (sv *supervisor) stopKillTimer() {
	if sv.killT != nil {
		sv.killT.Stop()
	}
	sv.killC = nil
}

// spared are the processes an interactive job's end does not kill: its
// caller and the process that said how its command ended (OpFinish), on
// their way out.
func (sv *supervisor) spared() []int {
	if sv.adopt == nil || sv.adopt.finishedBy == 0 {
		return nil
	}
	return []int{sv.adopt.caller, sv.adopt.finishedBy}
}

// jobPIDs are the job's live processes but the spared ones.
func (sv *supervisor) jobPIDs() []int {
	pids := sv.tr.pids()
	if sp := sv.spared(); len(sp) > 0 {
		pids = slices.DeleteFunc(pids, func(p int) bool { return slices.Contains(sp, p) })
	}
	return pids
}

// killJob sends SIGKILL to every process of the job but the spared ones.
func (sv *supervisor) killJob() {
	if len(sv.spared()) == 0 {
		sv.tr.killAll()
		return
	}
	signalPIDs(sv.jobPIDs(), syscall.SIGKILL)
	sv.tr.killGroups()
}

// adoptedTargets are the processes a signal to an interactive job
// reaches: none for the batch shell (it has none), else all but its srun
// and salloc processes, which pass on what people send them: the
// daemon's signals go to the tasks alone, or they would get them twice.
func (sv *supervisor) adoptedTargets(target string) []int {
	if target == TargetBatch {
		return nil
	}
	pids := sv.jobPIDs()
	if target == TargetAll {
		return pids
	}
	return slices.DeleteFunc(pids, func(p int) bool {
		if p == sv.adopt.caller {
			return true
		}
		name := procfs.Comm(p)
		return name == "srun" || name == "salloc"
	})
}

// adoptedOutcome is an interactive job's outcome: the exit its caller
// reported, as a wait status.
func (sv *supervisor) adoptedOutcome() outcome {
	code, sig, _ := parseExit(sv.adopt.exit)
	ws := syscall.WaitStatus(code << 8)
	if sig != 0 {
		ws = syscall.WaitStatus(sig)
	}
	return outcome{wait: ws, ending: sv.ending}
}

// parseExit reads Slurm's "code:signal".
func parseExit(s string) (code, sig int, err error) {
	a, b, ok := strings.Cut(s, ":")
	code, err1 := strconv.Atoi(a)
	sig, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || code < 0 || code > 255 || sig < 0 || sig > 64 {
		return 0, 0, fmt.Errorf("exit code %q is not code:signal", s)
	}
	return code, sig, nil
}

// answerFinish gives the OpFinish calls the final status.
func (sv *supervisor) answerFinish(st Status) {
	if sv.adopt == nil {
		return
	}
	for _, r := range sv.adopt.replies {
		s := st
		r <- Reply{Status: &s}
	}
	sv.adopt.replies = nil
}

// awaitCaller waits, at the end, for the caller to exit (it was told the
// job's end and is on its way out), for at most patience: it may be in
// the job's cgroup, which cannot be removed before.
func (sv *supervisor) awaitCaller(patience time.Duration) {
	if sv.adopt == nil || sv.adopt.caller == 0 {
		return
	}
	deadline := time.Now().Add(patience)
	for procfs.Alive(sv.adopt.caller) && time.Now().Before(deadline) {
		if fd := sv.adopt.callerFD; fd >= 0 {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			_, _ = unix.Poll(fds, 100)
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// callerPatience bounds awaitCaller.
const callerPatience = time.Minute

// adoptRoot makes pid one of the job's processes: into its cgroup, with
// its descendants, where it has one; where that fails (or there is none) the job is tracked by
// its roots' descendants and their process groups. It says which.
func (t *tracker) adoptRoot(pid int) string {
	if !slices.Contains(t.roots, pid) {
		t.roots = append(t.roots, pid)
	}
	if t.cgroup != "" {
		if err := procfs.JoinCgroup(t.cgroup, pid); err != nil {
			t.why = fmt.Sprintf("could not join cgroup %s: %v", t.cgroup, err)
			if os.Remove(t.cgroup) == nil {
				t.cgroup, t.memory = "", false
			}
		} else {
			// What it started before goes with it (a process that
			// forks meanwhile may leave a child behind, found by the
			// supervisor's tree no more than by the cgroup's).
			for _, p := range procfs.Descendants(pid) {
				_ = procfs.JoinCgroup(t.cgroup, p)
			}
		}
	}
	if t.cgroup != "" {
		return "cgroup"
	}
	return "process group"
}

// noteGroups remembers the process groups of the roots' descendants
// (not a root's own, which is its terminal's job), so that they can be
// killed once a root is gone and its children with it from its tree.
func (t *tracker) noteGroups() {
	if t.groups == nil {
		t.groups = map[int]bool{}
	}
	for _, r := range t.roots {
		own, err := procfs.ReadStat(r)
		if err != nil || !own.Live() {
			continue
		}
		for _, p := range procfs.Descendants(r) {
			if st, err := procfs.ReadStat(p); err == nil && st.PGRP != own.PGRP && st.PGRP > 1 {
				t.groups[st.PGRP] = true
			}
		}
	}
}

// rootPIDs are the live roots, their descendants and the members of the
// process groups they made: an interactive job's processes without a
// cgroup.
func (t *tracker) rootPIDs() []int {
	if len(t.roots) == 0 {
		return nil
	}
	t.noteGroups()
	var out []int
	for _, r := range t.roots {
		if procfs.Alive(r) {
			out = append(out, r)
			out = append(out, procfs.Descendants(r)...)
		}
	}
	return append(out, procfs.InGroups(t.groups)...)
}

// killGroups sends SIGKILL to the process groups noted.
func (t *tracker) killGroups() {
	for g := range t.groups {
		if g > 1 { // kill(-1) is every process
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}
}
