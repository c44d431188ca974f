package format

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
)

// NodeVersion is the slurmd version the node reports (scontrol's
// Version=, sinfo's %v).
const NodeVersion = "22.05.8"

// Host is what the commands read about the machine they run on, which is
// the daemon's (its socket is local): what slurmd reports to slurmctld.
type Host struct {
	// Name is the short host name (NodeHostName=, sinfo %n).
	Name string
	// Arch is uname's machine in Slurm's spelling ("x86_64").
	Arch string
	// OS is "sysname release version", as slurmd sends it.
	OS string
	// Load is the 5-minute load average times 100 (sysinfo's loads[1]);
	// -1 when unknown.
	Load int
	// FreeMem is sysinfo's free RAM in MiB; -1 when unknown.
	FreeMem int64
	// Boot is when the machine booted.
	Boot time.Time
}

// NodeAddr is the node's address: the daemon is reached through a local
// socket, so the node is this machine's loopback address.
const NodeAddr = "127.0.0.1"

// NodeView is the node as sinfo and scontrol show node print it: what the
// daemon reports, its drains, the configuration's partitions and the host's
// facts, with the drain resolved into Slurm's terms.
type NodeView struct {
	api.Node
	Host Host
	// Partitions are the partitions of the configuration, in its order;
	// the node belongs to every one of them.
	Partitions []string
	// Drained is the node's DRAIN flag: drained by hand, or by the daemon's
	// health checks (a driver mismatch).
	Drained bool
	// Reason, ReasonTime and ReasonUID are the node's reason as Slurm
	// keeps it: the drain's, or one set on an undrained node. ReasonUID
	// is -1 when no user set it; ReasonUser is its name.
	Reason     string
	ReasonTime time.Time
	ReasonUID  int64
	ReasonUser string
	// GPUDrains are the drains of single GPUs, by UUID.
	GPUDrains map[string]GPUDrain
	// LastBusy is when the node last ran a job: now while it does.
	LastBusy time.Time
	// Billing weights the node's TRES for CfgTRES and tres_weighted: the
	// default partition's (empty: CPUs, Slurm's default).
	Billing config.TRESWeights
	// Sinfo is sinfo's view of the base state: slurmctld keeps a node with
	// jobs ALLOCATED, and scontrol and the JSON dump show it MIXED while
	// some CPUs are idle, as sinfo does too unless the node is drained
	// (sinfo -t mix does not match a draining node, -O statecomplete says
	// allocated+drain).
	Sinfo bool
}

// GPUDrain is one GPU's drain as the commands show it.
type GPUDrain struct {
	Reason string
	Since  time.Time
	UID    int64
	User   string
}

// NewNodeView puts together what the commands fetched. userName turns a
// uid into a login name ("" when there is none).
func NewNodeView(n api.Node, d api.Drains, cfg *config.Config, host Host, now time.Time, userName func(uint32) string) NodeView {
	v := NodeView{Node: n, Host: host, ReasonUID: -1, GPUDrains: map[string]GPUDrain{}}
	if cfg != nil {
		for _, p := range cfg.Partitions {
			v.Partitions = append(v.Partitions, p.PartitionName)
		}
		if p := cfg.DefaultPartition(); p != nil {
			v.Billing = p.TRESBillingWeights
		}
	}
	name := func(uid uint32) string {
		if userName != nil {
			if s := userName(uid); s != "" {
				return s
			}
		}
		return strconv.FormatUint(uint64(uid), 10)
	}
	setReason := func(dr *api.Drain) {
		v.Reason, v.ReasonTime, v.ReasonUID, v.ReasonUser = dr.Reason, dr.Since, int64(dr.By), name(dr.By)
	}
	switch {
	case d.Node != nil:
		v.Drained = true
		setReason(d.Node)
	case n.State == "DRAIN":
		// The daemon's own drain (a driver mismatch): no user, no time.
		v.Drained, v.Reason = true, n.Reason
	case d.NodeReason != nil:
		setReason(d.NodeReason)
	}
	for _, g := range d.GPUs {
		v.GPUDrains[g.UUID] = GPUDrain{Reason: g.Reason, Since: g.Since, UID: int64(g.By), User: name(g.By)}
	}
	v.LastBusy = n.Boot
	if n.AllocCPU > 0 {
		v.LastBusy = now
	}
	return v
}

// Node base states (NODE_STATE_* of slurm.h) the node can be in.
type nodeBase int

const (
	baseIdle nodeBase = iota
	baseMixed
	baseAllocated
)

// base is the node's base state as slurmctld sets it: ALLOCATED when every
// CPU is taken, MIXED when some are, IDLE otherwise.
func (v *NodeView) base() nodeBase {
	switch {
	case v.CPUs > 0 && v.AllocCPU >= v.CPUs:
		return baseAllocated
	case v.AllocCPU > 0 && v.Sinfo && v.Drained:
		return baseAllocated
	case v.AllocCPU > 0:
		return baseMixed
	}
	return baseIdle
}

// BaseState is the node's base state: "IDLE", "MIXED" or "ALLOCATED".
func (v *NodeView) BaseState() string { return v.baseString() }

// StateLong is node_state_string: "IDLE", "MIXED", "ALLOCATED",
// "DRAINED", "DRAINING".
func (v *NodeView) StateLong() string {
	b := v.base()
	if v.Drained {
		if b == baseIdle {
			return "DRAINED"
		}
		return "DRAINING"
	}
	return [...]string{"IDLE", "MIXED", "ALLOCATED"}[b]
}

// StateCompact is node_state_string_compact: "IDLE", "MIX", "ALLOC",
// "DRAIN", "DRNG".
func (v *NodeView) StateCompact() string {
	b := v.base()
	if v.Drained {
		if b == baseIdle {
			return "DRAIN"
		}
		return "DRNG"
	}
	return [...]string{"IDLE", "MIX", "ALLOC"}[b]
}

// StateComplete is node_state_string_complete: "IDLE", "MIXED+DRAIN".
func (v *NodeView) StateComplete() string {
	s := v.baseString()
	if v.Drained {
		s += "+DRAIN"
	}
	return s
}

// baseString is node_state_base_string: "IDLE", "MIXED", "ALLOCATED".
func (v *NodeView) baseString() string {
	return [...]string{"IDLE", "MIXED", "ALLOCATED"}[v.base()]
}

// gpuTypes are the node's GPU types in the order they first appear.
func (v *NodeView) gpuTypes() []string {
	var types []string
	for _, g := range v.GPUs {
		if !slices.Contains(types, g.Type) {
			types = append(types, g.Type)
		}
	}
	return types
}

// gresIndices prints "gpu:TYPE:N(IDX:list)" for each type, counting the
// GPUs that pick selects; "gpu:TYPE:0(IDX:N/A)" for a type with none.
func (v *NodeView) gresIndices(pick func(api.GPU) bool, skipEmpty bool) string {
	var parts []string
	for _, t := range v.gpuTypes() {
		var idx []int
		for _, g := range v.GPUs {
			if g.Type == t && pick(g) {
				idx = append(idx, g.Index)
			}
		}
		if skipEmpty && len(idx) == 0 {
			continue
		}
		name := "gpu:"
		if t != "" {
			name += t + ":"
		}
		list := "N/A"
		if len(idx) > 0 {
			list = BitFmt(idx)
		}
		parts = append(parts, fmt.Sprintf("%s%d(IDX:%s)", name, len(idx), list))
	}
	return strings.Join(parts, ",")
}

// GresUsed is gres_get_node_used: "gpu:a100:2(IDX:0-1)", Null without
// GPUs. A GPU counts as used while any job holds it.
func (v *NodeView) GresUsed() string {
	if len(v.GPUs) == 0 {
		return Null
	}
	return v.gresIndices(func(g api.GPU) bool { return len(g.Jobs) > 0 }, false)
}

// GresDrain is the GPUs drained, as GresUsed prints GPUs in use: Slurm
// always prints "N/A" here (it cannot drain a single GPU); slurm-lite
// lists its drained GPUs the same way: "gpu:a100:1(IDX:2)".
func (v *NodeView) GresDrain() string {
	s := v.gresIndices(gpuOut, true)
	if s == "" {
		return "N/A"
	}
	return s
}

// gpuOut reports whether a GPU is out of service: drained or lost.
func gpuOut(g api.GPU) bool { return g.State == "drained" || g.State == "lost" }

// gpusInUse counts the GPUs that jobs hold.
func (v *NodeView) gpusInUse() int {
	n := 0
	for _, g := range v.GPUs {
		if len(g.Jobs) > 0 {
			n++
		}
	}
	return n
}

// billing weighs TRES counts as Slurm's billing does: the sum of weight
// times count, or the CPU count without weights.
func billingOf(w config.TRESWeights, cpus int, memMB int64, gpus int) float64 {
	if len(w) == 0 {
		return float64(cpus)
	}
	return w["cpu"]*float64(cpus) + w["mem"]*float64(memMB) + w["gres/gpu"]*float64(gpus)
}

// CfgTRES is the node's configured TRES: "cpu=16,mem=62.50G,billing=16,gres/gpu=4".
func (v *NodeView) CfgTRES() string {
	parts := []string{"cpu=" + strconv.Itoa(v.CPUs)}
	if v.MemoryMB > 0 {
		parts = append(parts, "mem="+mebi(uint64(v.MemoryMB), false))
	}
	b := billingOf(v.Billing, v.CPUs, v.MemoryMB, len(v.GPUs))
	parts = append(parts, "billing="+strconv.FormatInt(int64(math.Round(b)), 10))
	if len(v.GPUs) > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(len(v.GPUs)))
	}
	return strings.Join(parts, ",")
}

// AllocTRES is what jobs hold: "cpu=2,mem=2000M,gres/gpu=4"; "" for nothing.
func (v *NodeView) AllocTRES() string {
	var parts []string
	if v.AllocCPU > 0 {
		parts = append(parts, "cpu="+strconv.Itoa(v.AllocCPU))
	}
	if v.AllocMem > 0 {
		parts = append(parts, "mem="+mebi(uint64(v.AllocMem), false))
	}
	if n := v.gpusInUse(); n > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

// allocWeighted is the billing of what jobs hold (tres_weighted).
func (v *NodeView) allocWeighted() float64 {
	return billingOf(v.Billing, v.AllocCPU, v.AllocMem, v.gpusInUse())
}

// cpuLoad prints the load as scontrol does ("0.22"), N/A when unknown.
func (v *NodeView) cpuLoad() string {
	if v.Host.Load < 0 {
		return "N/A"
	}
	return fmt.Sprintf("%.2f", float64(v.Host.Load)/100)
}

// orNullStr is s, or "(null)" as printf shows a NULL string.
func orNullStr(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// ShowNode is slurm_sprint_node_table: scontrol show node's record,
// one line of fields per line (oneLiner: all on one line). detail is -d:
// GresDrain and GresUsed, which slurmctld fills only when asked. A node
// with drained GPUs shows GresDrain without -d too: Slurm has no such
// thing, and an operator looking at the node should see it.
func ShowNode(v *NodeView, detail, oneLiner bool) string {
	end := "\n   "
	if oneLiner {
		end = " "
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("NodeName=%s ", v.Name)
	if v.Host.Arch != "" {
		w("Arch=%s ", v.Host.Arch)
	}
	w("CoresPerSocket=%d %s", v.CPUs, end)
	w("CPUAlloc=%d CPUEfctv=%d CPUTot=%d CPULoad=%s%s", v.AllocCPU, v.CPUs, v.CPUs, v.cpuLoad(), end)
	w("AvailableFeatures=(null)%s", end)
	w("ActiveFeatures=(null)%s", end)
	w("Gres=%s%s", orNullStr(v.Gres), end)
	drained := v.GresDrain()
	if detail || drained != "N/A" {
		w("GresDrain=%s%s", drained, end)
	}
	if used := v.GresUsed(); detail && used != Null {
		w("GresUsed=%s%s", used, end)
	}
	w("NodeAddr=%s NodeHostName=%s Version=%s%s", NodeAddr, orNullStr(v.Host.Name), NodeVersion, end)
	if v.Host.OS != "" {
		w("OS=%s %s", v.Host.OS, end)
	}
	free := "N/A"
	if v.Host.FreeMem >= 0 {
		free = strconv.FormatInt(v.Host.FreeMem, 10)
	}
	w("RealMemory=%d AllocMem=%d FreeMem=%s Sockets=1 Boards=1%s", v.MemoryMB, v.AllocMem, free, end)
	w("State=%s ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A%s", v.StateComplete(), end)
	if len(v.Partitions) > 0 {
		w("Partitions=%s %s", strings.Join(v.Partitions, ","), end)
	}
	boot := "None"
	if !v.Host.Boot.IsZero() {
		boot = Time(v.Host.Boot)
	}
	start := "None"
	if !v.Boot.IsZero() {
		start = Time(v.Boot)
	}
	w("BootTime=%s SlurmdStartTime=%s%s", boot, start, end)
	w("LastBusyTime=%s%s", Time(v.LastBusy), end)
	w("CfgTRES=%s%s", v.CfgTRES(), end)
	w("AllocTRES=%s%s", v.AllocTRES(), end)
	w("CapWatts=n/a%s", end)
	w("CurrentWatts=0 AveWatts=0%s", end)
	w("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")
	if v.Reason != "" {
		first := true
		b.WriteString(end)
		for _, line := range strings.Split(v.Reason, "\n") {
			if line == "" {
				continue // strtok skips empty lines
			}
			if first {
				b.WriteString("Reason=")
			} else {
				b.WriteString(end + "       ")
			}
			b.WriteString(line)
			if first && !v.ReasonTime.IsZero() {
				w(" [%s@%s]", v.ReasonUser, Time(v.ReasonTime))
			}
			first = false
		}
	}
	if v.Comment != "" {
		w("%sComment=%s", end, v.Comment)
	}
	if extra := ForeignUse(v.GPUs); extra != "" {
		w("%sExtra=%s", end, extra)
	}
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}
