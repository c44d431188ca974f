package sinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
)

func TestNodeStateByName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want nodeStateID
		ok   bool
	}{
		{"a compact name", "mix", stMixed, true},
		{"a prefix of a long name, any case", "ALLOCA", stAllocated, true},
		{"d is down, the first state it begins", "d", stDown, true},
		{"dr is drain", "dr", stDrain, true},
		{"drained", "drained", stDrained, true},
		{"drng is draining", "drng", stDraining, true},
		{"a flag this node never has", "no_respond", stFlag, true},
		{"a word that names no state", "bogus", 0, false},
		{"more than a state's name", "idlex", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := nodeStateByName(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("nodeStateByName(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestStateFilter(t *testing.T) {
	node := func(alloc int, drained bool) *format.NodeView {
		return &format.NodeView{Node: api.Node{CPUs: 16, AllocCPU: alloc}, Drained: drained, Sinfo: true}
	}
	idle, mixed, full := node(0, false), node(3, false), node(16, false)
	drained, draining := node(0, true), node(3, true)
	views := []*format.NodeView{idle, mixed, full, drained, draining}
	tests := []struct {
		spec string
		want []bool // idle, mixed, allocated, drained, draining
	}{
		{"idle", []bool{true, false, false, true, false}},
		{"mix", []bool{false, true, false, false, false}},
		{"alloc", []bool{false, true, true, false, true}},
		{"drain", []bool{false, false, false, true, true}},
		{"drained", []bool{false, false, false, true, false}},
		{"draining", []bool{false, false, false, false, true}},
		{"idle,mix", []bool{true, true, false, true, false}},
		{"idle&drain", []bool{false, false, false, true, false}},
		{"all", []bool{true, true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f, bad := parseStateFilter(tt.spec)
			if f == nil {
				t.Fatalf("refused %q", bad)
			}
			var got []bool
			for _, v := range views {
				got = append(got, f.matches(v))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("matches idle, mixed, allocated, drained, draining (-want +got):\n%s", diff)
			}
		})
	}
	if f, bad := parseStateFilter("idle,bogus"); f != nil || bad != "bogus" {
		t.Errorf("parseStateFilter(idle,bogus) = %v, %q; want a refusal of bogus", f, bad)
	}
}

func TestVisible(t *testing.T) {
	tests := []struct {
		name   string
		p      config.Partition
		groups []string
		want   bool
	}{
		{"an open partition", config.Partition{}, []string{"lab"}, true},
		{"a hidden partition", config.Partition{Hidden: true}, nil, false},
		{"AllowGroups with one of the caller's groups", config.Partition{AllowGroups: []string{"ops", "lab"}}, []string{"lab"}, true},
		{"AllowGroups without the caller's", config.Partition{AllowGroups: []string{"ops"}}, []string{"lab"}, false},
		{"AllowGroups for root, who sees every partition", config.Partition{AllowGroups: []string{"ops"}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := visible(&tt.p, tt.groups); got != tt.want {
				t.Errorf("visible = %v, want %v", got, tt.want)
			}
		})
	}
}
