// Package sched is slurm-lite's scheduling core: a pure function from a
// Snapshot (jobs, nodes with their CPUs, memory and GPUs, usage, partitions,
// QOS, accounts, configuration and the time) to a Plan (which jobs start
// where, which running jobs are preempted or shrunk, and for every job left
// pending its reason and expected start). It reads no clock, disk or device,
// starts no goroutine and logs nothing: the daemon, the simulator and
// sbatch --test-only / squeue --start call the same code and get the same
// answer for the same snapshot.
//
// The pipeline of one pass (Cycle):
//
//	Snapshot
//	  -> fair-share tree (Fair Tree, or classic with NO_FAIR_TREE)
//	  -> multifactor priority of each pending job
//	  -> order: PriorityTier, resumed after a yield, priority, submit, id
//	  -> timeline of what is free from now on (running jobs end at
//	     start + time limit)
//	  -> walk: static blockers, then start now, preempt, shrink, yield, or
//	     reserve
//	  -> Plan
//
// Jobs larger than one node (the simulator's labs of several machines)
// take whole nodes: a gang, searched on every node's timeline until enough
// nodes agree on a start (gang.go).
//
// Besides Cycle: Priorities (sprio -l), FairShareTree (sshare -l),
// CheckSubmit (submission refusals with Slurm's messages), PlaceStep (a
// job step's CPUs and GPUs, or why not: srun's step refusals), WillRun
// (sbatch --test-only), ChooseShrink (the shrink policy on its own),
// DecayUsage, Billing, Charge and AdvanceUsage (usage accounting shared by
// the daemon and the simulator).
//
// Glossary.
//
// Reason: the word squeue's %R prints for a pending job (slurm.Reason), such
// as Resources, Priority, Dependency or JobHeldUser. Each Decision carries
// it, plus a Detail with numbers for scontrol show job ("needs 24.0 GiB of
// GPU memory, the best GPU has 18.2 GiB free"). The first job of a
// partition that waits for resources gets Resources, the ones behind it
// Priority.
//
// Reservation: when the job being considered cannot start now, the pass
// finds the earliest time it fits for its whole time limit and holds
// specific GPUs, CPUs and memory for it from then on (if that is within
// bf_window). Lower jobs start now only where they do not touch a
// reservation: that is backfill, and it never delays a higher job.
//
// Shadow time: the expected start of a blocked job, the moment its
// reservation begins. A lower job may run on the reserved GPUs only if its
// time limit ends before the shadow time.
//
// Timeline: the backfill map, a step function of time giving per GPU its
// busy count and free memory and per node its free CPUs and memory; Slurm
// calls it node_space.
//
// Fair-share factor: a number between 0 and 1 saying how much of its share
// an association has used, 1 being the least. Fair Tree ranks users by
// walking the account tree and FairShare = rank / number of users; the
// classic formula is 2^(-EffectvUsage/NormShares).
//
// LevelFS: Fair Tree's per-level fair share, NormShares / EffectvUsage among
// siblings: above 1 an association is under-served, below 1 over-served,
// infinite without usage.
//
// Usage: TRES-billing seconds (by default GPU-seconds, a shared GPU counting
// the fraction of its memory reserved) times the QOS UsageFactor, decayed
// by PriorityDecayHalfLife.
//
// Shrink payback: with Config.ShrinkPayback a running job is shrunk for a
// waiting one only when the waiting job would otherwise wait longer than
// the shrink delays the shrunk job (its time left × the GPUs it gives up
// ÷ the GPUs it keeps), both from time limits. With Config.ShrinkRegrow a
// shrunk job gets its GPUs back (Plan.Grows) once the pass has placed
// every pending job, when they stay free for its limit at full size and
// that saves it more than Config.YieldCost.
//
// Yield payback: with Config.YieldPayback a blocked job may stop (yield
// and requeue) running yieldable jobs that rank below it (a lower tier,
// or its tier and a lower priority; with YieldOwn also its own
// association's jobs) when its wait is longer than what it costs them:
// for each, its time limit plus Config.YieldCost. The stopped jobs name it
// (Job.YieldedFor) and it goes ahead of them until it has started. A job
// larger than a node may do so on whole nodes (yield.go).
//
// Yield: slurm-lite's way to stop a running job cleanly (signal,
// checkpoint, requeue). Preemptions and shrinks in a Plan are carried out
// by the daemon with it; a job requeued by a yield is Resumed and goes
// first in its tier, and once started the scheduler's own stops spare it
// until it has run Config.YieldMinRun (or the longer checkpoint interval
// it declared), so that every run after a yield makes progress.
package sched
