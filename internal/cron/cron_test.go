package cron

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpecAsSlurmShowsIt(t *testing.T) {
	for _, tc := range []struct {
		name, line, spec, command string
	}{
		{"every minute is all wild", "* * * * * /bin/date", "* * * * *", "/bin/date"},
		{"@daily is midnight", "@daily run.sh arg", "0 0 * * *", "run.sh arg"},
		{"@midnight is @daily", "@midnight x", "0 0 * * *", "x"},
		{"@hourly: Slurm sets every hour without the wildcard", "@hourly x", "0 0-23 * * *", "x"},
		{"@weekly is Sunday", "@weekly x", "0 0 * * 0", "x"},
		{"@monthly", "@monthly x", "0 0 1 * *", "x"},
		{"@yearly", "@yearly x", "0 0 1 1 *", "x"},
		{"@annually", "@annually x", "0 0 1 1 *", "x"},
		{"a star with a step is not wild", "*/15 * * * * x", "0,15,30,45 * * * *", "x"},
		{"a step counts from the field's first value, not the range's", "1-10/2 * * * * x", "2,4,6,8,10 * * * *", "x"},
		{"the man page's example", "1-5,30 8-17/2 * * wed $DIR/example.job", "1-5,30 8,10,12,14,16 * * 3", "$DIR/example.job"},
		{"minute 60, hour 24 and day 7 are 0", "60 24 * * 7 x", "0 0 * * 0", "x"},
		{"Sunday by name", "0 3 * * sun x", "0 3 * * 0", "x"},
		{"a month by name", "0 3 1 Jan * x", "0 3 1 1 *", "x"},
		{"tabs separate too", "5\t4\t*\t*\t*\tx y", "5 4 * * *", "x y"},
		{"day-of-week step from 1", "0 0 * * */2 x", "0 0 * * 0-1,3,5", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.spec, e.Spec()); diff != "" {
				t.Errorf("Spec (-want +got):\n%s", diff)
			}
			if e.Command != tc.command {
				t.Errorf("Command = %q, want %q", e.Command, tc.command)
			}
		})
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct{ name, line, says string }{
		{"too few fields", "* * * *", "the day of week field is missing"},
		{"no command", "* * * * *", "no command"},
		{"minute out of range", "61 * * * * x", "out of range"},
		{"hour out of range", "0 25 * * * x", "out of range"},
		{"unknown @ name", "@often x", "invalid @ line"},
		{"@name glued to its command", "@dailyx y", "no command"},
		{"step of 1", "*/1 * * * * x", "bad step value"},
		{"step too large", "*/61 * * * * x", "bad step value"},
		{"bad month name", "0 0 1 foo * x", "not a name"},
		{"bad day name", "0 0 * * fun x", "not a name"},
		{"31 April", "0 0 31 4 * x", "day 31"},
		{"30 February", "0 0 30 2 * x", "day 30 of February"},
		{"day 0 of the month alone", "0 0 0 * * x", "names no valid value"},
		{"letters in a number field", "a * * * * x", "bad minute field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.line)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Parse(%q) = %v, want an error saying %q", tc.line, err, tc.says)
			}
		})
	}
}

func TestNext(t *testing.T) {
	loc := time.UTC
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ name, line, now, want string }{
		{"every minute: the next minute, never this one", "* * * * * x", "2026-12-07 10:00:00", "2026-12-07 10:01:00"},
		{"every minute, mid-minute", "* * * * * x", "2026-12-07 10:00:59", "2026-12-07 10:01:00"},
		{"daily rolls into the next month", "@daily x", "2026-12-31 23:59:30", "2027-01-01 00:00:00"},
		{"3 a.m.", "0 3 * * * x", "2026-12-07 03:00:00", "2026-12-08 03:00:00"},
		{"Mondays", "0 6 * * mon x", "2026-12-07 07:00:00", "2026-12-14 06:00:00"}, // 2026-12-07 is a Monday
		{"day of month or day of week", "0 0 15 * mon x", "2026-12-08 00:00:00", "2026-12-14 00:00:00"},
		{"29 February waits for a leap year", "0 0 29 2 * x", "2026-03-01 00:00:00", "2028-02-29 00:00:00"},
		{"every other hour at half past", "30 */2 * * * x", "2026-12-07 09:31:00", "2026-12-07 10:30:00"},
		{"yearly", "@yearly x", "2026-06-01 00:00:00", "2027-01-01 00:00:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.line)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := e.Next(at(tc.now)), at(tc.want); !got.Equal(want) {
				t.Errorf("Next(%s) = %s, want %s", tc.now, got, want)
			}
		})
	}
}
