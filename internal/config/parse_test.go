package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// goldenCluster is the recorded Slurm cluster (shared/golden/README.md) in
// slurm-lite's terms.
const goldenCluster = `
ClusterName = "anchor"
KillWait = 30
MinJobAge = 300
MaxJobCount = 10000
SchedulerType = "sched/backfill"
PriorityType = "priority/multifactor"
PreemptType = "preempt/partition_prio"
TRESBillingWeights = ""

[Node]
NodeName = "gpu01"
CPUs = 16
RealMemory = 64000
GPUs = "simulated"
[[Node.SimulatedGPU]]
Type = "a100"
Memory = "80G"
Count = 4

[Priority]
DecayHalfLife = "7-0"
MaxAge = "7-0"
WeightFairshare = 10000
WeightAge = 1000
WeightPartition = 1000
WeightJobSize = 0
WeightQOS = 0

[[Partition]]
PartitionName = "gpu"
Default = true
MaxTime = "INFINITE"
PriorityTier = 1
PreemptMode = "REQUEUE"

[[Partition]]
PartitionName = "scavenger"
MaxTime = "INFINITE"
PriorityTier = 0
PreemptMode = "REQUEUE"

[[Account]]
Name = "lab"
Users = ["bob", "root"]

[[User]]
Name = "alice"
Account = "lab"
Shares = 2

[[User]]
Name = "root"
Account = "root"
`

// cfg builds a want value: the defaults, changed by edit.
func cfg(edit func(c *Config)) *Config {
	c := Default()
	edit(c)
	return c
}

func partition(name string, edit func(p *Partition)) Partition {
	p := Partition{PartitionName: name, TRESBillingWeights: TRESWeights{"gres/gpu": 1}}
	p.setDefaults()
	edit(&p)
	return p
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		file string
		want *Config
	}{
		{"an empty file is the defaults", "", Default()},
		{"comments only are the defaults", "# nothing here\n\n", Default()},
		{
			"the recorded golden cluster",
			goldenCluster,
			cfg(func(c *Config) {
				c.ClusterName = "anchor"
				c.TRESBillingWeights = TRESWeights{}
				c.Node = Node{NodeName: "gpu01", CPUs: 16, RealMemory: 64000 * slurmsyntax.MiB, GPUs: GPUsSimulated,
					SimulatedGPUs: []SimulatedGPU{{Type: "a100", Memory: 80 * slurmsyntax.GiB, Count: 4}}}
				c.Partitions = []Partition{
					partition("gpu", func(p *Partition) {
						p.Default, p.PreemptMode, p.TRESBillingWeights = true, PreemptModeRequeue, TRESWeights{}
					}),
					partition("scavenger", func(p *Partition) {
						p.PriorityTier, p.PreemptMode, p.TRESBillingWeights = 0, PreemptModeRequeue, TRESWeights{}
					}),
				}
				c.Accounts = []Account{{Name: "lab", Parent: RootAccount, Shares: 1, Users: []string{"bob", "root"}}}
				c.Users = []User{
					{Name: "alice", Account: "lab", Shares: 2, DefaultAccount: "lab", AdminLevel: AdminNone},
					{Name: "root", Account: "root", Shares: 1, DefaultAccount: "root", AdminLevel: AdminNone},
					{Name: "bob", Account: "lab", Shares: 1, DefaultAccount: "lab", AdminLevel: AdminNone},
					{Name: "root", Account: "lab", Shares: 1, DefaultAccount: "root", AdminLevel: AdminNone},
				}
			}),
		},
		{
			"enumerated values are taken in any case and written canonically",
			lines(`[Node]`, `GPUs = "None"`, `[Priority]`, `UsageResetPeriod = "daily"`, `Flags = ["no_fair_tree"]`,
				`[[Partition]]`, `PartitionName = "gpu"`, `PreemptMode = "requeue"`, `State = "drain"`,
				`[[QOS]]`, `Name = "normal"`, `Flags = ["denyonlimit"]`,
				`[[User]]`, `Name = "ops"`, `Account = "root"`, `AdminLevel = "admin"`),
			cfg(func(c *Config) {
				c.Node.GPUs = GPUsNone
				c.Priority.UsageResetPeriod = "DAILY"
				c.Priority.Flags = []string{"NO_FAIR_TREE"}
				c.Partitions = []Partition{partition("gpu", func(p *Partition) {
					p.Default, p.PreemptMode, p.State = true, PreemptModeRequeue, StateDrain
				})}
				c.QOS = []QOS{{Name: "normal", UsageFactor: 1, Flags: []string{"DenyOnLimit"}}}
				c.Users = []User{{Name: "ops", Account: "root", Shares: 1, DefaultAccount: "root", AdminLevel: AdminAdministrator}}
			}),
		},
		{
			"times in every form: minutes as a number, words, zero",
			lines(`IdleGPUTimeout = 45`, `[Priority]`, `DecayHalfLife = 0`, `UsageResetPeriod = "WEEKLY"`, `MaxAge = "1-12"`,
				`[[Partition]]`, `PartitionName = "short"`, `MaxTime = 120`, `DefaultTime = "0:30"`,
				`[[Partition]]`, `PartitionName = "long"`, `Default = true`, `MaxTime = "-1"`, `DefaultTime = "1:00:01"`,
				`[[QOS]]`, `Name = "q"`, `MaxWall = "unlimited"`),
			cfg(func(c *Config) {
				c.IdleGPUTimeout = 45 * time.Minute
				c.Priority.DecayHalfLife = 0
				c.Priority.UsageResetPeriod = "WEEKLY"
				c.Priority.MaxAge = 36 * time.Hour
				c.Partitions = []Partition{
					partition("short", func(p *Partition) { p.MaxTime, p.DefaultTime = 2*time.Hour, time.Minute }),
					// Seconds round up to the minute, as Slurm's time_str2mins.
					partition("long", func(p *Partition) { p.Default, p.DefaultTime = true, 61*time.Minute }),
				}
				c.QOS = []QOS{{Name: "q", UsageFactor: 1, MaxWall: slurmsyntax.Infinite}, {Name: "normal", UsageFactor: 1}}
			}),
		},
		{
			"slurm-lite's own times keep their seconds: a yield's cost and minimum run, a route's limit",
			lines(`[Yield]`, `Shrink = true`, `Cost = "0:00:05"`, `MinRun = "0:07"`,
				`[[Partition]]`, `PartitionName = "gpu"`, `Default = true`,
				`[[Partition]]`, `PartitionName = "short"`,
				`[[Route]]`, `MaxTime = "0:30"`, `Partition = "short"`),
			cfg(func(c *Config) {
				c.Yield.Shrink, c.Yield.Cost, c.Yield.MinRun = true, 5*time.Second, 7*time.Second
				c.Partitions = []Partition{
					partition("gpu", func(p *Partition) { p.Default = true }),
					partition("short", func(p *Partition) {}),
				}
				c.Routes = []Route{{MaxTime: 30 * time.Second, Partition: "short"}}
			}),
		},
		{
			"a lone unmarked partition is the default",
			lines(`[[Partition]]`, `PartitionName = "all"`),
			cfg(func(c *Config) {
				c.Partitions = []Partition{partition("all", func(p *Partition) { p.Default = true })}
			}),
		},
		{
			"partitions inherit the top-level billing weights unless they set their own",
			lines(`TRESBillingWeights = "CPU=0.5,GRES/gpu=2"`,
				`[[Partition]]`, `PartitionName = "a"`, `Default = true`,
				`[[Partition]]`, `PartitionName = "b"`, `TRESBillingWeights = ""`,
				`[[Partition]]`, `PartitionName = "c"`, `TRESBillingWeights = "mem=0.25G"`),
			cfg(func(c *Config) {
				c.TRESBillingWeights = TRESWeights{"cpu": 0.5, "gres/gpu": 2}
				c.Partitions = []Partition{
					partition("a", func(p *Partition) { p.Default, p.TRESBillingWeights = true, TRESWeights{"cpu": 0.5, "gres/gpu": 2} }),
					partition("b", func(p *Partition) { p.TRESBillingWeights = TRESWeights{} }),
					partition("c", func(p *Partition) { p.TRESBillingWeights = TRESWeights{"mem": 0.25 / 1024} }),
				}
			}),
		},
		{
			"the built-in partition takes a changed top-level weight too",
			lines(`TRESBillingWeights = "cpu=1"`),
			cfg(func(c *Config) {
				c.TRESBillingWeights = TRESWeights{"cpu": 1}
				c.Partitions[0].TRESBillingWeights = TRESWeights{"cpu": 1}
			}),
		},
		{
			`a QOS list without "normal" keeps it`,
			lines(`[[QOS]]`, `Name = "high"`, `Priority = 100`, `MaxTRESPerUser = "gres/gpu=8,mem=64G"`, `UsageFactor = 2`),
			cfg(func(c *Config) {
				c.QOS = []QOS{
					{Name: "high", Priority: 100, MaxTRESPerUser: TRES{"gres/gpu": 8, "mem": 65536}, UsageFactor: 2},
					{Name: "normal", UsageFactor: 1},
				}
			}),
		},
		{
			`AllowAccounts and AllowGroups of ["ALL"] mean everyone`,
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `AllowAccounts = ["ALL"]`, `AllowGroups = ["all"]`),
			cfg(func(c *Config) {
				c.Partitions = []Partition{partition("gpu", func(p *Partition) { p.Default = true })}
			}),
		},
		{
			"AllowAccounts may name the implicit account when no accounts are configured",
			lines(`ClusterName = "box"`, `[[Partition]]`, `PartitionName = "gpu"`, `AllowAccounts = ["box"]`),
			cfg(func(c *Config) {
				c.ClusterName = "box"
				c.Partitions = []Partition{partition("gpu", func(p *Partition) { p.Default, p.AllowAccounts = true, []string{"box"} })}
			}),
		},
		{
			"simulated GPUs as an inline array, Count defaulting to 1, sizes in megabytes",
			lines(`ShardSize = 512`, `[Node]`, `GPUs = "simulated"`,
				`SimulatedGPU = [{ Type = "a100", Memory = "80G" }, { Type = "t4", Memory = 15360, Count = 2 }]`,
				`TypeAliases = { a100 = "NVIDIA A100-SXM4-80GB" }`),
			cfg(func(c *Config) {
				c.ShardSize = 512 * slurmsyntax.MiB
				c.Node.GPUs = GPUsSimulated
				c.Node.SimulatedGPUs = []SimulatedGPU{{Type: "a100", Memory: 80 * slurmsyntax.GiB, Count: 1}, {Type: "t4", Memory: 15 * slurmsyntax.GiB, Count: 2}}
				c.Node.TypeAliases = map[string]string{"a100": "NVIDIA A100-SXM4-80GB"}
			}),
		},
		{
			"a user in two accounts gets one default account and admin level on both entries",
			lines(`[[Account]]`, `Name = "lab"`, `[[Account]]`, `Name = "phys"`, `Parent = "lab"`, `Shares = 3`,
				`[[User]]`, `Name = "alice"`, `Account = "lab"`,
				`[[User]]`, `Name = "alice"`, `Account = "phys"`, `DefaultAccount = "phys"`, `AdminLevel = "Operator"`, `QOS = ["normal"]`),
			cfg(func(c *Config) {
				c.Accounts = []Account{{Name: "lab", Parent: RootAccount, Shares: 1}, {Name: "phys", Parent: "lab", Shares: 3}}
				c.Users = []User{
					{Name: "alice", Account: "lab", Shares: 1, DefaultAccount: "phys", AdminLevel: AdminOperator},
					{Name: "alice", Account: "phys", Shares: 1, DefaultAccount: "phys", AdminLevel: AdminOperator, QOS: []string{"normal"}},
				}
			}),
		},
		{
			"MaxJobCountPerUser as a bare count, a quoted count and a percentage",
			lines(`MaxJobCount = 200`, `MaxJobCountPerUser = 80`),
			cfg(func(c *Config) { c.MaxJobCount, c.MaxJobCountPerUser = 200, "80" }),
		},
		{
			"MaxJobCountPerUser as a percentage, spaces allowed",
			lines(`MaxJobCountPerUser = " 25 %"`),
			cfg(func(c *Config) { c.MaxJobCountPerUser = "25%" }),
		},
		{
			"MaxJobCountPerUser 0 is no limit",
			lines(`MaxJobCountPerUser = "0"`),
			cfg(func(c *Config) { c.MaxJobCountPerUser = "0" }),
		},
		{
			"scheduler parameters and top-level numbers",
			lines(`MaxArraySize = 0`, `MinJobAge = 0`, `KillWait = 0`, `CheckpointDir = "/ckpt/%u/%A_%4a/%j"`,
				`[SchedulerParameters]`, `bf_window = 2880`, `bf_resolution = 120`, `bf_continue = false`, `default_queue_depth = 100`),
			cfg(func(c *Config) {
				c.MaxArraySize, c.MinJobAge, c.KillWait = 0, 0, 0
				c.CheckpointDir = "/ckpt/%u/%A_%4a/%j"
				c.SchedulerParameters.BFWindow = 2880 * time.Minute
				c.SchedulerParameters.BFResolution = 120 * time.Second
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("slurm-lite.toml", []byte(tt.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultIsValid(t *testing.T) {
	p := &parser{file: "(defaults)", lines: lineIndex{}, given: map[string]bool{}}
	c := Default()
	p.check(c)
	if len(p.errs) > 0 {
		t.Fatalf("Default() fails its own checks:\n%v", p.errs)
	}
	if diff := cmp.Diff(Default(), c); diff != "" {
		t.Errorf("checking Default() changed it (-want +got):\n%s", diff)
	}
}

func TestDefaultIsAWorkingSingleMachine(t *testing.T) {
	c := Default()
	c.ApplyHost(Host{Name: "box", CPUs: 8, Memory: 32 * slurmsyntax.GiB})
	got := struct {
		Cluster, Partition, GPUs, Node string
		MaxTime, DefaultLimit          time.Duration
		Tier                           int
		Preempt                        string
		CPUs                           int
		Memory                         slurmsyntax.Bytes
		Accounts                       []string
		AnyoneMayRun                   bool
		NormalHasNoLimits              bool
	}{
		Cluster: c.ClusterName, Partition: c.DefaultPartition().PartitionName, GPUs: c.Node.GPUs, Node: c.Node.NodeName,
		MaxTime: c.DefaultPartition().MaxTime, DefaultLimit: c.DefaultPartition().DefaultLimit(),
		Tier: c.DefaultPartition().PriorityTier, Preempt: c.DefaultPartition().PreemptMode,
		CPUs: c.Node.CPUs, Memory: c.Node.RealMemory,
	}
	got.Accounts, got.AnyoneMayRun = c.UserAccounts("someone")
	n := c.QOSByName(DefaultQOS)
	got.NormalHasNoLimits = n != nil && cmp.Equal(*n, QOS{Name: DefaultQOS, UsageFactor: 1})
	want := got
	want.Cluster, want.Partition, want.GPUs, want.Node = "lab", "gpu", GPUsNVML, "box"
	want.MaxTime, want.DefaultLimit, want.Tier, want.Preempt = slurmsyntax.Infinite, slurmsyntax.Infinite, 1, PreemptModeOff
	want.CPUs, want.Memory = 8, 32*slurmsyntax.GiB
	want.Accounts, want.AnyoneMayRun, want.NormalHasNoLimits = []string{"lab"}, true, true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestApplyHostKeepsWhatTheFileSays(t *testing.T) {
	c, err := Parse("f.toml", []byte(lines(`[Node]`, `NodeName = "gpu01"`, `RealMemory = "16G"`)))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyHost(Host{Name: "vm", CPUs: 4, Memory: 64 * slurmsyntax.GiB})
	want := Node{NodeName: "gpu01", CPUs: 4, RealMemory: 16 * slurmsyntax.GiB, GPUs: GPUsNVML}
	if diff := cmp.Diff(want, c.Node, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("node (-want +got):\n%s", diff)
	}
}

func TestParseDoesNotShareDefaults(t *testing.T) {
	a, err := Parse("a.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Partitions[0].TRESBillingWeights["cpu"] = 9
	a.TRESBillingWeights["mem"] = 9
	if diff := cmp.Diff(Default(), mustParse(t, "")); diff != "" {
		t.Errorf("changing one parsed config changed the next (-want +got):\n%s", diff)
	}
	if _, ok := a.TRESBillingWeights["cpu"]; ok {
		t.Errorf("a partition's weights share the top-level map")
	}
}

func mustParse(t *testing.T, file string) *Config {
	t.Helper()
	c, err := Parse("slurm-lite.toml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
