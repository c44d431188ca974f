// Package sim is `slurmd-lite simulate`: it replays a workload trace (the
// Philly-derived CSV, or sacct --parsable2 output) through the scheduling
// core on a simulated clock and reports, per policy, completion and wait
// times, utilisation, the fair-share gap and the work lost to preemption.
//
// The pipeline:
//
//	trace file -> ReadTrace (format from the header) -> []TraceJob
//	  -> per policy: buildWorld (nodes, partitions, QOS, accounts, Config)
//	  -> Simulate: event clock of submissions, job ends and stop ends;
//	     after each instant's events one sched.Cycle over a Snapshot of the
//	     pending, running and stopping jobs, its plan carried out (starts,
//	     Preempts, Shrinks); usage advanced by sched.AdvanceUsage between
//	  -> Run (per-job Outcomes and counters) -> Summarize -> Metrics
//	  -> WriteTable, or JSON
//
// Nothing here decides anything the core decides: the simulator only plays
// the machine (jobs end at their real duration, capped at their limit;
// stopped jobs lose work since their last checkpoint and take time to stop
// and restart; shrunk jobs run slower by the Speedup model). What the
// machine records of a yield it also plays: a stopped job names the job it
// was stopped for (sched.Job.YieldedFor) until that one has started.
//
// Glossary.
//
// Policy: a configuration of the core to compare (P0 FIFO to P4 yield).
//
// Short route: P4 sends every job whose time limit is at most an hour to a
// partition of higher PriorityTier, as a lab's submit filter or `-p short`
// would; a lab without such a partition gets P4's other results, not its
// short-job waits (docs/simulate.md).
//
// Filler: 1-GPU work in a preemptible partition of lower PriorityTier,
// offered on every idle GPU (P3, P4); not the trace's jobs, and counted
// apart.
//
// Fair gap: how far the accounts' GPU holdings are from the max-min fair
// share of the capacity while demand exceeds it (FairGap).
//
// Speedup: how fast g GPUs of one node progress relative to one, from the
// Pollux/Sia step-time profiles or linear (LoadProfiles).
package sim
