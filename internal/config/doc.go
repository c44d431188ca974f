// Package config is slurm-lite's configuration: a TOML file whose keys are
// slurm.conf's own names (and sacctmgr's, for QOS, accounts and users), so
// that a Slurm administrator reads it without a manual and `slurmd-lite
// export` can write it back as slurm.conf. examples/slurm-lite.toml
// documents every key; a test keeps it in step with the schema.
//
// Pipeline:
//
//	Locate(-f, $SLURM_LITE_CONF, /etc/slurm-lite/slurm-lite.toml)  path or "" (no file)
//	  -> Load(path)              reads the file (the only I/O), or Default()
//	  -> Parse(name, data)       pure:
//	       toml.Decode           syntax, into a generic tree
//	       indexLines            the line of every key (lines.go)
//	       decode over Default() by reflection on the schema (decode.go):
//	                             unknown keys, wrong types, unparsable times
//	       check                 ranges, references, duplicates, cycles (check.go)
//	       resolve               inherited and derived values (accounts.go)
//	  -> (*Config).ApplyHost(DetectHost())   node name, CPUs, memory not given
//
// The commands that need little of it (sbatch: Settings; squeue, sacct,
// scancel: View) read instead what the daemon left beside the file it
// loaded, while it is that file's (FindSettings, FindView; settings.go),
// and fall back to Locate and Load.
//
// Every problem becomes an Error "FILE:LINE: message that says the fix";
// Parse reports all of them at once, in line order.
//
// Decisions where Slurm leaves a choice or this project differs:
//   - Keys are case-sensitive (slurm.conf's are not): one spelling keeps
//     the docs, the example and export consistent; a key in the wrong case
//     is an error that names the right one.
//   - A file's [[Partition]] (or [[QOS]], [[Account]], [[User]]) list
//     replaces the built-in one. QOS "normal" always exists, as in Slurm.
//   - Exactly one partition is the default. A lone partition is the default
//     without Default = true (Slurm would have none, and every sbatch would
//     need --partition); several with none marked is an error.
//   - PriorityType defaults to priority/multifactor with the recorded
//     cluster's weights, PreemptType to preempt/partition_prio, and billing
//     to GPU-seconds: fair share and filler partitions are what this project
//     is for. Slurm's defaults are priority/basic, preempt/none and CPUs.
//   - Partition PreemptMode is OFF unless set (there is no cluster-wide
//     PreemptMode); SUSPEND and GANG are refused, as GPU memory cannot be
//     suspended.
//
// Glossary:
//   - Slurm time: a duration as slurm.conf writes it ("7-0", "2-00:00:00",
//     "90" minutes, "UNLIMITED"), parsed with internal/slurmsyntax; whole
//     minutes, or slurmsyntax.Infinite.
//   - TRES: a trackable resource (cpu, mem, gres/gpu, gres/shard); TRES
//     holds counts (limits), TRESWeights weights (billing, priority).
//   - Association: a user in an account, with shares. [[User]] entries and
//     each [[Account]]'s Users shorthand both make them; after Parse,
//     Config.Users holds every one.
//   - Implicit account: where users go that no account lists (everyone,
//     when no accounts are configured); named after ClusterName.
package config
