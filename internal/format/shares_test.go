package format

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

func TestFieldCells(t *testing.T) {
	tests := []struct {
		name  string
		width int
		cell  Cell
		mode  Parsable
		last  bool
		want  string
	}{
		{"a string is right-justified in a positive width", 10, Str("lab"), Fixed, false, "       lab "},
		{"a string is left-justified in a negative width", -10, Str("lab"), Fixed, false, "lab        "},
		{"a long string is cut, its last character a plus", 5, Str("Administrator"), Fixed, false, "Admi+ "},
		{"an empty string is blanks", 4, Str(""), Fixed, false, "     "},
		{"a number is never cut", 3, Num("525600"), Fixed, false, "525600 "},
		{"an unset number is blanks on its side", -6, Unset(), Fixed, false, "       "},
		{"a double is %f", 11, Double(0.25), Fixed, false, "   0.250000 "},
		{"infinity is inf", 10, Double(math.Inf(1)), Fixed, false, "       inf "},
		{"a double too wide for its column goes to %e, narrowed", 4, Double(1), Fixed, false, "1.000000e+00 "},
		{"a double too wide for a left column", -9, Double(12345.5), Fixed, false, "1.235e+04 "},
		{"-p ends every value with a bar", 10, Str("lab"), ParsableEnding, true, "lab|"},
		{"-P leaves the last one bare", 10, Double(0.5), ParsableNoEnding, true, "0.500000"},
		{"-P ends the others", 10, Unset(), ParsableNoEnding, false, "|"},
		{"a date is cut to its width, without a plus", 5, dateCell("2026-11-29"), Fixed, false, "2026- "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldCell(Field{Name: "X", Width: tt.width}, tt.cell, tt.mode, tt.last, "|")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldsHeader(t *testing.T) {
	fields := []Field{{"Account", -20}, {"User", 10}, {"Admin", 3}}
	tests := []struct {
		name string
		mode Parsable
		want string
	}{
		{"columns over dashes, names cut to width", Fixed,
			"Account                    User Adm \n-------------------- ---------- --- \n"},
		{"parsable names", ParsableEnding, "Account|User|Admin|\n"},
		{"parsable2 names", ParsableNoEnding, "Account|User|Admin\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FieldsHeader(fields, tt.mode)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddToCharList(t *testing.T) {
	tests := []struct {
		name  string
		list  []string
		names string
		want  []string
	}{
		{"commas split, names are lower-cased", nil, "Alice,BOB", []string{"alice", "bob"}},
		{"a name given again moves to the end", []string{"a", "b"}, "A", []string{"b", "a"}},
		{"empty items and a trailing comma are skipped", nil, "a,,b,", []string{"a", "b"}},
		{"an empty list is one empty name (user='')", nil, "", []string{""}},
		{"a quoted list ends at its closing quote", nil, `"a,b"c`, []string{"a", "b"}},
		{"commas inside brackets do not split", nil, "gpu[1,2],x", []string{"gpu[1,2]", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, AddToCharList(tt.list, tt.names)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseShareFields(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		want    []Field
		wantBad string
	}{
		{"prefixes in any case pick the first field in table order", "A,us,Eff,n",
			[]Field{{"Account", -20}, {"User", 10}, {"EffectvUsage", 13}, {"NormShares", 11}}, ""},
		{"a width applies wherever the field appears, the last one winning", "Account%5,User,account%-7,",
			[]Field{{"Account", -7}, {"User", 10}, {"Account", -7}}, ""},
		{"an unknown name is returned", "Account,Bogus", nil, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := ParseShareFields(tt.spec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if bad != tt.wantBad {
				t.Errorf("bad = %q, want %q", bad, tt.wantBad)
			}
		})
	}
}

func TestPrintTree(t *testing.T) {
	type call struct{ name, parent string }
	tests := []struct {
		name  string
		calls []call
		want  []string
	}{
		{"each level indents one space more; users print their account",
			[]call{{"root", ""}, {"|root", "root"}, {"lab", "root"}, {"|alice", "lab"}, {"sub", "lab"}, {"|bob", "sub"}},
			[]string{"root", " root", " lab", "  lab", "  sub", "   sub"}},
		{"without their parents (sshare -U) users print unindented",
			[]call{{"|root", "root"}, {"|root", "lab"}},
			[]string{"root", "lab"}},
		{"an account whose parent was not printed starts at the left (sshare -A)",
			[]call{{"lab", "root"}, {"|alice", "lab"}},
			[]string{"lab", " lab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tree printTree
			var got []string
			for _, c := range tt.calls {
				got = append(got, tree.name(c.name, c.parent))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSshareRows(t *testing.T) {
	rows := []ShareLine{
		{ShareRow: api.ShareRow{Account: "root", EffectvUsage: 1, NormUsage: 1, LevelFSNone: true}},
		{ShareRow: api.ShareRow{Account: "lab", Depth: 1, RawShares: 1, NormShares: 1, RawUsage: 10, EffectvUsage: 1,
			LevelFS: 1}, Parent: "root"},
		{ShareRow: api.ShareRow{Account: "lab", User: "bob", Depth: 2, RawShares: 1, NormShares: 1, RawUsage: 10.9,
			EffectvUsage: 1, NormUsage: 1, FairShare: 0.5, LevelFSInf: true},
			TRESRunMins: map[string]uint64{"cpu": 60, "gres/gpu": 2}},
	}
	fields, _ := ParseShareFields("Account,User,RawShares,RawUsage,NormUsage,FairShare,LevelFS,TRESRunMins")
	tests := []struct {
		name string
		o    ShareOptions
		want string
	}{
		{"the root's shares, usage share and level are blank; accounts have no fair share",
			ShareOptions{Fields: fields, Mode: ParsableNoEnding, Header: true, TRES: []string{"cpu", "gres/gpu"}},
			"Account|User|RawShares|RawUsage|NormUsage|FairShare|LevelFS|TRESRunMins\n" +
				"root|||0||||cpu=0,gres/gpu=0\n" +
				" lab||1|10|0.000000||1.000000|cpu=0,gres/gpu=0\n" +
				"  lab|bob|1|10|1.000000|0.500000|inf|cpu=60,gres/gpu=2\n"},
		{"classic fair share gives accounts 2^(-usage/shares) too (0 without shares)",
			ShareOptions{Fields: fields[5:6], Mode: ParsableNoEnding, Classic: true},
			"0.000000\n0.500000\n0.500000\n"},
		{"-U leaves out the accounts",
			ShareOptions{Fields: fields[:2], Mode: ParsableEnding, UsersOnly: true},
			"lab|bob|\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Sshare(rows, tt.o)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
