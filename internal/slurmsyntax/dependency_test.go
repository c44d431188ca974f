package slurmsyntax

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// job and task build JobRefs for the tables.
func job(id uint32) JobRef         { return JobRef{JobID: id, Task: WholeJob} }
func task(id uint32, t int) JobRef { return JobRef{JobID: id, Task: t} }
func jobs(ids ...uint32) []JobRef {
	out := make([]JobRef, len(ids))
	for i, id := range ids {
		out[i] = job(id)
	}
	return out
}

func TestParseDependency(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     Dependency
		wantText string
		wantErr  bool
	}{
		{
			name:     "two types, all must hold",
			in:       "afterok:12:13,afterany:14",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(12, 13)}, {Type: DepAfterAny, Jobs: jobs(14)}}},
			wantText: "afterok:12:13,afterany:14",
		},
		{
			name:     "any one may hold",
			in:       "afterok:5?afterany:6",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(5)}, {Type: DepAfterAny, Jobs: jobs(6)}}, Any: true},
			wantText: "afterok:5?afterany:6",
		},
		{
			name:     "any one of the jobs of one clause",
			in:       "afterok:5:6?afterany:7",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(5, 6)}, {Type: DepAfterAny, Jobs: jobs(7)}}, Any: true},
			wantText: "afterok:5?afterok:6?afterany:7",
		},
		{
			name:     "a question mark between duplicates leaves one dependency",
			in:       "afterok:5?afterok:5",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(5)}}},
			wantText: "afterok:5",
		},
		{name: "singleton", in: "singleton", want: Dependency{Terms: []DepTerm{{Type: DepSingleton}}}, wantText: "singleton"},
		{
			name:     "a delay in minutes",
			in:       "after:5+10",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfter, Jobs: jobs(5), Delay: 10 * time.Minute}}},
			wantText: "after:5+10",
		},
		{
			name:     "a delay stays for the jobs after it, as in slurmctld",
			in:       "after:5+10:6",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfter, Jobs: jobs(5, 6), Delay: 10 * time.Minute}}},
			wantText: "after:5+10:6+10",
		},
		{
			name: "a delay on a later job only",
			in:   "after:5:6+10",
			want: Dependency{Terms: []DepTerm{
				{Type: DepAfter, Jobs: jobs(5)},
				{Type: DepAfter, Jobs: jobs(6), Delay: 10 * time.Minute},
			}},
			wantText: "after:5,after:6+10",
		},
		{
			name:     "one array task",
			in:       "afterok:7_2",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: []JobRef{task(7, 2)}}}},
			wantText: "afterok:7_2",
		},
		{
			name:     "every task of an array",
			in:       "afterok:7_*",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: []JobRef{task(7, AllTasks)}}}},
			wantText: "afterok:7_*",
		},
		{
			name:     "a list of tasks in brackets expands",
			in:       "afterok:7_[1-3,5]",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: []JobRef{task(7, 1), task(7, 2), task(7, 3), task(7, 5)}}}},
			wantText: "afterok:7_1:7_2:7_3:7_5",
		},
		{
			name:     "a stepped task range stops before its end, as bit_unfmt does",
			in:       "afterok:7_[1-9:2]",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: []JobRef{task(7, 1), task(7, 3), task(7, 5), task(7, 7)}}}},
			wantText: "afterok:7_1:7_3:7_5:7_7",
		},
		{
			name:     "the old form is afterany",
			in:       "12,13",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterAny, Jobs: jobs(12, 13)}}},
			wantText: "afterany:12:13",
		},
		{
			name:     "the old form after a new one",
			in:       "afterok:3,12",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(3)}, {Type: DepAfterAny, Jobs: jobs(12)}}},
			wantText: "afterok:3,afterany:12",
		},
		{
			name:     "types are case-insensitive",
			in:       "AfterOK:4",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(4)}}},
			wantText: "afterok:4",
		},
		{
			name:     "clauses of one type merge",
			in:       "afterok:1,afterok:2",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(1, 2)}}},
			wantText: "afterok:1:2",
		},
		{
			name:     "duplicates are dropped",
			in:       "afterok:1,afterany:2,afterok:1,singleton,singleton",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(1)}, {Type: DepAfterAny, Jobs: jobs(2)}, {Type: DepSingleton}}},
			wantText: "afterok:1,afterany:2,singleton",
		},
		{
			name:     "mixed separators are accepted and all become any, as slurmctld 22.05 does",
			in:       "afterok:1,afterany:2?afternotok:3",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(1)}, {Type: DepAfterAny, Jobs: jobs(2)}, {Type: DepAfterNotOK, Jobs: jobs(3)}}, Any: true},
			wantText: "afterok:1?afterany:2?afternotok:3",
		},
		{
			name:     "scontrol's states are read back and dropped",
			in:       "afterok:12(unfulfilled),singleton(failed)",
			want:     Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(12)}, {Type: DepSingleton}}},
			wantText: "afterok:12,singleton",
		},
		{
			name:     "every type",
			in:       "after:1,afterany:2,afterok:3,afternotok:4,aftercorr:5,afterburstbuffer:6,expand:7",
			wantText: "after:1,afterany:2,afterok:3,afternotok:4,aftercorr:5,afterburstbuffer:6,expand:7",
			want: Dependency{Terms: []DepTerm{
				{Type: DepAfter, Jobs: jobs(1)}, {Type: DepAfterAny, Jobs: jobs(2)}, {Type: DepAfterOK, Jobs: jobs(3)},
				{Type: DepAfterNotOK, Jobs: jobs(4)}, {Type: DepAfterCorr, Jobs: jobs(5)},
				{Type: DepAfterBurst, Jobs: jobs(6)}, {Type: DepExpand, Jobs: jobs(7)},
			}},
		},
		{name: "empty is no dependency", in: "", want: Dependency{}, wantText: ""},
		{name: "zero is no dependency", in: "0", want: Dependency{}, wantText: ""},
		{name: "an unknown type is an error", in: "sometime:5", wantErr: true},
		{name: "a type without jobs is an error", in: "afterok:", wantErr: true},
		{name: "a type without a colon is an error", in: "afterok", wantErr: true},
		{name: "job zero is an error", in: "afterok:0", wantErr: true},
		{name: "a negative job is an error", in: "afterok:-5", wantErr: true},
		{name: "a job id beyond 32 bits is an error", in: "afterok:4294967296", wantErr: true},
		{name: "garbage after a job is an error", in: "afterok:5x", wantErr: true},
		{name: "garbage after a delay is an error", in: "after:5+10x", wantErr: true},
		{name: "a delay of zero is an error", in: "after:5+0", wantErr: true},
		{name: "a delay without minutes is an error", in: "after:5+", wantErr: true},
		{name: "a task without a number is an error", in: "afterok:5_", wantErr: true},
		{name: "a trailing comma is an error", in: "afterok:5,", wantErr: true},
		{name: "an unclosed state is an error", in: "afterok:5(failed", wantErr: true},
		{name: "the old form takes no question mark", in: "12?13", wantErr: true},
		{name: "text after singleton is an error", in: "singletonx", wantErr: true},
		{name: "a bad task list is an error", in: "afterok:7_[a]", wantErr: true},
		{name: "tasks beyond MaxArraySize are an error", in: "afterok:7_[0-2000]", wantErr: true},
		{name: "an unclosed task list is an error", in: "afterok:7_[1-3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDependency(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseDependency(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseDependency(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.wantText, got.String()); diff != "" {
				t.Errorf("ParseDependency(%q).String() (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseDependencyBoundsWork(t *testing.T) {
	many := "afterok:" + strings.Repeat("7_[0-1000]:", 100) + "8"
	if _, err := ParseDependency(many); err == nil {
		t.Errorf("ParseDependency of 100 x 1001 tasks succeeded, want an error past %d jobs", maxDependencyJobs)
	}
	got, err := ParseDependencyMaxArray("afterok:7_[1500]", 2000)
	if err != nil {
		t.Fatalf("ParseDependencyMaxArray with MaxArraySize 2000: %v", err)
	}
	if diff := cmp.Diff("afterok:7_1500", got.String()); diff != "" {
		t.Errorf("ParseDependencyMaxArray (-want +got):\n%s", diff)
	}
}

func TestDependencyShow(t *testing.T) {
	d, err := ParseDependency("afterok:12:13_*,after:5+10,singleton")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		d     Dependency
		state func(DepType, JobRef) DepState
		want  string
	}{
		{
			name: "all unfulfilled",
			d:    d,
			want: "afterok:12(unfulfilled),afterok:13_*(unfulfilled),after:5+10(unfulfilled),singleton(unfulfilled)",
		},
		{
			name: "fulfilled ones are left out, failed ones shown",
			d:    d,
			state: func(t DepType, j JobRef) DepState {
				switch {
				case j.JobID == 12:
					return DepFulfilled
				case t == DepSingleton:
					return DepFailed
				}
				return DepUnfulfilled
			},
			want: "afterok:13_*(unfulfilled),after:5+10(unfulfilled),singleton(failed)",
		},
		{
			name: "any one: question marks",
			d:    Dependency{Terms: []DepTerm{{Type: DepAfterOK, Jobs: jobs(5)}, {Type: DepAfterAny, Jobs: jobs(6)}}, Any: true},
			want: "afterok:5(unfulfilled)?afterany:6(unfulfilled)",
		},
		{
			name:  "all fulfilled shows nothing",
			d:     d,
			state: func(DepType, JobRef) DepState { return DepFulfilled },
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.d.Show(tt.state)); diff != "" {
				t.Errorf("Show (-want +got):\n%s", diff)
			}
		})
	}
}

// genDependency draws a canonical dependency: what ParseDependency returns.
func genDependency(t *rapid.T) Dependency {
	types := []DepType{DepAfter, DepAfterAny, DepAfterOK, DepAfterNotOK, DepAfterCorr, DepAfterBurst, DepExpand, DepSingleton}
	n := rapid.IntRange(1, 5).Draw(t, "terms")
	d := Dependency{Any: rapid.Bool().Draw(t, "any")}
	seen := map[depKey]bool{}
	for i := 0; i < n; i++ {
		term := DepTerm{Type: rapid.SampledFrom(types).Draw(t, "type")}
		if term.Type == DepSingleton {
			if seen[depKey{typ: DepSingleton}] {
				continue
			}
			seen[depKey{typ: DepSingleton}] = true
			d.Terms = append(d.Terms, term)
			continue
		}
		term.Delay = time.Duration(rapid.SampledFrom([]int{0, 0, 1, 10, 600}).Draw(t, "delay")) * time.Minute
		if last := len(d.Terms) - 1; last >= 0 && d.Terms[last].Type == term.Type && d.Terms[last].Delay == term.Delay {
			continue // would merge into the term before
		}
		for j := rapid.IntRange(1, 3).Draw(t, "jobs"); j > 0; j-- {
			ref := JobRef{
				JobID: rapid.Uint32Range(1, 1<<32-1).Draw(t, "job"),
				Task:  rapid.SampledFrom([]int{WholeJob, AllTasks, 0, 7, 4000000}).Draw(t, "task"),
			}
			if k := (depKey{term.Type, ref}); !seen[k] {
				seen[k] = true
				term.Jobs = append(term.Jobs, ref)
			}
		}
		if len(term.Jobs) > 0 {
			d.Terms = append(d.Terms, term)
		}
	}
	if len(seen) < 2 {
		d.Any = false // ParseDependency's canonical form
	}
	return d
}

func TestDependencyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genDependency(t)
		s := d.String()
		got, err := ParseDependency(s)
		if err != nil {
			t.Fatalf("ParseDependency(%q): %v", s, err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Fatalf("ParseDependency(%q) (-want +got):\n%s", s, diff)
		}
	})
}
