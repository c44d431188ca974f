package jobscript

import (
	"fmt"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// --gpu-bind, as Slurm 22.05 checks it (tres_bind_verify_cmdline) and as
// slurmstepd applies it to each task of a step (_parse_tres_bind,
// _get_usable_gres in src/common/gres.c) on a node whose gres.conf names
// no CPUs for its GPUs and whose devices are not constrained by cgroups:
// GPU ids are the node's own indices.

// GPUBindError is what Slurm says of --gpu-bind=v (arg_set_gpu_bind,
// tres_bind_verify_cmdline), one line per error line, "" when it takes
// it. Like Slurm, it looks at the first letter only for closest and
// none, and reads further ";"-separated TRES, of which only gpu exists.
func GPUBindError(v string) string {
	bad := "Invalid --gpu-bind argument: gpu:" + v
	for _, tok := range strings.Split("gpu:"+v, ";") {
		if tok == "" {
			continue // strtok_r skips empty tokens
		}
		name, spec, ok := strings.Cut(tok, ":")
		if !ok || name != "gpu" {
			return bad
		}
		if note, ok := checkGPUBindSpec(spec); !ok {
			if note != "" {
				return note + "\n" + bad
			}
			return bad
		}
	}
	return ""
}

// checkGPUBindSpec is _valid_gpu_bind, with the line _valid_num_list
// logs for a character it does not take.
func checkGPUBindSpec(arg string) (note string, ok bool) {
	if hasPrefixFold(arg, "verbose,") {
		arg = arg[len("verbose,"):]
	}
	switch {
	case hasPrefixFold(arg, "c"), hasPrefixFold(arg, "n"): // closest, none
		return "", true
	case hasPrefixFold(arg, "map_gpu:"):
		return checkNumList(arg[len("map_gpu:"):], false)
	case hasPrefixFold(arg, "mask_gpu:"):
		return checkNumList(arg[len("mask_gpu:"):], true)
	case hasPrefixFold(arg, "per_task:"):
		v, _ := cStrtol(arg[len("per_task:"):])
		return "", v >= 0
	case hasPrefixFold(arg, "single:"):
		v, _ := cStrtol(arg[len("single:"):])
		return "", v >= 0
	}
	return "", false
}

// checkNumList is _valid_num_list: comma-separated numbers (hexadecimal
// digits for masks, after an optional 0x), each optionally followed by
// "*COUNT".
func checkNumList(arg string, hex bool) (note string, ok bool) {
	base := int64(10)
	if hex {
		base = 16
	}
	for _, tok := range strings.Split(arg, ",") {
		if tok == "" {
			continue // strtok_r skips empty tokens
		}
		if hex {
			tok = strings.TrimPrefix(tok, "0x")
		}
		for i := 0; i < len(tok); i++ {
			if d := hexDigit(tok[i]); tok[i] != '*' && (d < 0 || d >= int(base)) {
				return fmt.Sprintf("Failed to validate %s, offending character is %c", tok, tok[i]), false
			}
		}
		_, rest := strtolBase(tok, base)
		if rest == "" {
			continue
		}
		if rest[0] != '*' {
			return "", false
		}
		if _, rest = cStrtol(rest[1:]); rest != "" {
			return "", false
		}
	}
	return "", true
}

// tresBind is a step's binding read as _parse_tres_bind reads it.
type tresBind struct {
	closest       bool // closest or single
	tasksPerGPU   int  // single:N
	mapGPU        string
	maskGPU       string
	gpusPerTask   int // per_task:N
	bindsAnything bool
}

func parseTresBind(s string) tresBind {
	var b tresBind
	i := strings.Index(s, "gpu:")
	if i < 0 {
		return b
	}
	sep := s[i+len("gpu:"):]
	if hasPrefixFold(sep, "verbose,") {
		sep = sep[len("verbose,"):]
	}
	switch {
	case hasPrefixFold(sep, "single:"):
		n, _ := cStrtol(sep[len("single:"):])
		if n <= 0 || n > 1<<32-1 {
			n = 1 // Slurm logs an error and defaults to 1
		}
		b.tasksPerGPU, b.closest = int(n), true
	case hasPrefixFold(sep, "closest"):
		b.closest = true
	case hasPrefixFold(sep, "map_gpu:"):
		b.mapGPU = sep[len("map_gpu:"):]
	case hasPrefixFold(sep, "mask_gpu:"):
		b.maskGPU = sep[len("mask_gpu:"):]
	case hasPrefixFold(sep, "per_task:"):
		b.gpusPerTask = atoul(sep[len("per_task:"):])
	}
	b.bindsAnything = b.closest || b.mapGPU != "" || b.maskGPU != "" || b.gpusPerTask > 0
	return b
}

// TresBind is the binding a step's tasks get (srun's step request,
// SLURMD_TRES_BIND in each task): "gpu:" and --gpu-bind when given,
// else "gpu:per_task:" and --gpus-per-task as given when that is given
// (launch.c's implicit binding), else "".
func TresBind(gpuBind, gpusPerTask string) string {
	switch {
	case gpuBind != "":
		return "gpu:" + gpuBind
	case gpusPerTask != "":
		return "gpu:per_task:" + gpusPerTask
	}
	return ""
}

// BindGPUs is the GPUs task (its rank on the node) of a step may use:
// stepGPUs are the step's GPU indices, ascending; nodeGPUs the number of
// GPUs on the node; tresBind the step's binding (TresBind). bound is
// false when the binding names no GPU binding, and the task uses all of
// the step's GPUs. The result is always a subset of stepGPUs: a binding
// that names none of them binds the task to the step's first GPU, as
// slurmstepd does ("Bind request ... does not specify any devices within
// the allocation").
//
//   - closest: every GPU of the step (no GPU is nearer a CPU than another
//     here);
//   - single:N: the step's GPU number (task / N) modulo their count;
//   - per_task:N: the step's GPUs N×task to N×task+N-1 (fewer at the end);
//   - map_gpu:LIST and mask_gpu:LIST: the task's entry of the list (each
//     optionally "*COUNT" times, the list repeated as needed), a GPU index
//     or a mask of them (numbers in C's notation: 0x hexadecimal, leading
//     0 octal), within the step's GPUs; an index or mask beyond the node's
//     GPUs is void.
func BindGPUs(tresBind string, stepGPUs []int, nodeGPUs, task int) (gpus []int, bound bool) {
	b := parseTresBind(tresBind)
	if !b.bindsAnything || len(stepGPUs) == 0 {
		return stepGPUs, false
	}
	var usable []int
	switch {
	case b.mapGPU != "" || b.maskGPU != "":
		usable = mapOrMask(b, stepGPUs, nodeGPUs, task)
	case b.closest:
		usable = append(usable, stepGPUs...)
		if b.tasksPerGPU > 0 && len(usable) > 1 {
			n := (task / b.tasksPerGPU) % len(usable)
			usable = usable[n : n+1]
		}
	default: // per_task
		from := task * b.gpusPerTask
		if from < len(stepGPUs) {
			usable = stepGPUs[from:min(from+b.gpusPerTask, len(stepGPUs))]
		}
	}
	if len(usable) == 0 {
		usable = stepGPUs[:1]
	}
	return append([]int(nil), usable...), true
}

// mapOrMask is _get_usable_gres_map_or_mask.
func mapOrMask(b tresBind, stepGPUs []int, nodeGPUs, task int) []int {
	list, isMap := b.mapGPU, b.mapGPU != ""
	if !isMap {
		list = b.maskGPU
	}
	type entry struct {
		value string
		times int
	}
	var entries []entry
	total := 0
	for _, tok := range strings.Split(list, ",") {
		if tok == "" {
			continue
		}
		e := entry{value: tok, times: 1}
		if v, mult, ok := strings.Cut(tok, "*"); ok {
			e.value = v
			if n, _ := cStrtol(mult); n > 0 {
				e.times = int(n)
			}
		}
		entries = append(entries, e)
		total += e.times
	}
	if total == 0 {
		return nil
	}
	// The list is repeated as needed: the task's place in one round.
	at := task % total
	var value int64
	for _, e := range entries {
		if at < e.times {
			value, _ = cStrtol(e.value)
			break
		}
		at -= e.times
	}
	lo, hi := int64(0), int64(nodeGPUs-1)
	if !isMap {
		lo, hi = 1, int64(1)<<min(nodeGPUs, 62)-1
	}
	if value < lo || value > hi {
		return nil // "Invalid --gpu-bind= value specified."
	}
	var out []int
	for _, g := range stepGPUs {
		if isMap && int64(g) == value || !isMap && g < 63 && value>>g&1 == 1 {
			out = append(out, g)
		}
	}
	return out
}

// cStrtol is C's strtol(s, NULL, 0): leading blanks, a sign, then a
// number in base 16 (after 0x), 8 (after a leading 0) or 10, up to the
// first character that is not a digit of that base; rest is what
// follows (all of s when there are no digits). Large values saturate.
func cStrtol(s string) (v int64, rest string) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	body := s[i:]
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch {
	case len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && hexDigit(body[2]) >= 0:
		v, rest = strtolBase(body[2:], 16)
	case body != "" && body[0] == '0':
		v, rest = strtolBase(body, 8)
	default:
		v, rest = strtolBase(body, 10)
	}
	if len(rest) == len(body) {
		return 0, s
	}
	if s[i] == '-' {
		v = -v
	}
	return v, rest
}

// strtolBase reads the digits of base at the start of s, saturating.
func strtolBase(s string, base int64) (v int64, rest string) {
	i := 0
	for ; i < len(s); i++ {
		d := int64(hexDigit(s[i]))
		if d < 0 || d >= base {
			break
		}
		if v > (1<<62)/base {
			v = 1 << 62
		} else {
			v = min(v*base+d, 1<<62)
		}
	}
	return v, s[i:]
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// atoul is slurm_atoul: strtoul in base 10, 0 when no digits.
func atoul(s string) int {
	v, _, ok := slurmsyntax.Strtoull(s)
	if !ok || v > 1<<31-1 {
		return 0
	}
	return int(v)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
