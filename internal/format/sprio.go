package format

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// sprio's output (src/sprio/print.c, opts.c, sort.c): a format of "%"
// fields, each ".WIDTH" (right-justified) or "WIDTH" (left), cut to its
// width, with what follows the letter up to the next "%" printed after it.

// prioArgs is what sprio's fields print from: a row, or with weights
// sprio -w's line of weights.
type prioArgs struct {
	r       *PrioRow
	w       *PrioWeights
	weights bool
}

type prioField = field[prioArgs, struct{}]

// PrioFormat is a parsed sprio format.
type PrioFormat columns[prioArgs, struct{}]

// ParsePrioFormat reads a format as sprio's parse_format does
// (parseShort): each field is "%[.][WIDTH]LETTER" followed by text up to
// the next "%". It returns the letters that name no field; sprio reports
// each and goes on without it.
func ParsePrioFormat(spec string) (PrioFormat, []byte) {
	var bad []byte
	f := parseShort(prioFields, spec, func(t specToken) bool {
		bad = append(bad, t.letter)
		return false
	})
	return PrioFormat(f), bad
}

// PrioWeights are the PriorityWeight* settings sprio reads.
type PrioWeights struct {
	Age, Assoc, FairShare, JobSize, Partition, QOS int
	// TRES is PriorityWeightTRES as written; "" for none.
	TRES string
}

// DefaultPrioFormat is sprio's format when none is given.
func DefaultPrioFormat(w PrioWeights, long, norm, users, sibling bool) string {
	switch {
	case long && norm:
		return "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
	case long:
		return "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
	}
	f := "%.15i %9r"
	if sibling {
		f += " %.8c"
	}
	if users {
		f += " %.8u"
	}
	add := func(weight bool, field string) {
		if weight {
			f += " " + field
		}
	}
	if norm {
		f += " %10y"
		add(w.Age != 0, "%10a")
		add(w.Assoc != 0, "%10b")
		add(w.FairShare != 0, "%10f")
		add(w.JobSize != 0, "%10j")
		add(w.Partition != 0, "%10p")
		add(w.QOS != 0, "%10q")
		add(w.TRES != "", "%20t")
		return f
	}
	f += " %.10Y %.10S"
	add(w.Age != 0, "%.10A")
	add(w.Assoc != 0, "%.10B")
	add(w.FairShare != 0, "%.10F")
	add(w.JobSize != 0, "%.10J")
	add(w.Partition != 0, "%.10P")
	add(w.QOS != 0, "%.10Q")
	add(w.TRES != "", "%.20T")
	return f
}

// PrioRow is one line of sprio: a pending job (or array record) in one
// partition, with the id sprio prints.
type PrioRow struct {
	api.PriorityRow
	ID uint32
}

// direct reports whether the row's priority was set by hand (Slurm's
// direct_prio): the daemon then sends no factors, only the priority.
func (r *PrioRow) direct() bool {
	return r.Priority > 1 && r.Age == 0 && r.Assoc == 0 && r.FairShare == 0 && r.JobSize == 0 &&
		r.PartitionPrio == 0 && r.QOSPrio == 0 && r.Site == 0 && r.Nice == 0 && len(r.TRES) == 0
}

// priority is sprio's get_priority_from_factors: the sum of the weighted
// factors, site less nice, at least 1, kept as a fraction (PRIORITY -n
// shows it); or the priority set by hand.
func (r *PrioRow) priority() float64 {
	if r.direct() {
		return float64(r.Priority)
	}
	p := r.Age + r.Assoc + r.FairShare + r.JobSize + r.PartitionPrio + r.QOSPrio + r.Site - float64(r.Nice)
	for _, t := range r.TRES {
		p += t.Value
	}
	return max(p, 1)
}

// Header is sprio's header line.
func (f PrioFormat) Header(w PrioWeights) string { return columns[prioArgs, struct{}](f).header() }

// Weights is sprio -w's line.
func (f PrioFormat) Weights(w PrioWeights) string { return f.line(prioArgs{w: &w, weights: true}) }

// Line prints one row.
func (f PrioFormat) Line(r *PrioRow, w PrioWeights) string { return f.line(prioArgs{r: r, w: &w}) }

func (f PrioFormat) line(a prioArgs) string {
	return string(columns[prioArgs, struct{}](f).appendLine(nil, a))
}

// prioFactor is one of the weighted factors, as its weight (-w), its
// value, or normalised: the value over the weight (-n, lower-case letters).
func prioFactor(letter byte, header string, weight func(*PrioWeights) int, value func(*PrioRow) float64) *prioField {
	return &prioField{letter: letter, header: header, value: func(a prioArgs) string {
		switch {
		case a.weights:
			return strconv.Itoa(weight(a.w))
		case letter >= 'a': // normalised
			n := 0.0
			if w := weight(a.w); w != 0 {
				n = value(a.r) / float64(w)
			}
			return fmt.Sprintf("%.7f", n)
		}
		return fmt.Sprintf("%.0f", value(a.r))
	}}
}

// prioOther is a field that is not a factor: its -w value and its row's.
func prioOther(letter byte, header string, weight func(*PrioWeights) string, value func(*PrioRow) string) *prioField {
	return &prioField{letter: letter, header: header, value: func(a prioArgs) string {
		if a.weights {
			if weight == nil {
				return ""
			}
			return weight(a.w)
		}
		return value(a.r)
	}}
}

// prioFields is sprio's field table (src/sprio/opts.c, print.c).
var prioFields = func() []*prioField {
	fs := []*prioField{
		prioOther('c', "CLUSTER", nil, func(*PrioRow) string { return "(null)" }), // no federation: the cluster name is NULL
		prioOther('i', "JOBID", func(*PrioWeights) string { return "Weights" }, func(r *PrioRow) string {
			return strconv.FormatUint(uint64(r.ID), 10)
		}),
		prioOther('N', "NICE", nil, func(r *PrioRow) string {
			if r.direct() {
				return "0"
			}
			return strconv.Itoa(r.Nice)
		}),
		prioOther('r', "PARTITION", nil, func(r *PrioRow) string { return r.Partition }),
		prioOther('S', "SITE", func(*PrioWeights) string { return "1" }, func(r *PrioRow) string {
			if r.direct() {
				return "0"
			}
			return fmt.Sprintf("%.0f", r.Site)
		}),
		prioOther('u', "USER", nil, func(r *PrioRow) string { return r.User }),
		prioOther('y', "PRIORITY", nil, func(r *PrioRow) string {
			return fmt.Sprintf("%16.14f", r.priority()/float64(uint32(0xffffffff)))
		}),
		prioOther('Y', "PRIORITY", nil, func(r *PrioRow) string { return strconv.FormatInt(int64(r.priority()), 10) }),
		// Each TRES factor that is not 0, as name=value (print.c,
		// _print_tres_normalized and _print_tres_weighted).
		prioOther('t', "TRES", nil, func(r *PrioRow) string {
			return prioTRES(r, func(t api.PriorityTRES) string { return fmt.Sprintf("%.2f", t.Value/t.Weight) })
		}),
		prioOther('T', "TRES", func(w *PrioWeights) string { return w.TRES }, func(r *PrioRow) string {
			return prioTRES(r, func(t api.PriorityTRES) string { return fmt.Sprintf("%.0f", t.Value) })
		}),
	}
	for _, fa := range []struct {
		letter byte
		header string
		weight func(*PrioWeights) int
		value  func(*PrioRow) float64
	}{
		{'a', "AGE", func(w *PrioWeights) int { return w.Age }, func(r *PrioRow) float64 { return r.Age }},
		{'b', "ASSOC", func(w *PrioWeights) int { return w.Assoc }, func(r *PrioRow) float64 { return r.Assoc }},
		{'f', "FAIRSHARE", func(w *PrioWeights) int { return w.FairShare }, func(r *PrioRow) float64 { return r.FairShare }},
		{'j', "JOBSIZE", func(w *PrioWeights) int { return w.JobSize }, func(r *PrioRow) float64 { return r.JobSize }},
		{'p', "PARTITION", func(w *PrioWeights) int { return w.Partition }, func(r *PrioRow) float64 { return r.PartitionPrio }},
		{'q', "QOS", func(w *PrioWeights) int { return w.QOS }, func(r *PrioRow) float64 { return r.QOSPrio }},
	} {
		fs = append(fs, prioFactor(fa.letter, fa.header, fa.weight, fa.value),
			prioFactor(fa.letter-'a'+'A', fa.header, fa.weight, fa.value))
	}
	return fs
}()

// prioTRES is a row's TRES factors, "name=value" each, comma-separated.
func prioTRES(r *PrioRow, value func(api.PriorityTRES) string) string {
	if r.direct() {
		return ""
	}
	var b strings.Builder
	for _, t := range r.TRES {
		if t.Value == 0 || t.Weight == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.Name + "=" + value(t))
	}
	return b.String()
}

// SortPrioRows is sprio's sort_job_list: the -S keys applied from the last
// to the first, each a stable sort ("-" before a key descends). The
// default is "i", job id. It returns the first key it does not know.
func SortPrioRows(rows []PrioRow, spec string) (bad byte, ok bool) {
	if spec == "" {
		spec = "i"
	}
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '-' || c == '+' {
			continue
		}
		desc := i > 0 && spec[i-1] == '-'
		key := prioSortKey(c)
		if key == nil {
			return c, false
		}
		slices.SortStableFunc(rows, func(a, b PrioRow) int {
			if desc {
				return key(&b, &a)
			}
			return key(&a, &b)
		})
	}
	return 0, true
}

func prioSortKey(c byte) func(a, b *PrioRow) int {
	float := func(v func(*PrioRow) float64) func(a, b *PrioRow) int {
		return func(a, b *PrioRow) int { return fuzzyCompare(v(a), v(b)) }
	}
	switch c {
	case 'c':
		return func(a, b *PrioRow) int { return 0 }
	case 'i':
		return func(a, b *PrioRow) int { return cmp.Compare(a.ID, b.ID) }
	case 'N':
		return func(a, b *PrioRow) int { return cmp.Compare(a.Nice, b.Nice) }
	case 'r':
		return func(a, b *PrioRow) int { return strings.Compare(a.Partition, b.Partition) }
	case 'u':
		return func(a, b *PrioRow) int { return strings.Compare(a.User, b.User) }
	case 'A', 'a':
		return float(func(r *PrioRow) float64 { return r.Age })
	case 'F', 'f':
		return float(func(r *PrioRow) float64 { return r.FairShare })
	case 'J', 'j':
		return float(func(r *PrioRow) float64 { return r.JobSize })
	case 'P', 'p':
		return float(func(r *PrioRow) float64 { return r.PartitionPrio })
	case 'Q', 'q':
		return float(func(r *PrioRow) float64 { return r.QOSPrio })
	case 'T', 't':
		return func(a, b *PrioRow) int { return 0 }
	case 'Y', 'y':
		return func(a, b *PrioRow) int { return fuzzyCompare(a.priority(), b.priority()) }
	}
	return nil
}

// fuzzyCompare is sort.c's _compare_double: equal within Slurm's
// fuzzy_equal tolerance.
func fuzzyCompare(a, b float64) int {
	if d := a - b; d < 0.00001 && d > -0.00001 {
		return 0
	}
	return cmp.Compare(a, b)
}
