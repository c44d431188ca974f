package slurmsyntax

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// span returns the ids lo..hi.
func span(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestParseArray(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    Array
		wantErr bool
	}{
		{name: "a range", in: "0-15", max: 1001, want: Array{Tasks: span(0, 15)}},
		{name: "ids, and a stepped range", in: "1,3,5-9:2", max: 1001, want: Array{Tasks: []int{1, 3, 5, 7, 9}}},
		{name: "a range with a throttle", in: "0-99%8", max: 1001, want: Array{Tasks: span(0, 99), Limit: 8}},
		{name: "one id", in: "7", max: 1001, want: Array{Tasks: []int{7}}},
		{name: "brackets are stripped", in: "[0-3]", max: 1001, want: Array{Tasks: span(0, 3)}},
		{name: "overlaps are merged", in: "0-3,2-5", max: 1001, want: Array{Tasks: span(0, 5)}},
		{name: "ids come out sorted", in: "9,2", max: 1001, want: Array{Tasks: []int{2, 9}}},
		{name: "empty tokens are skipped, as strtok does", in: "1,,3,", max: 1001, want: Array{Tasks: []int{1, 3}}},
		{name: "a throttle ends its token only", in: "0-3%2,8", max: 1001, want: Array{Tasks: []int{0, 1, 2, 3, 8}, Limit: 2}},
		{name: "the first throttle wins", in: "0-1%2,5%3", max: 1001, want: Array{Tasks: []int{0, 1, 5}, Limit: 2}},
		{name: "a throttle of zero is none", in: "0-3%0", max: 1001, want: Array{Tasks: span(0, 3)}},
		{name: "the last id below MaxArraySize", in: "1000", max: 1001, want: Array{Tasks: []int{1000}}},
		{name: "a step past the range end keeps the first id", in: "3-5:10", max: 1001, want: Array{Tasks: []int{3}}},
		{name: "a space after a comma, as strtol skips it", in: "1, 3", max: 1001, want: Array{Tasks: []int{1, 3}}},
		{name: "a reversed range is an error", in: "5-1", max: 1001, wantErr: true},
		{name: "an id at MaxArraySize is an error", in: "1001", max: 1001, wantErr: true},
		{name: "a range past MaxArraySize is an error", in: "0-4000000000", max: 1001, wantErr: true},
		{name: "empty is an error", in: "", max: 1001, wantErr: true},
		{name: "only commas is an error", in: ",", max: 1001, wantErr: true},
		{name: "garbage is an error", in: "abc", max: 1001, wantErr: true},
		{name: "a negative id is an error", in: "-3", max: 1001, wantErr: true},
		{name: "a step of zero is an error", in: "1-9:0", max: 1001, wantErr: true},
		{name: "a step as large as MaxArraySize is an error", in: "1-9:1001", max: 1001, wantErr: true},
		{name: "a step without a range is an error", in: "1:2", max: 1001, wantErr: true},
		{name: "text after an id is an error", in: "1x", max: 1001, wantErr: true},
		{name: "a lone throttle is an error", in: "%8", max: 1001, wantErr: true},
		{name: "a lone dash is an error", in: "-", max: 1001, wantErr: true},
		{name: "a throttle with no number is an error", in: "0-15%", max: 1001, wantErr: true},
		{name: "a negative throttle is an error", in: "0-15%-1", max: 1001, wantErr: true},
		{name: "arrays disabled by MaxArraySize=0", in: "0-3", max: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArray(tt.in, tt.max)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseArray(%q, %d) error = %v, want error %v", tt.in, tt.max, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseArray(%q, %d) (-want +got):\n%s", tt.in, tt.max, diff)
			}
		})
	}
}

func TestParseArrayBoundsWork(t *testing.T) {
	// A huge MaxArraySize is capped at Slurm's own limit.
	if _, err := ParseArray("0-4000001", 1<<40); err == nil {
		t.Errorf("ParseArray(0-4000001) with a huge MaxArraySize succeeded, want an error at 4000001")
	}
	long := strings.Repeat("1,", 3000)
	if _, err := ParseArray(long, 1001); err == nil {
		t.Errorf("ParseArray of %d bytes succeeded, want slurmctld's 4 KiB limit", len(long))
	}
}

func TestArrayString(t *testing.T) {
	many := make([]int, 0, 40)
	for i := 0; i < 80; i += 2 {
		many = append(many, i)
	}
	tests := []struct {
		name string
		in   Array
		want string
	}{
		{name: "a contiguous run", in: Array{Tasks: span(0, 15)}, want: "0-15"},
		{name: "with a throttle", in: Array{Tasks: span(0, 15), Limit: 4}, want: "0-15%4"},
		{name: "a short stride prints each id", in: Array{Tasks: []int{1, 3, 5, 7, 9}}, want: "1,3,5,7,9"},
		{name: "what is left of 2-3%2 as squeue shows", in: Array{Tasks: []int{2, 3}, Limit: 2}, want: "2-3%2"},
		{name: "runs and single ids", in: Array{Tasks: []int{0, 1, 2, 5, 7, 8}}, want: "0-2,5,7-8"},
		{name: "a long regular stride prints as a step", in: Array{Tasks: []int{1, 3, 5, 7, 9, 11, 13}}, want: "1-13:2"},
		{name: "a stride of five over more than ten ids", in: Array{Tasks: []int{0, 5, 10, 15, 20, 25}}, want: "0-25:5"},
		{name: "five ids are too few for the step form", in: Array{Tasks: []int{0, 5, 10, 15, 20}}, want: "0,5,10,15,20"},
		{name: "an irregular stride prints each id", in: Array{Tasks: []int{1, 3, 5, 7, 9, 12}}, want: "1,3,5,7,9,12"},
		{name: "one id", in: Array{Tasks: []int{7}}, want: "7"},
		{name: "no ids", in: Array{}, want: ""},
		{
			name: "a long list is cut to 60 bytes and dots, as squeue does",
			in:   Array{Tasks: append([]int{1}, many...)},
			want: "0-2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42...",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.String()); diff != "" {
				t.Errorf("%v.String() (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatTasks(t *testing.T) {
	in := []int{9, 3, 2, 3, -1}
	got := FormatTasks(in, 0)
	if diff := cmp.Diff("2-3,9", got); diff != "" {
		t.Errorf("FormatTasks(%v) (-want +got):\n%s", in, diff)
	}
	if diff := cmp.Diff([]int{9, 3, 2, 3, -1}, in); diff != "" {
		t.Errorf("FormatTasks modified its input (-want +got):\n%s", diff)
	}
}

func TestArrayTaskStep(t *testing.T) {
	tests := []struct {
		spec string
		want int
	}{
		{spec: "0-15", want: 1},
		{spec: "1-9:2", want: 2},
		{spec: "1,3,5-9:4%2", want: 4},
	}
	for _, tt := range tests {
		if got := ArrayTaskStep(tt.spec); got != tt.want {
			t.Errorf("ArrayTaskStep(%q) = %d, want %d", tt.spec, got, tt.want)
		}
	}
}

// An array printed as squeue prints it reads back the same, unless the
// list was cut.
func TestArrayRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const max = 1001
		ids := rapid.SliceOfDistinct(rapid.IntRange(0, max-1), rapid.ID[int]).Draw(t, "ids")
		if len(ids) == 0 {
			t.Skip("no ids")
		}
		slices.Sort(ids)
		a := Array{Tasks: ids, Limit: rapid.IntRange(0, 50).Draw(t, "limit")}
		s := a.String()
		if strings.Contains(s, "...") {
			t.Skip("cut, as squeue cuts long lists")
		}
		got, err := ParseArray(s, max)
		if err != nil {
			t.Fatalf("ParseArray(%q): %v", s, err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Fatalf("ParseArray(%q) (-want +got):\n%s", s, diff)
		}
		if again := got.String(); again != s {
			t.Fatalf("String after ParseArray = %q, want %q", again, s)
		}
	})
}

// A stepped range parses to exactly the ids of its arithmetic progression.
func TestArrayStepProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.IntRange(0, 999).Draw(t, "lo")
		hi := rapid.IntRange(lo, 1000).Draw(t, "hi")
		step := rapid.IntRange(1, 1000).Draw(t, "step")
		spec := strconv.Itoa(lo) + "-" + strconv.Itoa(hi) + ":" + strconv.Itoa(step)
		got, err := ParseArray(spec, 1001)
		if err != nil {
			t.Fatalf("ParseArray(%q): %v", spec, err)
		}
		var want []int
		for i := lo; i <= hi; i += step {
			want = append(want, i)
		}
		if diff := cmp.Diff(want, got.Tasks); diff != "" {
			t.Fatalf("ParseArray(%q).Tasks (-want +got):\n%s", spec, diff)
		}
	})
}
