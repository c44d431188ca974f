package slurmsyntax

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestParseBegin(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	// A Sunday morning, with a fraction of a second that Slurm never sees.
	now := time.Date(2026, 11, 29, 10, 30, 15, 500_000_000, zone)
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, zone) }
	tests := []struct {
		name    string
		in      string
		want    time.Time
		wantErr bool
	}{
		{name: "a later hour is today", in: "16:00", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "with seconds", in: "16:00:30", want: at(2026, 11, 29, 16, 0, 30)},
		{name: "a past hour is tomorrow", in: "09:00", want: at(2026, 11, 30, 9, 0, 0)},
		{name: "this very minute is tomorrow: seconds do not count", in: "10:30:59", want: at(2026, 11, 30, 10, 30, 59)},
		{name: "one-digit hour", in: "9:00", want: at(2026, 11, 30, 9, 0, 0)},
		{name: "PM", in: "4:00PM", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "pm after a space", in: "4:00 pm", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "12:30 PM is after noon", in: "12:30pm", want: at(2026, 11, 29, 12, 30, 0)},
		{name: "12:30 AM is after midnight", in: "12:30am", want: at(2026, 11, 30, 0, 30, 0)},
		{name: "midnight", in: "midnight", want: at(2026, 11, 30, 0, 0, 0)},
		{name: "noon", in: "noon", want: at(2026, 11, 29, 12, 0, 0)},
		{name: "fika", in: "fika", want: at(2026, 11, 29, 15, 0, 0)},
		{name: "teatime, case-insensitive", in: "teaTIME", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "a capital T is skipped as the date-time separator, so Tomorrow fails as in Slurm", in: "Tomorrow", wantErr: true},
		{name: "today is its midnight", in: "today", want: at(2026, 11, 29, 0, 0, 0)},
		{name: "tomorrow is its midnight", in: "tomorrow", want: at(2026, 11, 30, 0, 0, 0)},
		{name: "tomorrow at noon", in: "tomorrow noon", want: at(2026, 11, 30, 12, 0, 0)},
		{name: "today at a past hour stays today", in: "today 08:00", want: at(2026, 11, 29, 8, 0, 0)},
		{name: "now", in: "now", want: at(2026, 11, 29, 10, 30, 15)},
		{name: "now plus seconds by default", in: "now+60", want: at(2026, 11, 29, 10, 31, 15)},
		{name: "now plus an hour", in: "now+1hour", want: at(2026, 11, 29, 11, 30, 15)},
		{name: "now plus hours with blanks", in: "now + 2 hours", want: at(2026, 11, 29, 12, 30, 15)},
		{name: "now plus minutes", in: "now+30minutes", want: at(2026, 11, 29, 11, 0, 15)},
		{name: "now plus days", in: "now+3days", want: at(2026, 12, 2, 10, 30, 15)},
		{name: "now plus a week", in: "NOW+1week", want: at(2026, 12, 6, 10, 30, 15)},
		{name: "now minus a day", in: "now-1day", want: at(2026, 11, 28, 10, 30, 15)},
		{name: "an ISO date", in: "2026-12-01", want: at(2026, 12, 1, 0, 0, 0)},
		{name: "an ISO date and time", in: "2026-12-01T08:00", want: at(2026, 12, 1, 8, 0, 0)},
		{name: "an ISO date and time with seconds", in: "2026-12-01T08:00:30", want: at(2026, 12, 1, 8, 0, 30)},
		{name: "a past ISO date stays past", in: "2020-01-20T12:34:00", want: at(2020, 1, 20, 12, 34, 0)},
		{name: "MM/DD later this year", in: "12/25", want: at(2026, 12, 25, 0, 0, 0)},
		{name: "MM/DD passed is next year", in: "11/01", want: at(2027, 11, 1, 0, 0, 0)},
		{name: "MM/DD/YY", in: "01/15/27", want: at(2027, 1, 15, 0, 0, 0)},
		{name: "MMDDYY", in: "011527", want: at(2027, 1, 15, 0, 0, 0)},
		{name: "MM.DD.YY", in: "1.15.27", want: at(2027, 1, 15, 0, 0, 0)},
		{name: "year 00 counts as no year, as in parse_time", in: "01/15/00", want: at(2027, 1, 15, 0, 0, 0)},
		{name: "MM/DD/YY-HH:MM", in: "12/01/26-16:00", want: at(2026, 12, 1, 16, 0, 0)},
		{name: "today's date at a later hour is this year", in: "11/29 16:00", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "today's date at a past hour is next year", in: "11/29 09:00", want: at(2027, 11, 29, 9, 0, 0)},
		{name: "February 31 rolls over as mktime does", in: "2027-02-31", want: at(2027, 3, 3, 0, 0, 0)},
		{name: "a Unix time", in: "uts1800000000", want: time.Unix(1800000000, 0).In(zone)},
		{name: "a newline ends the spec", in: "16:00\nrubbish", want: at(2026, 11, 29, 16, 0, 0)},
		{name: "elevenses is not in Slurm 22.05", in: "elevenses", wantErr: true},
		{name: "an hour past 23", in: "24:00", wantErr: true},
		{name: "a minute past 59", in: "10:60", wantErr: true},
		{name: "one-digit minutes", in: "10:5", wantErr: true},
		{name: "13 PM", in: "13:00pm", wantErr: true},
		{name: "a month past 12", in: "13/01", wantErr: true},
		{name: "a day past 31", in: "12/32", wantErr: true},
		{name: "a one-digit year", in: "12/01/7", wantErr: true},
		{name: "a four-digit year after a slash", in: "12/01/2027", wantErr: true},
		{name: "a unit abbreviation", in: "now+1h", wantErr: true},
		{name: "now plus nothing", in: "now+", wantErr: true},
		{name: "text after now", in: "nowish", wantErr: true},
		{name: "a word", in: "soon", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "blanks only", in: "  ", wantErr: true},
		{name: "a small Unix time", in: "uts5", wantErr: true},
		{name: "a Unix time with text after it", in: "uts1800000000x", wantErr: true},
		{name: "a huge delta", in: "now+99999999999999weeks", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBegin(tt.in, now)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseBegin(%q) = %v, %v; want error %v", tt.in, got, err, tt.wantErr)
			}
			if err != nil {
				var be *BeginError
				if !errors.As(err, &be) {
					t.Fatalf("ParseBegin(%q) error %T, want *BeginError", tt.in, err)
				}
				return
			}
			if !got.Equal(tt.want) || got.Location() != zone {
				t.Errorf("ParseBegin(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// BeginError carries the position Slurm prints in "Invalid time
// specification (pos=N)".
func TestParseBeginErrorPosition(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want BeginError
	}{
		{in: "soon", want: BeginError{Spec: "soon", Pos: 0}},
		{in: "16:00 x", want: BeginError{Spec: "16:00 x", Pos: 6}},
		{in: "24:00", want: BeginError{Spec: "24:00", Pos: 0}},
		{in: "10:75", want: BeginError{Spec: "10:75", Pos: 3}},
		{in: "now+1h", want: BeginError{Spec: "now+1h", Pos: 4}},
		{in: "now+", want: BeginError{Spec: "now+", Pos: 3}},
		{in: "", want: BeginError{Spec: "", Silent: true}},
	}
	for _, tt := range tests {
		_, err := ParseBegin(tt.in, now)
		var got *BeginError
		if !errors.As(err, &got) {
			t.Fatalf("ParseBegin(%q) error = %v, want a *BeginError", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, *got); diff != "" {
			t.Errorf("ParseBegin(%q) error (-want +got):\n%s", tt.in, diff)
		}
	}
	_, err := ParseBegin("10:75", now)
	var be *BeginError
	if !errors.As(err, &be) {
		t.Fatalf("ParseBegin(10:75) error = %v, want a *BeginError", err)
	}
	if diff := cmp.Diff("Invalid time specification (pos=3): 10:75", be.Diagnostic()); diff != "" {
		t.Errorf("Diagnostic (-want +got):\n%s", diff)
	}
}

// ParseTime is parse_time with its past flag (sacct's -S and -E): a time
// of day is today even once passed, a date without a year is this year
// unless its month is still to come; 0 (nothing named, or the epoch
// itself) is "not given", and only mktime's -1 is an error
// (golden/sacct_S_epoch*.txt).
func TestParseTime(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 11, 29, 10, 30, 15, 0, zone)
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, zone) }
	tests := []struct {
		name    string
		in      string
		loc     *time.Location
		past    bool
		want    time.Time
		wantErr *BeginError
	}{
		{name: "past: a passed time of day is today", in: "09:00", past: true, want: at(2026, 11, 29, 9, 0, 0)},
		{name: "past: a later time of day is today too", in: "16:00", past: true, want: at(2026, 11, 29, 16, 0, 0)},
		{name: "past: midnight is this morning's", in: "midnight", past: true, want: at(2026, 11, 29, 0, 0, 0)},
		{name: "past: a passed date without a year is this year", in: "11/01", past: true, want: at(2026, 11, 1, 0, 0, 0)},
		{name: "past: a later day of this month is this year", in: "11/30", past: true, want: at(2026, 11, 30, 0, 0, 0)},
		{name: "past: a later month is last year", in: "12/01", past: true, want: at(2025, 12, 1, 0, 0, 0)},
		{name: "not past: a passed time of day is tomorrow", in: "09:00", want: at(2026, 11, 30, 9, 0, 0)},
		{name: "not past: a passed date is next year", in: "11/01", want: at(2027, 11, 1, 0, 0, 0)},
		{name: "the epoch in UTC is parse_time's 0: not given", in: "1970-01-01", loc: time.UTC, past: true},
		{name: "the epoch's date east of UTC is an hour before it", in: "1970-01-01", past: true, want: time.Unix(-3600, 0)},
		{name: "a second after the epoch", in: "1970-01-01T00:00:01", loc: time.UTC, past: true, want: time.Unix(1, 0)},
		{name: "mktime's -1 is the one error", in: "1969-12-31T23:59:59", loc: time.UTC, past: true,
			wantErr: &BeginError{Spec: "1969-12-31T23:59:59", Pos: 19}},
		{name: "two seconds before the epoch is fine", in: "1969-12-31T23:59:58", loc: time.UTC, past: true, want: time.Unix(-2, 0)},
		{name: "nothing named is not given", in: "", past: true},
		{name: "blanks only are not given", in: "  ", past: true},
		{name: "a bad word is still an error", in: "soon", past: true, wantErr: &BeginError{Spec: "soon", Pos: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := now
			if tt.loc != nil {
				n = now.In(tt.loc)
			}
			got, err := ParseTime(tt.in, n, tt.past)
			if tt.wantErr != nil {
				var be *BeginError
				if !errors.As(err, &be) {
					t.Fatalf("ParseTime(%q) = %v, %v; want error %v", tt.in, got, err, tt.wantErr)
				}
				if diff := cmp.Diff(*tt.wantErr, *be); diff != "" {
					t.Errorf("ParseTime(%q) error (-want +got):\n%s", tt.in, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTime(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) || got.IsZero() != tt.want.IsZero() {
				t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	// sbatch refuses what parse_time returns as 0, and parse_time prints
	// nothing for it.
	_, err := ParseBegin("1970-01-01", now.In(time.UTC))
	var be *BeginError
	if !errors.As(err, &be) || !be.Silent {
		t.Errorf("ParseBegin(1970-01-01) in UTC = %v, want a silent *BeginError", err)
	}
}

// A time written as YYYY-MM-DDTHH:MM:SS reads back as itself.
func TestBeginISORoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		secs := rapid.Int64Range(time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC).Unix(),
			time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()).Draw(t, "unix")
		want := time.Unix(secs, 0).UTC()
		s := want.Format("2006-01-02T15:04:05")
		got, err := ParseBegin(s, now)
		if err != nil {
			t.Fatalf("ParseBegin(%q): %v", s, err)
		}
		if !got.Equal(want) {
			t.Fatalf("ParseBegin(%q) = %v, want %v", s, got, want)
		}
	})
}

// A time of day alone is always in the next 24 hours.
func TestBeginTimeOfDayIsNext(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "now"), 0).UTC()
		h, m := rapid.IntRange(0, 23).Draw(t, "hour"), rapid.IntRange(0, 59).Draw(t, "minute")
		s := time.Date(2000, 1, 1, h, m, 0, 0, time.UTC).Format("15:04")
		got, err := ParseBegin(s, now)
		if err != nil {
			t.Fatalf("ParseBegin(%q): %v", s, err)
		}
		if got.Hour() != h || got.Minute() != m {
			t.Fatalf("ParseBegin(%q) = %v, want %02d:%02d", s, got, h, m)
		}
		// Seconds do not count: the current minute is tomorrow.
		floor := now.Truncate(time.Minute)
		if !got.After(floor) || got.Sub(floor) > 24*time.Hour {
			t.Fatalf("ParseBegin(%q) at %v = %v, want within the next 24 hours", s, now, got)
		}
	})
}
