package scontrol

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// scontrol update, for jobs (src/scontrol/scontrol.c _update_it and
// src/scontrol/update_job.c of 22.05). slurm-lite's daemon applies
// slurmctld's rules; this side reads the words as scontrol does and prints
// the daemon's answer in scontrol's words.

// updateEntities are the tags _update_it tells entities by, with their
// shortest abbreviation; only jobs are slurm-lite's.
var updateEntities = []struct {
	tag string
	min int
	job bool
}{
	{"NodeName", 3, false}, {"PartitionName", 3, false},
	{"JobId", 3, true}, {"JobNAME", 3, true},
	{"StepId", 4, false}, {"FrontendName", 2, false},
	{"ReservationName", 3, false}, {"SlurmctldDebug", 2, false},
}

// updateOther updates the entities other than jobs, by the tag that names
// them ("NodeName"): a file that adds one registers it here in its init.
var updateOther = map[string]func(s *scontrolArgs, argv []string){}

// update is _update_it: argv are the words after "update".
func (s *scontrolArgs) update(tag string, argv []string) {
	if len(argv) == 0 {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "too few arguments for %s keyword\n", tag)
		return
	}
	job, other := false, ""
	for i := 0; i < len(argv); i++ {
		t, _, hasVal := strings.Cut(argv[i], "=")
		if !hasVal {
			i++
		}
		for _, e := range updateEntities {
			if keyword(t, e.tag, e.min) {
				if e.job {
					job = true
				} else if other == "" {
					other = e.tag
				}
			}
		}
	}
	switch {
	case job:
		s.updateJob(argv)
	case updateOther[other] != nil:
		updateOther[other](s, argv)
	case other != "":
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: slurm-lite's scontrol updates jobs only (JobId=...), not %s\n", other)
	default:
		s.exit = 1
		fmt.Fprint(s.sio.Stderr, "No valid entity in update command\n"+
			"Input line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n")
	}
}

// niceOffset is Slurm's NICE_OFFSET: nice values stay within
// ±(niceOffset-3).
const niceOffset = 0x80000000

// updateRequest is scontrol_update_job's reading of the command line.
type updateRequest struct {
	u      api.Update
	jobStr string // JobId=, as given
	uid    int64  // UserID=, -1 for none
	// add is the sign of TimeLimit=+N / -N ('+' or '-'), 0 for none.
	add   byte
	count int
}

// updateJob is scontrol_update_job.
func (s *scontrolArgs) updateJob(argv []string) {
	req, ok := s.readUpdate(argv)
	if !ok {
		return
	}
	if req.count == 0 {
		s.exit = 1
		fmt.Fprintln(s.sio.Stderr, "No changes specified")
		return
	}
	if req.jobStr == "" && req.u.Name != nil {
		if req.jobStr, ok = s.jobsByName(*req.u.Name, req.uid); !ok {
			s.exit = 1
			return
		}
	}
	if req.jobStr == "" {
		s.exit = 1
		fmt.Fprintln(s.sio.Stderr, "scontrol: error: No job ID specified")
		return
	}
	jobs, ok := splitJobList(req.jobStr)
	if !ok {
		s.exit = 1
		if s.quiet != 1 {
			fmt.Fprintf(s.sio.Stderr, "%s for job %s\n", updateStrerror(slurm.ErrInvalidJobID, ""), req.jobStr)
		}
		return
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, expandJobID(j)...)
	}
	req.u.Jobs = ids
	if !s.connect() {
		return
	}
	var res api.UpdateResults
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	if err := s.client.Do(ctx, "POST", api.PathUpdate, req.u, &res); err != nil {
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	for _, r := range res.Results {
		if r.Array == nil {
			if r.Code != 0 {
				s.exit = 1
				if s.quiet != 1 {
					fmt.Fprintf(s.sio.Stderr, "%s for job %s\n", updateStrerror(r.Code, r.Error), r.Job)
					if r.Hint != "" {
						fmt.Fprintf(s.sio.Stderr, "slurm-lite: %s\n", r.Hint)
					}
				}
			}
			continue
		}
		for _, a := range r.Array {
			// A single group that succeeded is silent; otherwise every
			// group is printed, successes too ("No error"), and scontrol
			// exits 1.
			if a.Code == 0 && len(r.Array) == 1 {
				continue
			}
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stderr, "%s: %s\n", a.Job, updateStrerror(a.Code, a.Error))
			}
		}
	}
}

// readUpdate reads KEY=VALUE words as scontrol_update_job does, printing
// its errors; false when scontrol stops there.
func (s *scontrolArgs) readUpdate(argv []string) (updateRequest, bool) {
	req := updateRequest{uid: -1}
	fail := func(format string, args ...any) (updateRequest, bool) {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, format, args...)
		return req, false
	}
	for i := 0; i < len(argv); i++ {
		tag, val, hasVal := strings.Cut(argv[i], "=")
		var add byte
		switch {
		case hasVal && len(tag) > 1 && (tag[len(tag)-1] == '+' || tag[len(tag)-1] == '-'):
			add, tag = tag[len(tag)-1], tag[:len(tag)-1]
		case hasVal:
		case keyword(tag, "Nice", 2):
			n := 100
			req.u.Nice = &n
			req.count++
			continue
		case keyword(tag, "ResetAccrueTime", 3):
			return fail("scontrol: error: slurm-lite does not keep an accrue time to reset (%s)\n", argv[i])
		case i+1 < len(argv):
			i++
			val = argv[i]
		default:
			return fail("Invalid input: %s\nRequest aborted\n", argv[i])
		}
		switch {
		case keyword(tag, "JobId", 3):
			req.jobStr = val
			continue
		case keyword(tag, "Comment", 3):
			req.u.Comment = &val
		case keyword(tag, "TimeLimit", 5):
			if !s.readTimeLimit(&req, val, add) {
				return req, false
			}
			add = 0
		case keyword(tag, "Priority", 2):
			p, err := strconv.ParseInt(val, 10, 64)
			if err != nil || p < 0 || p >= 0xfffffffe {
				return fail("scontrol: error: Invalid Priority value: %s\n", val)
			}
			prio := uint32(p)
			req.u.Priority = &prio
		case keyword(tag, "Nice", 2):
			n, _, _ := slurmsyntax.Strtol(val, slurmsyntax.OutOfRange)
			if n > niceOffset-3 || n < -(niceOffset-3) {
				return fail("scontrol: error: Nice value out of range (+/- %d). Value ignored\n", niceOffset-3)
			}
			nice := int(n)
			req.u.Nice = &nice
		case keyword(tag, "Requeue", 4):
			n, err := strconv.ParseUint(val, 10, 16)
			if err != nil || n >= 0xfffe {
				return fail("scontrol: error: Invalid Requeue value: %s\n", val)
			}
			rq := n > 0
			req.u.Requeue = &rq
		case keyword(tag, "Partition", 2):
			req.u.Partition = &val
		case keyword(tag, "Name", 2), keyword(tag, "JobName", 4):
			req.u.Name = &val
		case keyword(tag, "Gres", 2), keyword(tag, "TresPerNode", 8):
			if strings.EqualFold(val, "help") || strings.EqualFold(val, "list") {
				fmt.Fprint(s.sio.Stdout, "Valid gres options are:\ngpu[[:type]:count]\nshard[[:type]:count]\n")
				continue
			}
			if req.u.Gres != nil && *req.u.Gres != "" {
				val = *req.u.Gres + "," + val
			}
			req.u.Gres = &val
		case keyword(tag, "TresPerJob", 8):
			req.u.GPUs = &val
		case strings.EqualFold(tag, "NumGPUs"):
			// slurm-lite's own: --gpus=N after submission.
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				return fail("scontrol: error: Invalid NumGPUs value: %s\n", val)
			}
			g := "gpu:" + strconv.FormatUint(n, 10)
			req.u.GPUs = &g
		case keyword(tag, "UserID", 3):
			uid, ok := cli.UserID(val, nil)
			if !ok {
				return fail("Invalid UserID: %s\nRequest aborted\n", val)
			}
			req.uid = uid
			continue
		default:
			return fail("Update of this parameter is not supported: %s\nRequest aborted\n", argv[i])
		}
		if add != 0 {
			return fail("scontrol: error: Option %s does not accept [+|-]= syntax\n", tag)
		}
		req.count++
	}
	return req, true
}

// readTimeLimit reads TimeLimit= as time_str2mins does; "+N" and "-N"
// move the job's current limit, which scontrol asks for first.
func (s *scontrolArgs) readTimeLimit(req *updateRequest, val string, add byte) bool {
	fail := func(format string, args ...any) bool {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: "+format+"\n", args...)
		return false
	}
	if val != "" && (val[0] == '+' || val[0] == '-') {
		if add != 0 {
			return fail("Invalid syntax, variations of +=- are not accepted.")
		}
		add, val = val[0], val[1:]
	}
	limit, err := slurmsyntax.ParseTimeLimit(val)
	if err != nil {
		return fail("Invalid TimeLimit value")
	}
	if limit == slurmsyntax.Infinite && !isUnlimitedWord(val) {
		limit = 0 // "0": time_str2mins reads zero minutes
	}
	if add != 0 {
		if req.jobStr == "" {
			return fail("JobId must precede TimeLimit increment or decrement")
		}
		cur, ok := s.currentLimit(req.jobStr)
		if !ok {
			return false
		}
		switch {
		case cur == slurmsyntax.Infinite || limit == slurmsyntax.Infinite:
			limit = slurmsyntax.Infinite
		case add == '+':
			limit += cur
		case limit > cur:
			return fail("TimeLimit decrement larger than current time limit (%d > %d)", int64(limit/time.Minute), int64(cur/time.Minute))
		default:
			limit = cur - limit
		}
	}
	req.u.TimeLimit = &limit
	return true
}

func isUnlimitedWord(s string) bool {
	return strings.EqualFold(s, "UNLIMITED") || strings.EqualFold(s, "INFINITE") || s == "-1"
}

// currentLimit is _get_job_time: the limit in force of one job or array
// task, for TimeLimit=+N and -N.
func (s *scontrolArgs) currentLimit(jobStr string) (time.Duration, bool) {
	fail := func(format string, args ...any) (time.Duration, bool) {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: "+format+"\n", args...)
		return 0, false
	}
	id, rest, _ := slurmsyntax.Strtol(jobStr, slurmsyntax.OutOfRange)
	task := jobrec.NoTask
	if strings.HasPrefix(rest, "_") {
		var t int64
		t, rest, _ = slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
		task = int(t)
	}
	if rest != "" || id <= 0 {
		return fail("Invalid job ID %s", jobStr)
	}
	if !s.connect() {
		return 0, false
	}
	jobs, err := cli.GetJobs(s.client, url.Values{"id": {strconv.FormatInt(id, 10)}})
	if err != nil {
		return fail("Could not load state information for job %s: %s", jobStr, updateStrerror(slurm.Success, err.Error()))
	}
	if len(jobs) == 0 {
		return fail("Job ID %s not found", jobStr)
	}
	if len(jobs) > 1 && task == jobrec.NoTask {
		return fail("TimeLimit increment/decrement not supported for job arrays")
	}
	for _, j := range jobs {
		switch {
		case int64(j.ID) == id && j.ArrayJobID == 0,
			j.ArrayJobID == uint32(id) && (task == jobrec.NoTask || j.ArrayTaskID == task ||
				(j.ArrayRecord() && containsInt(j.ArrayPending, task))):
			return j.Limit, true
		}
	}
	// As _get_job_time: nothing matched leaves NO_VAL, and scontrol stops
	// without a word.
	s.exit = 1
	return 0, false
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// jobsByName is _job_name2id: the jobs of a name (and of a user, with
// UserID=), as "12" or "12_3", comma separated.
func (s *scontrolArgs) jobsByName(name string, uid int64) (string, bool) {
	if !s.connect() {
		return "", false
	}
	jobs, err := cli.GetJobs(s.client, nil)
	if err != nil {
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: Could not load state information: %s\n", updateStrerror(slurm.Success, err.Error()))
		return "", false
	}
	if len(jobs) == 0 {
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: JobName %s not found\n", name)
		return "", false
	}
	var ids []string
	for _, j := range jobs {
		if (uid >= 0 && int64(j.UID) != uid) || j.Name != name {
			continue
		}
		if j.ArrayTaskID != jobrec.NoTask {
			ids = append(ids, fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID))
		} else {
			ids = append(ids, strconv.FormatUint(uint64(j.ID), 10))
		}
	}
	if len(ids) == 0 {
		if uid < 0 {
			fmt.Fprintf(s.sio.Stderr, "scontrol: error: No jobs with name '%s'\n", name)
		} else {
			fmt.Fprintf(s.sio.Stderr, "scontrol: error: No jobs with user ID %d and name '%s'\n", uid, name)
		}
		return "", false
	}
	return strings.Join(ids, ","), true
}

// expandJobID is _next_job_id for one item of a job list: "[5-7]" is
// jobs 5, 6 and 7 (with the same task part each), and a task part loses
// its brackets: "12_[1-3]" is sent as "12_1-3".
func expandJobID(item string) []string {
	idPart, taskPart, hasTask := strings.Cut(item, "_")
	suffix := ""
	if hasTask {
		t := strings.TrimPrefix(taskPart, "[")
		if i := strings.IndexByte(t, ']'); i >= 0 && strings.HasPrefix(taskPart, "[") {
			t = t[:i]
		}
		suffix = "_" + t
	}
	if !strings.Contains(idPart, "[") {
		return []string{idPart + suffix}
	}
	ids, err := slurmsyntax.ExpandHostlist(idPart)
	if err != nil {
		return []string{idPart + suffix}
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id + suffix
	}
	return out
}

// updateStrerror is slurm_strerror for an update's answer: strerror, but
// 0 is Slurm's "No error" too, which scontrol prints beside a group of
// array tasks that was changed.
func updateStrerror(code slurm.Errno, words string) string {
	if code == slurm.Success {
		return code.Error()
	}
	return cli.Strerror(code, words)
}
