package export

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

const gib = uint64(slurmtime.GiB)

// host is the machine the tests pretend to run on.
var host = config.Host{Name: "box", CPUs: 8, Memory: 32 * slurmtime.GiB}

// twoTypes is a configuration with simulated GPUs of two types and shards
// of 2 GiB, as scripts/test-slurm uses against real Slurm.
const twoTypes = `
ClusterName = "exporttest"
KillWait = 20
ShardSize = "2G"
[Node]
NodeName = "gpu01"
CPUs = 16
RealMemory = "64G"
GPUs = "simulated"
[[Node.SimulatedGPU]]
Type = "a100"
Memory = "40G"
Count = 2
[[Node.SimulatedGPU]]
Type = "l4"
Memory = "24G"
Count = 2
[Priority]
WeightFairshare = 54321
[[Partition]]
PartitionName = "gpu"
Default = true
PriorityTier = 2
[[Partition]]
PartitionName = "scavenger"
PriorityTier = 0
PreemptMode = "REQUEUE"
GraceTime = 45
`

func parsed(t *testing.T, name, text string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(name, []byte(text))
	if err != nil {
		t.Fatalf("config %s: %v", name, err)
	}
	cfg.ApplyHost(host)
	return cfg
}

func loaded(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("config %s: %v", path, err)
	}
	cfg.ApplyHost(host)
	return cfg
}

func defaults() *config.Config {
	cfg := config.Default()
	cfg.ApplyHost(host)
	return cfg
}

// simulatedGPUs reads the configuration's GPUs as Main does, through the
// inventory.
func simulatedGPUs(t *testing.T, cfg *config.Config) ([]GPU, string) {
	t.Helper()
	gpus, note, err := machineGPUs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return gpus, note
}

func fourA100() []GPU {
	var gs []GPU
	for i := range 4 {
		gs = append(gs, GPU{Type: "a100", Memory: 80 * gib, Minor: i})
	}
	return gs
}

// generated runs Generate and parses slurm.conf and gres.conf back.
func generated(t *testing.T, cfg *config.Config, in Input) (files map[string]string, conf, gres slurmConf) {
	t.Helper()
	out, err := Generate(cfg, in)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	files = map[string]string{}
	for _, f := range out {
		files[f.Name] = string(f.Data)
	}
	if conf, err = parseConf(files[SlurmConf]); err != nil {
		t.Fatalf("slurm.conf: %v\n%s", err, files[SlurmConf])
	}
	if gres, err = parseConf(files[GresConf]); err != nil {
		t.Fatalf("gres.conf: %v\n%s", err, files[GresConf])
	}
	return files, conf, gres
}

func TestSlurmConf(t *testing.T) {
	tests := []struct {
		name       string
		cfg        func(t *testing.T) *config.Config
		in         func(t *testing.T, cfg *config.Config) Input
		globals    map[string]string
		node       map[string]string
		partitions []map[string]string
		gres       []string // gres.conf's setting lines
	}{
		{
			name: "the built-in defaults on a machine without a driver: no Gres, AutoDetect=nvml, one partition",
			cfg:  func(*testing.T) *config.Config { return defaults() },
			in: func(*testing.T, *config.Config) Input {
				return Input{GPUNote: "no NVIDIA driver: running without GPUs"}
			},
			globals: map[string]string{
				"ClusterName": "lab", "SlurmctldHost": "box", "AccountingStorageHost": "box",
				"PriorityType": "priority/multifactor", "PriorityWeightFairshare": "10000",
				"PriorityWeightAge": "1000", "PriorityWeightPartition": "1000",
				"PriorityDecayHalfLife": "7-00:00:00", "PriorityMaxAge": "7-00:00:00",
				"PreemptType": "preempt/partition_prio", "PreemptMode": "OFF",
				"SchedulerType": "sched/backfill", "SelectType": "select/cons_tres",
				"KillWait": "30", "MinJobAge": "300", "MaxArraySize": "1001",
				"AccountingStorageType":    "accounting_storage/slurmdbd",
				"AccountingStorageEnforce": "associations,limits,qos",
				"AccountingStorageTRES":    "gres/gpu,gres/shard", "GresTypes": "gpu,shard",
				"DefMemPerCPU": "4096",
			},
			node: map[string]string{"NodeName": "box", "CPUs": "8", "RealMemory": "32768", "State": "UNKNOWN"},
			partitions: []map[string]string{{
				"PartitionName": "gpu", "Nodes": "box", "Default": "YES", "MaxTime": "UNLIMITED",
				"PriorityTier": "1", "PreemptMode": "OFF", "State": "UP", "TRESBillingWeights": "GRES/gpu=1",
			}},
			gres: []string{"AutoDetect=nvml"},
		},
		{
			name: "examples/slurm-lite.toml with four A100s: its weights, QOS partition, a filler whose grace becomes KillWait",
			cfg:  func(t *testing.T) *config.Config { return loaded(t, "../../examples/slurm-lite.toml") },
			in: func(*testing.T, *config.Config) Input {
				return Input{ConfigPath: "/etc/slurm-lite/slurm-lite.toml", GPUs: fourA100()}
			},
			globals: map[string]string{
				"ClusterName": "lab", "SlurmctldHost": "gpu01",
				"PriorityWeightFairshare": "10000", "PriorityWeightAge": "1000",
				"PriorityWeightTRES": "GRES/gpu=1000", "PriorityFlags": "SMALL_RELATIVE_TO_TIME",
				"PriorityCalcPeriod": "00:05:00", "PriorityUsageResetPeriod": "NONE",
				"PreemptType": "preempt/partition_prio", "PreemptMode": "REQUEUE",
				"SchedulerParameters": "bf_window=1440,bf_max_job_test=500,bf_resolution=60,bf_interval=30,default_queue_depth=100",
				"KillWait":            "120", "MaxJobCount": "10000", "DefMemPerCPU": "8192",
			},
			node: map[string]string{"NodeName": "gpu01", "CPUs": "32", "RealMemory": "262144", "Gres": "gpu:a100:4,shard:320"},
			partitions: []map[string]string{{
				"PartitionName": "gpu", "Nodes": "gpu01", "Default": "YES", "MaxTime": "2-00:00:00",
				"DefaultTime": "01:00:00", "PriorityTier": "1", "PriorityJobFactor": "1", "PreemptMode": "OFF",
				"State": "UP", "AllowAccounts": "lab", "QOS": "normal",
				"TRESBillingWeights": "CPU=0,Mem=0,GRES/gpu=1",
			}, {
				"PartitionName": "scavenger", "Nodes": "gpu01", "MaxTime": "UNLIMITED", "PriorityTier": "0",
				"PriorityJobFactor": "1", "PreemptMode": "REQUEUE", "GraceTime": "0", "State": "UP",
				"TRESBillingWeights": "CPU=0,Mem=0,GRES/gpu=1",
			}},
			gres: []string{
				"AutoDetect=off",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia0",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia1",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia2",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia3",
				"NodeName=gpu01 Name=shard Count=80 File=/dev/nvidia0",
				"NodeName=gpu01 Name=shard Count=80 File=/dev/nvidia1",
				"NodeName=gpu01 Name=shard Count=80 File=/dev/nvidia2",
				"NodeName=gpu01 Name=shard Count=80 File=/dev/nvidia3",
			},
		},
		{
			name: "simulated GPUs of two types read through the inventory: both types, 2G shards per GPU",
			cfg:  func(t *testing.T) *config.Config { return parsed(t, "two.toml", twoTypes) },
			in: func(t *testing.T, cfg *config.Config) Input {
				gpus, note := simulatedGPUs(t, cfg)
				return Input{ConfigPath: "/tmp/two.toml", GPUs: gpus, GPUNote: note}
			},
			globals: map[string]string{
				"ClusterName": "exporttest", "PriorityWeightFairshare": "54321",
				"PreemptMode": "REQUEUE", "KillWait": "45", "DefMemPerCPU": "4096",
			},
			node: map[string]string{"NodeName": "gpu01", "CPUs": "16", "RealMemory": "65536", "Gres": "gpu:a100:2,gpu:l4:2,shard:64"},
			partitions: []map[string]string{
				{"PartitionName": "gpu", "Default": "YES", "PriorityTier": "2", "PreemptMode": "OFF"},
				{"PartitionName": "scavenger", "PriorityTier": "0", "PreemptMode": "REQUEUE", "GraceTime": "0"},
			},
			gres: []string{
				"AutoDetect=off",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia0",
				"NodeName=gpu01 Name=gpu Type=a100 File=/dev/nvidia1",
				"NodeName=gpu01 Name=gpu Type=l4 File=/dev/nvidia2",
				"NodeName=gpu01 Name=gpu Type=l4 File=/dev/nvidia3",
				"NodeName=gpu01 Name=shard Count=20 File=/dev/nvidia0",
				"NodeName=gpu01 Name=shard Count=20 File=/dev/nvidia1",
				"NodeName=gpu01 Name=shard Count=12 File=/dev/nvidia2",
				"NodeName=gpu01 Name=shard Count=12 File=/dev/nvidia3",
			},
		},
		{
			name: "a node template for four machines with their own controller, GPUs by AutoDetect",
			cfg:  func(t *testing.T) *config.Config { return parsed(t, "two.toml", twoTypes) },
			in: func(t *testing.T, cfg *config.Config) Input {
				gpus, _ := simulatedGPUs(t, cfg)
				return Input{GPUs: gpus, Nodes: "gpu[01-03],gpu04", Controller: "head", AutoDetect: true}
			},
			globals: map[string]string{"SlurmctldHost": "head", "AccountingStorageHost": "head"},
			node:    map[string]string{"NodeName": "gpu[01-04]", "Gres": "gpu:a100:2,gpu:l4:2,shard:64"},
			partitions: []map[string]string{
				{"PartitionName": "gpu", "Nodes": "gpu[01-04]"},
				{"PartitionName": "scavenger", "Nodes": "gpu[01-04]"},
			},
			gres: []string{
				"AutoDetect=nvml",
				"NodeName=gpu[01-04] Name=shard Count=20 File=/dev/nvidia0",
				"NodeName=gpu[01-04] Name=shard Count=20 File=/dev/nvidia1",
				"NodeName=gpu[01-04] Name=shard Count=12 File=/dev/nvidia2",
				"NodeName=gpu[01-04] Name=shard Count=12 File=/dev/nvidia3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			_, conf, gres := generated(t, cfg, tt.in(t, cfg))
			if diff := cmp.Diff(tt.globals, pick(conf.Globals, keysOf(tt.globals)...)); diff != "" {
				t.Errorf("slurm.conf settings (-want +got):\n%s", diff)
			}
			if len(conf.Nodes) != 1 {
				t.Fatalf("slurm.conf has %d node lines, want 1", len(conf.Nodes))
			}
			if diff := cmp.Diff(tt.node, pick(conf.Nodes[0], keysOf(tt.node)...)); diff != "" {
				t.Errorf("node line (-want +got):\n%s", diff)
			}
			if len(conf.Partitions) != len(tt.partitions) {
				t.Fatalf("slurm.conf has %d partitions, want %d", len(conf.Partitions), len(tt.partitions))
			}
			for i, want := range tt.partitions {
				if diff := cmp.Diff(want, pick(conf.Partitions[i], keysOf(want)...)); diff != "" {
					t.Errorf("partition %d (-want +got):\n%s", i, diff)
				}
			}
			if diff := cmp.Diff(tt.gres, gres.Lines); diff != "" {
				t.Errorf("gres.conf (-want +got):\n%s", diff)
			}
		})
	}
}

// The node's shard count is the sum of gres.conf's per-GPU counts.
func TestShardsAgree(t *testing.T) {
	cfg := parsed(t, "two.toml", twoTypes)
	gpus, _ := simulatedGPUs(t, cfg)
	_, conf, gres := generated(t, cfg, Input{GPUs: gpus})
	sum := 0
	for _, rec := range gres.Nodes {
		if rec["Name"] == "shard" {
			n, err := strconv.Atoi(rec["Count"])
			if err != nil {
				t.Fatalf("gres.conf shard Count %q: %v", rec["Count"], err)
			}
			sum += n
		}
	}
	if !strings.HasSuffix(conf.Nodes[0]["Gres"], ",shard:"+strconv.Itoa(sum)) {
		t.Errorf("node Gres %q, gres.conf's shards sum to %d", conf.Nodes[0]["Gres"], sum)
	}
}

// Every file says what made it and from which configuration, and
// slurm.conf's header names every slurm-lite setting Slurm lacks.
func TestHeaders(t *testing.T) {
	cfg := loaded(t, "../../examples/slurm-lite.toml")
	files, conf, _ := generated(t, cfg, Input{ConfigPath: "/etc/slurm-lite/x.toml", GPUs: fourA100()})
	if got := conf.Globals["MailProg"]; got != "/usr/bin/mail" {
		t.Errorf("slurm.conf's MailProg is %q, want the configuration's /usr/bin/mail", got)
	}
	if got := conf.Globals["MpiParams"]; got != "ports=12000-12999" {
		t.Errorf("slurm.conf's MpiParams is %q, want the configuration's ports=12000-12999", got)
	}
	for name, text := range files {
		lines := strings.Split(text, "\n")
		first, marker := lines[0], "# "
		if strings.HasPrefix(first, "#!") {
			if want := map[bool]string{true: "#!/bin/bash", false: "#!/bin/sh"}[name == Sacctmgr]; first != want {
				t.Errorf("%s starts with %q, want %s", name, first, want)
			}
			first = lines[1]
		}
		if name == JobSubmitLua {
			marker = "-- "
		}
		if !strings.HasPrefix(first, marker) || !strings.Contains(first, "generated by slurmd-lite export from /etc/slurm-lite/x.toml") {
			t.Errorf("%s starts with %q, want a comment naming slurmd-lite export and the configuration", name, first)
		}
	}
	var header []string
	for _, l := range strings.Split(files[SlurmConf], "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		header = append(header, l)
	}
	top := strings.Join(header, "\n")
	for _, want := range []string{
		"VRAM-aware packing", "ShardSize", "Yield", "YieldGroup = \"\"", "IdleGPUTimeout = \"01:00:00\"",
		"GPUViolationPolicy = \"warn\"", "CheckpointDir", "CheckpointKeepDays = 7", "GPUSampleInterval",
		"SocketPath", "GraceTime", "HealthCheckProgram", "scontrol requeue", "[[Notify]] webhooks (1)",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("slurm.conf's header does not mention %q:\n%s", want, top)
		}
	}
	if files[Sacctmgr] == "" || !strings.Contains(files[CgroupConf], "ConstrainDevices=yes") {
		t.Errorf("cgroup.conf does not confine devices:\n%s", files[CgroupConf])
	}
}

func TestGenerateRefuses(t *testing.T) {
	cfg := parsed(t, "two.toml", twoTypes)
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"a node template that is no hostlist", Input{Nodes: "gpu[01-"}, `node template "gpu[01-" is not a hostlist`},
		{"a node name with a colon", Input{Nodes: "gpu01,a:b"}, `node name "a:b"`},
		{"a controller that is no host name", Input{Controller: "head:6817"}, `controller "head:6817" is not a host name`},
		{"a GPU type Slurm cannot read", Input{GPUs: []GPU{{Type: "NVIDIA A100", Memory: gib, Minor: 0}}},
			`GPU type "NVIDIA A100" cannot be a Slurm GPU type (no spaces, ':', ',' or '='): name it in [Node] TypeAliases`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(cfg, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate: error %v, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("a configuration without a node name", func(t *testing.T) {
		_, err := Generate(config.Default(), Input{})
		if err == nil || !strings.Contains(err.Error(), "set NodeName in [Node]") {
			t.Errorf("Generate: error %v, want one that says to set NodeName", err)
		}
	})
}

// Generate is pure: the same input, the same bytes; the input untouched.
func TestGenerateIsPure(t *testing.T) {
	cfg := parsed(t, "two.toml", twoTypes)
	before := *cfg
	in := Input{GPUs: fourA100(), Nodes: "gpu[01-02]"}
	a, _ := Generate(cfg, in)
	b, _ := Generate(cfg, in)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(before, *cfg); diff != "" {
		t.Errorf("Generate changed the configuration (-before +after):\n%s", diff)
	}
}

// Notes that depend on the configuration appear only where they apply.
func TestHeaderFollowsConfig(t *testing.T) {
	tests := []struct {
		name      string
		cfg       *config.Config
		has, lack []string
	}{
		{"the defaults: no filler partition, no accounts", defaults(),
			[]string{"No accounts configured", "sacctmgr add user NAME Account=lab", "IdleGPUTimeout = 0, off"},
			[]string{"- GraceTime:", "AllowUnlistedUsers"}},
		{"examples/slurm-lite.toml: a filler partition, accounts", loaded(t, "../../examples/slurm-lite.toml"),
			[]string{"- GraceTime:", `IdleGPUTimeout = "01:00:00"`},
			[]string{"No accounts configured", "AllowUnlistedUsers", "Recalc"}},
		{"fair share recomputed at every pass", func() *config.Config {
			c := defaults()
			c.Priority.Recalc = config.RecalcPass
			return c
		}(), []string{`[Priority] Recalc = "pass"`, "every PriorityCalcPeriod (00:05:00, below)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := generatedNotes(t, tt.cfg)
			for _, s := range tt.has {
				if !strings.Contains(lines, s) {
					t.Errorf("header lacks %q:\n%s", s, lines)
				}
			}
			for _, s := range tt.lack {
				if strings.Contains(lines, s) {
					t.Errorf("header has %q:\n%s", s, lines)
				}
			}
		})
	}
}

func generatedNotes(t *testing.T, cfg *config.Config) string {
	t.Helper()
	files, _, _ := generated(t, cfg, Input{})
	var header []string
	for _, l := range strings.Split(files[SlurmConf], "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		header = append(header, l)
	}
	return strings.Join(header, "\n")
}

// AuthAltTypes and AuthAltParameters go to slurm.conf as they are.
func TestExportsAuthJWT(t *testing.T) {
	cfg := parsed(t, "jwt.toml", `AuthAltTypes = ["auth/jwt"]
AuthAltParameters = "jwt_key=/etc/slurm/jwt_hs256.key"

[Web]
Listen = "127.0.0.1:6820"
`)
	_, conf, _ := generated(t, cfg, Input{GPUs: fourA100()})
	if got := conf.Globals["AuthAltTypes"]; got != "auth/jwt" {
		t.Errorf("slurm.conf's AuthAltTypes is %q, want auth/jwt", got)
	}
	if got := conf.Globals["AuthAltParameters"]; got != "jwt_key=/etc/slurm/jwt_hs256.key" {
		t.Errorf("slurm.conf's AuthAltParameters is %q", got)
	}
}
