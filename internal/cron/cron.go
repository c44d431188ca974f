// Package cron reads the time part of a crontab line as Slurm 22.05's
// scrontab does (cronspec_to_bitstring in src/scrontab/parse.c), writes it
// back as slurmctld shows it (cronspec_from_cron_entry: CrontabSpec in
// scontrol show job), and finds the next time it names
// (calc_next_cron_start in src/common/cron.c). It is pure: the caller
// gives the time and the zone.
//
// Slurm's rules, which differ from Vixie cron's in places, are kept:
//   - a field is "*", a list of numbers and ranges ("1-5,30"), or for
//     month and day of week one name ("jan", "wed"); a step ("/N", N from 2
//     to below the field's size) keeps every Nth value counted from the
//     field's first (0 for minute and hour, 1 for the others), whatever
//     the range before it starts at;
//   - minute 60, hour 24 and day of week 7 mean 0;
//   - when both day of month and day of week are given, either one will do;
//   - @yearly @annually @monthly @weekly @daily @midnight @hourly.
package cron

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Entry is one crontab line's schedule and its command.
type Entry struct {
	// Bits of each field, as Slurm's bitstrings: minute 0-59, hour 0-23,
	// day of month 1-31, month 1-12, day of week 0-6.
	Minute, Hour, DayOfMonth, Month, DayOfWeek uint64
	// Wild marks the fields given as a bare "*".
	Wild Wild
	// Command is the rest of the line after the schedule.
	Command string
}

// Wild is a set of fields given as a bare "*".
type Wild uint8

// The fields.
const (
	WildMinute Wild = 1 << iota
	WildHour
	WildDOM
	WildMonth
	WildDOW
)

// The fields' bitstring sizes in Slurm (one more than the largest value,
// which lets 60, 24 and 7 be given and mean 0).
const (
	minuteBits = 61
	hourBits   = 25
	domBits    = 32
	monthBits  = 13
	dowBits    = 8
)

var (
	months = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	days   = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
)

// all is a mask of bits 0..n-1.
func all(n int) uint64 { return 1<<uint(n) - 1 }

// Error is a line that is not a crontab entry: Slurm is what Slurm's
// scrontab logs about it before its "something is broken" ("" when
// nothing more), Detail what is wrong and how to write it.
type Error struct {
	Slurm  string
	Detail string
}

func (e *Error) Error() string { return e.Detail }

// What Slurm logs about some bad fields (parse.c).
var (
	errAt    = errors.New("invalid @ line")
	errStep  = errors.New("bad step value")
	errMonth = errors.New("bad month specification")
	errDay   = errors.New("bad day specification")
)

// Parse reads a crontab line that is not a comment, a blank or a
// variable: five fields or an @name, then the command. Its error is an
// *Error, which says which part is wrong (Slurm itself says only
// "something is broken").
func Parse(line string) (Entry, error) {
	e, err := parse(line)
	if err != nil {
		out := &Error{Detail: err.Error()}
		for _, known := range []error{errAt, errStep, errMonth, errDay} {
			if errors.Is(err, known) {
				out.Slurm = known.Error()
			}
		}
		return Entry{}, out
	}
	return e, nil
}

func parse(line string) (Entry, error) {
	var e Entry
	pos := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(pos, "@") {
		name := pos[1:]
		var ok bool
		e, name, ok = atName(name)
		if !ok {
			return Entry{}, fmt.Errorf("%w: use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly", errAt)
		}
		pos = name
	} else {
		fields := []struct {
			what   string
			bits   *uint64
			size   int
			start  int
			wild   Wild
			names  []string
			offset int
		}{
			{"minute", &e.Minute, minuteBits, 0, WildMinute, nil, 0},
			{"hour", &e.Hour, hourBits, 0, WildHour, nil, 0},
			{"day of month", &e.DayOfMonth, domBits, 1, WildDOM, nil, 0},
			{"month", &e.Month, monthBits, 1, WildMonth, months, 1},
			{"day of week", &e.DayOfWeek, dowBits, 1, WildDOW, days, 1},
		}
		for i, f := range fields {
			if pos == "" {
				return Entry{}, fmt.Errorf("unexpected end of line: the %s field is missing (a line is: minute hour day-of-month month day-of-week command)", f.what)
			}
			b, wild, rest, err := field(pos, f.size, f.start, f.names, f.offset)
			if err != nil {
				return Entry{}, fmt.Errorf("bad %s field: %w", f.what, err)
			}
			if wild {
				e.Wild |= f.wild
			}
			*f.bits, pos = b, rest
			if i < len(fields)-1 {
				if pos == "" {
					return Entry{}, fmt.Errorf("unexpected end of line: the %s field is missing (a line is: minute hour day-of-month month day-of-week command)", fields[i+1].what)
				}
				if pos[0] != ' ' && pos[0] != '\t' {
					return Entry{}, fmt.Errorf("bad %s field: %q", f.what, strings.Fields(pos)[0])
				}
				pos = strings.TrimLeft(pos, " \t")
			}
		}
		// 60 minutes, 24 hours and day 7 are 0.
		if e.Minute&(1<<60) != 0 {
			e.Minute |= 1
		}
		if e.Hour&(1<<24) != 0 {
			e.Hour |= 1
		}
		if e.DayOfWeek&(1<<7) != 0 {
			e.DayOfWeek |= 1
		}
	}
	if pos == "" || (pos[0] != ' ' && pos[0] != '\t') {
		return Entry{}, errors.New("no command after the schedule")
	}
	e.Command = strings.TrimLeft(pos, " \t")
	if strings.TrimSpace(e.Command) == "" {
		return Entry{}, errors.New("no command after the schedule")
	}
	if err := e.valid(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// atName reads the names after "@" (Slurm compares their first letters
// only, so "@dailyX" is @daily followed by "X").
func atName(s string) (Entry, string, bool) {
	lower := strings.ToLower(s)
	every := Entry{Minute: all(60), Hour: all(24), DayOfMonth: all(domBits) &^ 1, Month: all(monthBits) &^ 1, DayOfWeek: all(7)}
	for _, n := range []struct {
		name string
		e    Entry
	}{
		{"yearly", Entry{Minute: 1, Hour: 1, DayOfMonth: 1 << 1, Month: 1 << 1, DayOfWeek: every.DayOfWeek, Wild: WildDOW}},
		{"annually", Entry{Minute: 1, Hour: 1, DayOfMonth: 1 << 1, Month: 1 << 1, DayOfWeek: every.DayOfWeek, Wild: WildDOW}},
		{"monthly", Entry{Minute: 1, Hour: 1, DayOfMonth: 1 << 1, Month: every.Month, DayOfWeek: every.DayOfWeek, Wild: WildMonth | WildDOW}},
		{"weekly", Entry{Minute: 1, Hour: 1, DayOfMonth: every.DayOfMonth, Month: every.Month, DayOfWeek: 1, Wild: WildDOM | WildMonth}},
		{"daily", Entry{Minute: 1, Hour: 1, DayOfMonth: every.DayOfMonth, Month: every.Month, DayOfWeek: every.DayOfWeek, Wild: WildDOM | WildMonth | WildDOW}},
		{"midnight", Entry{Minute: 1, Hour: 1, DayOfMonth: every.DayOfMonth, Month: every.Month, DayOfWeek: every.DayOfWeek, Wild: WildDOM | WildMonth | WildDOW}},
		{"hourly", Entry{Minute: 1, Hour: every.Hour, DayOfMonth: every.DayOfMonth, Month: every.Month, DayOfWeek: every.DayOfWeek, Wild: WildDOM | WildMonth | WildDOW}},
	} {
		if strings.HasPrefix(lower, n.name) {
			return n.e, s[len(n.name):], true
		}
	}
	return Entry{}, s, false
}

// field reads one field at the start of s: its bits, whether it was a
// bare "*", and the rest of s.
func field(s string, size, start int, names []string, offset int) (uint64, bool, string, error) {
	var b uint64
	wild := false
	switch {
	case s[0] == '*':
		b = all(size)
		s = s[1:]
		wild = !strings.HasPrefix(s, "/")
	case names != nil && isLetter(s[0]):
		bad := errMonth
		if len(names) == len(days) {
			bad = errDay
		}
		if len(s) < 3 {
			return 0, false, s, fmt.Errorf("%w: %q is not a name (%s)", bad, s, strings.Join(names, " "))
		}
		i := index(names, strings.ToLower(s[:3]))
		if i < 0 {
			return 0, false, s, fmt.Errorf("%w: %q is not a name (%s)", bad, s[:3], strings.Join(names, " "))
		}
		b = 1 << uint(i+offset)
		s = s[3:]
	default:
		end := 0
		for end < len(s) && (isDigit(s[end]) || s[end] == '-' || s[end] == ',') {
			end++
		}
		var err error
		if b, err = rangeList(s[:end], size); err != nil {
			return 0, false, s, err
		}
		s = s[end:]
	}
	if strings.HasPrefix(s, "/") {
		end := 1
		for end < len(s) && isDigit(s[end]) {
			end++
		}
		step, err := strconv.Atoi(s[1:end])
		if err != nil || step <= 1 || step >= size {
			return 0, false, s, fmt.Errorf("%w %q: a step is from 2 to %d", errStep, s[:end], size-1)
		}
		var mask uint64
		for i := start; i < size; i += step {
			mask |= 1 << uint(i)
		}
		b &= mask
		s = s[end:]
	}
	return b, wild, s, nil
}

// rangeList reads "1-5,30" as Slurm's bit_unfmt does: each number must be
// below size; a range whose end is below its start sets nothing.
func rangeList(s string, size int) (uint64, error) {
	if s == "" {
		return 0, errors.New("expected a number, a range, a list or *")
	}
	var b uint64
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if part == "" || lo == "" || (isRange && (hi == "" || strings.Contains(hi, "-"))) {
			return 0, fmt.Errorf("%q is not a number or a range", part)
		}
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a >= size || z >= size {
			return 0, fmt.Errorf("%q is out of range (0-%d)", part, size-1)
		}
		for i := a; i <= z; i++ {
			b |= 1 << uint(i)
		}
	}
	return b, nil
}

// valid is valid_cron_entry: every field names at least one value, and
// the day of month exists in one of the months.
func (e *Entry) valid() error {
	e.Minute &^= 1 << 60
	e.Hour &^= 1 << 24
	e.DayOfMonth &^= 1
	e.Month &^= 1
	e.DayOfWeek &^= 1 << 7
	for _, f := range []struct {
		what string
		b    uint64
		w    Wild
	}{{"minute", e.Minute, WildMinute}, {"hour", e.Hour, WildHour}, {"day of month", e.DayOfMonth, WildDOM},
		{"month", e.Month, WildMonth}, {"day of week", e.DayOfWeek, WildDOW}} {
		if e.Wild&f.w == 0 && f.b == 0 {
			return fmt.Errorf("the %s field names no valid value", f.what)
		}
	}
	if e.Wild&WildDOM != 0 {
		return nil
	}
	first := lowest(e.DayOfMonth)
	switch {
	case first == 31 && e.Month&(1<<1|1<<3|1<<5|1<<7|1<<8|1<<10|1<<12) == 0:
		return errors.New("day 31 of a month that has only 30 days or fewer")
	case first == 30 && e.Month == 1<<2:
		return errors.New("day 30 of February")
	}
	return nil
}

// Spec is the schedule as slurmctld shows it (CrontabSpec): each field
// "*" when given as a bare "*", else its values as ranges ("0,5,10-12").
func (e Entry) Spec() string {
	parts := []string{
		fieldSpec(e.Minute, e.Wild&WildMinute != 0),
		fieldSpec(e.Hour, e.Wild&WildHour != 0),
		fieldSpec(e.DayOfMonth, e.Wild&WildDOM != 0),
		fieldSpec(e.Month, e.Wild&WildMonth != 0),
		fieldSpec(e.DayOfWeek, e.Wild&WildDOW != 0),
	}
	return strings.Join(parts, " ")
}

func fieldSpec(b uint64, wild bool) string {
	if wild {
		return "*"
	}
	var out []string
	for i := 0; i < 64; i++ {
		if b&(1<<uint(i)) == 0 {
			continue
		}
		j := i
		for j+1 < 64 && b&(1<<uint(j+1)) != 0 {
			j++
		}
		if j == i {
			out = append(out, strconv.Itoa(i))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	return strings.Join(out, ",")
}

// Next is the first minute strictly after the minute of now that the
// schedule names, in now's zone (slurmctld's: the controller's time
// zone). It always moves into the next minute first, so a job that ends
// within its minute does not run again in it.
func (e Entry) Next(now time.Time) time.Time {
	t := time.Date(now.Year(), now.Month(), now.Day(), now.Hour(), now.Minute(), 0, 0, now.Location()).Add(time.Minute)
	// At most a few years of minutes: every valid entry matches within
	// eight years (a 29 February on a given weekday, say); the bound only
	// keeps a bug from spinning.
	limit := t.AddDate(9, 0, 0)
	for t.Before(limit) {
		if !e.monthOK(t) {
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, t.Location())
			continue
		}
		if !e.dayOK(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
			continue
		}
		if e.Wild&WildHour == 0 && e.Hour&(1<<uint(t.Hour())) == 0 {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, t.Location())
			continue
		}
		if e.Wild&WildMinute == 0 && e.Minute&(1<<uint(t.Minute())) == 0 {
			t = t.Add(time.Minute)
			continue
		}
		return t
	}
	return time.Time{}
}

func (e Entry) monthOK(t time.Time) bool {
	return e.Wild&WildMonth != 0 || e.Month&(1<<uint(t.Month())) != 0
}

// dayOK: with both day fields given, either will do (Slurm, as cron).
func (e Entry) dayOK(t time.Time) bool {
	dom := e.DayOfMonth&(1<<uint(t.Day())) != 0
	dow := e.DayOfWeek&(1<<uint(t.Weekday())) != 0
	switch {
	case e.Wild&WildDOM != 0 && e.Wild&WildDOW != 0:
		return true
	case e.Wild&WildDOM != 0:
		return dow
	case e.Wild&WildDOW != 0:
		return dom
	}
	return dom || dow
}

func lowest(b uint64) int {
	for i := 0; i < 64; i++ {
		if b&(1<<uint(i)) != 0 {
			return i
		}
	}
	return -1
}

func index(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// ParseSchedule reads a schedule alone (five fields or an @name), as
// Spec writes it.
func ParseSchedule(spec string) (Entry, error) {
	e, err := Parse(spec + " :")
	if err != nil {
		return Entry{}, err
	}
	if e.Command != ":" {
		return Entry{}, fmt.Errorf("%q is more than a schedule", spec)
	}
	e.Command = ""
	return e, nil
}
