// Package export is `slurmd-lite export`: it writes the configuration that
// reproduces this machine's slurm-lite setup on real Slurm, so that a lab
// that outgrows one machine moves to Slurm with the scripts it has.
//
// Pipeline:
//
//	Main(args)                options (-f, --dir, --autodetect, --nodes, ...)
//	  -> config.Find + ApplyHost    the configuration in force, as the daemon reads it
//	  -> machineGPUs                the GPUs: the simulated list, or one NVML
//	                                sample (none, with the reason, without a driver)
//	  -> Generate(cfg, Input)       pure: the files' contents
//	       slurm.conf   cluster, node, partitions, priority, preemption,
//	                    backfill, accounting; a header listing every setting
//	                    with no Slurm equivalent and what Slurm does instead
//	       gres.conf    Name=gpu Type=... File=/dev/nvidiaN per GPU (or
//	                    AutoDetect=nvml), Name=shard Count=... per GPU
//	       cgroup.conf  device confinement, Slurm's answer to jobs that
//	                    touch GPUs they were not given
//	       sacctmgr.sh  cluster, QOS, accounts, users, shares; idempotent
//	       and, where the configuration uses them (extras.go):
//	       job_submit.lua     [[Route]]s for Slurm's job_submit/lua plugin
//	       prometheus.yml     the exporters that stand for [Web]'s /metrics
//	       jobmap-*.sh        Prolog and Epilog keeping JobMappingDir
//	       strigger.sh, webhook.sh   the webhooks' drains as triggers
//	       reservations.sh    the running daemon's reservations
//	  -> writeFiles                 every file to a temporary name in DIR,
//	                                then renamed: all of them or none
//
// Glossary:
//   - Shard: Slurm's gres/shard, a count of units on one GPU. Here one shard
//     is ShardSize of GPU memory, so each GPU gets memory/ShardSize shards and
//     --gres=shard:N keeps its meaning, though Slurm never checks memory.
//   - Node template: with --nodes gpu[01-04] the node line, the partitions and
//     gres.conf name several identical machines; an admin adds machines by
//     widening the range.
//   - Minor number: N in /dev/nvidiaN. NVML's index equals it on ordinary
//     machines; gres.conf names GPUs by file, so the two must agree.
package export
