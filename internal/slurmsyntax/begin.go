package slurmsyntax

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// BeginError is a --begin time that Slurm's parse_time refuses. Slurm
// prints "Invalid time specification (pos=N): SPEC" to stderr (unless
// Silent) and sbatch then adds "error: Invalid --begin specification"; Pos
// is the N of the first line. Silent is set for input that names no date
// or time at all ("", " "), for which parse_time prints nothing.
type BeginError struct {
	Spec   string
	Pos    int
	Silent bool
}

// Diagnostic is the line Slurm's parse_time prints to stderr for this
// error, "Invalid time specification (pos=N): SPEC", or "" when it prints
// nothing.
func (e *BeginError) Diagnostic() string {
	if e.Silent {
		return ""
	}
	return fmt.Sprintf("Invalid time specification (pos=%d): %s", e.Pos, e.Spec)
}

func (e *BeginError) Error() string {
	if e.Silent {
		return fmt.Sprintf("invalid time specification %q: no date or time", e.Spec)
	}
	return fmt.Sprintf("invalid time specification %q at byte %d; want HH:MM[:SS] [AM|PM], "+
		"MMDD[YY], MM/DD[/YY], YYYY-MM-DD[THH:MM[:SS]], now[+count[seconds|minutes|hours|days|weeks]], "+
		"today, tomorrow, midnight, noon, fika or teatime", e.Spec, e.Pos)
}

// beginUnits are parse_time's time units, longest spelling first.
var beginUnits = []struct {
	name string
	secs int64
}{
	{"seconds", 1}, {"second", 1},
	{"minutes", 60}, {"minute", 60},
	{"hours", 3600}, {"hour", 3600},
	{"days", 86400}, {"day", 86400},
	{"weeks", 7 * 86400}, {"week", 7 * 86400},
}

// maxBeginDelta bounds "now+N" (about 31,700 years) so that the arithmetic
// cannot overflow; Slurm's C long would wrap instead.
const maxBeginDelta = 1_000_000_000_000

// ParseBegin parses a --begin time relative to now, in now's location, as
// Slurm's parse_time (src/common/parse_time.c) does for sbatch (past unset):
//
//   - HH:MM[:SS] with an optional AM or PM ("16:00", "4:00 PM"): today, or
//     tomorrow if that time of day has passed (seconds do not count);
//   - midnight, noon, fika (15:00), teatime (16:00): times of day as above;
//   - today, tomorrow: dates, at 00:00 unless a time is given too;
//   - YYYY-MM-DD[THH:MM[:SS]], MMDD[YY], MM/DD[/YY], MM.DD[.YY]: dates; a
//     date without a year is this year, or next year if it has passed;
//   - now[{+|-}count[seconds|minutes|hours|days|weeks]]: seconds by
//     default ("now+60", "now+1hour");
//   - uts<seconds>: a Unix time.
//
// Words are case-insensitive; blanks, '-' and 'T' between parts are
// skipped, so "tomorrow noon" and "2026-12-01T08:00" work (and, as in
// Slurm, "Tomorrow" and "Teatime" fail: their capital T is skipped). "elevenses"
// arrived in Slurm 24.05 and is refused, as 22.05 refuses it. The result is
// whole seconds. Errors are *BeginError. Where parse_time returns 0 without
// a complaint (input that names no date or time, or the epoch itself),
// which sbatch refuses as an invalid --begin, the error is Silent.
func ParseBegin(s string, now time.Time) (time.Time, error) {
	t, err := parseTime(s, now, false)
	if err != nil {
		return time.Time{}, err
	}
	if t.IsZero() {
		return time.Time{}, &BeginError{Spec: s, Silent: true}
	}
	return t, nil
}

// ParseTime parses a time as parse_time(s, past) does: ParseBegin's
// formats, and with past set (sacct's -S and -E) a time of day without a
// date is today even when it has passed, and a date without a year is this
// year unless its month is later than now's (then last year). parse_time
// returns 0 without a complaint for input that names no date or time and
// for the epoch itself, which sacct then takes as "not given" (so in UTC
// "sacct -S 1970-01-01" is plain sacct, since midnight): ParseTime returns
// the zero Time and no error for both. Its only error besides the
// syntax's is a time mktime cannot represent, -1: one second before the
// epoch. Errors are *BeginError.
func ParseTime(s string, now time.Time, past bool) (time.Time, error) {
	t, err := parseTime(s, now, past)
	if err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// parseTime is parse_time; see ParseTime. A nil *BeginError is returned as
// such, never as a non-nil error interface.
func parseTime(s string, now time.Time, past bool) (time.Time, *BeginError) {
	loc := now.Location()
	now = now.Truncate(time.Second)
	if hasPrefixFold(s, "uts") {
		v, n := strtol(s[3:])
		if n == 0 || v < 1000000 || v == math.MaxInt64 || 3+n != len(s) {
			return time.Time{}, &BeginError{Spec: s}
		}
		return time.Unix(v, 0).In(loc), nil
	}
	p := beginParser{s: s, hour: -1, minute: -1, month: -1, mday: -1, year: -1}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		p.s = s[:i] // parse_time stops at a newline
	}
	if err := p.parse(now); err != nil {
		err.Spec = s
		return time.Time{}, err
	}
	if p.hour == -1 && p.month == -1 {
		return time.Time{}, nil // nothing named: parse_time's 0
	}
	if p.hour == -1 { // a date and no time: 00:00
		p.hour, p.minute = 0, 0
	} else if p.month == -1 { // a time and no date: the next such time
		if past || p.hour > now.Hour() || (p.hour == now.Hour() && p.minute > now.Minute()) {
			p.setDate(now)
		} else {
			p.setDate(now.Add(24 * time.Hour))
		}
	}
	if p.year == -1 {
		p.year = now.Year()
		switch {
		case past:
			if p.month > int(now.Month())-1 {
				p.year--
			}
		case !afterNow(p, now):
			p.year++
		}
	}
	t := time.Date(p.year, time.Month(p.month+1), p.mday, p.hour, p.minute, p.second, 0, loc)
	switch t.Unix() {
	case -1: // mktime's error value, parse_time's only check of the result
		return time.Time{}, &BeginError{Spec: s, Pos: len(p.s)}
	case 0: // parse_time returns it as it returns "nothing named"
		return time.Time{}, nil
	}
	return t, nil
}

// afterNow reports whether month, day, hour and minute (not seconds) of p
// come after now's within a year, as parse_time picks the year.
func afterNow(p beginParser, now time.Time) bool {
	a := [4]int{p.month, p.mday, p.hour, p.minute}
	b := [4]int{int(now.Month()) - 1, now.Day(), now.Hour(), now.Minute()}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

type beginParser struct {
	s                    string
	pos                  int
	hour, minute, second int
	month, mday, year    int // month from 0; year in full
}

func (p *beginParser) at(i int) int { return int(byteAt(p.s, i)) }

func (p *beginParser) fail(pos int) *BeginError { return &BeginError{Pos: pos} }

func (p *beginParser) setDate(t time.Time) {
	p.month, p.mday, p.year = int(t.Month())-1, t.Day(), t.Year()
}

func (p *beginParser) setClock(h, m, s int) { p.hour, p.minute, p.second = h, m, s }

// parse walks the string as parse_time's loop does: p.pos is left on the
// last byte each part used.
func (p *beginParser) parse(now time.Time) *BeginError {
	for ; p.pos < len(p.s); p.pos++ {
		c := p.s[p.pos]
		if c == ' ' || c == '\t' || c == '-' || c == 'T' {
			continue
		}
		rest := p.s[p.pos:]
		word := func(w string) bool {
			if hasPrefixFold(rest, w) {
				p.pos += len(w) - 1
				return true
			}
			return false
		}
		switch {
		case word("today"):
			p.setDate(now)
		case word("tomorrow"):
			p.setDate(now.Add(24 * time.Hour))
		case word("midnight"):
			p.setClock(0, 0, 0)
		case word("noon"):
			p.setClock(12, 0, 0)
		case word("fika"):
			p.setClock(15, 0, 0)
		case word("teatime"):
			p.setClock(16, 0, 0)
		case hasPrefixFold(rest, "now"):
			if err := p.now(now); err != nil {
				return err
			}
		case !isDigit(c):
			return p.fail(p.pos)
		case p.at(p.pos+1) == ':' || p.at(p.pos+2) == ':':
			if err := p.clock(); err != nil {
				return err
			}
		default:
			if err := p.date(); err != nil {
				return err
			}
		}
	}
	return nil
}

// now reads "now[{+|-}count[unit]]".
func (p *beginParser) now(now time.Time) *BeginError {
	var delta int64
	i := p.pos + 3
	for ; ; i++ {
		c := byteAt(p.s, i)
		if c == '+' || c == '-' {
			p.pos = i
			d, err := p.delta()
			if err != nil {
				return err
			}
			if c == '-' {
				d = -d
			}
			delta = d
			break
		}
		if c == ' ' || c == '\t' {
			continue
		}
		if c == 0 {
			p.pos = i - 1
			break
		}
		return p.fail(i)
	}
	later := time.Unix(now.Unix()+delta, 0).In(now.Location())
	p.setDate(later)
	p.setClock(later.Hour(), later.Minute(), later.Second())
	return nil
}

// delta is _get_delta: digits and blanks after the sign, optionally ended
// by one unit word.
func (p *beginParser) delta() (int64, *BeginError) {
	var cnt int64
	ndigits := 0
	off := p.pos + 1
loop:
	for ; off < len(p.s); off++ {
		c := p.s[off]
		if isCSpace(c) {
			continue
		}
		for _, u := range beginUnits {
			if hasPrefixFold(p.s[off:], u.name) {
				off += len(u.name)
				cnt *= u.secs
				break loop
			}
		}
		if !isDigit(c) {
			return 0, p.fail(off - 1)
		}
		cnt = cnt*10 + int64(c-'0')
		ndigits++
		if cnt > maxBeginDelta {
			return 0, p.fail(off)
		}
	}
	if ndigits == 0 {
		return 0, p.fail(p.pos)
	}
	if cnt > maxBeginDelta {
		return 0, p.fail(off - 1)
	}
	p.pos = off - 1
	return cnt, nil
}

// clock is _get_time: "H:MM", "HH:MM[:SS]", then an optional AM or PM.
func (p *beginParser) clock() *BeginError {
	off := p.pos
	hr := p.at(off) - '0'
	off++
	if p.at(off) != ':' {
		if !isDigit(byte(p.at(off))) {
			return p.fail(off)
		}
		hr = hr*10 + p.at(off) - '0'
		off++
	}
	if hr > 23 {
		return p.fail(off - 2)
	}
	if p.at(off) != ':' {
		return p.fail(off)
	}
	off++
	two := func(limit int) (int, *BeginError) {
		for i := 0; i < 2; i++ {
			if !isDigit(byte(p.at(off + i))) {
				return 0, p.fail(off + i)
			}
		}
		v := (p.at(off)-'0')*10 + p.at(off+1) - '0'
		off += 2
		if v > limit {
			return 0, p.fail(off - 2)
		}
		return v, nil
	}
	mins, err := two(59)
	if err != nil {
		return err
	}
	sec := 0
	if p.at(off) == ':' {
		off++
		if sec, err = two(59); err != nil {
			return err
		}
	}
	for off < len(p.s) && isCSpace(p.s[off]) {
		off++
	}
	switch {
	case hasPrefixFold(p.s[off:], "pm"):
		hr += 12
		if hr > 23 {
			if hr != 24 {
				return p.fail(off)
			}
			hr = 12 // 12:30 PM is half past noon
		}
		off += 2
	case hasPrefixFold(p.s[off:], "am"):
		if hr > 11 {
			if hr != 12 {
				return p.fail(off)
			}
			hr = 0 // 12:30 AM is half past midnight
		}
		off += 2
	}
	p.pos = off - 1
	p.setClock(hr, mins, sec)
	return nil
}

// date is _get_date: "YYYY-MM-DD", or "MMDD[YY]" with optional '.' or '/'
// between the parts.
func (p *beginParser) date() *BeginError {
	off := p.pos
	if p.at(off+4) == '-' && p.at(off+7) == '-' {
		yr := 0
		for i := 0; i < 4; i++ {
			if !isDigit(byte(p.at(off))) {
				return p.fail(off)
			}
			yr = yr*10 + p.at(off) - '0'
			off++
		}
		off++ // the '-'
		// parse_time does not check that the month's first byte is a
		// digit; a non-digit always ends out of range below.
		mon := p.at(off) - '0'
		off++
		if isDigit(byte(p.at(off))) {
			mon = mon*10 + p.at(off) - '0'
			off++
		}
		if mon < 1 || mon > 12 {
			return p.fail(off - 2)
		}
		off++ // the '-'
		day, err := p.day(&off)
		if err != nil {
			return err
		}
		p.pos = off - 1
		p.month, p.mday, p.year = mon-1, day, yr
		return nil
	}
	mon := p.at(off) - '0'
	off++
	if isDigit(byte(p.at(off))) {
		mon = mon*10 + p.at(off) - '0'
		off++
	}
	if mon < 1 || mon > 12 {
		return p.fail(off - 2)
	}
	if c := p.at(off); c == '.' || c == '/' {
		off++
	}
	day, err := p.day(&off)
	if err != nil {
		return err
	}
	if c := p.at(off); c == '.' || c == '/' {
		off++
	}
	yr := 0
	if isDigit(byte(p.at(off))) {
		yr = p.at(off) - '0'
		off++
		if !isDigit(byte(p.at(off))) {
			return p.fail(off)
		}
		yr = yr*10 + p.at(off) - '0'
		off++
	}
	p.pos = off - 1
	p.month, p.mday = mon-1, day
	// parse_time keeps no year for "00": it is taken as "no year given".
	if yr != 0 {
		p.year = 2000 + yr
	}
	return nil
}

// day reads a day of the month, one or two digits from 1 to 31. Like
// parse_time it does not check the month: "02/31" is March 3 or 2.
func (p *beginParser) day(off *int) (int, *BeginError) {
	if !isDigit(byte(p.at(*off))) {
		return 0, p.fail(*off)
	}
	day := p.at(*off) - '0'
	*off++
	if isDigit(byte(p.at(*off))) {
		day = day*10 + p.at(*off) - '0'
		*off++
	}
	if day < 1 || day > 31 {
		return 0, p.fail(*off - 2)
	}
	return day, nil
}
