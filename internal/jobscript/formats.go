package jobscript

import (
	"math"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// mailTypes are --mail-type's words in the order Slurm prints them
// (print_mail_type); the bit of each is its position.
var mailTypes = []string{
	"ARRAY_TASKS", "INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE",
	"STAGE_OUT", "TIME_LIMIT_50", "TIME_LIMIT_80", "TIME_LIMIT_90", "TIME_LIMIT",
}

const mailInvalid = 0xffff // INFINITE16

// mailAll is what "ALL" means: not ARRAY_TASKS and not the time limits.
var mailAll = bits("INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT")

func bits(words ...string) uint16 {
	var b uint16
	for _, w := range words {
		for i, m := range mailTypes {
			if m == w {
				b |= 1 << i
			}
		}
	}
	return b
}

// parseMailType is Slurm's parse_mail_type: comma-separated words in any
// case; unknown words are skipped; NONE stops the scan; no known word at all
// is invalid.
func parseMailType(arg string) uint16 {
	var rc uint16
	for _, tok := range strings.Split(arg, ",") {
		if tok == "" {
			continue
		}
		switch t := strings.ToUpper(tok); t {
		case "NONE":
			return 0
		case "ALL":
			rc |= mailAll
		default:
			rc |= bits(t)
		}
	}
	if rc == 0 {
		return mailInvalid
	}
	return rc
}

func setMailType(s *state, v string, _ bool) *Error {
	// Slurm ORs each --mail-type into what it has read so far, so an
	// invalid one turns everything invalid and NONE clears nothing.
	s.mailType |= parseMailType(v)
	if s.mailType == mailInvalid {
		return invalid(exitOption, "Invalid --mail-type specification")
	}
	s.r.MailType = nil
	for i, m := range mailTypes {
		if s.mailType&(1<<i) != 0 {
			s.r.MailType = append(s.r.MailType, m)
		}
	}
	return nil
}

// setExport reads --export as sbatch uses it (_fill_job_desc_from_opts and
// env_merge_filter): the whole value "ALL" or "NONE" in any case, else a
// comma-separated list split by find_quote_token, where a token wholly in
// quotes loses them.
func setExport(s *state, v string, _ bool) *Error {
	e := &Export{Spec: v}
	switch {
	case strings.EqualFold(v, "ALL"):
		e.All = true
	case strings.EqualFold(v, "NONE"):
		e.None = true
	default:
		for _, tok := range quoteTokens(v) {
			switch {
			case strings.EqualFold(tok, "ALL"):
				e.All = true
			case strings.Contains(tok, "="):
				name, val, _ := strings.Cut(tok, "=")
				e.Vars = append(e.Vars, ExportVar{Name: name, Value: val, HasValue: true})
			case tok != "":
				e.Vars = append(e.Vars, ExportVar{Name: tok})
			}
		}
	}
	s.r.Export = e
	return nil
}

// quoteTokens splits s at commas outside single or double quotes, as
// Slurm's find_quote_token does; a token that starts and ends with the same
// quote loses them. An unterminated quote runs to the end.
func quoteTokens(s string) []string {
	var out []string
	start := 0
	single, double := false, false
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '\'':
				single = !single
				continue
			case '"':
				double = !double
				continue
			}
			if s[i] != ',' || single || double {
				continue
			}
		}
		tok := s[start:i]
		if len(tok) >= 2 && (tok[0] == '\'' || tok[0] == '"') && tok[len(tok)-1] == tok[0] {
			tok = tok[1 : len(tok)-1]
		}
		out = append(out, tok)
		start = i + 1
	}
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// setDistribution checks --distribution as verify_dist_type does, and keeps
// it for display.
func setDistribution(s *state, v string, has bool) *Error {
	if len(v) >= 5 && strings.EqualFold(v[:5], "plane") {
		// The plane size comes after '=' (or from SLURM_DIST_PLANESIZE,
		// which slurm-lite does not read: a plane needs several nodes).
		_, size, ok := strings.Cut(v, "=")
		n, rest, digits := slurmsyntax.Strtol(size, slurmsyntax.Saturate)
		if !ok || !digits || rest != "" || n <= 0 || n > math.MaxInt32 {
			return invalid(exitOption, "Invalid plane size or size not specified\nInvalid --distribution specification")
		}
	} else if !validDistBase(v) {
		return invalid(exitOption, "Invalid --distribution specification")
	}
	s.distribution = v
	s.other("distribution", v, has)
	return nil
}

// validDistBase is _parse_dist_base: up to three ':'-separated levels
// ("block", "cyclic", "fcyclic", "*" for the default) or "arbitrary" /
// "hostfile", then optionally ",pack" or ",nopack".
func validDistBase(v string) bool {
	if v == "" || v[0] == ',' {
		return false
	}
	base, flags, _ := strings.Cut(v, ",")
	var levels []string
	for _, t := range strings.Split(base, ":") {
		if t != "" { // strtok skips empty fields
			levels = append(levels, t)
		}
	}
	if len(levels) == 0 || len(levels) > 3 {
		return false
	}
	sock := ""
	for i, t := range levels {
		if t == "*" {
			switch i {
			case 0:
				t = "block"
			case 1:
				t = "cyclic"
			case 2:
				t = sock
			}
			levels[i] = t
		}
		if i == 1 {
			sock = t
		}
	}
	in := func(s string, set ...string) bool {
		for _, x := range set {
			if strings.EqualFold(s, x) {
				return true
			}
		}
		return false
	}
	ok := false
	switch len(levels) {
	case 1:
		ok = in(levels[0], "cyclic", "block", "arbitrary", "hostfile")
	case 2:
		ok = in(levels[0], "cyclic", "block") && in(levels[1], "cyclic", "block", "fcyclic")
	case 3:
		ok = in(levels[0], "cyclic", "block") && in(levels[1], "cyclic", "block", "fcyclic") &&
			in(levels[2], "cyclic", "block", "fcyclic")
	}
	// A lone "pack"/"nopack" is refused too: _parse_dist_flag needs a
	// distribution to add the flag to.
	if !ok {
		return false
	}
	return flags == "" || strings.EqualFold(flags, "pack") || strings.EqualFold(flags, "nopack")
}

// setExtraNodeInfo is -B/--extra-node-info=S[:C[:T]], each a count, a
// min-max range or '*' (verify_socket_core_thread_count).
func setExtraNodeInfo(s *state, v string, has bool) *Error {
	fields := strings.SplitN(v, ":", 4)
	what := []string{"first arg of -B", "second arg of -B", "third arg of -B"}
	var mins [3]int
	for i := range 3 {
		f := ""
		if i < len(fields) {
			f = fields[i]
		}
		lo, hi, err := resourceRange(f, what[i])
		if err != nil {
			return err
		}
		if lo == 1 && hi == math.MaxInt32 {
			lo = 0 // the full range: no requirement
		}
		mins[i] = lo
	}
	s.sockets, s.cores, s.threads = mins[0], mins[1], mins[2]
	s.extraSet = true
	s.other("extra-node-info", v, has)
	return nil
}

// resourceRange is get_resource_arg_range with isFatal set (exit 1): "" or
// "*" is every value; otherwise N or N-M, each with an optional k or m.
func resourceRange(arg, what string) (lo, hi int, err *Error) {
	if arg == "" || arg[0] == '*' {
		return 1, math.MaxInt32, nil
	}
	bad := invalid(exitError, "Invalid numeric value \"%s\" for %s.", arg, what)
	num := func(s string) (int64, string) {
		v, rest, _ := slurmsyntax.Strtol(s, slurmsyntax.Saturate)
		switch {
		case rest != "" && (rest[0] == 'k' || rest[0] == 'K'):
			v, rest = v*1024, rest[1:]
		case rest != "" && (rest[0] == 'm' || rest[0] == 'M'):
			v, rest = v*1048576, rest[1:]
		}
		return v, rest
	}
	v, rest := num(arg)
	if (rest != "" && rest[0] != '-') || v < 0 {
		return 0, 0, bad
	}
	if v > math.MaxInt32 {
		return 0, 0, invalid(exitError, "Numeric argument (%d) to big for %s.", v, what)
	}
	lo, hi = int(v), 0
	if rest == "" {
		return lo, hi, nil
	}
	v, rest = num(rest[1:])
	if (rest != "" && rest[0] != '-') || v <= 0 {
		return 0, 0, bad
	}
	if v > math.MaxInt32 {
		return 0, 0, invalid(exitError, "Numeric argument (%d) to big for %s.", v, what)
	}
	return lo, int(v), nil
}

// gresItems splits a TRES list as Slurm builds it before parsing: --gres
// items may carry a "gres:" prefix, which gres_prepend_tres_type adds to
// each one; --gpus-style values are items of "gres:gpu:" (xfmt_tres, which
// drops empty items).
func gresItems(v string, gpu bool) []string {
	var out []string
	for _, it := range strings.Split(v, ",") {
		switch {
		case gpu && it == "":
			continue
		case gpu:
			it = "gpu:" + it
		default:
			it = strings.TrimPrefix(it, "gres:")
		}
		out = append(out, it)
	}
	return out
}

// parseGres reads the items of a TRES list as _get_next_gres does:
// "name", "name:count", "name:type" (count 1) or "name:type:count", with
// count suffixes k, m, g, ... (suffix_mult). Items with count 0 and empty
// items are skipped. ok is false on a malformed item.
func parseGres(items []string) (out []Gres, ok bool) {
	for _, it := range items {
		if it == "" {
			continue
		}
		name, rest, one := strings.Cut(it, ":")
		g := Gres{Name: name, Count: 1}
		if one {
			typ, count, two := strings.Cut(rest, ":")
			switch {
			case two:
				if typ == "" || count == "" {
					return nil, false
				}
				n, valid := gresCount(count)
				if !valid {
					return nil, false
				}
				g.Type, g.Count = typ, n
			case rest == "":
				return nil, false
			default:
				if n, valid := gresCount(rest); valid {
					g.Count = n
				} else {
					g.Type = rest
				}
			}
		}
		if g.Count == 0 {
			continue
		}
		out = append(out, g)
	}
	return out, true
}

// gresCount is _is_valid_number: strtoull then a suffix_mult suffix.
func gresCount(s string) (uint64, bool) {
	v, rest, _ := slurmsyntax.Strtoull(s)
	if v == math.MaxUint64 {
		return 0, false
	}
	m, ok := suffixMult(rest)
	if !ok {
		return 0, false
	}
	return v * m, true
}
