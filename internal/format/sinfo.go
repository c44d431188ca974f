package format

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// sinfo (src/sinfo of 22.05) groups nodes into lines: one per partition
// when the format shows the partition, one per partition and node with -N,
// and otherwise one per group of partitions that agree on every partition
// field the format shows. On one machine a line holds the node or nothing
// (a partition whose node a filter took away still gets its line, with
// state n/a). The GPU view (slurm-lite's own, see gpuFields) prints one
// row per GPU of each line's node.

// Sinfo's default formats (src/sinfo/opts.c), as -O lists.
const (
	SinfoDefault     = "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0"
	SinfoLong        = "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,groups:.10 ,nodes:.6 ,statelong:.11 ,nodelist:0"
	SinfoNode        = "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6"
	SinfoNodeLong    = "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 ,memory:.6 ,disk:.8 ,weight:.6 ,features:.8 ,reason:20"
	SinfoSummarize   = "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0"
	SinfoReasons     = "reason:20 ,user:9 ,timestamp:19 ,nodelist:0"
	SinfoReasonsLong = "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
	// SinfoGPUs is the GPU view's default (sinfo -G). MODEL says where
	// the GPUs come from: NVML's name, or "simulated_TYPE".
	SinfoGPUs = "nodelist:9 ,gpuindex:.3 ,gputype:.10 ,gpumodel:.22 ,gpumem:.7 ,gpumemused:.8 ,gpuutil:.5 ,gpustate:.10 ,gpujobs:.10 ,gpuforeign:.20 ,gpureason:0"
)

// SinfoEntry is one line of sinfo: a partition and, unless a filter took
// it away, the node; in the GPU view, one of the node's GPUs.
type SinfoEntry struct {
	Part      *config.Partition
	PartIndex int
	Node      *NodeView
	GPU       *api.GPU
}

// SinfoEnv is what sinfo's fields need besides the entry.
type SinfoEnv struct {
	Config *config.Config
	// PartWidth and NodeWidth replace the partition's and the node
	// list's widths when set (sinfo computes them for its default
	// formats: part_field_flag, node_field_flag).
	PartWidth, NodeWidth int
	NoConvert            bool
}

// partKey is a partition attribute that decides whether two partitions
// share a line (_match_part_data).
type partKey int

const (
	partNone partKey = iota
	partName
	partAvail
	partGroups
	partSize
	partDefaultTime
	partMaxTime
	partRoot
	partOversubscribe
	partPreempt
	partTier
	partJobFactor
	partMaxCPUs
)

// sinfoRow is what sinfo's fields print from: a line and the command's
// settings.
type sinfoRow struct {
	*SinfoEntry
	env *SinfoEnv
}

// sinfoAttr is what sinfo alone reads of its fields.
type sinfoAttr struct {
	part partKey
	// partition marks the fields that give every partition its own line.
	partition bool
	// nodeList takes NodeWidth, partitionWidth PartWidth.
	nodeList, partitionWidth bool
	gpu                      bool
}

// sinfoField is one field of sinfo's -o and -O.
type sinfoField = field[sinfoRow, sinfoAttr]

// SinfoFormat is a parsed -o or -O specification.
type SinfoFormat columns[sinfoRow, sinfoAttr]

// ParseSinfoFormat reads an -o specification as sinfo's _parse_format
// (parseShort). "%all" is every field, separated by "|". An unknown letter
// prints as typed, with a warning ("Invalid node format specification: q").
func ParseSinfoFormat(spec string) (SinfoFormat, []string) {
	var warnings []string
	all := strings.EqualFold(spec, "%all")
	if all {
		spec = allSpec(" ")
	}
	f := parseShort(sinfoFields, spec, func(t specToken) bool {
		if !all {
			warnings = append(warnings, "Invalid node format specification: "+string(t.letter))
		}
		return !all
	})
	return SinfoFormat(f), warnings
}

// ParseSinfoLongFormat reads an -O specification as _parse_long_format
// (parseLong). "all" is -o's "%all". An unknown name prints its suffix
// alone, with a warning ("Invalid job format specification: X", sic).
func ParseSinfoLongFormat(spec string) (SinfoFormat, []string) {
	all := func() columns[sinfoRow, sinfoAttr] {
		f, _ := ParseSinfoFormat("%all")
		return columns[sinfoRow, sinfoAttr](f)
	}
	f, unknown := parseLong(sinfoFields, spec, all)
	var warnings []string
	for _, name := range unknown {
		warnings = append(warnings, "Invalid job format specification: "+name)
	}
	return SinfoFormat(f), warnings
}

// ShowsPartition reports whether every partition gets its own line
// (params.match_flags.partition_flag).
func (f SinfoFormat) ShowsPartition() bool {
	return columns[sinfoRow, sinfoAttr](f).uses(func(f *sinfoField) bool { return f.x.partition })
}

// GPUView reports whether the format prints GPU fields, and so one row
// per GPU.
func (f SinfoFormat) GPUView() bool {
	return columns[sinfoRow, sinfoAttr](f).uses(func(f *sinfoField) bool { return f.x.gpu })
}

func (f SinfoFormat) partKeys() []partKey {
	var keys []partKey
	for _, c := range f {
		if c.f != nil && c.f.x.part != partNone {
			keys = append(keys, c.f.x.part)
		}
	}
	return keys
}

// Header is the format's header line, with its newline.
func (f SinfoFormat) Header(env *SinfoEnv) string { return f.sized(env).header() }

// Line is one entry in the format, with its newline.
func (f SinfoFormat) Line(e *SinfoEntry, env *SinfoEnv) string {
	return string(f.sized(env).appendLine(nil, sinfoRow{e, env}))
}

// sized is the format with the widths sinfo computed in env.
func (f SinfoFormat) sized(env *SinfoEnv) columns[sinfoRow, sinfoAttr] {
	cs := columns[sinfoRow, sinfoAttr](f)
	if env.PartWidth <= 0 && env.NodeWidth <= 0 {
		return cs
	}
	cs = slices.Clone(cs)
	for i := range cs {
		c := &cs[i]
		switch {
		case c.f == nil:
		case c.f.x.partitionWidth && env.PartWidth > 0:
			c.width = env.PartWidth
		case c.f.x.nodeList && env.NodeWidth > 0:
			c.width = env.NodeWidth
		}
	}
	return cs
}

// partitionName is %P: the partition's name, the default marked with '*'
// (_print_partition), over the last character when the name fills the
// width.
func partitionName(e sinfoRow, w int) string {
	v := withPart(e.SinfoEntry, func(p *config.Partition) string { return p.PartitionName })
	if e.Part != nil && e.Part.Default {
		if len(v) < w || w == 0 {
			v += "*"
		} else if w > 0 {
			v = v[:w-1] + "*"
		}
	}
	return v
}

// SinfoQuery says which lines sinfo builds.
type SinfoQuery struct {
	// NodeFlag is -N: a line per partition and node.
	NodeFlag bool
	// ListReasons is -R: partitions do not matter.
	ListReasons bool
	// Partitions are the partitions shown, in configuration order.
	Partitions []int
	// NodeShown is false when a filter (-n, -t, -d) took the node away.
	NodeShown bool
}

// BuildSinfo makes sinfo's lines (_build_sinfo_data) for the format.
func BuildSinfo(f SinfoFormat, q SinfoQuery, node *NodeView, cfg *config.Config) []SinfoEntry {
	var out []SinfoEntry
	part := func(i int) *config.Partition { return &cfg.Partitions[i] }
	if !q.NodeFlag && f.ShowsPartition() {
		// By default every partition is shown, even without nodes.
		for _, i := range q.Partitions {
			out = append(out, SinfoEntry{Part: part(i), PartIndex: i})
		}
	}
	if !q.NodeShown {
		return expandGPUs(f, out)
	}
	keys := f.partKeys()
next:
	for _, i := range q.Partitions {
		p := part(i)
		// _insert_node_ptr: the first line whose partition matches
		// (_match_part_data) and whose node matches or is not there yet
		// (_match_node_data: never with -N) takes the node.
		for k := range out {
			e := &out[k]
			if !q.ListReasons && !samePart(e.Part, p, keys) {
				continue
			}
			if e.Node != nil && q.NodeFlag {
				continue
			}
			e.Node = node // a node already in the line is not added twice
			continue next
		}
		out = append(out, SinfoEntry{Part: p, PartIndex: i, Node: node})
	}
	return expandGPUs(f, out)
}

// samePart is _match_part_data for the partition fields the format shows.
func samePart(a, b *config.Partition, keys []partKey) bool {
	if a == b {
		return true
	}
	for _, k := range keys {
		if partValue(a, k) != partValue(b, k) {
			return false
		}
	}
	return true
}

func partValue(p *config.Partition, k partKey) string {
	switch k {
	case partName:
		return p.PartitionName
	case partAvail:
		return p.State
	case partGroups:
		return strings.Join(p.AllowGroups, ",")
	case partDefaultTime:
		return p.DefaultTime.String()
	case partMaxTime:
		return p.MaxTime.String()
	case partPreempt:
		return preemptMode(p)
	case partTier:
		return strconv.Itoa(p.PriorityTier)
	case partJobFactor:
		return strconv.Itoa(p.PriorityJobFactor)
	}
	return "" // the same for every partition here
}

// expandGPUs turns each line with a node into one line per GPU for the
// GPU view.
func expandGPUs(f SinfoFormat, entries []SinfoEntry) []SinfoEntry {
	if !f.GPUView() {
		return entries
	}
	var out []SinfoEntry
	for _, e := range entries {
		if e.Node == nil {
			continue
		}
		for i := range e.Node.GPUs {
			g := e
			g.GPU = &e.Node.GPUs[i]
			out = append(out, g)
		}
	}
	return out
}

// SortSinfo is sort_sinfo_list: the keys of -S (default "#P,-t", or "N"
// with -N) applied from last to first with a stable sort. On one machine
// only the partition's fields tell lines apart; the node's are equal.
func SortSinfo(entries []SinfoEntry, spec string, nodeFlag bool) {
	if spec == "" {
		spec = "#P,-t"
		if nodeFlag {
			spec = "N"
		}
	}
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '#' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		byIndex := i > 0 && spec[i-1] == '#'
		var key func(e *SinfoEntry) (int, string)
		switch c {
		case 'P', 'R':
			key = func(e *SinfoEntry) (int, string) {
				if byIndex {
					return e.PartIndex, ""
				}
				return 0, entryPartName(e)
			}
		case 'a':
			key = func(e *SinfoEntry) (int, string) { return 0, partOr(e, partAvail) }
		case 'l':
			key = func(e *SinfoEntry) (int, string) { return int(partDuration(e, true)), "" }
		case 'L':
			key = func(e *SinfoEntry) (int, string) { return int(partDuration(e, false)), "" }
		case 'p':
			key = func(e *SinfoEntry) (int, string) { return partInt(e, partTier), "" }
		case 'S':
			key = func(e *SinfoEntry) (int, string) { return partInt(e, partJobFactor), "" }
		case 'M':
			key = func(e *SinfoEntry) (int, string) { return 0, partOr(e, partPreempt) }
		case 'g':
			key = func(e *SinfoEntry) (int, string) { return 0, partOr(e, partGroups) }
		case 'D':
			key = func(e *SinfoEntry) (int, string) { return nodesTotal(e), "" }
		default:
			continue
		}
		slices.SortStableFunc(entries, func(a, b SinfoEntry) int {
			an, as := key(&a)
			bn, bs := key(&b)
			d := an - bn
			if d == 0 {
				d = strings.Compare(as, bs)
			}
			if reverse {
				d = -d
			}
			return d
		})
	}
}

func entryPartName(e *SinfoEntry) string {
	if e.Part == nil {
		return ""
	}
	return e.Part.PartitionName
}

func partOr(e *SinfoEntry, k partKey) string {
	if e.Part == nil {
		return ""
	}
	return partValue(e.Part, k)
}

func partInt(e *SinfoEntry, k partKey) int {
	n, _ := strconv.Atoi(partOr(e, k))
	return n
}

func partDuration(e *SinfoEntry, max bool) time.Duration {
	if e.Part == nil {
		return 0
	}
	if max {
		return e.Part.MaxTime
	}
	return e.Part.DefaultTime
}

func nodesTotal(e *SinfoEntry) int {
	if e.Node == nil {
		return 0
	}
	return 1
}

// preemptMode is a partition's PreemptMode as Slurm prints it.
func preemptMode(p *config.Partition) string {
	if p.PreemptMode == "" {
		return config.PreemptModeOff
	}
	return p.PreemptMode
}

// sinfoSecs is sinfo's _print_secs: "1-02:03:04", "2:03:04", "3:04".
func sinfoSecs(d time.Duration) string {
	secs := int64(d / time.Second)
	days, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// num is convert_num_unit of a count without a unit, as sinfo prints
// CPUs and socket counts ("16", "1K" for 1024 with exact conversion).
func num(n int, env *SinfoEnv) string {
	mode := convertExact
	if env.NoConvert {
		mode = convertNo
	}
	return convertNum(float64(n), unitNone, unitNone-1, mode)
}

// Partition-derived values; "n/a" without a partition.
func withPart(e *SinfoEntry, fn func(p *config.Partition) string) string {
	if e.Part == nil {
		return "n/a"
	}
	return fn(e.Part)
}

// Node-derived values; zero without the node (sinfo's zeroed record).
func withNode(e *SinfoEntry, none string, fn func(v *NodeView) string) string {
	if e.Node == nil {
		return none
	}
	return fn(e.Node)
}

func nodeState(e *SinfoEntry, fn func(v *NodeView) string) string {
	if e.Node == nil {
		return "n/a"
	}
	return strings.ToLower(fn(e.Node))
}

var sinfoFields = []*sinfoField{
	{letter: 'a', names: []string{"available"}, header: "AVAIL", x: sinfoAttr{part: partAvail},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string {
				switch p.State {
				case "", config.StateUp:
					return "up"
				case config.StateDown:
					return "down"
				case config.StateDrain:
					return "drain"
				case config.StateInactive:
					return "inactive"
				}
				return "unknown"
			})
		}},
	{letter: 'A', names: []string{"nodeai"}, header: "NODES(A/I)",
		value: func(e sinfoRow) string {
			a, i, _, _ := nodeCounts(e.SinfoEntry)
			return fmt.Sprintf("%d/%d", a, i)
		}},
	{letter: 'b', names: []string{"features_act"}, header: "ACTIVE_FEATURES",
		value: func(e sinfoRow) string { return Null }},
	{letter: 'B', names: []string{"maxcpuspernode"}, header: "MAX_CPUS_PER_NODE", x: sinfoAttr{part: partMaxCPUs},
		value: func(e sinfoRow) string { return "UNLIMITED" }},
	{letter: 'c', names: []string{"cpus"}, header: "CPUS",
		value: func(e sinfoRow) string {
			return num(withNodeInt(e.SinfoEntry, func(v *NodeView) int { return v.CPUs }), e.env)
		}},
	{letter: 'C', names: []string{"cpusstate"}, header: "CPUS(A/I/O/T)",
		value: func(e sinfoRow) string {
			if e.Node == nil {
				return "0/0/0/0"
			}
			v := e.Node
			idle, other := v.CPUs-v.AllocCPU, 0
			if v.Drained {
				idle, other = 0, v.CPUs-v.AllocCPU
			}
			return fmt.Sprintf("%d/%d/%d/%d", v.AllocCPU, idle, other, v.CPUs)
		}},
	{letter: 'd', names: []string{"disk"}, header: "TMP_DISK",
		value: func(e sinfoRow) string { return "0" }},
	{letter: 'D', names: []string{"nodes"}, header: "NODES",
		value: func(e sinfoRow) string { return strconv.Itoa(nodesTotal(e.SinfoEntry)) }},
	{letter: 'e', names: []string{"freemem"}, header: "FREE_MEM",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0", func(v *NodeView) string {
				if v.Host.FreeMem < 0 {
					return "N/A"
				}
				return strconv.FormatInt(v.Host.FreeMem, 10)
			})
		}},
	{letter: 'E', names: []string{"reason"}, header: "REASON",
		value: func(e sinfoRow) string {
			if e.Node == nil || e.Node.Reason == "" {
				return "none"
			}
			return e.Node.Reason
		}},
	{letter: 'f', names: []string{"features"}, header: "AVAIL_FEATURES",
		value: func(e sinfoRow) string { return Null }},
	{letter: 'F', names: []string{"nodeaiot"}, header: "NODES(A/I/O/T)",
		value: func(e sinfoRow) string {
			a, i, o, t := nodeCounts(e.SinfoEntry)
			return fmt.Sprintf("%d/%d/%d/%d", a, i, o, t)
		}},
	{letter: 'g', names: []string{"groups"}, header: "GROUPS", x: sinfoAttr{part: partGroups},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string {
				if len(p.AllowGroups) == 0 {
					return "all"
				}
				return strings.Join(p.AllowGroups, ",")
			})
		}},
	{letter: 'G', names: []string{"gres"}, header: "GRES",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, Null, func(v *NodeView) string { return orNull(v.Gres) })
		}},
	{names: []string{"gresused"}, header: "GRES_USED",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, Null, func(v *NodeView) string { return v.GresUsed() })
		}},
	{letter: 'h', names: []string{"oversubscribe", "share"}, header: "OVERSUBSCRIBE", x: sinfoAttr{part: partOversubscribe},
		value: func(e sinfoRow) string { return "NO" }},
	{letter: 'H', names: []string{"timestamp"}, header: "TIMESTAMP",
		value: func(e sinfoRow) string {
			if e.Node == nil || e.Node.ReasonTime.IsZero() {
				return "Unknown"
			}
			return Time(e.Node.ReasonTime)
		}},
	{letter: 'I', names: []string{"priorityjobfactor"}, header: "PRIO_JOB_FACTOR", x: sinfoAttr{part: partJobFactor},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string { return strconv.Itoa(p.PriorityJobFactor) })
		}},
	{letter: 'l', names: []string{"time"}, header: "TIMELIMIT", x: sinfoAttr{part: partMaxTime},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string {
				if p.MaxTime == slurmsyntax.Infinite {
					return "infinite"
				}
				return sinfoSecs(p.MaxTime)
			})
		}},
	{letter: 'L', names: []string{"defaulttime"}, header: "DEFAULTTIME", x: sinfoAttr{part: partDefaultTime},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string {
				switch p.DefaultTime {
				case 0:
					return "n/a"
				case slurmsyntax.Infinite:
					return "infinite"
				}
				return sinfoSecs(p.DefaultTime)
			})
		}},
	{letter: 'm', names: []string{"memory"}, header: "MEMORY",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0", func(v *NodeView) string { return strconv.FormatInt(v.MemoryMB, 10) })
		}},
	{letter: 'M', names: []string{"preemptmode"}, header: "PREEMPT_MODE", x: sinfoAttr{part: partPreempt},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, preemptMode)
		}},
	{letter: 'n', names: []string{"nodehost"}, header: "HOSTNAMES", headWhole: true, x: sinfoAttr{nodeList: true},
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "", func(v *NodeView) string { return v.Host.Name })
		}},
	{letter: 'N', names: []string{"nodelist"}, header: "NODELIST", headWhole: true, x: sinfoAttr{nodeList: true},
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "", func(v *NodeView) string { return v.Name })
		}},
	{letter: 'o', names: []string{"nodeaddr"}, header: "NODE_ADDR", headWhole: true,
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "", func(v *NodeView) string { return NodeAddr })
		}},
	{letter: 'O', names: []string{"cpusload"}, header: "CPU_LOAD",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0.00", func(v *NodeView) string { return v.cpuLoad() })
		}},
	{letter: 'p', names: []string{"prioritytier"}, header: "PRIO_TIER", x: sinfoAttr{part: partTier},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string { return strconv.Itoa(p.PriorityTier) })
		}},
	{letter: 'P', names: []string{"partition"}, header: "PARTITION", x: sinfoAttr{part: partName, partition: true, partitionWidth: true},
		sized: partitionName},
	{letter: 'r', names: []string{"root"}, header: "ROOT", x: sinfoAttr{part: partRoot},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(*config.Partition) string { return "no" })
		}},
	{letter: 'R', names: []string{"partitionname"}, header: "PARTITION", x: sinfoAttr{part: partName, partition: true},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(p *config.Partition) string { return p.PartitionName })
		}},
	{letter: 's', names: []string{"size"}, header: "JOB_SIZE", x: sinfoAttr{part: partSize},
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(*config.Partition) string { return "1-infinite" })
		}},
	{letter: 'S', names: []string{"allocnodes"}, header: "ALLOCNODES",
		value: func(e sinfoRow) string {
			return withPart(e.SinfoEntry, func(*config.Partition) string { return "all" })
		}},
	{letter: 't', names: []string{"statecompact"}, header: "STATE",
		value: func(e sinfoRow) string { return nodeState(e.SinfoEntry, (*NodeView).StateCompact) }},
	{letter: 'T', names: []string{"statelong"}, header: "STATE",
		value: func(e sinfoRow) string { return nodeState(e.SinfoEntry, (*NodeView).StateLong) }},
	{names: []string{"statecomplete"}, header: "STATECOMPLETE",
		value: func(e sinfoRow) string { return nodeState(e.SinfoEntry, (*NodeView).StateComplete) }},
	{letter: 'u', names: []string{"user"}, header: "USER",
		value: func(e sinfoRow) string { return reasonUser(e.SinfoEntry, false) }},
	{letter: 'U', names: []string{"userlong"}, header: "USER",
		value: func(e sinfoRow) string { return reasonUser(e.SinfoEntry, true) }},
	{letter: 'v', names: []string{"version"}, header: "VERSION",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "N/A", func(*NodeView) string { return NodeVersion })
		}},
	{letter: 'V', names: []string{"cluster"}, header: "CLUSTER",
		value: func(e sinfoRow) string { return "N/A" }},
	{letter: 'w', names: []string{"weight"}, header: "WEIGHT",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0", func(*NodeView) string { return "1" })
		}},
	{letter: 'X', names: []string{"sockets"}, header: "SOCKETS",
		value: func(e sinfoRow) string {
			return num(withNodeInt(e.SinfoEntry, func(*NodeView) int { return 1 }), e.env)
		}},
	{letter: 'Y', names: []string{"cores"}, header: "CORES",
		value: func(e sinfoRow) string {
			return num(withNodeInt(e.SinfoEntry, func(v *NodeView) int { return v.CPUs }), e.env)
		}},
	{letter: 'Z', names: []string{"threads"}, header: "THREADS",
		value: func(e sinfoRow) string {
			return num(withNodeInt(e.SinfoEntry, func(*NodeView) int { return 1 }), e.env)
		}},
	{letter: 'z', names: []string{"socketcorethread"}, header: "S:C:T",
		value: func(e sinfoRow) string {
			one := withNodeInt(e.SinfoEntry, func(*NodeView) int { return 1 })
			return num(one, e.env) + ":" + num(withNodeInt(e.SinfoEntry, func(v *NodeView) int { return v.CPUs }), e.env) + ":" + num(one, e.env)
		}},
	{names: []string{"allocmem"}, header: "ALLOCMEM",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0", func(v *NodeView) string { return strconv.FormatInt(v.AllocMem, 10) })
		}},
	{names: []string{"comment"}, header: "COMMENT",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, Null, func(v *NodeView) string { return orNull(v.Comment) })
		}},
	{names: []string{"extra"}, header: "EXTRA",
		value: func(e sinfoRow) string { return Null }},
	{names: []string{"port"}, header: "PORT",
		value: func(e sinfoRow) string {
			return withNode(e.SinfoEntry, "0", func(*NodeView) string { return "6818" })
		}},
}

func withNodeInt(e *SinfoEntry, fn func(v *NodeView) int) int {
	if e.Node == nil {
		return 0
	}
	return fn(e.Node)
}

// nodeCounts is a line's nodes allocated, idle, other and total
// (_update_sinfo): a drained node is "other" unless jobs run on it.
func nodeCounts(e *SinfoEntry) (alloc, idle, other, total int) {
	if e.Node == nil {
		return 0, 0, 0, 0
	}
	switch v := e.Node; {
	case v.base() != baseIdle:
		return 1, 0, 0, 1
	case v.Drained:
		return 0, 0, 1, 1
	}
	return 0, 1, 0, 1
}

// reasonUser is %u and %U: who set the reason, "Unknown" when nobody did.
// A line without a node has a zeroed record, whose uid 0 is root.
func reasonUser(e *SinfoEntry, long bool) string {
	name, uid := "root", int64(0)
	if e.Node != nil {
		name, uid = e.Node.ReasonUser, e.Node.ReasonUID
	}
	if uid < 0 {
		return "Unknown"
	}
	if long {
		return fmt.Sprintf("%s(%d)", name, uid)
	}
	return name
}
