package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The fake daemon's node, drains and configuration, for sinfo and scontrol
// show node/partition/config and update NodeName=. The node is computed
// from the scenario's running jobs as the daemon computes it: their CPUs,
// memory and GPUs (a running job that asked for GPUs but whose builder
// gave it none takes the lowest free ones). Scenario options:
//
//	comment=TEXT       the node's Comment (the GPU source line); none by
//	                   default, as the recording's node had none
//	drain=REASON       the node drained by root at 09:00:00
//	gpudrain=I:REASON  GPU I drained by root at 09:00:00
//	foreign=I:PID:USER:MIB  a process of nobody's on GPU I
//
// POST /v1/node/update changes what later requests see (for the fake's
// life), after the daemon's checks of who may and of the node's name.

func init() {
	fakeRouteHooks = append(fakeRouteHooks, func(d *fakeDaemon) localapi.Routes {
		n := &fakeNode{d: d, gpuDrains: map[int]api.Drain{}}
		return localapi.Routes{
			{Method: "GET", Path: api.PathNode, Handler: localapi.Func(n.node)},
			{Method: "GET", Path: api.PathNodeDrains, Handler: localapi.Func(n.drains)},
			{Method: "GET", Path: api.PathConfig, Handler: localapi.Func(n.config)},
			{Method: "POST", Path: api.PathNodeUpdate, Handler: localapi.Func(n.update)},
		}
	})
	scenarios["busy3"] = func(now time.Time, opt map[string]string) fakeState {
		// Three one-CPU jobs without GPUs (sinfo_aho_F_C_busy,
		// sinfo_ahNO_ood_busy).
		var jobs []api.Job
		for i := 0; i < 3; i++ {
			jobs = append(jobs, newJob(uint32(40+i), "cpu").running(now.Add(-time.Minute), i).build())
		}
		return fakeState{jobs: jobs}
	}
	scenarios["gpus2"] = func(now time.Time, opt map[string]string) fakeState {
		// One job on one CPU and GPUs 0-1 (scontrol_d_show_node_busy).
		return fakeState{jobs: []api.Job{newJob(50, "gpus2").running(now.Add(-time.Minute), 0).gpus(2).build()}}
	}
}

// fakeRouteHooks add routes to every fakeslurmd; a test file registers
// its own in init.
var fakeRouteHooks []func(d *fakeDaemon) localapi.Routes

// fakeNode is the fake's node state.
type fakeNode struct {
	d         *fakeDaemon
	mu        sync.Mutex
	changed   bool // an update replaced the scenario's drains
	nodeDrain *api.Drain
	gpuDrains map[int]api.Drain
}

// fakeDrainTime is when the scenario's drains were made.
var fakeDrainTime = at("09:00:00")

// fakeBoot is when the fake daemon started.
var fakeBoot = at("08:49:22")

// fakeConfig is the recorded cluster as the daemon serves it. The
// recording's cluster-wide PreemptMode=REQUEUE applied to gpu as well.
func fakeConfig() *config.Config {
	cfg, err := config.Parse("fake.toml", []byte(testConfig))
	if err != nil {
		panic(err)
	}
	cfg.Partitions[0].PreemptMode = config.PreemptModeRequeue
	cfg.SocketPath, cfg.StateSaveLocation = "/srv/slurm/run/slurmd.sock", "/srv/slurm/state"
	return cfg
}

func (n *fakeNode) config(ctx context.Context, req *localapi.Request[struct{}]) (api.Config, error) {
	n.d.record("GET", api.PathConfig, "", nil)
	return api.Config{Config: fakeConfig(), Path: "/srv/slurm/etc/slurm-lite.toml", Boot: fakeBoot,
		GPUs: "GPUs: simulated (4 x a100 80G)"}, nil
}

func (n *fakeNode) node(ctx context.Context, req *localapi.Request[struct{}]) (api.Node, error) {
	n.d.record("GET", api.PathNode, "", nil)
	cfg := fakeConfig()
	opts := n.d.opts
	out := api.Node{Name: "gpu01", CPUs: cfg.Node.CPUs, MemoryMB: 64000, Boot: fakeBoot, State: "IDLE",
		Comment: opts["comment"]}
	for i := 0; i < 4; i++ {
		out.GPUs = append(out.GPUs, api.GPU{Index: i, UUID: fmt.Sprintf("GPU-fake-%d", i), Type: "a100",
			Model: "Simulated a100", MemoryTotal: 80 << 30, Utilization: -1, State: "up"})
	}
	for _, j := range n.d.state().jobs {
		if j.State != slurm.Running {
			continue
		}
		out.AllocCPU += len(j.Alloc.CPUs)
		out.AllocMem += j.Alloc.Mem >> 20
		want := 0
		for _, g := range j.Request.GPUs {
			want += int(g.Count)
		}
		for i := range out.GPUs {
			if want == 0 {
				break
			}
			if len(out.GPUs[i].Jobs) == 0 {
				out.GPUs[i].Jobs = []uint32{j.ID}
				out.GPUs[i].MemoryUsed = out.GPUs[i].MemoryTotal
				want--
			}
		}
	}
	if f, ok := opts["foreign"]; ok {
		parts := strings.SplitN(f, ":", 4)
		i, _ := strconv.Atoi(parts[0])
		pid, _ := strconv.Atoi(parts[1])
		mib, _ := strconv.ParseUint(parts[3], 10, 64)
		g := &out.GPUs[i]
		g.Processes = append(g.Processes, api.Process{PID: pid, User: parts[2], Memory: mib << 20})
		g.Foreign += mib << 20
		g.MemoryUsed += mib << 20
	}
	drains := n.current()
	for _, dr := range drains.GPUs {
		out.GPUs[dr.Index].State, out.GPUs[dr.Index].Reason = "drained", dr.Reason
	}
	used := 0
	for _, g := range out.GPUs {
		if len(g.Jobs) > 0 {
			used++
		}
	}
	out.Gres, out.GresUsed = "gpu:a100:4", fmt.Sprintf("gpu:a100:%d", used)
	switch {
	case out.AllocCPU >= out.CPUs:
		out.State = "ALLOCATED"
	case out.AllocCPU > 0:
		out.State = "MIXED"
	}
	return out, nil
}

// current is the drains in force: the scenario's until an update.
func (n *fakeNode) current() api.Drains {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.changed {
		n.nodeDrain, n.gpuDrains = nil, map[int]api.Drain{}
		if r, ok := n.d.opts["drain"]; ok {
			n.nodeDrain = &api.Drain{UUID: api.NodeDrainUUID, Index: -1, Reason: r, Since: fakeDrainTime}
		}
		if s, ok := n.d.opts["gpudrain"]; ok {
			idx, reason, _ := strings.Cut(s, ":")
			i, _ := strconv.Atoi(idx)
			n.gpuDrains[i] = api.Drain{UUID: fmt.Sprintf("GPU-fake-%d", i), Index: i, Reason: reason, Since: fakeDrainTime}
		}
	}
	out := api.Drains{Node: n.nodeDrain}
	for i := 0; i < 4; i++ {
		if dr, ok := n.gpuDrains[i]; ok {
			out.GPUs = append(out.GPUs, dr)
		}
	}
	return out
}

func (n *fakeNode) drains(ctx context.Context, req *localapi.Request[struct{}]) (api.Drains, error) {
	n.d.record("GET", api.PathNodeDrains, "", nil)
	return n.current(), nil
}

// update is the daemon's checks and changes, in the fake's terms; the
// caller is the scenario's as= user (root by default).
func (n *fakeNode) update(ctx context.Context, req *localapi.Request[api.NodeUpdate]) (api.Drains, error) {
	u := req.Body
	n.d.record("POST", api.PathNodeUpdate, "", u)
	if as := n.d.opts["as"]; as != "" && as != "root" {
		return api.Drains{}, &api.Error{Status: http.StatusBadRequest, Code: 2010, Message: "Invalid user id"}
	}
	if u.Node != "gpu01" {
		return api.Drains{}, &api.Error{Status: http.StatusBadRequest, Code: 2018, Message: "Invalid node name specified"}
	}
	n.current()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.changed = true
	by := uint32(0)
	if me, err := user.Current(); err == nil {
		id, _ := strconv.ParseUint(me.Uid, 10, 32)
		by = uint32(id)
	}
	dr := api.Drain{Reason: u.Reason, Since: n.d.now(), By: by}
	if len(u.GPUs) == 0 {
		switch {
		case u.State == api.NodeResume && n.nodeDrain == nil:
			return api.Drains{}, &api.Error{Status: http.StatusBadRequest, Code: 2028, Message: "Invalid node state specified"}
		case u.State == api.NodeResume:
			n.nodeDrain = nil
		default:
			dr.UUID, dr.Index = api.NodeDrainUUID, -1
			n.nodeDrain = &dr
		}
	}
	for _, g := range u.GPUs {
		i, err := strconv.Atoi(g)
		if err != nil || i < 0 || i > 3 {
			return api.Drains{}, localapi.Errorf(http.StatusBadRequest, "no GPU %q on this node", g)
		}
		if u.State == api.NodeResume {
			delete(n.gpuDrains, i)
			continue
		}
		dr.UUID, dr.Index = fmt.Sprintf("GPU-fake-%d", i), i
		n.gpuDrains[i] = dr
	}
	return api.Drains{Node: n.nodeDrain}, nil
}
