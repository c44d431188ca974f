package sreport

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeFormat is -t: how a TRES-seconds value is printed.
type TimeFormat int

const (
	Minutes TimeFormat = iota // Slurm's default
	Seconds
	Hours
	Percent
	SecPer
	MinPer
	HourPer
)

// String is sreport's time_format_string, as "Usage reported in" prints it.
func (f TimeFormat) String() string {
	return [...]string{"Minutes", "Seconds", "Hours", "Percentage of Total",
		"Seconds/Percentage of Total", "Minutes/Percentage of Total", "Hours/Percentage of Total"}[f]
}

func (f TimeFormat) per() bool { return f == SecPer || f == MinPer || f == HourPer }

// parseTimeFormat is _set_time_format: a case-insensitive prefix of a
// name, at least 6 letters for the per-forms and 1 for the others, tried
// in Slurm's order ("s" is Seconds, "p" Percent).
func parseTimeFormat(s string) (TimeFormat, bool) {
	for _, f := range []struct {
		word string
		min  int
		f    TimeFormat
	}{
		{"SecPer", 6, SecPer}, {"MinPer", 6, MinPer}, {"HourPer", 6, HourPer},
		{"Seconds", 1, Seconds}, {"Minutes", 1, Minutes}, {"Hours", 1, Hours}, {"Percent", 1, Percent},
	} {
		if abbrev(s, f.word, f.min) {
			return f.f, true
		}
	}
	return Minutes, false
}

// abbrev is xstrncasecmp(s, word, MAX(len(s), min)) == 0: s is word or a
// prefix of it at least min long.
func abbrev(s, word string, min int) bool {
	n := max(len(s), min)
	if n > len(word) {
		return strings.EqualFold(s, word) && len(s) == len(word)
	}
	return len(s) >= n && strings.EqualFold(s, word[:n])
}

// value is slurmdb_report_print_time's text for value of total: "%.0lf"
// of minutes or hours (printf's rounding, half to even, as Go's), "%.2lf%%"
// of the total.
func (f TimeFormat) value(v, total int64) string {
	pct := 0.0
	if total > 0 {
		pct = float64(v) / float64(total) * 100
	}
	switch f {
	case Seconds:
		return strconv.FormatInt(v, 10)
	case Hours:
		return strconv.FormatFloat(float64(v)/3600, 'f', 0, 64)
	case Percent:
		return fmt.Sprintf("%.2f%%", pct)
	case SecPer:
		return fmt.Sprintf("%d(%.2f%%)", v, pct)
	case MinPer:
		return fmt.Sprintf("%.0f(%.2f%%)", float64(v)/60, pct)
	case HourPer:
		return fmt.Sprintf("%.0f(%.2f%%)", float64(v)/3600, pct)
	}
	return strconv.FormatFloat(float64(v)/60, 'f', 0, 64)
}

// usageWidth is sreport_set_usage_col_width: 8, one more per digit of the
// largest value beyond 8, and 9 more for the per-forms.
func (f TimeFormat) usageWidth(largest int64) int {
	w := 8
	for order := int64(100000000); largest >= order && w < 26; order *= 10 {
		w++
		if order > (1<<63-1)/10 {
			break
		}
	}
	if f.per() {
		w += 9
	}
	return w
}

// field is one column: its header and width.
type field struct {
	key   string // which value (see the reports' cell functions)
	name  string
	width int
	str   bool // a name (cut with '+'), not a figure
}

// table lays rows out as print_fields does.
type table struct {
	fields []field
	rows   [][]string
	opts   *Options
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	line := func(cells []string, header bool) {
		for i, f := range t.fields {
			last := i == len(t.fields)-1
			v := cells[i]
			switch {
			case t.opts.Parsable2:
				b.WriteString(v)
				if !last {
					b.WriteByte('|')
				}
			case t.opts.Parsable:
				b.WriteString(v)
				b.WriteByte('|')
			default:
				// print_fields_str marks a cut value with '+'; names and
				// numbers are only cut.
				if !header && len(v) > f.width && f.str {
					v = v[:f.width-1] + "+"
				} else if len(v) > f.width {
					v = v[:f.width]
				}
				fmt.Fprintf(&b, "%*s ", f.width, v)
			}
		}
		b.WriteByte('\n')
	}
	if !t.opts.NoHeader {
		names := make([]string, len(t.fields))
		for i, f := range t.fields {
			names[i] = f.name
		}
		line(names, true)
		if !t.opts.Parsable && !t.opts.Parsable2 {
			for _, f := range t.fields {
				b.WriteString(strings.Repeat("-", f.width) + " ")
			}
			b.WriteByte('\n')
		}
	}
	for _, r := range t.rows {
		line(r, false)
	}
	return b.String()
}

const rule = "--------------------------------------------------------------------------------\n"

// slurmTime is slurm_make_time_str's default: local ISO 8601 to seconds.
func slurmTime(t time.Time) string { return t.Format("2006-01-02T15:04:05") }

// banner is the block above a report: its title over the window and the
// unit of its figures (none with -n).
func banner(o *Options, title string, secs bool, unitLine string) string {
	if o.NoHeader {
		return ""
	}
	s := rule + title + " " + slurmTime(o.Start) + " - " + slurmTime(o.End.Add(-time.Second))
	if secs {
		s += " (" + strconv.FormatInt(int64(o.End.Sub(o.Start)/time.Second), 10) + " secs)"
	}
	return s + "\n" + unitLine + "\n" + rule
}

// usageLine is "Usage reported in CPU Minutes", "... TRES Hours" with -T,
// "... Percentage of Total" alone.
func usageLine(o *Options) string {
	if o.Time == Percent {
		return "Usage reported in " + o.Time.String()
	}
	what := "CPU"
	if o.TRESGiven {
		what = "TRES"
	}
	return "Usage reported in " + what + " " + o.Time.String()
}
