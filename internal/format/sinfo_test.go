package format

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// sinfoConfig is the recorded cluster's partitions: gpu (default, tier 1)
// and scavenger (tier 0), and a hidden one with a time limit.
func sinfoConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte(`
[[Partition]]
PartitionName = "gpu"
Default       = true
PriorityTier  = 1

[[Partition]]
PartitionName = "scavenger"
PriorityTier  = 0
PreemptMode   = "REQUEUE"

[[Partition]]
PartitionName = "short"
MaxTime       = "1:00:00"
PriorityTier  = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// lines prints entries without a header, in a format.
func lines(t *testing.T, spec string, long bool, q SinfoQuery, v *NodeView, cfg *config.Config) []string {
	t.Helper()
	var f SinfoFormat
	var warnings []string
	if long {
		f, warnings = ParseSinfoLongFormat(spec)
	} else {
		f, warnings = ParseSinfoFormat(spec)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	entries := BuildSinfo(f, q, v, cfg)
	SortSinfo(entries, "", q.NodeFlag)
	var out []string
	for i := range entries {
		out = append(out, strings.TrimSuffix(f.Line(&entries[i], &SinfoEnv{Config: cfg}), "\n"))
	}
	return out
}

func TestBuildSinfo(t *testing.T) {
	cfg := sinfoConfig(t)
	node := &NodeView{Node: testNode(2, map[int]uint32{0: 7}), Sinfo: true}
	all := []int{0, 1, 2}
	tests := []struct {
		name string
		spec string
		long bool
		q    SinfoQuery
		want []string
	}{
		{"the partition shown: one line per partition", "%P %D %t", false,
			SinfoQuery{Partitions: all, NodeShown: true},
			[]string{"gpu* 1 mix", "scavenger 1 mix", "short 1 mix"}},
		{"no partition field: partitions that agree share a line", "%D %t", false,
			SinfoQuery{Partitions: all, NodeShown: true}, []string{"1 mix"}},
		{"a partition field that differs splits the lines", "%l %D", false,
			SinfoQuery{Partitions: all, NodeShown: true}, []string{"infinite 1", "1:00:00 1"}},
		{"tiers 1, 0 and 1: the third joins the first", "%p %D", false,
			SinfoQuery{Partitions: all, NodeShown: true}, []string{"1 1", "0 1"}},
		{"-N: a line per partition even without a partition field", "%N %t", false,
			SinfoQuery{NodeFlag: true, Partitions: all, NodeShown: true}, []string{"gpu01 mix", "gpu01 mix", "gpu01 mix"}},
		{"the node filtered away: partitions shown empty", "%P %D %t %N", false,
			SinfoQuery{Partitions: all}, []string{"gpu* 0 n/a ", "scavenger 0 n/a ", "short 0 n/a "}},
		{"the node filtered away and no partition field: nothing", "%D %t", false,
			SinfoQuery{Partitions: all}, nil},
		{"-p scavenger", "%P %D", false, SinfoQuery{Partitions: []int{1}, NodeShown: true}, []string{"scavenger 1"}},
		{"-R: one line whatever the partitions", "reason:10,nodelist:0", true,
			SinfoQuery{ListReasons: true, Partitions: all, NodeShown: true}, []string{"none      gpu01"}},
		{"the GPU view: a row per GPU", "gpuindex:0 ,gpustate:0 ,gpujobs:0", true,
			SinfoQuery{Partitions: all, NodeShown: true},
			[]string{"0 allocated 7", "1 idle N/A", "2 idle N/A", "3 idle N/A"}},
		{"the GPU view with the node filtered away: nothing", "partition:0 ,gpuindex:0", true,
			SinfoQuery{Partitions: all}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lines(t, tt.spec, tt.long, tt.q, node, cfg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSortSinfo(t *testing.T) {
	cfg := sinfoConfig(t)
	node := &NodeView{Node: testNode(0, nil)}
	f, _ := ParseSinfoFormat("%R")
	tests := []struct {
		name, sort string
		want       []string
	}{
		{"the default: configuration order", "", []string{"gpu", "scavenger", "short"}},
		{"by name", "P", []string{"gpu", "scavenger", "short"}},
		{"by name, reversed", "-P", []string{"short", "scavenger", "gpu"}},
		{"by tier, then configuration order", "p,#P", []string{"scavenger", "gpu", "short"}},
		{"by time limit, reversed: unlimited first", "-l", []string{"gpu", "scavenger", "short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := BuildSinfo(f, SinfoQuery{Partitions: []int{0, 1, 2}, NodeShown: true}, node, cfg)
			SortSinfo(entries, tt.sort, false)
			var got []string
			for _, e := range entries {
				got = append(got, e.Part.PartitionName)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSinfoFormats(t *testing.T) {
	cfg := sinfoConfig(t)
	node := &NodeView{Node: testNode(3, nil)}
	e := &SinfoEntry{Part: &cfg.Partitions[0], Node: node}
	tests := []struct {
		name         string
		spec         string
		long         bool
		header, line string
		warnings     []string
	}{
		{"text before the first field, widths and suffixes", "x%5P|%.3D|%5t", false,
			"xPARTI|NOD|STATE", "xgpu* |  1|mix  ", nil},
		{"an unknown letter prints as typed, with a warning", "%q %c", false,
			"%q CPUS", "%q 16", []string{"Invalid node format specification: q"}},
		{"the default partition's star takes the last place when the name fills the width", "%3P", false,
			"PAR", "gp*", nil},
		{"-O: width 20 without a size, suffix after the size", "nodes,cpusstate:.14|", true,
			"NODES                CPUS(A/I/O/T)|", "1" + strings.Repeat(" ", 24) + "3/13/0/16|", nil},
		{"-O: an unknown name prints nothing but warns", "bogus:5x,nodes:2", true,
			"xNO", "x1 ", []string{"Invalid job format specification: bogus"}},
		{"node lists are printed whole in the header", "%.3N", false, "NODELIST", "gpu", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f SinfoFormat
			var warnings []string
			if tt.long {
				f, warnings = ParseSinfoLongFormat(tt.spec)
			} else {
				f, warnings = ParseSinfoFormat(tt.spec)
			}
			env := &SinfoEnv{Config: cfg}
			got := []string{f.Header(env), f.Line(e, env)}
			want := []string{tt.header + "\n", tt.line + "\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("header and line (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSinfoAll(t *testing.T) {
	f, warnings := ParseSinfoFormat("%all")
	if len(warnings) > 0 {
		t.Errorf("%%all warns: %v", warnings)
	}
	h := f.Header(&SinfoEnv{})
	// Letters sinfo does not know are left out; upper-case fields end
	// with a blank, as 22.05 prints them.
	if !strings.HasPrefix(h, "AVAIL|ACTIVE_FEATURES|CPUS|TMP_DISK|FREE_MEM|") ||
		!strings.Contains(h, "|S:C:T|NODES(A/I) |MAX_CPUS_PER_NODE |") || !strings.HasSuffix(h, "|THREADS \n") {
		t.Errorf("%%all header: %q", h)
	}
}

func TestSinfoSecs(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"minutes", 5 * time.Minute, "5:00"},
		{"hours", 90 * time.Minute, "1:30:00"},
		{"days", 7 * 24 * time.Hour, "7-00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sinfoSecs(tt.d); got != tt.want {
				t.Errorf("sinfoSecs(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
