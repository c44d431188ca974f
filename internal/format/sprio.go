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

// PrioColumn is one field of sprio's format.
type PrioColumn struct {
	letter byte // 0 for the text before the first field
	width  int
	right  bool
	suffix string
}

// PrioFormat is a parsed sprio format.
type PrioFormat []PrioColumn

// ParsePrioFormat reads a format as sprio's parse_format does: the text
// before the first "%" is printed first; each field is "%[.][WIDTH]LETTER"
// followed by text up to the next "%" (empty fields, "%%", are skipped).
// It returns the letters that name no field; sprio reports each and goes
// on without it.
func ParsePrioFormat(spec string) (PrioFormat, []byte) {
	var f PrioFormat
	var bad []byte
	first, rest, found := strings.Cut(spec, "%")
	if first != "" {
		f = append(f, PrioColumn{suffix: first})
	}
	if !found {
		return f, nil
	}
	for _, tok := range strings.Split(rest, "%") {
		if tok == "" {
			continue
		}
		c := PrioColumn{}
		i := 0
		if tok[0] == '.' {
			c.right, i = true, 1
		}
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			c.width = c.width*10 + int(tok[i]-'0')
			i++
		}
		if i < len(tok) {
			c.letter = tok[i]
			i++
		}
		c.suffix = tok[i:]
		if !strings.ContainsRune(prioLetters, rune(c.letter)) || c.letter == 0 {
			bad = append(bad, c.letter)
			continue
		}
		f = append(f, c)
	}
	return f, bad
}

const prioLetters = "aAbBcfFijJNpPrSqQuyYtT"

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
		r.PartitionPrio == 0 && r.QOSPrio == 0 && r.Site == 0 && r.Nice == 0
}

// priority is sprio's get_priority_from_factors: the sum of the weighted
// factors, site less nice, at least 1, kept as a fraction (PRIORITY -n
// shows it); or the priority set by hand.
func (r *PrioRow) priority() float64 {
	if r.direct() {
		return float64(r.Priority)
	}
	p := r.Age + r.Assoc + r.FairShare + r.JobSize + r.PartitionPrio + r.QOSPrio + r.Site - float64(r.Nice)
	return max(p, 1)
}

// Header is sprio's header line.
func (f PrioFormat) Header(w PrioWeights) string { return f.line(nil, w, false) }

// Weights is sprio -w's line.
func (f PrioFormat) Weights(w PrioWeights) string { return f.line(nil, w, true) }

// Line prints one row.
func (f PrioFormat) Line(r *PrioRow, w PrioWeights) string { return f.line(r, w, false) }

func (f PrioFormat) line(r *PrioRow, w PrioWeights, weights bool) string {
	var b strings.Builder
	for _, c := range f {
		if c.letter != 0 {
			b.WriteString(prioCut(c.cell(r, w, weights), c.width, c.right))
		}
		b.WriteString(c.suffix)
	}
	b.WriteByte('\n')
	return b.String()
}

// prioCut is sprio's _print_str with cut_output: right-justified
// ("%Ws") or cut ("%.Ws") and then padded to the width, and never longer
// than it.
func prioCut(s string, width int, right bool) string {
	if width == 0 {
		return s
	}
	if right {
		s = cPad(s, width, false)
	}
	if len(s) > width {
		s = s[:width]
	}
	return cPad(s, width, true)
}

func (c PrioColumn) cell(r *PrioRow, w PrioWeights, weights bool) string {
	type factor struct {
		header string
		weight int
		value  func(*PrioRow) float64
	}
	factors := map[byte]factor{
		'a': {"AGE", w.Age, func(r *PrioRow) float64 { return r.Age }},
		'b': {"ASSOC", w.Assoc, func(r *PrioRow) float64 { return r.Assoc }},
		'f': {"FAIRSHARE", w.FairShare, func(r *PrioRow) float64 { return r.FairShare }},
		'j': {"JOBSIZE", w.JobSize, func(r *PrioRow) float64 { return r.JobSize }},
		'p': {"PARTITION", w.Partition, func(r *PrioRow) float64 { return r.PartitionPrio }},
		'q': {"QOS", w.QOS, func(r *PrioRow) float64 { return r.QOSPrio }},
	}
	letter := c.letter
	lower := letter | 0x20
	if fa, ok := factors[lower]; ok {
		switch {
		case r == nil && !weights:
			return fa.header
		case weights:
			return strconv.Itoa(fa.weight)
		case letter == lower: // normalised
			n := 0.0
			if fa.weight != 0 {
				n = fa.value(r) / float64(fa.weight)
			}
			return fmt.Sprintf("%.7f", n)
		}
		return fmt.Sprintf("%.0f", fa.value(r))
	}
	header := map[byte]string{'c': "CLUSTER", 'i': "JOBID", 'N': "NICE", 'r': "PARTITION", 'S': "SITE",
		'u': "USER", 'y': "PRIORITY", 'Y': "PRIORITY", 't': "TRES", 'T': "TRES"}[letter]
	switch {
	case r == nil && !weights:
		return header
	case weights:
		switch letter {
		case 'i':
			return "Weights"
		case 'S':
			return "1"
		case 'T':
			return w.TRES
		}
		return ""
	}
	switch letter {
	case 'c':
		return "(null)" // no federation: the cluster name is NULL
	case 'i':
		return strconv.FormatUint(uint64(r.ID), 10)
	case 'N':
		if r.direct() {
			return "0"
		}
		return strconv.Itoa(r.Nice)
	case 'r':
		return r.Partition
	case 'S':
		if r.direct() {
			return "0"
		}
		return fmt.Sprintf("%.0f", r.Site)
	case 'u':
		return r.User
	case 'y':
		return fmt.Sprintf("%16.14f", r.priority()/float64(uint32(0xffffffff)))
	case 'Y':
		return strconv.FormatInt(int64(r.priority()), 10)
	}
	return "" // t, T: slurm-lite reports no per-TRES factors
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
