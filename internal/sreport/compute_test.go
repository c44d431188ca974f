package sreport

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option sreport's help names is one
// sreport takes (so that bash completion, made from the help, offers only
// those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sreport", helpText, options)
}

// TestComputeRollup: the hourly rollup's rules, one case each.
func TestComputeRollup(t *testing.T) {
	c := Cluster{Name: "lab", CPUs: 4, MemMB: 1000, GPUs: 2, Billing: 2}
	h0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return h0.Add(time.Duration(min) * time.Minute) }
	job := func(user string, elig, start, end time.Time, cpus, gpus int) Job {
		return Job{User: user, Account: "a", Eligible: elig, Start: start, End: end, CPUs: cpus, ReqCPUs: cpus, GPUs: gpus, Billing: int64(gpus)}
	}
	for _, tc := range []struct {
		name       string
		jobs       []Job
		start, end time.Time
		now        time.Time
		want       Util // cpu
		wantGPU    int64
	}{
		{
			name:  "a job counts only inside the window",
			jobs:  []Job{job("u", at(-120), at(-120), at(90), 1, 1)},
			start: at(0), end: at(120), now: at(600),
			want:    Util{Alloc: 90 * 60, Idle: 4*7200 - 90*60, Reported: 4 * 7200},
			wantGPU: 90 * 60,
		},
		{
			name:  "a running job counts up to the last whole hour before now, and later hours not at all",
			jobs:  []Job{job("u", at(0), at(0), time.Time{}, 2, 2)},
			start: at(0), end: at(180), now: at(150),
			want:    Util{Alloc: 2 * 7200, Idle: 2 * 7200, Reported: 4 * 3 * 3600},
			wantGPU: 2 * 7200,
		},
		{
			name:  "waiting while eligible is planned CPU time; waiting held (not eligible) is not",
			jobs:  []Job{job("u", at(30), at(90), at(100), 2, 0), job("v", time.Time{}, time.Time{}, time.Time{}, 4, 0)},
			start: at(0), end: at(120), now: at(600),
			want: Util{Alloc: 2 * 600, Planned: 2 * 3600, Idle: 4*7200 - 1200 - 7200, Reported: 4 * 7200},
		},
		{
			name: "planned beyond what is free in an hour is overcommitted instead",
			jobs: []Job{job("u", at(0), at(0), at(60), 4, 0), job("v", at(0), time.Time{}, time.Time{}, 4, 0)},
			// hour 1: u holds all 4 CPUs, v's 4 planned are all over; hour 2: v plans 4 CPUs, all free.
			start: at(0), end: at(120), now: at(600),
			want: Util{Alloc: 4 * 3600, Planned: 4 * 3600, Over: 4 * 3600, Reported: 4 * 7200},
		},
		{
			name:  "a job over a month counts every hour of it",
			jobs:  []Job{job("u", at(0), at(0), at(30*24*60), 1, 2)},
			start: at(0), end: at(31 * 24 * 60), now: at(40 * 24 * 60),
			want:    Util{Alloc: 30 * 86400, Idle: 4*31*86400 - 30*86400, Reported: 4 * 31 * 86400},
			wantGPU: 2 * 30 * 86400,
		},
		{
			name:  "a job cancelled before it started counts nothing but its wait",
			jobs:  []Job{job("u", at(0), time.Time{}, at(30), 1, 1)},
			start: at(0), end: at(60), now: at(600),
			want: Util{Planned: 1800, Idle: 4*3600 - 1800, Reported: 4 * 3600},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(c, tc.jobs, tc.start, tc.end, tc.now)
			if diff := cmp.Diff(tc.want, *r.Util["cpu"]); diff != "" {
				t.Errorf("cpu (-want +got):\n%s", diff)
			}
			if got := r.Util["gres/gpu"].Alloc; got != tc.wantGPU {
				t.Errorf("gres/gpu allocated %d, want %d", got, tc.wantGPU)
			}
		})
	}
}

// TestWindow: start= and end= round to the nearest hour; the default is
// yesterday; a window is at least an hour.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 3, 5, 14, 20, 0, 0, time.UTC)
	for _, tc := range []struct {
		name               string
		start, end         time.Time
		wantStart, wantEnd time.Time
	}{
		{"default: yesterday", time.Time{}, time.Time{},
			time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"rounded to the nearest hour", time.Date(2026, 3, 1, 9, 29, 30, 0, time.UTC), time.Date(2026, 3, 1, 11, 29, 29, 0, time.UTC),
			time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)},
		{"at least an hour", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 9, 10, 0, 0, time.UTC),
			time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, e := window(tc.start, tc.end, now)
			if !s.Equal(tc.wantStart) || !e.Equal(tc.wantEnd) {
				t.Errorf("window = %v - %v, want %v - %v", s, e, tc.wantStart, tc.wantEnd)
			}
		})
	}
}

// BenchmarkComputeYear: a year's report over 10,000 jobs of 1 to 48 hours.
func BenchmarkComputeYear(b *testing.B) {
	c := Cluster{Name: "lab", CPUs: 64, MemMB: 512000, GPUs: 8, Billing: 8}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := make([]Job, 10000)
	for i := range jobs {
		s := t0.Add(time.Duration(i) * 52 * time.Minute)
		jobs[i] = Job{User: "u" + string(rune('a'+i%7)), Account: "a" + string(rune('a'+i%3)), Eligible: s.Add(-10 * time.Minute),
			Start: s, End: s.Add(time.Duration(1+i%48) * time.Hour), CPUs: 4, ReqCPUs: 4, GPUs: 1 + i%4, Billing: int64(1 + i%4)}
	}
	for b.Loop() {
		Compute(c, jobs, t0, t0.AddDate(1, 0, 0), t0.AddDate(1, 1, 0))
	}
}

// TestTimeFormats: -t takes what _set_time_format takes.
func TestTimeFormats(t *testing.T) {
	for in, want := range map[string]TimeFormat{"s": Seconds, "sec": Seconds, "Seconds": Seconds, "m": Minutes,
		"h": Hours, "HOURS": Hours, "p": Percent, "percent": Percent, "secper": SecPer, "MinPer": MinPer, "hourper": HourPer, "hourpe": HourPer} {
		if got, ok := parseTimeFormat(in); !ok || got != want {
			t.Errorf("-t %s = %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"hourp", "secondsx", "fortnights", "x"} {
		if _, ok := parseTimeFormat(in); ok {
			t.Errorf("-t %s taken", in)
		}
	}
}

// TestProperName: the passwd comment's first field, as strtok gives it.
func TestProperName(t *testing.T) {
	for in, want := range map[string]string{"Alice Smith,,,": "Alice Smith", ",,,": ",,,", "": "", ",Room 4": "Room 4", "Bob": "Bob"} {
		if got := properOf(in); got != want {
			t.Errorf("properOf(%q) = %q, want %q", in, got, want)
		}
	}
}
