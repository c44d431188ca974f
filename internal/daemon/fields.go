package daemon

import (
	"fmt"
	"unicode"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// A submission's own fields are checked before anything else, as
// slurmctld's validate_job_create_req checks them (src/slurmctld/job_mgr.c
// of 22.05): a negative nice from anyone but root and operators
// (ESLURM_INVALID_NICE), then every string against its length limit
// (_test_job_desc_fields: 1024 bytes for a name or comment, MAXPATHLEN for
// a path, max_script_size for the script; ESLURM_PATHNAME_TOO_LONG). Slurm
// stops there; slurm-lite also refuses control characters in those
// strings, which would otherwise print raw in everyone's squeue. Each
// refusal is Slurm's words, and slurm-lite's hint with the numbers and
// the fix; nothing is queued.

// Slurm's words for the refusals with Slurm's codes.
var (
	wordsPathnameTooLong = slurm.ErrPathnameTooLong.Error()
	wordsInvalidNice     = slurm.ErrInvalidNice.Error()
)

// niceLimit is NICE_OFFSET - 3: a nice is within ±niceLimit.
const niceLimit = 0x80000000 - 3

// maxPathLen is MAXPATHLEN, the limit of the path fields.
const maxPathLen = 4096

// textField is one string of a request: what sbatch calls it, its value,
// and Slurm's limit in bytes (_test_strlen's max_str_len).
type textField struct {
	opt   string
	value string
	limit int
}

// requestFields are a submission's strings that Slurm limits, in the order
// _test_job_desc_fields tests them; the script is checked on its own.
func requestFields(r *jobscript.Request) []textField {
	return []textField{
		{"--account", r.Account, 1024},
		{"--comment", r.Comment, 1024},
		{"--constraint", r.Constraint, 1024},
		{"--licenses", r.Licenses, 1024},
		{"--mail-user", r.MailUser, 1024},
		{"--job-name", r.JobName, 1024},
		{"--partition", r.Partition, 1024},
		{"--qos", r.QOS, 1024},
		{"--reservation", r.Reservation, 1024},
		{"--error", r.Error, maxPathLen},
		{"--input", r.Input, maxPathLen},
		{"--output", r.Output, maxPathLen},
		{"--wckey", r.WCKey, 1024},
		{"--chdir", r.Chdir, maxPathLen},
	}
}

// fieldRefusal is a refused field: the code, the words (Slurm's where it
// has them) and slurm-lite's hint.
type fieldRefusal struct {
	code  slurm.Errno
	words string
	hint  string
}

func (f *fieldRefusal) apiError() *api.Error {
	e := refusal(f.code, f.words)
	e.Hint = f.hint
	return e
}

// checkSubmitFields is validate_job_create_req's checks of a submission
// by caller: nil, or the refusal to answer with.
func checkSubmitFields(caller localapi.Identity, r *jobscript.Request, cfg *config.Config) *api.Error {
	operator := caller.UID == 0 || cfg.IsOperator(caller.User)
	if r.Nice != nil {
		if f := checkNice(*r.Nice, operator); f != nil {
			return f.apiError()
		}
	}
	fields := requestFields(r)
	for _, f := range fields {
		if r := checkLength(f); r != nil {
			return r.apiError()
		}
	}
	if lim := cfg.SchedulerParameters.MaxScript(); len(r.Script) > lim {
		return (&fieldRefusal{slurm.ErrPathnameTooLong, wordsPathnameTooLong, api.ScriptTooBig(int64(len(r.Script)), lim)}).apiError()
	}
	for _, f := range fields {
		if r := checkControl(f); r != nil {
			return r.apiError()
		}
	}
	return nil
}

// checkNice: a nice within ±niceLimit, negative only for operators.
func checkNice(n int, operator bool) *fieldRefusal {
	switch {
	case n > niceLimit || n < -niceLimit:
		return &fieldRefusal{slurm.ErrInvalidNice, wordsInvalidNice,
			fmt.Sprintf("--nice=%d is out of range; give a value within ±%d", n, niceLimit)}
	case n < 0 && !operator:
		return &fieldRefusal{slurm.ErrInvalidNice, wordsInvalidNice,
			fmt.Sprintf("only root and operators may give a negative --nice (%d); give 0 or more, which lowers the job's priority", n)}
	}
	return nil
}

// checkLength is _test_strlen.
func checkLength(f textField) *fieldRefusal {
	if len(f.value) <= f.limit {
		return nil
	}
	return &fieldRefusal{slurm.ErrPathnameTooLong, wordsPathnameTooLong,
		fmt.Sprintf("%s is %d bytes long, more than the %d allowed; give a shorter %s", f.opt, len(f.value), f.limit, f.opt)}
}

// checkControl refuses a control character (newline, tab, escape, ...).
func checkControl(f textField) *fieldRefusal {
	c, ok := controlChar(f.value)
	if !ok {
		return nil
	}
	// Slurm accepts control characters and has no code for them; EINVAL
	// is the errno it uses for a malformed argument.
	return &fieldRefusal{slurm.EINVAL,
		fmt.Sprintf("Invalid %s (control character %q)", f.opt, c),
		fmt.Sprintf("control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give %s on one line, in printable characters", f.opt)}
}

// controlChar is the first control character of s, if any: C0 (newline,
// tab, escape, ...), DEL or C1.
func controlChar(s string) (rune, bool) {
	for _, c := range s {
		if unicode.IsControl(c) {
			return c, true
		}
	}
	return 0, false
}

// checkUpdateFields applies the same limits to what scontrol update
// changes (slurmctld's _update_job calls _test_job_desc_fields too): the
// name and comment, and the nice's range. It names the fields with
// scontrol's keywords.
func checkUpdateFields(u api.Update) *fieldRefusal {
	var fields []textField
	if u.Comment != nil {
		fields = append(fields, textField{"Comment", *u.Comment, 1024})
	}
	if u.Name != nil {
		fields = append(fields, textField{"JobName", *u.Name, 1024})
	}
	for _, f := range fields {
		if r := checkLength(f); r != nil {
			return r
		}
	}
	for _, f := range fields {
		if r := checkControl(f); r != nil {
			return r
		}
	}
	if u.Nice != nil && (*u.Nice > niceLimit || *u.Nice < -niceLimit) {
		return &fieldRefusal{slurm.ErrInvalidNice, wordsInvalidNice,
			fmt.Sprintf("Nice=%d is out of range; give a value within ±%d", *u.Nice, niceLimit)}
	}
	return nil
}

// defaultMemory gives a job that asks for no memory (no --mem,
// --mem-per-cpu or --mem-per-gpu) DefMemPerCPU or DefMemPerNode, as
// slurmctld does when it creates the job: it is the job's request from
// then on, so a later change of the configuration leaves it as it was
// submitted. Without either, the job asks for none (no limit).
func defaultMemory(r *jobscript.Request, cfg *config.Config) {
	if r.MemPerCPU != nil || r.MemPerNode != nil || r.MemPerGPU != nil {
		return
	}
	mib := func(b slurmsyntax.Bytes) *uint64 {
		v := uint64((b + slurmsyntax.MiB - 1) / slurmsyntax.MiB)
		return &v
	}
	switch {
	case cfg.DefMemPerCPU > 0:
		r.MemPerCPU = mib(cfg.DefMemPerCPU)
	case cfg.DefMemPerNode > 0:
		r.MemPerNode = mib(cfg.DefMemPerNode)
	}
}
