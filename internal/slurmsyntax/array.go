package slurmsyntax

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxArraySize is slurm.conf's MaxArraySize when it is not set.
const DefaultMaxArraySize = 1001

// MaxArraySizeLimit is the largest MaxArraySize Slurm accepts. ParseArray
// treats a larger maxSize as this, which bounds its work.
const MaxArraySizeLimit = 4000001

// maxArraySpecLen is slurmctld's limit on the --array string (4 KiB).
const maxArraySpecLen = 4 * 1024

// Array is a parsed --array spec.
type Array struct {
	// Tasks are the task ids, ascending and distinct.
	Tasks []int
	// Limit is the %N throttle: at most Limit tasks run at once; 0 means none.
	Limit int
}

// ParseArray parses a --array spec as slurmctld does (_valid_array_inx and
// _parse_array_tok): comma-separated ids "7", ranges "0-15" and stepped
// ranges "5-9:2", each optionally in brackets "[0-15]", and a "%N" throttle
// ("0-99%8"). maxSize is MaxArraySize: every task id must be below it, a
// step too. Reversed ranges, a step of 0, an empty spec and anything else
// are errors; the caller reports them as slurmctld does, "Batch job
// submission failed: Invalid job array specification". (Slurm treats an
// empty --array as no array at all: the caller decides that before calling.)
//
// The throttle is read from the first '%' in the spec, as Slurm does; a
// '%' ends the token it is in, so "0-3%2,8" is tasks 0-3 and 8, at most 2
// at a time.
func ParseArray(s string, maxSize int) (Array, error) {
	if maxSize <= 0 {
		return Array{}, fmt.Errorf("invalid array %q: job arrays are disabled (MaxArraySize=0)", s)
	}
	maxSize = min(maxSize, MaxArraySizeLimit)
	if len(s) > maxArraySpecLen {
		return Array{}, fmt.Errorf("invalid array spec: longer than %d bytes", maxArraySpecLen)
	}
	set := make([]uint64, (maxSize+63)/64)
	any := false
	for _, tok := range strings.Split(s, ",") {
		if tok == "" { // strtok skips empty tokens
			continue
		}
		if err := parseArrayToken(tok, maxSize, set); err != nil {
			return Array{}, fmt.Errorf("invalid array %q: %w", s, err)
		}
		any = true
	}
	if !any {
		return Array{}, fmt.Errorf("invalid array %q: no task ids", s)
	}
	a := Array{}
	for w, word := range set {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			a.Tasks = append(a.Tasks, w*64+b)
			word &^= 1 << b
		}
	}
	if i := strings.IndexByte(s, '%'); i >= 0 {
		// Slurm reads the throttle with atoi; a "%" with no number after
		// it is rejected here rather than read as no throttle.
		n, used := strtol(s[i+1:])
		if used == 0 || n < 0 {
			return Array{}, fmt.Errorf("invalid array %q: want a task limit after %%", s)
		}
		a.Limit = int(min(n, math.MaxInt32))
	}
	return a, nil
}

// parseArrayToken follows _parse_array_tok: first[-last[:step]] with
// optional brackets, ending at the end of the token or at '%'.
func parseArrayToken(tok string, maxSize int, set []uint64) error {
	p := strings.TrimPrefix(tok, "[")
	num := func(what string) (int64, error) {
		v, n := strtol(p)
		if n == 0 {
			return 0, fmt.Errorf("%q: want a number for the %s", tok, what)
		}
		p = strings.TrimPrefix(p[n:], "]")
		return v, nil
	}
	// A token ends at its end or at '%' (the throttle, read separately).
	atEnd := func() bool { return p == "" || p[0] == '%' }
	first, err := num("first task id")
	if err != nil {
		return err
	}
	if first < 0 {
		return fmt.Errorf("%q: negative task id", tok)
	}
	last, step := first, int64(1)
	switch {
	case strings.HasPrefix(p, "-"):
		p = p[1:]
		if last, err = num("last task id"); err != nil {
			return err
		}
		if strings.HasPrefix(p, ":") {
			p = p[1:]
			if step, err = num("step"); err != nil {
				return err
			}
			if !atEnd() {
				return fmt.Errorf("%q: unexpected %q", tok, p)
			}
			if step <= 0 || step >= int64(maxSize) {
				return fmt.Errorf("%q: step must be from 1 to %d", tok, maxSize-1)
			}
		} else if !atEnd() {
			return fmt.Errorf("%q: unexpected %q", tok, p)
		}
		if last < first {
			return fmt.Errorf("%q: range ends before it starts", tok)
		}
	case !atEnd():
		return fmt.Errorf("%q: unexpected %q", tok, p)
	}
	if last >= int64(maxSize) {
		return fmt.Errorf("%q: task ids must be below MaxArraySize=%d", tok, maxSize)
	}
	for i := first; i <= last; i += step {
		set[i/64] |= 1 << (i % 64)
	}
	return nil
}

// ArrayTaskStep is what slurmctld exports as SLURM_ARRAY_TASK_STEP for an
// --array spec: the number after the first ':' (1 when there is none).
func ArrayTaskStep(spec string) int {
	i := strings.IndexByte(spec, ':')
	if i < 0 {
		return 1
	}
	n, _ := strtol(spec[i+1:])
	return int(max(min(n, math.MaxInt32), math.MinInt32))
}

// String prints the array as squeue shows it inside A_[...] and scontrol as
// ArrayTaskId=: see FormatTasks.
func (a Array) String() string { return FormatTasks(a.Tasks, a.Limit) }

// bitstrLen is SLURM_BITSTR_LEN's default: the printed list is cut to fit
// a 64-byte buffer.
const bitstrLen = 64

// FormatTasks prints task ids as Slurm's clients print an array's pending
// tasks (xlate_array_task_str): a regular stride of more than five tasks
// spanning more than ten ids prints "first-last:step" ("1-21:2");
// otherwise ranges "0-15" and single ids joined by commas ("1,3,5,7,9"),
// cut to 60 bytes plus "..." when longer than 61. A limit above 0 adds
// "%limit". The ids may come in any order; duplicates and negative ids are
// ignored. No ids print "".
func FormatTasks(ids []int, limit int) string {
	ts := make([]int, 0, len(ids))
	for _, id := range ids {
		if id >= 0 {
			ts = append(ts, id)
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	if len(ts) == 0 {
		return ""
	}
	out := stride(ts)
	if out == "" {
		out = FormatRanges(ts)
		if len(out) > bitstrLen-3 {
			out = out[:bitstrLen-4] + "..."
		}
	}
	if limit > 0 {
		out += "%" + strconv.Itoa(limit)
	}
	return out
}

// stride returns "first-last:step" when ts qualifies for Slurm's step
// form, "" otherwise.
func stride(ts []int) string {
	first, last := ts[0], ts[len(ts)-1]
	if last-first <= 10 || len(ts) <= 5 || ts[1] == first+1 {
		return ""
	}
	step := ts[1] - ts[0]
	for i := 2; i < len(ts); i++ {
		if ts[i]-ts[i-1] != step {
			return ""
		}
	}
	return fmt.Sprintf("%d-%d:%d", first, last, step)
}

// FormatRanges is Slurm's bit_fmt: ids in order, runs of consecutive ids
// as "a-b", others alone, joined by commas ("0-3,8"); duplicates count
// once, and ids may come in any order. It serves task ids, CPU ids and GPU
// indices alike.
func FormatRanges(ids []int) string {
	if !slices.IsSorted(ids) {
		ids = slices.Sorted(slices.Values(ids))
	}
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] <= ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if ids[j] > ids[i] {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}
