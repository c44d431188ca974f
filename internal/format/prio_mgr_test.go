package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// prioCol is a parsed column as the tests write it: its field by letter.
type prioCol struct {
	letter byte
	width  int
	right  bool
	suffix string
}

func TestParsePrioFormat(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		want    []prioCol
		wantBad []byte
	}{
		{"fields with widths, justification and the text after them", "%.15i %9r|",
			[]prioCol{{letter: 'i', width: 15, right: true, suffix: " "}, {letter: 'r', width: 9, suffix: "|"}}, nil},
		{"text before the first field is printed first", "x%i",
			[]prioCol{{suffix: "x"}, {letter: 'i'}}, nil},
		{"an unknown letter is reported and left out; %% is nothing", "%i%%%z ",
			[]prioCol{{letter: 'i'}}, []byte{'z'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := ParsePrioFormat(tt.spec)
			var cols []prioCol
			for _, c := range got {
				pc := prioCol{width: c.width, right: c.right, suffix: c.suffix}
				if c.f != nil {
					pc.letter = c.f.letter
				}
				cols = append(cols, pc)
			}
			if diff := cmp.Diff(tt.want, cols, cmp.AllowUnexported(prioCol{})); diff != "" {
				t.Errorf("format (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBad, bad); diff != "" {
				t.Errorf("bad letters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrioLines(t *testing.T) {
	w := PrioWeights{Age: 1000, FairShare: 10000, Partition: 1000, TRES: "cpu=5"}
	row := PrioRow{ID: 7, PriorityRow: api.PriorityRow{Partition: "scavenger", User: "alice", Priority: 3400,
		Age: 0.5, FairShare: 2500, PartitionPrio: 1000, Nice: 100}}
	fixed := PrioRow{ID: 8, PriorityRow: api.PriorityRow{Partition: "gpu", User: "bob", Priority: 5000}}
	tests := []struct {
		name   string
		format string
		row    *PrioRow
		weight bool
		want   string
	}{
		{"the header cuts names to their width", "%.5i %4r %u", nil, false, "JOBID PART USER\n"},
		{"weighted factors are whole, the priority their sum less nice", "%i %.5r %Y %A %F %P %N", &row, false,
			"7 scave 3400 0 2500 1000 100\n"},
		{"normalised factors divide by the weights", "%y|%a|%f|%p|%q", &row, false,
			"0.00000079174060|0.0005000|0.2500000|1.0000000|0.0000000\n"},
		{"-w prints the weights, site 1 and TRES's as written", "%.15i %.10Y %.10S %.10A %.10Q %T", nil, true,
			"        Weights                     1       1000          0 cpu=5\n"},
		{"a priority set by hand shows with site and nice 0", "%Y %S %N", &fixed, false, "5000 0 0\n"},
		{"without federation the cluster is (null)", "%c", &row, false, "(null)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := ParsePrioFormat(tt.format)
			var got string
			switch {
			case tt.weight:
				got = f.Weights(w)
			case tt.row == nil:
				got = f.Header(w)
			default:
				got = f.Line(tt.row, w)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultPrioFormat(t *testing.T) {
	w := PrioWeights{Age: 1000, FairShare: 10000, Partition: 1000}
	tests := []struct {
		name                       string
		long, norm, users, sibling bool
		want                       string
	}{
		{"columns for the weights that are set", false, false, false, false,
			"%.15i %9r %.10Y %.10S %.10A %.10F %.10P"},
		{"-u adds the user", false, false, true, false, "%.15i %9r %.8u %.10Y %.10S %.10A %.10F %.10P"},
		{"-n normalises", false, true, false, false, "%.15i %9r %10y %10a %10f %10p"},
		{"-l shows every factor", true, false, false, false,
			"%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"},
		{"--sibling adds the cluster", false, false, false, true, "%.15i %9r %.8c %.10Y %.10S %.10A %.10F %.10P"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultPrioFormat(w, tt.long, tt.norm, tt.users, tt.sibling)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSortPrioRows(t *testing.T) {
	row := func(id uint32, user string, prio float64) PrioRow {
		return PrioRow{ID: id, PriorityRow: api.PriorityRow{User: user, FairShare: prio}}
	}
	rows := []PrioRow{row(3, "bob", 10), row(1, "root", 30), row(2, "bob", 30)}
	ids := func(rs []PrioRow) []uint32 {
		var out []uint32
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		name    string
		spec    string
		want    []uint32
		wantBad byte
	}{
		{"by job id by default", "", []uint32{1, 2, 3}, 0},
		{"keys apply last first, stably: by user, then by id", "u,i", []uint32{2, 3, 1}, 0},
		{"a minus descends", "-Y,i", []uint32{1, 2, 3}, 0},
		{"an unknown key stops the sort", "x", nil, 'x'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := append([]PrioRow(nil), rows...)
			bad, ok := SortPrioRows(rs, tt.spec)
			if tt.wantBad != 0 {
				if ok || bad != tt.wantBad {
					t.Fatalf("SortPrioRows = %q, %v; want %q, false", bad, ok, tt.wantBad)
				}
				return
			}
			if diff := cmp.Diff(tt.want, ids(rs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMgrColumns(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		tree    bool
		want    []Field
		wantBad string
	}{
		{"prefixes at least as long as the chain asks", []string{"acc", "Fa", "maxjobspu", "qos", "DefaultQ"}, false,
			[]Field{{"Account", 10}, {"Share", 9}, {"MaxJobsPU", 9}, {"QOS", 20}, {"Def QOS", 9}}, ""},
		{"a whole name shorter than the minimum matches too", []string{"ID", "lft"}, false,
			[]Field{{"ID", 6}, {"LFT", 6}}, ""},
		{"a tree listing's Account is 20 wide, left-justified; %N overrides", []string{"account", "user%3"}, true,
			[]Field{{"Account", -20}, {"User", 3}}, ""},
		{"a prefix shorter than the minimum is unknown", []string{"a"}, false, nil, "a"},
		{"pname is not ParentName", []string{"pname"}, false, nil, "pname"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, bad := MgrColumns(tt.names, tt.tree)
			var got []Field
			for _, c := range cols {
				got = append(got, c.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if bad != tt.wantBad {
				t.Errorf("bad = %q, want %q", bad, tt.wantBad)
			}
		})
	}
}

func TestListAssocsTree(t *testing.T) {
	assocs := []MgrAssoc{
		{ID: 1, Cluster: "c", Account: "root", Shares: 1},
		{ID: 2, Cluster: "c", Account: "root", User: "root", Shares: 1},
		{ID: 3, Cluster: "c", Account: "lab", Parent: "root", Shares: 1},
		{ID: 4, Cluster: "c", Account: "lab", User: "alice", Shares: 2, QOS: []string{"high", "normal"}, QOSIDs: []int{1, 2}},
	}
	cols, _ := MgrColumns([]string{"account", "user", "share", "qos", "qosraw", "maxjobs", "grpwall", "id"}, true)
	got := ListAssocs(cols, assocs, true, MgrOutput{Mode: ParsableNoEnding})
	want := "Account|User|Share|QOS|QOS_RAW|MaxJobs|GrpWall|ID\n" +
		"root||1|||||1\n" +
		" root|root|1|||||2\n" +
		" lab||1|||||3\n" +
		"  lab|alice|2|high,normal|1,2|||4\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestListQOS(t *testing.T) {
	q := []MgrQOS{{ID: 2, Name: "high", Description: "high", Priority: 100, UsageFactor: 2, MaxTRESPU: "gres/gpu=4",
		MaxJobsPU: 20, MaxWallMinutes: 3 * 24 * 60, Flags: "DenyOnLimit,NoDecay"}}
	cols, _ := MgrColumns([]string{"name", "prio", "gracetime", "preemptmode", "flags", "usagefactor", "maxtrespu",
		"maxjobspu", "maxsubmitpu", "maxwall", "usagethres", "user"}, false)
	got := ListQOS(cols, q, MgrOutput{Mode: ParsableEnding, NoHeader: true})
	want := "high|100|00:00:00|cluster|DenyOnLimit,NoDecay|2.000000|gres/gpu=4|20||3-00:00:00|||\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
