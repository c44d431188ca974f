// Package stepd is slurm-lite's per-job supervisor, as Slurm's slurmstepd
// and containerd's shim: the daemon's own binary, re-executed as
// "slurmd-lite stepd run DIR/spec.json", runs one batch job and outlives
// the daemon. A restarted daemon finds it again through the files in the
// job's state directory.
//
//	daemon                          supervisor (own session)       launcher → batch script
//	WriteSpec(DIR, spec)
//	Launch(cmd, env, DIR) ────────▶ Run: lock, socket
//	                                cgroup or subreaper, spool,
//	                                open files as the user ──────▶ fork "stepd exec" (fd 3: launch)
//	                                join cgroup, stepd.json,
//	                                send launch ─────────────────▶ affinity, rlimits, umask,
//	                                                               setgroups/setgid/setuid, chdir,
//	                                                               SLURM_TASK_PID, execve(script)
//	Call(DIR, cancel/signal) ─────▶ loop: reap, time limit,
//	                                --signal, control requests
//	ReadStatus(DIR) ◀────────────── status.json (atomic), exit
//
// The daemon's side is WriteSpec, Launch, Call, ReadIdentity, Alive,
// Supervised and ReadStatus; JobEnv and StdPaths are pure functions it may
// use to show what a job will get.
//
// An interactive job (srun or salloc outside a job) has a supervisor too,
// launched the same way with Spec.Adopt: it runs no script, and adopts
// the srun or salloc that waits for the job (Spec.Caller, OpAdopt) into
// the job's cgroup; the job ends when its caller says how its command
// ended (OpFinish) or dies, and its status is written as a batch job's
// (adopt.go).
//
// # Files in the state directory (private to the daemon's user)
//
// The live supervisor holds a flock of the directory itself for its whole
// life (earlier versions locked a file, stepd.lock).
//
//	spec.json    the launch spec (Spec), written by the daemon, 0600
//	stepd.json   the supervisor's Identity: pid, boot id, start time
//	stepd.sock   the control socket (Request, Reply), root and owner only
//	stepd.log    the supervisor's log (its standard output and error)
//	status.json  the job's final Status, written once, atomically
//
// # Glossary
//
//   - Supervisor: the process that runs Run for one job (slurmstepd).
//   - Launcher: the supervisor's child that sets up the job's process and
//     executes the batch script in its place ("stepd exec"), so the
//     script's pid is the launcher's (SLURM_TASK_PID).
//   - Batch shell: the process running the batch script; "steps": every
//     other process of the job (see "Signals" below).
//   - Spool directory: a directory made per job, owned by the job's user,
//     holding the copy of the script that runs ("slurm_script", as
//     slurmd's /var/spool/slurmd/jobNNNNN); the daemon's stored copy sits
//     where the user cannot reach it.
//   - Tracking: how the job's processes are found: "cgroup" (a cgroup v2
//     of its own, PARENT/job_ID, killed with cgroup.kill, with memory.max
//     and OOM accounting when the memory controller is delegated) or
//     "subreaper" (PR_SET_CHILD_SUBREAPER: orphans of the job are
//     reparented to the supervisor, so the job is exactly the supervisor's
//     descendants, whatever setsid, nohup or double forks do). The
//     supervisor is a subreaper in both modes. The log, the Identity and
//     the Status say which mode is in use and why not a cgroup.
//   - KillWait: slurm.conf's time between SIGTERM and SIGKILL (30 s).
//   - Ending: the supervisor ending a job (time limit, cancel, requeue,
//     preemption): the "*** JOB N ON NODE CANCELLED AT T [DUE TO WHY] ***"
//     line in the job's error file, SIGCONT and SIGTERM (or the signal
//     asked) to every process, SIGKILL to what is left after KillWait. One
//     a process of the job asked for (scontrol requeue $SLURM_JOB_ID, maybe
//     through sh -c) is taken at once and carried out once that process
//     and its wrappers have had the answer (supervisor.go's asked).
//   - Identity: (pid, boot id, process start time), which names one
//     process for the machine's life, where a pid alone does not.
//   - Exit code: Slurm's "code:signal": "3:0" for exit 3, "0:9" for
//     SIGKILL.
//
// # Timeline and races
//
// The supervisor's life, numbered; then what a daemon that died at each
// point finds when it comes back, and does.
//
//  1. The daemon writes spec.json (temporary file, rename; not synced:
//     only a supervisor of this boot reads it).
//  2. The daemon starts the supervisor in a new session (Launch).
//  3. The supervisor takes the directory's lock (retrying for a
//     second), returns at once if status.json exists, reads the spec.
//  4. It opens stepd.sock.
//  5. It makes the job's cgroup (or not), the spool directory, and opens
//     the job's files as the user.
//  6. It forks the launcher, which waits for its instructions on fd 3,
//     inside the cgroup from its start (clone3's CLONE_INTO_CGROUP; a
//     kernel without it gets the launcher moved in by cgroup.procs);
//     writes stepd.json (Identity, with the
//     job's pid and cgroup; temporary file, rename, not synced: after a
//     reboot its boot id is stale anyway); sends the instructions. The
//     launcher executes the script.
//  7. The job runs: the time limit on the monotonic clock (the daemon's
//     test clock in the end-to-end tests: Clock), --signal, and requests
//     on the socket.
//  8. The batch script ends. What it left is killed at once, unless the
//     job is being ended (7), when it keeps what is left of KillWait.
//  9. Once no process of the job remains, status.json is written
//     (temporary file, fsync, rename, fsync of the directory).
//  10. The socket, the cgroup and the spool directory are removed; the
//     supervisor exits and the kernel releases the lock.
//
// What a restarted daemon checks, in this order: status.json (the job is
// over: record it); stepd.json with Alive (running: talk to the socket,
// watch for status.json); Supervised (a supervisor is between 3 and 6:
// wait a moment); otherwise no supervisor is there.
//
//   - The daemon dies before 2: spec.json but no lock holder, no
//     stepd.json, no status: the job never started and nothing was
//     written for it; the daemon starts it again.
//   - It dies between 2 and 6: the supervisor has no record yet. If the
//     daemon starts a second one, exactly one gets the lock; the other
//     exits with status 1 and touches nothing (and one that gets the lock
//     after the job ended finds status.json and exits).
//   - It dies during 6 to 9: the supervisor goes on (its own session; it
//     is reparented to init), enforces the time limit itself and writes
//     the status. The restarted daemon finds it Alive and reattaches.
//   - The supervisor dies (SIGKILL, the OOM killer) during 7: the lock is
//     free, Alive is false, there is no status. In cgroup mode the job's
//     processes are still in Identity.Cgroup, where the daemon can kill
//     them (write "1" to cgroup.kill); in subreaper mode they went to init.
//     The daemon records the job as lost (Slurm's NODE_FAIL).
//   - The machine reboots: another boot id, Alive is false; no status:
//     the job is lost as above.
//   - The supervisor's pid is reused by another process after it died:
//     another start time, Alive is false.
//   - A crash during 9: status.json is absent or whole, never torn; a
//     leftover ".status.json.tmp-*" is ignored.
//   - Between 9 and 10: Alive is true and status.json exists: the status
//     wins (read it first).
//   - A cancel that reaches the supervisor after 8 does not change the
//     job's state (it ended by itself); what is left is killed at once.
//   - The daemon dies after sending a cancel: the cancel stands; the
//     status's Ending records who asked and why.
//
// # Deployment
//
// Under systemd the daemon's unit needs KillMode=process (as containerd's
// has): with the default, stopping or restarting the daemon kills every
// process in its cgroup, supervisors and jobs included. A job's cgroup
// goes under Spec.Cgroup.Parent (the daemon gives its Delegation's Base),
// else the supervisor's own cgroup; cgroup v2 lets a cgroup that holds
// processes track and kill its children but not give them controllers,
// so memory limits need a parent with no processes of its own and memory
// (and pids, cpuset) in its cgroup.subtree_control. Delegate (delegate.go)
// makes that so at the daemon's start: under systemd's Delegate=yes the
// daemon and the supervisors live in BASE/slurmd-lite (DelegateSubgroup=
// slurmd-lite, or the daemon moves there), the jobs' cgroups beside it.
//
// # Signals
//
// --signal=B:SIG@secs sends SIG (then SIGCONT) to the batch shell alone,
// secs before the time limit, as Slurm does. Without B:, Slurm sends it to
// the job's steps (what srun started) and never to the batch shell
// (golden/job_signal_USR1_at_30_allprocs.txt). While the job runs steps
// (the daemon names their sruns with OpSteps), slurm-lite does the same:
// the steps' tasks get it, and neither srun (which ends its step on
// SIGTERM) nor the batch shell does. A job with no step now gets it on
// every process but the batch shell: a program started from the script
// without srun gets the signal it asked for, which is what people who
// write --signal=USR1@90 (submitit, PyTorch Lightning) expect. The control
// socket's TargetSteps, TargetBatch and TargetAll are scancel's --signal
// without -b, with -b, and with --full.
//
// # Where we differ from Slurm
//
//   - Missing parent directories of --output and --error are made, as the
//     user, at the job's start; Slurm fails the job (JobLaunchFailure).
//   - After a cancel or the time limit, processes still running when the
//     batch shell exits keep the rest of KillWait; slurmstepd kills them
//     when the batch shell ends, so a program saving a checkpoint is cut
//     short when bash exits on SIGTERM first.
//   - The login environment (--get-user-env, or --export=NONE or a list)
//     is what the user's login shell exports after reading their profile,
//     as slurmd's "su - USER -c env" gives it (loginenv.go), but read by
//     running the shell as the user directly, not through su and PAM:
//     pam_env's /etc/environment and the variables of a PAM session
//     (pam_systemd's XDG_*) are not there; MAIL is set as pam_mail sets it.
//   - Variables that describe a job (SLURM_NTASKS, SLURM_ARRAY_*,
//     SLURM_RESTART_COUNT, the GPU variables, ...) are removed from
//     sbatch's environment before the job's own are set: a job submitted
//     from inside another job does not inherit the outer job's values, as
//     it does in Slurm.
//   - SLURM_WORKING_CLUSTER (the controller's address, port and protocol
//     version) is not set: slurm-lite has no such controller.
//   - SLURM_CONF is never set; commands in a job find the daemon through
//     SLURM_LITE_CONF. CUDA_DEVICE_ORDER=PCI_BUS_ID, so that CUDA numbers
//     GPUs as NVML and CUDA_VISIBLE_DEVICES do.
//   - A job's memory limit needs a delegated memory controller; without
//     one the limit is not enforced and the status says so (Warnings,
//     MemLimitUnenforced), which the daemon turns into a sacct note.
//
// The package is Linux-only: it uses /proc, prctl, flock, cgroup v2 and
// per-thread credentials.
package stepd
