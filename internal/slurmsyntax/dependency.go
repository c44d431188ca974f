package slurmsyntax

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DepType is a dependency kind.
type DepType string

// Dependency kinds of --dependency.
const (
	DepAfter      DepType = "after"
	DepAfterAny   DepType = "afterany"
	DepAfterOK    DepType = "afterok"
	DepAfterNotOK DepType = "afternotok"
	DepAfterCorr  DepType = "aftercorr"
	DepAfterBurst DepType = "afterburstbuffer"
	DepSingleton  DepType = "singleton"
	// DepExpand is "expand:ID", growing a running job; slurmctld refuses
	// it unless SchedulerParameters has permit_job_expansion.
	DepExpand DepType = "expand"
)

// Task values of a JobRef besides a task id.
const (
	// WholeJob is a plain job id: "afterok:12".
	WholeJob = -1
	// AllTasks is every task of an array job: "afterok:12_*".
	AllTasks = -2
)

// JobRef names a job or one task of an array job; Task is -1 (WholeJob)
// for a whole job, -2 (AllTasks) for "ID_*".
type JobRef struct {
	JobID uint32
	Task  int
}

// String prints the reference as Slurm does: "12", "12_3", "12_*".
func (r JobRef) String() string {
	id := strconv.FormatUint(uint64(r.JobID), 10)
	switch {
	case r.Task == AllTasks:
		return id + "_*"
	case r.Task >= 0:
		return id + "_" + strconv.Itoa(r.Task)
	}
	return id
}

// DepTerm is one "type:id[:id...]" clause. For "after:ID+MIN", Delay holds
// the minutes; it applies to every job of the term.
type DepTerm struct {
	Type  DepType
	Jobs  []JobRef
	Delay time.Duration
}

// Dependency is a parsed --dependency spec: all terms must hold (","), or
// any one of them ("?") when Any is set. The zero Dependency is none.
type Dependency struct {
	Terms []DepTerm
	Any   bool
}

// Limits that bound the work of ParseDependency.
const (
	// maxDependencyLen is slurmctld's limit on the string (128 KiB).
	maxDependencyLen = 128 * 1024
	// maxDependencyJobs bounds what "ID_[0-1000]" expansions may produce.
	maxDependencyJobs = 1 << 16
	// maxDelayMinutes keeps "+MIN" in seconds within Slurm's C int.
	maxDelayMinutes = math.MaxInt32 / 60
)

// ParseDependency parses a --dependency spec as slurmctld's
// update_job_dependency does: "afterok:12:13,afterany:14",
// "afterok:5?afterany:6", "singleton", "after:5+10" (10 minutes after 5
// started), "afterok:7_2" (one task), "afterok:7_*" (all tasks),
// "afterok:7_[1-3]" (tasks 1 to 3, MaxArraySize 1001), "12,13" (the old
// form, afterany). Types are case-insensitive. "" and "0" are no
// dependency.
//
// Slurm checks only the syntax here; whether the jobs exist, or a job
// depends on itself, is the caller's to check. A syntax error is reported
// by slurmctld as "Batch job submission failed: Job dependency problem":
// the caller maps the error to that message.
//
// The result is canonical: duplicate (type, job) pairs are dropped, as
// Slurm drops them, and neighbouring clauses of one type and delay are
// merged, so "afterok:1,afterok:2" parses as "afterok:1:2". Any is set when
// a '?' appears: slurmctld 22.05 does not refuse a spec that mixes ','
// and '?' (its man page says only one may be used) but treats every
// clause as "any", and so do we.
func ParseDependency(s string) (Dependency, error) {
	return ParseDependencyMaxArray(s, DefaultMaxArraySize)
}

// ParseDependencyMaxArray is ParseDependency with the cluster's
// MaxArraySize, which bounds the task ids of "ID_[...]".
func ParseDependencyMaxArray(s string, maxArraySize int) (Dependency, error) {
	if s == "" || s == "0" {
		return Dependency{}, nil
	}
	if len(s) > maxDependencyLen {
		return Dependency{}, fmt.Errorf("invalid dependency: longer than %d bytes", maxDependencyLen)
	}
	expanded, err := expandArrayDeps(s, min(max(maxArraySize, 0), MaxArraySizeLimit))
	if err != nil {
		return Dependency{}, fmt.Errorf("invalid dependency %q: %w", s, err)
	}
	p := depParser{s: expanded, seen: map[depKey]bool{}}
	if err := p.parse(); err != nil {
		return Dependency{}, fmt.Errorf("invalid dependency %q: %w", s, err)
	}
	if len(p.seen) < 2 {
		p.dep.Any = false // one dependency: "any" and "all" agree
	}
	return p.dep, nil
}

type depKey struct {
	typ DepType
	job JobRef
}

type depParser struct {
	s    string
	pos  int
	dep  Dependency
	seen map[depKey]bool
}

// add appends one dependency, dropping duplicates as
// _add_dependency_to_list does, merging into the last term when it has the
// same type and delay.
func (p *depParser) add(t DepType, job JobRef, delay time.Duration) {
	k := depKey{t, job}
	if t == DepSingleton {
		k.job = JobRef{}
	}
	if p.seen[k] {
		return
	}
	p.seen[k] = true
	terms := p.dep.Terms
	if n := len(terms); n > 0 && terms[n-1].Type == t && terms[n-1].Delay == delay && t != DepSingleton {
		terms[n-1].Jobs = append(terms[n-1].Jobs, job)
		return
	}
	term := DepTerm{Type: t, Delay: delay}
	if t != DepSingleton {
		term.Jobs = []JobRef{job}
	}
	p.dep.Terms = append(terms, term)
}

func (p *depParser) rest() string { return p.s[p.pos:] }

// newTypes are the "type:" prefixes, in the order slurmctld tries them.
var newTypes = []DepType{DepAfterNotOK, DepAfterCorr, DepAfterAny, DepAfterOK, DepAfterBurst, DepAfter, DepExpand}

func (p *depParser) parse() error {
	for {
		rest := p.rest()
		switch {
		case hasPrefixFold(rest, "singleton"):
			p.pos += len("singleton")
			if err := p.state(); err != nil {
				return err
			}
			p.add(DepSingleton, JobRef{}, 0)
		case !strings.Contains(rest, ":") && isDigit(byteAt(rest, 0)):
			// The old form: a job id alone means afterany; it takes no
			// delay, state or '?'.
			job, err := p.jobRef()
			if err != nil {
				return err
			}
			p.add(DepAfterAny, job, 0)
			if c := byteAt(p.s, p.pos); c != 0 && c != ',' {
				return fmt.Errorf("unexpected %q after job %s", p.rest(), job)
			}
		default:
			if err := p.clause(); err != nil {
				return err
			}
		}
		switch byteAt(p.s, p.pos) {
		case 0:
			return nil
		case ',':
		case '?':
			p.dep.Any = true
		default:
			// Slurm ignores what follows a delay or a state, and stops
			// reading there; we refuse it.
			return fmt.Errorf("unexpected %q", p.rest())
		}
		p.pos++
		if p.pos == len(p.s) {
			return fmt.Errorf("nothing after the last separator")
		}
	}
}

// clause parses "type:job[+min][(state)][:job...]".
func (p *depParser) clause() error {
	rest := p.rest()
	var typ DepType
	for _, t := range newTypes {
		if hasPrefixFold(rest, string(t)+":") {
			typ = t
			break
		}
	}
	if typ == "" {
		name, _, _ := strings.Cut(rest, ":")
		return fmt.Errorf("unknown dependency type %q; want after, afterany, afterok, afternotok, "+
			"aftercorr, afterburstbuffer, expand or singleton", name)
	}
	p.pos += len(typ) + 1
	// Like slurmctld, a delay once given stays for the jobs after it in
	// the clause: "after:5+10:6" waits 10 minutes after each.
	var delay time.Duration
	for {
		job, err := p.jobRef()
		if err != nil {
			return err
		}
		switch c := byteAt(p.s, p.pos); c {
		case 0, ',', '?', ':', '+', '(':
		default:
			return fmt.Errorf("unexpected %q after job %s", p.rest(), job)
		}
		if byteAt(p.s, p.pos) == '+' {
			p.pos++
			m, n := strtol(p.rest())
			if n == 0 || m <= 0 || m > maxDelayMinutes {
				return fmt.Errorf("after %s: want a delay in minutes from 1 to %d after '+'", job, maxDelayMinutes)
			}
			p.pos += n
			delay = time.Duration(m) * time.Minute
		}
		if err := p.state(); err != nil {
			return err
		}
		p.add(typ, job, delay)
		if byteAt(p.s, p.pos) != ':' {
			return nil
		}
		p.pos++
	}
}

// jobRef parses "ID", "ID_TASK" or "ID_*".
func (p *depParser) jobRef() (JobRef, error) {
	id, n := strtol(p.rest())
	// strtol reads "-5" as a job id that wraps to 4294967291, and no
	// digits as 0, which slurmctld rejects; we reject both.
	if n == 0 || id <= 0 || id > math.MaxUint32 {
		return JobRef{}, fmt.Errorf("want a job id (a number from 1 to %d) at %q", uint32(math.MaxUint32), p.rest())
	}
	p.pos += n
	job := JobRef{JobID: uint32(id), Task: WholeJob}
	if byteAt(p.s, p.pos) != '_' {
		return job, nil
	}
	p.pos++
	if byteAt(p.s, p.pos) == '*' {
		p.pos++
		job.Task = AllTasks
		return job, nil
	}
	t, n := strtol(p.rest())
	if n == 0 || t < 0 || t >= MaxArraySizeLimit {
		return JobRef{}, fmt.Errorf("want a task id from 0 to %d or * after %d_", MaxArraySizeLimit-1, id)
	}
	p.pos += n
	job.Task = int(t)
	return job, nil
}

// state skips the "(unfulfilled)" or "(failed)" that scontrol shows after
// each dependency; Slurm accepts it back. The state itself is not kept.
func (p *depParser) state() error {
	if byteAt(p.s, p.pos) != '(' {
		return nil
	}
	end := strings.IndexByte(p.rest(), ')')
	if end < 0 {
		return fmt.Errorf("no ')' after %q", p.rest())
	}
	p.pos += end + 1
	return nil
}

// expandArrayDeps is _xlate_array_dep: "7_[1-3]" becomes "7_1:7_2:7_3".
// The ids in brackets are a bitmap list ("1-3,5") or one stepped range
// ("1-9:2"), each below maxArraySize.
func expandArrayDeps(s string, maxArraySize int) (string, error) {
	if !strings.Contains(s, "_[") {
		return s, nil
	}
	var b strings.Builder
	jobStart := -1 // start of the digits just before, as jobid_ptr
	count := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case isDigit(c):
			if jobStart < 0 {
				jobStart = i
			}
		case c == '_' && byteAt(s, i+1) == '[' && jobStart >= 0:
			job, _ := digits(s[jobStart:])
			end := strings.IndexByte(s[i+2:], ']')
			if end < 0 {
				return "", fmt.Errorf("no ']' after %q", s[i:])
			}
			list := s[i+2 : i+2+end]
			tasks, err := taskList(list, maxArraySize, maxDependencyJobs-count)
			if err != nil {
				return "", fmt.Errorf("%d_[%s]: %w", job, list, err)
			}
			count += len(tasks)
			for k, t := range tasks {
				if k > 0 {
					fmt.Fprintf(&b, ":%d_", uint32(min(job, math.MaxUint32)))
				}
				b.WriteString(strconv.Itoa(t))
			}
			i += 2 + end // to the ']'
			jobStart = -1
		default:
			jobStart = -1
		}
	}
	return b.String(), nil
}

// taskList reads the ids inside "ID_[...]" as Slurm's bit_unfmt does:
// "1-3,5" or a single "first-last:step", in ascending order. Slurm ignores
// stray characters and reversed ranges in the first form; we refuse them.
// budget is how many ids may still be produced.
func taskList(list string, maxSize, budget int) ([]int, error) {
	var tasks []int
	mark := func(lo, hi, step int64) error {
		if hi >= int64(maxSize) {
			return fmt.Errorf("task ids must be below MaxArraySize=%d", maxSize)
		}
		if (hi-lo)/step+1 > int64(budget-len(tasks)) {
			return fmt.Errorf("more than %d jobs", maxDependencyJobs)
		}
		for t := lo; t <= hi; t += step {
			tasks = append(tasks, int(t))
		}
		return nil
	}
	if rng, stepStr, stepped := strings.Cut(list, ":"); stepped {
		lo, hi, ok := idRange(rng)
		step, nd := digits(stepStr)
		if !ok || nd == 0 || nd != len(stepStr) || step <= 0 {
			return nil, fmt.Errorf("want first-last:step")
		}
		// bitfmt2int stops before the last id (i < end), so "1-9:2" is
		// 1,3,5,7; we do as it does.
		if hi > lo {
			if err := mark(lo, hi-1, step); err != nil {
				return nil, err
			}
		}
	} else {
		for _, part := range strings.Split(list, ",") {
			lo, hi, ok := idRange(part)
			if !ok {
				return nil, fmt.Errorf("want ids and ranges such as 1-3,5")
			}
			if err := mark(lo, hi, 1); err != nil {
				return nil, err
			}
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no task ids")
	}
	// A bitmap lists each id once, in ascending order.
	slices.Sort(tasks)
	return slices.Compact(tasks), nil
}

// idRange reads "N" or "N-M" (N <= M) made of digits only.
func idRange(s string) (lo, hi int64, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, n := digits(a)
	if n == 0 || n != len(a) {
		return 0, 0, false
	}
	hi = lo
	if isRange {
		var m int
		hi, m = digits(b)
		if m == 0 || m != len(b) || hi < lo {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// String prints the spec in the form ParseDependency reads:
// "afterok:12:13,afterany:14", "after:5+10", "singleton". A delay prints
// after every job it applies to. When Any is set each job is a clause of
// its own, "afterok:5?afterok:6?afterany:7", so that "any" survives even
// for jobs of one clause. The zero Dependency prints "" (scontrol shows
// it as "(null)").
func (d Dependency) String() string {
	var b strings.Builder
	for _, t := range d.Terms {
		if t.Type == DepSingleton {
			d.sep(&b)
			b.WriteString(string(t.Type))
			continue
		}
		for i, j := range t.Jobs {
			if i == 0 || d.Any {
				d.sep(&b)
				b.WriteString(string(t.Type))
			}
			b.WriteString(":" + j.String())
			if t.Delay > 0 {
				b.WriteString("+" + strconv.FormatInt(int64(t.Delay/time.Minute), 10))
			}
		}
	}
	return b.String()
}

// sep writes the separator before a clause, if one came before.
func (d Dependency) sep(b *strings.Builder) {
	if b.Len() == 0 {
		return
	}
	if d.Any {
		b.WriteByte('?')
	} else {
		b.WriteByte(',')
	}
}

// DepState is the state scontrol shows after each dependency.
type DepState int

// Dependency states.
const (
	DepUnfulfilled DepState = iota
	DepFulfilled
	DepFailed
)

// String returns the word scontrol shows: "unfulfilled", "fulfilled",
// "failed".
func (s DepState) String() string {
	switch s {
	case DepUnfulfilled:
		return "unfulfilled"
	case DepFulfilled:
		return "fulfilled"
	case DepFailed:
		return "failed"
	}
	return "unknown"
}

// Show prints the dependencies as scontrol's Dependency= field
// (_depend_list2str): one entry per job, each followed by its state,
// fulfilled ones left out: "afterok:12(unfulfilled),afterany:14(failed)",
// "after:5+10(unfulfilled)", "singleton(unfulfilled)". state gives each
// dependency's state; nil means all unfulfilled. slurmctld shows a whole
// array job as "ID_*": the caller passes such refs as AllTasks. When
// nothing is left Show returns "" (scontrol shows "(null)").
func (d Dependency) Show(state func(t DepType, job JobRef) DepState) string {
	if state == nil {
		state = func(DepType, JobRef) DepState { return DepUnfulfilled }
	}
	sep := ","
	if d.Any {
		sep = "?"
	}
	var b strings.Builder
	entry := func(s string, st DepState) {
		if st == DepFulfilled {
			return
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s + "(" + st.String() + ")")
	}
	for _, t := range d.Terms {
		if t.Type == DepSingleton {
			entry("singleton", state(t.Type, JobRef{}))
			continue
		}
		for _, j := range t.Jobs {
			s := string(t.Type) + ":" + j.String()
			if t.Delay > 0 {
				s += "+" + strconv.FormatInt(int64(t.Delay/time.Minute), 10)
			}
			entry(s, state(t.Type, j))
		}
	}
	return b.String()
}
