package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The decoder walks the schema by reflection, over a Config that already
// holds the defaults, and decodes the generic tree toml parsed. Doing this
// here rather than in toml gives every error its line (see lines.go), keys
// that must match exactly (toml would also take "maxtime"), and messages
// that say what to write instead.
//
// A field's toml tag is its key. Its conf tag says how a time.Duration is
// written ("seconds", "minutes": a whole number; "time": a Slurm time
// string such as "2-00:00:00", or a whole number of minutes, rounded up to
// minutes as slurm.conf reads it; "timesec": the same to the second, for
// slurm-lite's own keys), or marks the
// key that names an element of an array of tables ("name").

// parser holds what one Parse learns about the file: where each key is,
// which keys were given, and the problems found.
type parser struct {
	file  string
	lines lineIndex
	given map[string]bool
	// texts are TRES weights as written, by key path: sprio -w and
	// scontrol show config print PriorityWeightTRES as slurm.conf has it.
	texts map[string]string
	errs  Errors
}

func (p *parser) errorf(at keyPath, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: p.lines.line(at), Msg: fmt.Sprintf(format, args...)})
}

// isGiven reports whether the file wrote the key at path.
func (p *parser) isGiven(path keyPath) bool { return p.given[path.String()] }

// where describes the table being decoded, for messages.
type where struct {
	// section names the table as written: "", "[Node]", "[[Partition]]".
	section string
	// prefix goes before a key in messages: "Node.", `Partition "gpu": `.
	prefix string
	// dotted is the table's dotted name: "", "Node", "Node.SimulatedGPU".
	dotted string
}

func (w where) join(key string) string {
	if w.dotted == "" {
		return key
	}
	return w.dotted + "." + key
}

// field is one struct field with its TOML key.
type field struct {
	key   string
	index int
	conf  string
}

func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if key := sf.Tag.Get("toml"); key != "" {
			fs = append(fs, field{key: key, index: i, conf: sf.Tag.Get("conf")})
		}
	}
	return fs
}

var (
	durationType    = reflect.TypeOf(time.Duration(0))
	bytesType       = reflect.TypeOf(slurmsyntax.Bytes(0))
	tresType        = reflect.TypeOf(TRES(nil))
	tresWeightsType = reflect.TypeOf(TRESWeights(nil))
	shareType       = reflect.TypeOf(Share(""))
)

// table decodes the TOML table m into the struct rv.
func (p *parser) table(at keyPath, w where, m map[string]any, rv reflect.Value) {
	fs := fieldsOf(rv.Type())
	byKey := map[string]field{}
	for _, f := range fs {
		byKey[f.key] = f
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kp := at.child(k)
		f, ok := byKey[k]
		if !ok {
			p.unknown(kp, w, k, m[k], rv.Type(), fs)
			continue
		}
		// A key that fails to decode keeps its default and does not count
		// as given, so that checks do not report it a second time.
		before := len(p.errs)
		p.value(kp, w, f, m[k], rv.Field(f.index))
		if len(p.errs) == before {
			p.given[kp.String()] = true
		}
	}
}

// unknown reports a key the schema lacks, with the likely intended one.
func (p *parser) unknown(at keyPath, w where, key string, v any, t reflect.Type, fs []field) {
	what := fmt.Sprintf("key %q", key)
	switch v.(type) {
	case map[string]any:
		what = "table [" + w.join(key) + "]"
	case []map[string]any:
		what = "table [[" + w.join(key) + "]]"
	}
	msg := "unknown " + what
	if w.section != "" {
		msg += " in " + w.section
	}
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	// slurm.conf habit: PriorityWeightAge at the top instead of
	// [Priority] WeightAge.
	if rest, ok := strings.CutPrefix(key, "Priority"); ok && w.section == "" {
		for _, f := range fieldsOf(reflect.TypeOf(Priority{})) {
			if f.key == rest {
				p.errorf(at, "%s; write %s in [Priority]", msg, rest)
				return
			}
		}
	}
	if s, ok := suggest(key, keys); ok {
		f := fs[slices.Index(keys, s)]
		name := fmt.Sprintf("%q", s)
		switch ft := t.Field(f.index).Type; {
		case ft.Kind() == reflect.Struct:
			name = "[" + w.join(s) + "]"
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			name = "[[" + w.join(s) + "]]"
		}
		if strings.EqualFold(s, key) {
			p.errorf(at, "%s; did you mean %s? (keys are case-sensitive)", msg, name)
			return
		}
		p.errorf(at, "%s; did you mean %s?", msg, name)
		return
	}
	p.errorf(at, "%s; known keys: %s", msg, strings.Join(keys, ", "))
}

// describe names a TOML value for "must be X, not Y" messages.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case int64:
		return fmt.Sprintf("the number %d", x)
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("a %T", v)
}

// Descriptions of the forms a value may take, for messages.
const (
	wantTime = `a Slurm time such as "2-00:00:00", "1:30:00", "90" (minutes) or "UNLIMITED"`
	wantSize = `a size such as "16G" or "500M" (a bare number is megabytes)`
	wantTRES = `TRES counts such as "gres/gpu=4,cpu=16"`
	wantW    = `TRES weights such as "CPU=0,Mem=0,GRES/gpu=1.0"`
)

// value decodes v into the field fv.
func (p *parser) value(at keyPath, w where, f field, v any, fv reflect.Value) {
	name := w.prefix + f.key
	bad := func(want string) {
		p.errorf(at, "%s must be %s, not %s", name, want, describe(v))
	}
	switch fv.Type() {
	case durationType:
		p.duration(at, name, f.conf, v, fv)
		return
	case bytesType:
		p.size(at, name, v, fv)
		return
	case shareType:
		var text string
		switch x := v.(type) {
		case int64:
			text = strconv.FormatInt(x, 10)
		case string:
			text = x
		default:
			bad(`a count such as 5000 or a percentage such as "50%"`)
			return
		}
		sh, err := ParseShare(text)
		if err != nil {
			p.errorf(at, "%s %v; write a count such as 5000, a percentage such as \"50%%\", or 0 for no limit", name, err)
			return
		}
		fv.SetString(string(sh))
		return
	case tresType, tresWeightsType:
		s, ok := v.(string)
		if !ok && fv.Type() == tresType {
			bad(wantTRES)
			return
		}
		if !ok {
			bad(wantW)
			return
		}
		var (
			parsed any
			err    error
		)
		if fv.Type() == tresType {
			parsed, err = ParseTRES(s)
		} else {
			parsed, err = ParseTRESWeights(s)
		}
		if err != nil {
			p.errorf(at, "%s %q: %v", name, s, err)
			return
		}
		fv.Set(reflect.ValueOf(parsed).Convert(fv.Type()))
		if p.texts == nil {
			p.texts = map[string]string{}
		}
		p.texts[at.String()] = strings.TrimSpace(s)
		return
	}
	switch fv.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			bad("a quoted string")
			return
		}
		fv.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			bad("true or false")
			return
		}
		fv.SetBool(b)
	case reflect.Int:
		n, ok := v.(int64)
		if !ok {
			bad("a whole number")
			return
		}
		fv.SetInt(n)
	case reflect.Float64:
		switch x := v.(type) {
		case float64:
			fv.SetFloat(x)
		case int64:
			fv.SetFloat(float64(x))
		default:
			bad("a number")
		}
	case reflect.Slice:
		switch fv.Type().Elem().Kind() {
		case reflect.Struct:
			p.tables(at, w, f, v, fv)
		case reflect.Int:
			p.ints(at, name, v, fv)
		default:
			p.strings(at, name, v, fv)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad(`a table of strings such as { a100 = "NVIDIA A100-SXM4-80GB" }`)
			return
		}
		out := reflect.MakeMapWithSize(fv.Type(), len(m))
		for k, x := range m {
			s, ok := x.(string)
			if !ok {
				p.errorf(at.child(k), "%s.%s must be a quoted string, not %s", name, k, describe(x))
				continue
			}
			out.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(s))
		}
		fv.Set(out)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad("a table [" + w.join(f.key) + "]")
			return
		}
		d := w.join(f.key)
		p.table(at, where{section: "[" + d + "]", prefix: d + ".", dotted: d}, m, fv)
	default:
		panic(fmt.Sprintf("config: field %s has type %s, which the decoder does not handle", name, fv.Type()))
	}
}

// strings decodes a list of strings.
func (p *parser) strings(at keyPath, name string, v any, fv reflect.Value) {
	list, ok := v.([]any)
	if !ok {
		hint := ""
		if s, isString := v.(string); isString {
			var quoted []string
			for _, item := range strings.Split(s, ",") {
				quoted = append(quoted, strconv.Quote(strings.TrimSpace(item)))
			}
			hint = fmt.Sprintf("; write [%s]", strings.Join(quoted, ", "))
		}
		p.errorf(at, `%s must be a list of strings such as ["a", "b"], not %s%s`, name, describe(v), hint)
		return
	}
	out := make([]string, 0, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			p.errorf(at.index(i), "%s must be a list of strings, but item %d is %s", name, i+1, describe(x))
			return
		}
		out = append(out, s)
	}
	fv.Set(reflect.ValueOf(out))
}

// ints decodes a list of whole numbers (exit codes: RequeueExit). Slurm's
// "1-9,18" is refused with the list to write instead.
func (p *parser) ints(at keyPath, name string, v any, fv reflect.Value) {
	list, ok := v.([]any)
	if !ok {
		hint := ""
		if str, isString := v.(string); isString {
			if codes, ok := expandRanges(str); ok {
				hint = "; write " + codes
			}
		}
		p.errorf(at, "%s must be a list of whole numbers such as [42, 43], not %s%s", name, describe(v), hint)
		return
	}
	out := make([]int, 0, len(list))
	for i, x := range list {
		n, ok := x.(int64)
		if !ok {
			p.errorf(at.index(i), "%s must be a list of whole numbers such as [42, 43], but item %d is %s", name, i+1, describe(x))
			return
		}
		out = append(out, int(n))
	}
	fv.Set(reflect.ValueOf(out))
}

// defaulter is an element of an array of tables with defaults of its own.
type defaulter interface{ setDefaults() }

// tables decodes an array of tables. The file's list replaces the default
// list entirely: a file that lists partitions lists all of them.
func (p *parser) tables(at keyPath, w where, f field, v any, fv reflect.Value) {
	d := w.join(f.key)
	var elems []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		elems = x
	case []any:
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				p.errorf(at.index(i), "%s must be tables [[%s]], but item %d is %s", w.prefix+f.key, d, i+1, describe(e))
				return
			}
			elems = append(elems, m)
		}
	case map[string]any:
		p.errorf(at, "%s is a list of tables: write [[%s]], not [%s]", w.prefix+f.key, d, d)
		return
	default:
		p.errorf(at, "%s must be tables [[%s]], not %s", w.prefix+f.key, d, describe(v))
		return
	}
	out := reflect.MakeSlice(fv.Type(), len(elems), len(elems))
	for i, m := range elems {
		ev := out.Index(i)
		if def, ok := ev.Addr().Interface().(defaulter); ok {
			def.setDefaults()
		}
		label := fmt.Sprintf("%s %d: ", f.key, i+1)
		for _, ef := range fieldsOf(ev.Type()) {
			if s, ok := m[ef.key].(string); ok && ef.conf == "name" && s != "" {
				label = fmt.Sprintf("%s %q: ", f.key, s)
			}
		}
		p.table(at.index(i), where{section: "[[" + d + "]]", prefix: label, dotted: d}, m, ev)
	}
	fv.Set(out)
}

// duration decodes a time.Duration in the unit of its conf tag.
func (p *parser) duration(at keyPath, name, unit string, v any, fv reflect.Value) {
	switch unit {
	case "seconds", "minutes":
		n, ok := v.(int64)
		if !ok {
			p.errorf(at, "%s must be a whole number of %s, not %s", name, unit, describe(v))
			return
		}
		per := time.Second
		if unit == "minutes" {
			per = time.Minute
		}
		if n > math.MaxInt64/int64(per) || n < math.MinInt64/int64(per) {
			p.errorf(at, "%s %d is too large", name, n)
			return
		}
		fv.SetInt(n * int64(per))
	case "time", "timesec":
		d, err := parseTime(v, unit == "timesec")
		switch {
		case err == errWrongType:
			p.errorf(at, "%s must be %s, not %s", name, wantTime, describe(v))
		case err != nil:
			p.errorf(at, `%s %s is not a Slurm time; write minutes ("90"), hours:minutes:seconds ("1:30:00"), days-hours ("7-0"), days-hours:minutes:seconds ("2-00:00:00") or "UNLIMITED"`, name, strings.TrimPrefix(describe(v), "the string "))
		default:
			fv.SetInt(int64(d))
		}
	default:
		panic(fmt.Sprintf("config: duration %s needs a conf tag: seconds, minutes, time or timesec", name))
	}
}

var errWrongType = fmt.Errorf("wrong type")

// parseTime reads a Slurm time as slurm.conf takes it (time_str2mins): a
// string in any sbatch --time form, or a whole number of minutes. Unlike
// sbatch's --time, 0 is zero here (PriorityDecayHalfLife=0 means no decay),
// and "UNLIMITED", "INFINITE" and -1 are slurmsyntax.Infinite.
//
// exact keeps the seconds (time_str2secs) for slurm-lite's own keys, where
// a scaled replay or a short test needs times under a minute.
func parseTime(v any, exact bool) (time.Duration, error) {
	switch x := v.(type) {
	case int64:
		switch {
		case x == -1:
			return slurmsyntax.Infinite, nil
		case x < 0 || x > math.MaxInt64/int64(time.Minute):
			return 0, fmt.Errorf("out of range")
		}
		return time.Duration(x) * time.Minute, nil
	case string:
		// slurm.conf's reading: "0" is zero (no decay, no age factor), not
		// sbatch's "no limit".
		parse := slurmsyntax.ParseMinutes
		if exact {
			parse = slurmsyntax.ParseSeconds
		}
		d, err := parse(strings.TrimSpace(x))
		if err != nil {
			return 0, err
		}
		return d, nil
	}
	return 0, errWrongType
}

// size decodes a slurmsyntax.Bytes: a size string, or a whole number of
// megabytes as in slurm.conf's RealMemory.
func (p *parser) size(at keyPath, name string, v any, fv reflect.Value) {
	switch x := v.(type) {
	case int64:
		if x < 0 || x > math.MaxInt64/int64(slurmsyntax.MiB) {
			p.errorf(at, "%s %d is out of range; write a size such as \"256G\"", name, x)
			return
		}
		fv.SetInt(x * int64(slurmsyntax.MiB))
	case string:
		b, err := slurmsyntax.ParseSize(strings.TrimSpace(x), slurmsyntax.MiB)
		if err != nil || b < 0 {
			p.errorf(at, `%s %q is not a size; write e.g. "256G", "500M" or "2T"`, name, x)
			return
		}
		fv.SetInt(int64(b))
	default:
		p.errorf(at, "%s must be %s, not %s", name, wantSize, describe(v))
	}
}

// expandRanges writes slurm.conf's "1-3,18" as the TOML list [1, 2, 3, 18],
// for the hint; ok is false for anything else, or a range past 255.
func expandRanges(s string) (string, bool) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return "", false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 255 {
				return "", false
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, strconv.Itoa(n))
		}
	}
	return "[" + strings.Join(out, ", ") + "]", true
}
