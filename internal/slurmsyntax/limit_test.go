package slurmsyntax

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestParseTimeLimit(t *testing.T) {
	const m = time.Minute
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr bool
	}{
		{name: "a bare number is minutes", in: "90", want: 90 * m},
		{name: "minutes:seconds rounds the seconds up", in: "5:30", want: 6 * m},
		{name: "minutes:seconds with no seconds stays whole", in: "5:00", want: 5 * m},
		{name: "thirty seconds is one minute", in: "0:30", want: 1 * m},
		{name: "hours:minutes:seconds", in: "1:30:00", want: 90 * m},
		{name: "hours:minutes:seconds rounds up", in: "2:03:04", want: 124 * m},
		{name: "days-hours", in: "7-0", want: 7 * 24 * 60 * m},
		{name: "days-hours:minutes", in: "1-2:3", want: (26*60 + 3) * m},
		{name: "days-hours:minutes:seconds", in: "1-02:03:04", want: (26*60 + 4) * m},
		{name: "a trailing dash is whole days, as sscanf reads it", in: "1-", want: 24 * 60 * m},
		{name: "fields may exceed their range", in: "5:75", want: 7 * m},
		{name: "UNLIMITED", in: "UNLIMITED", want: Infinite},
		{name: "unlimited in lower case", in: "unlimited", want: Infinite},
		{name: "INFINITE", in: "Infinite", want: Infinite},
		{name: "minus one", in: "-1", want: Infinite},
		{name: "zero asks for no limit in sbatch", in: "0", want: Infinite},
		{name: "zero in another form is no limit too", in: "0:00", want: Infinite},
		{name: "minus zero is zero days, so no limit", in: "-0", want: Infinite},
		{name: "a word is an error", in: "bad", wantErr: true},
		{name: "letters are an error", in: "abc", wantErr: true},
		{name: "three colons are an error", in: "1:2:3:4", wantErr: true},
		{name: "a negative count is an error", in: "-5", wantErr: true},
		{name: "empty is an error", in: "", wantErr: true},
		{name: "a colon before the dash is an error", in: "1:2-3", wantErr: true},
		{name: "two dashes are an error", in: "1-2-3", wantErr: true},
		{name: "a trailing colon is an error", in: "5:", wantErr: true},
		{name: "a missing field after the dash is an error", in: "1-2:", wantErr: true},
		{name: "white space is an error", in: " 5", wantErr: true},
		{name: "a unit suffix is an error", in: "5m", wantErr: true},
		{name: "more seconds than a C int holds is an error", in: "99999-0", wantErr: true},
		{name: "a huge field is an error", in: "99999999999999999999999", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTimeLimit(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseTimeLimit(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseTimeLimit(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseMinutesAndSeconds(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantMinutes time.Duration
		wantSeconds time.Duration
	}{
		{name: "zero stays zero outside sbatch", in: "0", wantMinutes: 0, wantSeconds: 0},
		{name: "a decay half-life of seven days", in: "7-0", wantMinutes: 7 * 24 * time.Hour, wantSeconds: 7 * 24 * time.Hour},
		{name: "minutes:seconds keeps the seconds", in: "5:30", wantMinutes: 6 * time.Minute, wantSeconds: 5*time.Minute + 30*time.Second},
		{name: "a plain number is minutes even for seconds", in: "30", wantMinutes: 30 * time.Minute, wantSeconds: 30 * time.Minute},
		{name: "UNLIMITED is Infinite", in: "UNLIMITED", wantMinutes: Infinite, wantSeconds: Infinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotM, err := ParseMinutes(tt.in)
			if err != nil {
				t.Fatalf("ParseMinutes(%q): %v", tt.in, err)
			}
			gotS, err := ParseSeconds(tt.in)
			if err != nil {
				t.Fatalf("ParseSeconds(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff([]time.Duration{tt.wantMinutes, tt.wantSeconds}, []time.Duration{gotM, gotS}); diff != "" {
				t.Errorf("ParseMinutes, ParseSeconds (%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		name string
		in   time.Duration
		want string
	}{
		{name: "zero", in: 0, want: "0:00"},
		{name: "minutes and seconds", in: 3*time.Minute + 4*time.Second, want: "3:04"},
		{name: "hours show without a leading zero", in: 2*time.Hour + 3*time.Minute + 4*time.Second, want: "2:03:04"},
		{name: "days", in: 26*time.Hour + 3*time.Minute + 4*time.Second, want: "1-02:03:04"},
		{name: "fractions of a second are dropped", in: 59*time.Second + 999*time.Millisecond, want: "0:59"},
		{name: "exactly a year still prints", in: 365 * 24 * time.Hour, want: "365-00:00:00"},
		{name: "over a year is INVALID as in squeue", in: 365*24*time.Hour + time.Second, want: "INVALID"},
		{name: "negative is INVALID", in: -time.Second, want: "INVALID"},
		{name: "Infinite is UNLIMITED", in: Infinite, want: "UNLIMITED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FormatDuration(tt.in)); diff != "" {
				t.Errorf("FormatDuration(%v) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatClock(t *testing.T) {
	tests := []struct {
		name string
		in   time.Duration
		want string
	}{
		{name: "zero as scontrol's RunTime", in: 0, want: "00:00:00"},
		{name: "five minutes as scontrol's TimeLimit", in: 5 * time.Minute, want: "00:05:00"},
		{name: "days", in: 24 * time.Hour, want: "1-00:00:00"},
		{name: "more than a year still prints", in: 400 * 24 * time.Hour, want: "400-00:00:00"},
		{name: "Infinite is UNLIMITED", in: Infinite, want: "UNLIMITED"},
		{name: "negative is INVALID", in: -time.Minute, want: "INVALID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FormatClock(tt.in)); diff != "" {
				t.Errorf("FormatClock(%v) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// A whole-minute limit printed as squeue prints it reads back the same.
func TestTimeLimitRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mins := rapid.Int64Range(1, 365*24*60).Draw(t, "minutes")
		d := time.Duration(mins) * time.Minute
		for _, s := range []string{FormatDuration(d), FormatClock(d)} {
			got, err := ParseTimeLimit(s)
			if err != nil {
				t.Fatalf("ParseTimeLimit(%q): %v", s, err)
			}
			if got != d {
				t.Fatalf("ParseTimeLimit(%q) = %v, want %v", s, got, d)
			}
		}
	})
}

// Seconds printed by scontrol read back to the second.
func TestSecondsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secs := rapid.Int64Range(0, 1<<31-1).Draw(t, "seconds")
		d := time.Duration(secs) * time.Second
		s := FormatClock(d)
		got, err := ParseSeconds(s)
		if err != nil {
			t.Fatalf("ParseSeconds(%q): %v", s, err)
		}
		if got != d {
			t.Fatalf("ParseSeconds(%q) = %v, want %v", s, got, d)
		}
	})
}
