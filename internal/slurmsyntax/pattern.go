package slurmsyntax

import (
	"strconv"
	"strings"
)

// noVal is Slurm's NO_VAL, what %a prints for a job that is not an array.
const noVal = 4294967294

// maxPatternWidth is the widest zero padding Slurm gives ("%10j").
const maxPatternWidth = 10

// PatternVars are the values of an output filename pattern.
type PatternVars struct {
	JobID       uint32 // %j
	ArrayJobID  uint32 // %A (JobID is used when not an array)
	ArrayTaskID int    // %a; -1 when not an array (expands to 4294967294 as Slurm)
	JobName     string // %x
	User        string // %u
	Node        string // %N
	NodeID      int    // %n, the node's index in the job: 0 on one machine
	StepID      int    // %s; -1 for the batch step (prints "batch")
	TaskID      int    // %t
}

// ExpandPattern expands an --output/--error/--input pattern for a batch job
// as slurmstepd does (fname_create and _create_batch_fname in
// src/slurmd/common/fname.c):
//
//   - %j job id, %A array job id (the job id when not an array), %a array
//     task id (4294967294 when not an array), %s step ("batch" for the
//     batch step), %J job id, plus ".step" for a step that is not the
//     batch step, %t task id, %n node index, %N node name, %u user name,
//     %x job name, %% a '%';
//   - a width pads numbers with zeros: "%4a" gives 0007; widths above 10
//     count as 10; names and "batch" are never padded;
//   - an unknown "%c" stays as it is, but a width before it is dropped up
//     to its last digit: "%4q" gives "4q", as Slurm does;
//   - a pattern with a backslash is not expanded at all: the backslashes
//     that escape are removed ("\\" gives "\") and the rest kept, so
//     "out\%j" names the file "out%j";
//   - a pattern that is only a number n names task n's stream: every other
//     task gets /dev/null (for a batch job, the task is 0).
//
// The result is relative when the pattern is: the caller joins it to the
// job's working directory.
func ExpandPattern(pattern string, v PatternVars) string {
	if n, used := digits(pattern); used > 0 && used == len(pattern) && n != int64(uint32(v.TaskID)) {
		return "/dev/null"
	}
	if strings.Contains(pattern, `\`) {
		return removeSlashes(pattern)
	}
	var out strings.Builder
	q, p := 0, 0
	for p < len(pattern) {
		if pattern[p] != '%' {
			p++
			continue
		}
		if byteAt(pattern, p+1) == '%' {
			out.WriteString(pattern[q : p+1])
			p += 2
			q = p
			continue
		}
		p++
		wid := 0
		if isDigit(byteAt(pattern, p)) {
			out.WriteString(pattern[q : p-1])
			w, n := digits(pattern[p:])
			p += n
			wid = int(min(w, maxPatternWidth))
			// Slurm keeps the width's last digit as the start of the text
			// still to copy: an unknown letter after it keeps that digit.
			q = p - 1
			if p >= len(pattern) {
				break
			}
		}
		if s, ok := v.field(byteAt(pattern, p), wid); ok {
			out.WriteString(pattern[q : p-1])
			out.WriteString(s)
			p++
			q = p
		}
	}
	out.WriteString(pattern[q:p])
	return out.String()
}

// field is the expansion of "%<c>" with zero padding wid, as
// _batch_path_check; ok is false for a letter Slurm does not expand.
func (v PatternVars) field(c byte, wid int) (s string, ok bool) {
	pad := func(n uint64) string {
		s := strconv.FormatUint(n, 10)
		if len(s) < wid {
			s = strings.Repeat("0", wid-len(s)) + s
		}
		return s
	}
	switch c {
	case 'a':
		return pad(v.arrayTask()), true
	case 'A':
		if v.ArrayTaskID < 0 {
			return pad(uint64(v.JobID)), true
		}
		return pad(uint64(v.ArrayJobID)), true
	case 'j':
		return pad(uint64(v.JobID)), true
	case 'J':
		s := pad(uint64(v.JobID))
		if v.StepID >= 0 {
			s += "." + strconv.FormatUint(uint64(uint32(v.StepID)), 10)
		}
		return s, true
	case 'n':
		return pad(uint64(uint32(v.NodeID))), true
	case 'N':
		return v.Node, true
	case 's':
		if v.StepID < 0 {
			return "batch", true
		}
		return pad(uint64(uint32(v.StepID))), true
	case 't':
		return pad(uint64(uint32(v.TaskID))), true
	case 'u':
		return v.User, true
	case 'x':
		return v.JobName, true
	}
	return "", false
}

func (v PatternVars) arrayTask() uint64 {
	if v.ArrayTaskID < 0 {
		return noVal
	}
	return uint64(uint32(v.ArrayTaskID))
}

// removeSlashes is remove_path_slashes: "\\" becomes "\", a lone "\" goes.
func removeSlashes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if byteAt(s, i+1) == '\\' {
				b.WriteByte('\\')
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ShowPattern expands a pattern as scontrol show job prints StdOut=,
// StdErr= and StdIn= (_fname_format in src/api/job_info.c), which is
// simpler than what the job really gets: it replaces %A, %a, %j, %u and
// then %x, in that order, everywhere, and nothing else (no widths, no %%,
// no backslashes). The caller joins a relative result to WorkDir with a
// '/'.
func ShowPattern(pattern string, v PatternVars) string {
	arrayJob := v.ArrayJobID
	if v.ArrayTaskID < 0 {
		arrayJob = v.JobID
	}
	s := strings.ReplaceAll(pattern, "%A", strconv.FormatUint(uint64(arrayJob), 10))
	s = strings.ReplaceAll(s, "%a", strconv.FormatUint(v.arrayTask(), 10))
	s = strings.ReplaceAll(s, "%j", strconv.FormatUint(uint64(v.JobID), 10))
	s = strings.ReplaceAll(s, "%u", v.User)
	return strings.ReplaceAll(s, "%x", v.JobName)
}
