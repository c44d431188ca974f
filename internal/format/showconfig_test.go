package format

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
)

// configLine finds "Key = value" in scontrol show config's output; "" when
// the key is not printed.
func configValue(out, key string) string {
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, " = ")
		if ok && strings.TrimRight(k, " ") == key {
			return v
		}
	}
	return ""
}

func TestShowConfigValues(t *testing.T) {
	parse := func(extra string) *config.Config {
		cfg, err := config.Parse("test.toml", []byte(extra))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	tests := []struct {
		name string
		conf string
		want map[string]string
	}{
		{"the defaults", "", map[string]string{
			"ClusterName": "lab", "MinJobAge": "300 sec", "KillWait": "30 sec", "MaxArraySize": "1001",
			"PriorityType": "priority/multifactor", "PriorityWeightFairShare": "10000",
			"PriorityDecayHalfLife": "7-00:00:00", "PriorityFlags": "", "PreemptMode": "OFF",
			"SchedulerParameters": "(null)", "AccountingStorageEnforce": "associations,limits,qos",
			"DefMemPerNode": "UNLIMITED", "DefMemPerCPU": "", "EnforcePartLimits": "ALL"}},
		{"DefMemPerCPU in megabytes, as golden/scontrol_show_config.txt", `DefMemPerCPU = 1000`, map[string]string{
			"DefMemPerCPU": "1000", "DefMemPerNode": ""}},
		{"DefMemPerNode", `DefMemPerNode = "8G"`, map[string]string{"DefMemPerCPU": "", "DefMemPerNode": "8192"}},
		{"EnforcePartLimits as slurmctld prints it", `EnforcePartLimits = "YES"`, map[string]string{"EnforcePartLimits": "ANY"}},
		{"EnforcePartLimits off", `EnforcePartLimits = "NO"`, map[string]string{"EnforcePartLimits": "NO"}},
		{"settings of the file", `
ClusterName = "vision"
MinJobAge = 60
AllowUnlistedUsers = true
[SchedulerParameters]
bf_window = 2880
[Priority]
Flags = ["MAX_TRES", "NO_FAIR_TREE", "NO_NORMAL_QOS"]
[[Partition]]
PartitionName = "gpu"
Default = true
[[Partition]]
PartitionName = "filler"
PreemptMode = "REQUEUE"
PriorityTier = 0
`, map[string]string{
			"ClusterName": "vision", "MinJobAge": "60 sec", "AccountingStorageEnforce": "limits,qos",
			"SchedulerParameters": "bf_window=2880", "PriorityFlags": "NO_FAIR_TREE,MAX_TRES,NO_NORMAL_ALL",
			"PreemptMode": "REQUEUE"}},
		{"priority/basic leaves out the multifactor lines", `PriorityType = "priority/basic"`, map[string]string{
			"PriorityType": "priority/basic", "PriorityWeightAge": "", "PriorityMaxAge": ""}},
		{"partitions preempting in different ways: OFF", `
[[Partition]]
PartitionName = "a"
Default = true
PreemptMode = "CANCEL"
[[Partition]]
PartitionName = "b"
PreemptMode = "REQUEUE"
`, map[string]string{"PreemptMode": "OFF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ShowConfig(&ConfigView{Config: parse(tt.conf), Now: time.Now(), Host: "vm", DaemonUser: "root(0)"})
			got := map[string]string{}
			for k := range tt.want {
				got[k] = configValue(out, k)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if !strings.HasSuffix(out, "X11Parameters           = (null)\n\nSlurmctld(primary) at vm is UP\n") {
				t.Errorf("the output does not end as Slurm's: %q", out[len(out)-80:])
			}
		})
	}
}

func TestBillingWeights(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"GPU-seconds", "GRES/gpu=1.0", "GRES/gpu=1"},
		{"memory per GiB, in slurm.conf's order", "GRES/gpu=2,Mem=0.25G,CPU=0.5", "CPU=0.5,Mem=0.25G,GRES/gpu=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := config.ParseTRESWeights(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := billingWeights(w); got != tt.want {
				t.Errorf("billingWeights(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestShowPartition(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte(`
TRESBillingWeights = "GRES/gpu=1.0"
[[Partition]]
PartitionName = "short"
Default       = true
MaxTime       = "1:00:00"
DefaultTime   = "30"
Hidden        = true
AllowGroups   = ["lab", "ops"]
QOS           = "fast"
GraceTime     = 120
[[QOS]]
Name = "fast"
`))
	if err != nil {
		t.Fatal(err)
	}
	got := ShowPartition(&cfg.Partitions[0], PartitionNode{Name: "gpu01", CPUs: 32, MemoryMB: 262144, GPUs: 8}, false)
	want := `PartitionName=short
   AllowGroups=lab,ops AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=fast
   DefaultTime=00:30:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=120 Hidden=YES
   MaxNodes=UNLIMITED MaxTime=01:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=gpu01
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=32 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=32,mem=256G,node=1,billing=8,gres/gpu=8
   TRESBillingWeights=GRES/gpu=1

`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ShowPartition (-want +got):\n%s", diff)
	}
}

// Where the daemon cannot enforce --mem, scontrol show config says so in
// a block of slurm-lite's own keys after Slurm's lines; where it can, or
// where the daemon does not say, the output is Slurm's alone.
func TestShowConfigSaysWhenMemIsNotEnforced(t *testing.T) {
	cfg, err := config.Parse("test.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	slurms := "X11Parameters           = (null)\n\nSlurmctld(primary) at vm is UP\n"
	tests := []struct {
		name    string
		cgroups *api.Cgroups
		wantEnd string
	}{
		{"a daemon that does not say", nil, slurms},
		{"memory enforced", &api.Cgroups{Base: "/sys/fs/cgroup/system.slice/slurmd-lite.service", Memory: true,
			Controllers: []string{"memory", "pids"}}, slurms},
		{"memory not enforced", &api.Cgroups{Base: "/sys/fs/cgroup/unified", Problem: "the memory controller is cgroup v1's",
			Fix: "boot with cgroup v2 alone"}, `X11Parameters           = (null)

Cgroup Support Configuration (slurm-lite's own keys, not Slurm's):
JobCgroupParent         = /sys/fs/cgroup/unified
MemoryEnforced          = no: --mem, --mem-per-cpu and --mem-per-gpu are not enforced: the memory controller is cgroup v1's
MemoryEnforcedFix       = boot with cgroup v2 alone

Slurmctld(primary) at vm is UP
`},
		{"no cgroups at all", &api.Cgroups{Problem: "no cgroup v2 hierarchy is mounted", Fix: "boot with cgroup v2"}, `X11Parameters           = (null)

Cgroup Support Configuration (slurm-lite's own keys, not Slurm's):
JobCgroupParent         = (none: jobs get no cgroup)
MemoryEnforced          = no: --mem, --mem-per-cpu and --mem-per-gpu are not enforced: no cgroup v2 hierarchy is mounted
MemoryEnforcedFix       = boot with cgroup v2

Slurmctld(primary) at vm is UP
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ShowConfig(&ConfigView{Config: cfg, Now: time.Now(), Host: "vm", DaemonUser: "root(0)", Cgroups: tt.cgroups})
			if !strings.HasSuffix(out, tt.wantEnd) {
				t.Errorf("the output ends\n%s\nwant\n%s", out[strings.LastIndex(out, "WaitTime"):], tt.wantEnd)
			}
		})
	}
}
