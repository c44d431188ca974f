package slurmsyntax

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		// golden/scontrol_show_hostname_list.txt
		{name: "padding as written, a lone number unpadded", in: "gpu[01-03,7],cpu1", want: []string{"gpu01", "gpu02", "gpu03", "gpu7", "cpu1"}},
		// golden/scontrol_show_hostnames_gpu01.txt
		{name: "one name", in: "gpu01", want: []string{"gpu01"}},
		{name: "the width is the low end's", in: "n[8-10]", want: []string{"n8", "n9", "n10"}},
		{name: "a padded low end pads the rest", in: "n[08-10]", want: []string{"n08", "n09", "n10"}},
		{name: "spaces and tabs separate too", in: "a1 b2\tc3", want: []string{"a1", "b2", "c3"}},
		{name: "separators repeat", in: ",,a1,, b2,", want: []string{"a1", "b2"}},
		{name: "duplicates stay, in order", in: "b,a,b", want: []string{"b", "a", "b"}},
		{name: "a bracket in the prefix", in: "r[1-2]n[1-2]", want: []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{name: "a suffix after a prefix bracket", in: "rack[1-2]-n[5]", want: []string{"rack1-n5", "rack2-n5"}},
		{name: "three brackets, the last prefix bracket outermost", in: "a[1-2]b[1-2]c[1]", want: []string{"a1b1c1", "a2b1c1", "a1b2c1", "a2b2c1"}},
		{name: "a range with no end is its start", in: "n[5-]", want: []string{"n5"}},
		{name: "brackets with no prefix", in: "[1-3]", want: []string{"1", "2", "3"}},
		{name: "a name with no number", in: "login", want: []string{"login"}},
		{name: "empty", in: "", want: []string{}},
		{name: "a reversed range", in: "n[3-1]", wantErr: true},
		{name: "an empty bracket", in: "n[]", wantErr: true},
		{name: "an empty range in a list", in: "n[1,,2]", wantErr: true},
		{name: "a letter in a range", in: "n[a-b]", wantErr: true},
		{name: "a negative range", in: "n[1--2]", wantErr: true},
		{name: "text after the bracket", in: "n[1-2]x", wantErr: true},
		{name: "an unclosed bracket", in: "gpu[1-3", wantErr: true},
		{name: "a range of more than 64Ki hosts", in: "n[0-65536]", wantErr: true},
		{name: "more hosts than the cap", in: "a[0-65535],b[0-65535],c[0-65535],d[0-65535],e[0]", wantErr: true},
		{name: "prefix brackets that multiply past the cap", in: "a[0-65535]b[0-65535]", wantErr: true},
		{name: "a number past 64 bits", in: "n[99999999999999999999]", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ExpandHostlist(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ExpandHostlist(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{name: "the golden list back", in: []string{"gpu01", "gpu02", "gpu03", "gpu7", "cpu1"}, want: "gpu[01-03,7],cpu1"},
		{name: "one name", in: []string{"gpu01"}, want: "gpu01"},
		{name: "a run that grows a digit", in: []string{"n8", "n9", "n10"}, want: "n[8-10]"},
		{name: "a padding change breaks the run", in: []string{"n9", "n010"}, want: "n[9,010]"},
		{name: "not sorted", in: []string{"n3", "n1", "n2"}, want: "n[3,1-2]"},
		{name: "duplicates kept", in: []string{"n1", "n1"}, want: "n[1,1]"},
		{name: "prefixes split brackets", in: []string{"a1", "b1", "a2"}, want: "a1,b1,a2"},
		{name: "names without numbers", in: []string{"login", "gpu1", "gpu2"}, want: "login,gpu[1-2]"},
		{name: "a number alone", in: []string{"1", "2"}, want: "[1-2]"},
		{name: "nothing", in: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CompressHostlist(tt.in)); diff != "" {
				t.Errorf("CompressHostlist(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestNormalizeHostlist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "already compact", in: "gpu[01-03,7],cpu1", want: "gpu[01-03,7],cpu1"},
		{name: "neighbours merge", in: "gpu[01-02],gpu03", want: "gpu[01-03]"},
		{name: "the prefix keeps digits written before a bracket", in: "node1[0-3]", want: "node1[0-3]"},
		{name: "names merge as they come", in: "n1,n2,n3,m1", want: "n[1-3],m1"},
		{name: "an error", in: "n[", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeHostlist(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NormalizeHostlist(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NormalizeHostlist(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// Names compressed and expanded again are the same names, in order.
func TestHostlistRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefixes := []string{"gpu", "n", "rack1-n", "", "login"}
		var names []string
		for i := rapid.IntRange(0, 30).Draw(t, "count"); i > 0; i-- {
			p := rapid.SampledFrom(prefixes).Draw(t, "prefix")
			switch rapid.IntRange(0, 2).Draw(t, "form") {
			case 0: // a run
				lo := rapid.IntRange(0, 120).Draw(t, "lo")
				width := rapid.IntRange(0, 3).Draw(t, "width")
				for n := lo; n < lo+rapid.IntRange(1, 12).Draw(t, "len"); n++ {
					names = append(names, p+padNumber(uint64(n), width))
				}
			case 1: // a lone number
				names = append(names, p+strconv.Itoa(rapid.IntRange(0, 10000).Draw(t, "n")))
			default: // no number
				if p != "" && !strings.HasSuffix(p, "-n") {
					names = append(names, p)
				}
			}
		}
		s := CompressHostlist(names)
		got, err := ExpandHostlist(s)
		if err != nil {
			t.Fatalf("ExpandHostlist(%q): %v", s, err)
		}
		if diff := cmp.Diff(append([]string{}, names...), got); diff != "" {
			t.Fatalf("ExpandHostlist(CompressHostlist(names)) = ExpandHostlist(%q) (-want +got):\n%s", s, diff)
		}
		n, err := NormalizeHostlist(s)
		if err != nil || n != s {
			t.Fatalf("NormalizeHostlist(%q) = %q, %v; want it unchanged", s, n, err)
		}
	})
}
