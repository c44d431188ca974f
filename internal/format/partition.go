package format

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// PartitionNode is what a partition's record says of its node.
type PartitionNode struct {
	Name     string
	CPUs     int
	MemoryMB int64
	GPUs     int
}

// ShowPartition is slurm_sprint_partition_info: scontrol show
// partition's record of one partition (oneLiner: on one line).
// Fields for what a single machine does not have (alternate partitions,
// CPU binding, node sets, power saving) print as Slurm prints them unset.
func ShowPartition(p *config.Partition, n PartitionNode, oneLiner bool) string {
	end := "\n   "
	if oneLiner {
		end = " "
	}
	var b strings.Builder
	b.WriteString("PartitionName=" + p.PartitionName + end)
	b.WriteString("AllowGroups=" + listOr(p.AllowGroups, "ALL"))
	b.WriteString(" AllowAccounts=" + listOr(p.AllowAccounts, "ALL"))
	b.WriteString(" AllowQos=ALL" + end)
	b.WriteString("AllocNodes=ALL Default=" + yesNo(p.Default))
	qos := p.QOS
	if qos == "" {
		qos = "N/A"
	}
	b.WriteString(" QoS=" + qos + end)
	switch p.DefaultTime {
	case 0:
		b.WriteString("DefaultTime=NONE")
	case slurmsyntax.Infinite:
		b.WriteString("DefaultTime=UNLIMITED")
	default:
		b.WriteString("DefaultTime=" + slurmsyntax.FormatClock(p.DefaultTime))
	}
	b.WriteString(" DisableRootJobs=NO ExclusiveUser=NO")
	b.WriteString(" GraceTime=" + strconv.FormatInt(int64(p.GraceTime.Seconds()), 10))
	b.WriteString(" Hidden=" + yesNo(p.Hidden) + end)
	b.WriteString("MaxNodes=UNLIMITED MaxTime=" + slurmsyntax.FormatClock(p.MaxTime))
	b.WriteString(" MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED" + end)
	b.WriteString("Nodes=" + n.Name + end)
	b.WriteString("PriorityJobFactor=" + strconv.Itoa(p.PriorityJobFactor))
	b.WriteString(" PriorityTier=" + strconv.Itoa(p.PriorityTier))
	b.WriteString(" RootOnly=NO ReqResv=NO OverSubscribe=NO" + end)
	b.WriteString("OverTimeLimit=NONE PreemptMode=" + preemptMode(p) + end)
	state := p.State
	if state == "" {
		state = config.StateUp
	}
	b.WriteString("State=" + state + " TotalCPUs=" + strconv.Itoa(n.CPUs) + " TotalNodes=1 SelectTypeParameters=NONE" + end)
	b.WriteString("JobDefaults=(null)" + end)
	b.WriteString("DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED" + end)
	b.WriteString("TRES=" + partitionTRES(p, n))
	if len(p.TRESBillingWeights) > 0 {
		b.WriteString(end + "TRESBillingWeights=" + billingWeights(p.TRESBillingWeights))
	}
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ",")
}

// partitionTRES is the partition's TRES: its node's, with billing under
// the partition's weights.
func partitionTRES(p *config.Partition, n PartitionNode) string {
	parts := []string{"cpu=" + strconv.Itoa(n.CPUs)}
	if n.MemoryMB > 0 {
		parts = append(parts, "mem="+mebi(uint64(n.MemoryMB), false))
	}
	bill := billingOf(p.TRESBillingWeights, n.CPUs, n.MemoryMB, n.GPUs)
	parts = append(parts, "node=1", "billing="+strconv.FormatInt(int64(math.Round(bill)), 10))
	if n.GPUs > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(n.GPUs))
	}
	return strings.Join(parts, ",")
}

// billingWeights prints TRESBillingWeights as slurm.conf writes them:
// "CPU=0,Mem=0.25G,GRES/gpu=1" (memory per GiB).
func billingWeights(w config.TRESWeights) string {
	order := []string{"cpu", "mem", "node", "billing", "gres/gpu", "gres/shard"}
	var parts []string
	add := func(k string, v float64) {
		name := k
		switch {
		case k == "cpu":
			name = "CPU"
		case k == "mem":
			name = "Mem"
		case strings.HasPrefix(k, "gres/"):
			name = "GRES/" + strings.TrimPrefix(k, "gres/")
		}
		val := strconv.FormatFloat(v, 'f', -1, 64)
		if k == "mem" && v != 0 {
			val = strconv.FormatFloat(v*1024, 'f', -1, 64) + "G"
		}
		parts = append(parts, name+"="+val)
	}
	for _, k := range order {
		if v, ok := w[k]; ok {
			add(k, v)
		}
	}
	var rest []string
	for k := range w {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k, w[k])
	}
	return strings.Join(parts, ",")
}
