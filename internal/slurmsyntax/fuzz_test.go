package slurmsyntax

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The fuzz targets check that no input panics, that parsers bound their
// work, and that what a parser accepts prints back to a form it reads as
// the same value.

func FuzzParseTimeLimit(f *testing.F) {
	for _, s := range []string{"90", "5:30", "1:30:00", "7-0", "1-2:3", "1-02:03:04", "UNLIMITED", "-1", "0", "bad", "1-", "-5", "99999-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeLimit(s)
		if err != nil {
			return
		}
		if d == Infinite {
			return
		}
		if d <= 0 || d%time.Minute != 0 {
			t.Fatalf("ParseTimeLimit(%q) = %v, want whole minutes above 0", s, d)
		}
		secs, err := ParseSeconds(s)
		if err != nil || (secs+time.Minute-time.Second)/time.Minute*time.Minute != d {
			t.Fatalf("ParseSeconds(%q) = %v, %v; ParseTimeLimit = %v: want it rounded up", s, secs, err, d)
		}
		for _, out := range []string{FormatDuration(d), FormatClock(d)} {
			if out == "INVALID" {
				continue
			}
			back, err := ParseTimeLimit(out)
			if err != nil || back != d {
				t.Fatalf("ParseTimeLimit(%q) = %v, %v; want %v (from %q)", out, back, err, d, s)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16G", "500M", "2T", "1024K", "3", "16gb", "1.5G", "-1", "+2G", "16GiB", "9999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseSize(s, MiB)
		if err != nil {
			return
		}
		if b < 0 || b%MiB != 0 {
			t.Fatalf("ParseSize(%q, MiB) = %d, want whole MiB", s, b)
		}
		out := FormatSize(b)
		if strings.ContainsAny(out, ".?") || strings.HasSuffix(out, "P") {
			return // a half value or beyond --mem's units
		}
		back, err := ParseSize(out, MiB)
		if err != nil || back != b {
			t.Fatalf("ParseSize(%q) = %d, %v; want %d (from %q)", out, back, err, b, s)
		}
	})
}

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"0-15", "1,3,5-9:2", "0-99%8", "7", "[0-3]", "0-4000000000", "%8", "5-1", "1-9:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArray(s, DefaultMaxArraySize)
		if err != nil {
			return
		}
		if len(a.Tasks) == 0 || !slices.IsSorted(a.Tasks) || a.Tasks[0] < 0 || a.Tasks[len(a.Tasks)-1] >= DefaultMaxArraySize {
			t.Fatalf("ParseArray(%q) = %v, want sorted ids in [0, %d)", s, a.Tasks, DefaultMaxArraySize)
		}
		if len(slices.Compact(slices.Clone(a.Tasks))) != len(a.Tasks) || a.Limit < 0 {
			t.Fatalf("ParseArray(%q) = %+v, want distinct ids and a limit >= 0", s, a)
		}
		out := a.String()
		if strings.HasSuffix(strings.Split(out, "%")[0], "...") {
			return // cut, as squeue cuts it
		}
		back, err := ParseArray(out, DefaultMaxArraySize)
		if err != nil || !slices.Equal(back.Tasks, a.Tasks) || back.Limit != a.Limit {
			t.Fatalf("ParseArray(%q) = %+v, %v; want %+v (from %q)", out, back, err, a, s)
		}
	})
}

func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{
		"afterok:12:13,afterany:14", "afterok:5?afterany:6", "singleton", "after:5+10", "afterok:7_2",
		"afterok:7_*", "afterok:7_[1-3]", "12,13", "expand:4", "afterburstbuffer:9", "sometime:5",
		"afterok:12(unfulfilled)", "afterok:7_[1-9:2]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDependency(s)
		if err != nil {
			return
		}
		out := d.String()
		back, err := ParseDependency(out)
		if err != nil {
			t.Fatalf("ParseDependency(%q) from %q: %v", out, s, err)
		}
		if again := back.String(); again != out {
			t.Fatalf("String of ParseDependency(%q) = %q, want it unchanged (from %q)", out, again, s)
		}
		_ = d.Show(nil)
	})
}

func FuzzParseBegin(f *testing.F) {
	for _, s := range []string{
		"16:00", "4:00 PM", "now+1hour", "now-2days", "2026-12-01T08:00:30", "12/25/27", "011527",
		"midnight", "tomorrow noon", "uts1800000000", "elevenses", "now+99999999999999weeks",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 10, 30, 15, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBegin(s, now)
		if err != nil {
			return
		}
		if got.Nanosecond() != 0 || got.Location() != time.UTC {
			t.Fatalf("ParseBegin(%q) = %v, want whole seconds in now's location", s, got)
		}
		if got.Year() < 1000 || got.Year() > 9999 {
			return
		}
		out := got.Format("2006-01-02T15:04:05")
		back, err := ParseBegin(out, now)
		if err != nil || !back.Equal(got) {
			t.Fatalf("ParseBegin(%q) = %v, %v; want %v (from %q)", out, back, err, got, s)
		}
	})
}

func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{"USR1", "SIGUSR1@30", "B:USR1@30", "10@120", "RB:TERM", "BUSR1", "USR1@", "65536", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSignal(s)
		if err != nil {
			return
		}
		if spec.Signal < 1 || spec.Signal > 0xffff || spec.Seconds < 0 || spec.Seconds > 0xffff {
			t.Fatalf("ParseSignal(%q) = %+v, out of range", s, spec)
		}
		out := spec.String()
		back, err := ParseSignal(out)
		if err != nil || back != spec {
			t.Fatalf("ParseSignal(%q) = %+v, %v; want %+v (from %q)", out, back, err, spec, s)
		}
	})
}

func FuzzExpandPattern(f *testing.F) {
	for _, s := range []string{"slurm-%j.out", "slurm-%A_%a.out", "%4a-%3j", "%%", `out\%j`, "%12q", "out%", "3", "%x-%u-%N"} {
		f.Add(s)
	}
	vars := PatternVars{JobID: 42, ArrayJobID: 40, ArrayTaskID: 2, JobName: "job", User: "alice", Node: "gpu01", StepID: -1}
	f.Fuzz(func(t *testing.T, s string) {
		out := ExpandPattern(s, vars)
		_ = ShowPattern(s, vars)
		if strings.ContainsAny(s, `%\`) {
			return
		}
		if _, n := digits(s); n > 0 && n == len(s) {
			return
		}
		if out != s {
			t.Fatalf("ExpandPattern(%q) = %q, want it unchanged: nothing to expand", s, out)
		}
	})
}

func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"gpu[01-03,7],cpu1", "n[8-10]", "r[1-2]n[1-2]", "a b\tc", "gpu[1-3", "n[0-65536]", "[1-3]", "a[b[1-2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandHostlist(s)
		if err != nil {
			return
		}
		if len(names) > MaxHostlistHosts {
			t.Fatalf("ExpandHostlist(%q) gave %d names, over the cap", s, len(names))
		}
		norm, err := NormalizeHostlist(s)
		if err != nil {
			t.Fatalf("NormalizeHostlist(%q): %v, but ExpandHostlist accepted it", s, err)
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "[], \t") {
				return // names the hostlist syntax cannot carry back
			}
		}
		for _, list := range []string{norm, CompressHostlist(names)} {
			back, err := ExpandHostlist(list)
			if err != nil || !slices.Equal(back, names) {
				t.Fatalf("ExpandHostlist(%q) = %q, %v; want %q (from %q)", list, back, err, names, s)
			}
		}
	})
}
