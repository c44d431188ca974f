package format

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
)

// testNode is a 16-CPU node with four a100s, jobs on CPUs cpus and on
// the GPUs given.
func testNode(cpus int, gpuJobs map[int]uint32) api.Node {
	n := api.Node{Name: "gpu01", CPUs: 16, AllocCPU: cpus, MemoryMB: 64000, AllocMem: int64(cpus) * 1000,
		Gres: "gpu:a100:4", State: "IDLE"}
	for i := 0; i < 4; i++ {
		g := api.GPU{Index: i, UUID: "GPU-" + string(rune('a'+i)), Type: "a100", State: "up"}
		if id, ok := gpuJobs[i]; ok {
			g.Jobs = []uint32{id}
		}
		n.GPUs = append(n.GPUs, g)
	}
	return n
}

func TestNodeStates(t *testing.T) {
	tests := []struct {
		name                    string
		cpus                    int
		drained, sinfo          bool
		long, compact, complete string
		base                    string
	}{
		{"no job: idle", 0, false, false, "IDLE", "IDLE", "IDLE", "IDLE"},
		{"some CPUs taken: mixed", 3, false, false, "MIXED", "MIX", "MIXED", "MIXED"},
		{"every CPU taken: allocated", 16, false, false, "ALLOCATED", "ALLOC", "ALLOCATED", "ALLOCATED"},
		{"drained without jobs: drained", 0, true, false, "DRAINED", "DRAIN", "IDLE+DRAIN", "IDLE"},
		{"drained with jobs: draining, and scontrol says mixed", 1, true, false, "DRAINING", "DRNG", "MIXED+DRAIN", "MIXED"},
		{"drained with jobs as sinfo sees it: allocated+drain", 1, true, true, "DRAINING", "DRNG", "ALLOCATED+DRAIN", "ALLOCATED"},
		{"mixed as sinfo sees it when not drained: mixed", 1, false, true, "MIXED", "MIX", "MIXED", "MIXED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NodeView{Node: testNode(tt.cpus, nil), Drained: tt.drained, Sinfo: tt.sinfo}
			got := []string{v.StateLong(), v.StateCompact(), v.StateComplete(), v.BaseState()}
			want := []string{tt.long, tt.compact, tt.complete, tt.base}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("long, compact, complete, base (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeGresAndTRES(t *testing.T) {
	tests := []struct {
		name     string
		node     api.Node
		weights  config.TRESWeights
		used     string
		drain    string
		cfg      string
		alloc    string
		weighted float64
	}{
		{"an idle node", testNode(0, nil), nil,
			"gpu:a100:0(IDX:N/A)", "N/A", "cpu=16,mem=62.50G,billing=16,gres/gpu=4", "", 0},
		{"jobs on GPUs 0, 1 and 3, billed by CPU", testNode(2, map[int]uint32{0: 7, 1: 7, 3: 8}), nil,
			"gpu:a100:3(IDX:0-1,3)", "N/A", "cpu=16,mem=62.50G,billing=16,gres/gpu=4", "cpu=2,mem=2000M,gres/gpu=3", 2},
		{"billed in GPUs", testNode(1, map[int]uint32{2: 7}), config.TRESWeights{"gres/gpu": 1},
			"gpu:a100:1(IDX:2)", "N/A", "cpu=16,mem=62.50G,billing=4,gres/gpu=4", "cpu=1,mem=1000M,gres/gpu=1", 1},
		{"GPU 2 drained", func() api.Node {
			n := testNode(0, nil)
			n.GPUs[2].State = "drained"
			return n
		}(), nil, "gpu:a100:0(IDX:N/A)", "gpu:a100:1(IDX:2)", "cpu=16,mem=62.50G,billing=16,gres/gpu=4", "", 0},
		{"no GPUs", api.Node{Name: "cpu01", CPUs: 4, MemoryMB: 8192}, nil,
			Null, "N/A", "cpu=4,mem=8G,billing=4", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NodeView{Node: tt.node, Billing: tt.weights}
			got := []any{v.GresUsed(), v.GresDrain(), v.CfgTRES(), v.AllocTRES(), v.allocWeighted()}
			want := []any{tt.used, tt.drain, tt.cfg, tt.alloc, tt.weighted}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GresUsed, GresDrain, CfgTRES, AllocTRES, weighted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewNodeViewReason(t *testing.T) {
	since := time.Date(2026, 11, 29, 9, 0, 0, 0, time.Local)
	names := func(uid uint32) string { return map[uint32]string{0: "root", 1001: "alice"}[uid] }
	tests := []struct {
		name    string
		state   string
		drains  api.Drains
		drained bool
		reason  string
		uid     int64
		user    string
	}{
		{"nothing drained", "IDLE", api.Drains{}, false, "", -1, ""},
		{"drained by hand: the drain's reason, time and user", "IDLE",
			api.Drains{Node: &api.Drain{Reason: "fan broken", Since: since, By: 1001}}, true, "fan broken", 1001, "alice"},
		{"drained by the daemon (a driver mismatch): no user", "DRAIN",
			api.Drains{}, true, "", -1, ""},
		{"a reason on an undrained node is shown, the node not drained", "IDLE",
			api.Drains{NodeReason: &api.Drain{Reason: "new fan Monday", Since: since}}, false, "new fan Monday", 0, "root"},
		{"a uid without a name prints as a number", "IDLE",
			api.Drains{Node: &api.Drain{Reason: "x", Since: since, By: 5555}}, true, "x", 5555, "5555"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := testNode(0, nil)
			n.State = tt.state
			v := NewNodeView(n, tt.drains, nil, Host{}, since, names)
			got := []any{v.Drained, v.Reason, v.ReasonUID, v.ReasonUser}
			want := []any{tt.drained, tt.reason, tt.uid, tt.user}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("drained, reason, uid, user (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShowNodeReasonAndOneLiner(t *testing.T) {
	since := time.Date(2026, 11, 29, 9, 0, 0, 0, time.Local)
	v := NodeView{Node: testNode(0, nil), Drained: true, Reason: "fan broken\n\nsee ticket 12",
		ReasonTime: since, ReasonUser: "root", ReasonUID: 0, Partitions: []string{"gpu", "scavenger"},
		Host: Host{Name: "vm", Load: 22, FreeMem: 100, Arch: "x86_64", OS: "Linux 6 #1"}}
	got := ShowNode(&v, false, false)
	wantTail := "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n" +
		"   Reason=fan broken [root@2026-11-29T09:00:00]\n" +
		"          see ticket 12\n\n"
	if !strings.HasSuffix(got, wantTail) {
		t.Errorf("record ends\n%q\nwant it to end\n%q", got[len(got)-len(wantTail):], wantTail)
	}
	one := ShowNode(&v, false, true)
	if strings.Count(one, "\n") != 1 || !strings.HasPrefix(one, "NodeName=gpu01 Arch=x86_64 CoresPerSocket=16  CPUAlloc=0 ") {
		t.Errorf("one-liner: %q", one)
	}
	for _, want := range []string{" State=IDLE+DRAIN ", " CPULoad=0.22 ", " Partitions=gpu,scavenger  ", " Reason=fan broken [root@2026-11-29T09:00:00]        see ticket 12\n"} {
		if !strings.Contains(one, want) {
			t.Errorf("one-liner lacks %q: %q", want, one)
		}
	}
}

func TestIndexRanges(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want string
	}{
		{"one index", []int{2}, "2"},
		{"a run", []int{0, 1, 2, 3}, "0-3"},
		{"runs and singles, unsorted", []int{7, 0, 1, 3, 5, 6}, "0-1,3,5-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BitFmt(tt.in); got != tt.want {
				t.Errorf("BitFmt(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestShowNodeForeignGPUUse(t *testing.T) {
	gib := uint64(1 << 30)
	n := testNode(0, nil)
	n.GPUs = []api.GPU{
		{Index: 0, UUID: "GPU-0", Type: "a100", MemoryTotal: 80 * gib, Processes: []api.Process{
			{PID: 4242, User: "carol", Memory: 70 * gib},
			{PID: 5000, User: "alice", Memory: 2 * gib, JobID: "7"},
		}},
		{Index: 1, UUID: "GPU-1", Type: "a100", MemoryTotal: 80 * gib, Processes: []api.Process{
			{PID: 77, Memory: 512 << 20},
		}},
	}
	v := NodeView{Node: n, Partitions: []string{"gpu"}, Host: Host{Load: -1, FreeMem: -1}}
	got := ShowNode(&v, false, false)
	want := "\n   Extra=ForeignGPU=0:4242:carol:70G,1:77:?:512M\n\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("record:\n%s\nwant it to end %q", got, want)
	}
	n.GPUs[0].Processes = n.GPUs[0].Processes[1:]
	n.GPUs[1].Processes = nil
	v.Node = n
	if got := ShowNode(&v, false, false); strings.Contains(got, "Extra=") {
		t.Errorf("no foreign process, yet:\n%s", got)
	}
}
