"""submitit 1.5.4 against slurm-lite: scripts/test-clients runs this with
PYTHONPATH holding submitit's source and this folder, PATH starting with the
logging shim, and SLURM_LITE_CONF pointing at a fresh daemon.

    python3 submitit_suite.py WORKDIR

Checks (each as real Slurm 22.05 behaves):
  gpu         a job with gpus_per_node=1 sees one GPU in CUDA_VISIBLE_DEVICES
  map_array   map_array over 5 inputs: one array job, results in order
  exception   job.result() raises the remote ValueError; the job is FAILED
  preempt     a Checkpointable job interrupted with job._interrupt()
              (scancel --signal SIGTERM, then USR2) checkpoints, requeues
              itself, resumes from its saved state with SLURM_RESTART_COUNT
              >= 1 and returns the full result
  timeout     the same with no help: --time=1 and --signal=USR2@45
              (slurm_signal_delay_s) checkpoint and requeue it before its
              limit; it finishes, never TIMEOUT
  cancel      job.cancel(): the job is CANCELLED at once (squeue shows it
              completing, not RUNNING) and its processes end
"""

import os
import re
import sys
import time
from pathlib import Path

import submitit
from submitit.helpers import Checkpointable

from common import Checks, final_state, sacct_text, settled_runs, slurm, tail, wait_for

WORK = Path(sys.argv[1]).resolve()
LOGS = WORK / "logs"
checks = Checks("submitit")


# --- the jobs' functions (defined in __main__, so cloudpickle ships them by value)


def gpu_env():
    keys = ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_JOB_ID", "SLURM_GPUS_PER_NODE", "SLURM_STEP_ID")
    return {k: os.environ.get(k) for k in keys}


def square(x):
    return x * x, os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")


def boom(x):
    raise ValueError(f"boom-{x}")


def sleeper(marker, seconds):
    Path(marker).write_text(os.environ.get("SLURM_JOB_ID", "?"))
    time.sleep(seconds)
    return "slept"


class Counter(Checkpointable):
    """Counts to steps, one step every step_s seconds, appending each step to
    progress. Its state (done, starts) is what submitit pickles at checkpoint."""

    def __init__(self, steps, step_s, progress):
        self.steps, self.step_s, self.progress = steps, step_s, progress
        self.done = 0
        self.starts = []  # (SLURM_RESTART_COUNT, steps done) at each start

    def __call__(self):
        restart = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
        self.starts.append((restart, self.done))
        with open(self.progress, "a") as f:
            f.write(f"start restart={restart} done={self.done}\n")
        while self.done < self.steps:
            time.sleep(self.step_s)
            self.done += 1
            with open(self.progress, "a") as f:
                f.write(f"step {self.done}\n")
        return {"done": self.done, "starts": self.starts, "restart": restart}


# --- helpers


def executor(name, **params):
    ex = submitit.AutoExecutor(folder=LOGS / "%j", cluster="slurm")
    ex.update_parameters(name=name, **params)
    return ex


def wait_job(job, timeout):
    """Waits for the job's result file or a finished state in sacct. True
    when the job is done; polls sacct through submitit itself, every 3 s."""
    deadline = time.monotonic() + timeout
    last = 0.0
    while time.monotonic() < deadline:
        if job.paths.result_pickle.exists():
            return True
        if time.monotonic() - last >= 3:
            last = time.monotonic()
            if job.done(force_check=True):
                return True
        time.sleep(0.5)
    return False


def job_evidence(job):
    out = [f"job {job.job_id}: sacct -D:", sacct_text(job.job_id.split("_")[0])]
    for what, path in (("stdout", job.paths.stdout), ("stderr", job.paths.stderr)):
        out += [f"--- {what} {path} (last lines)", tail(path, 25)]
    return "\n".join(out)


def result_of(job, name, timeout):
    """(ok, value or exception); fails the check `name` if the job never ends."""
    if not wait_job(job, timeout):
        checks.fail(name, f"job {job.job_id} not done after {timeout} s (state {final_state(job.job_id)!r})", job_evidence(job))
        return False, None
    try:
        return True, job.result()
    except Exception as e:  # the check decides whether it was expected
        return True, e


def progress_lines(path):
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


# --- submit everything first: the slow ones run while the quick ones are checked

LOGS.mkdir(parents=True, exist_ok=True)
t0 = time.monotonic()

timeout_progress = WORK / "timeout.progress"
timeout_job = executor("timeout", timeout_min=1, slurm_signal_delay_s=45).submit(
    Counter(20, 1.0, str(timeout_progress))
)
preempt_progress = WORK / "preempt.progress"
preempt_job = executor("preempt", timeout_min=5).submit(Counter(16, 0.5, str(preempt_progress)))
cancel_marker = WORK / "cancel.started"
cancel_job = executor("cancel", timeout_min=5).submit(sleeper, str(cancel_marker), 300)
gpu_job = executor("gpu", timeout_min=2, gpus_per_node=1).submit(gpu_env)
array_jobs = executor("array", timeout_min=2).map_array(square, range(5))
boom_job = executor("boom", timeout_min=2).submit(boom, 42)
print(f"submitted in {time.monotonic() - t0:.1f} s: timeout={timeout_job.job_id} preempt={preempt_job.job_id} "
      f"cancel={cancel_job.job_id} gpu={gpu_job.job_id} array={array_jobs[0].job_id.split('_')[0]} "
      f"exception={boom_job.job_id}", flush=True)

# --- gpu

done, env = result_of(gpu_job, "gpu", 90)
if done:
    cvd = env.get("CUDA_VISIBLE_DEVICES") if isinstance(env, dict) else None
    checks.check(
        "gpu", cvd is not None and re.fullmatch(r"[0-3]", cvd),
        f"CUDA_VISIBLE_DEVICES should be one of the 4 GPUs, got {env!r}", job_evidence(gpu_job),
        detail=f"CUDA_VISIBLE_DEVICES={cvd}, SLURM_JOB_GPUS={env.get('SLURM_JOB_GPUS') if isinstance(env, dict) else None}",
    )

# --- map_array

array_id = array_jobs[0].job_id.split("_")[0]
results = []
for i, job in enumerate(array_jobs):
    done, r = result_of(job, f"map_array[{i}]", 90)
    results.append(r if done else None)
want = [(x * x, array_id, str(x)) for x in range(5)]
got_ids = [j.job_id for j in array_jobs]
states = [r[1] for r in settled_runs(array_id)]
checks.check(
    "map_array", results == want and got_ids == [f"{array_id}_{i}" for i in range(5)],
    f"want {want}, got {results}", f"job ids {got_ids}\nsacct -D:\n{sacct_text(array_id)}",
    detail=f"array job {array_id}, 5 tasks: {[r[0] for r in results]}",
)
checks.check(
    "map_array states", states == ["COMPLETED"] * 5, f"sacct says {states}, want 5 x COMPLETED", sacct_text(array_id),
)

# --- exception

done, e = result_of(boom_job, "exception", 90)
if done:
    checks.check(
        "exception", isinstance(e, submitit.core.utils.FailedJobError) and "ValueError: boom-42" in str(e),
        f"job.result() should raise FailedJobError with the remote 'ValueError: boom-42', got {type(e).__name__}: {e}",
        job_evidence(boom_job), detail="FailedJobError carrying ValueError: boom-42",
    )
    runs = settled_runs(boom_job.job_id)
    st = runs[-1][1] if runs else ""
    checks.check("exception state", st == "FAILED", f"sacct state {st!r}, real Slurm says FAILED", job_evidence(boom_job), detail=st)

# --- preempt: job._interrupt() as submitit's own tests use it

started = wait_for(lambda: sum(l.startswith("step ") for l in progress_lines(preempt_progress)) >= 3, 90)
if not started:
    checks.fail("preempt", f"job {preempt_job.job_id} did not start counting within 90 s", job_evidence(preempt_job))
else:
    try:
        preempt_job._interrupt()  # scancel JOBID --signal SIGTERM; scancel JOBID --signal USR2
        interrupt_error = None
    except Exception as e:
        interrupt_error = e
    done, r = result_of(preempt_job, "preempt", 120)
    if done:
        ev = job_evidence(preempt_job) + "\n--- progress\n" + "\n".join(progress_lines(preempt_progress))
        runs = settled_runs(preempt_job.job_id)
        ok = (
            interrupt_error is None
            and isinstance(r, dict)
            and r["done"] == 16
            and r["restart"] >= 1
            and len(r["starts"]) >= 2
            and r["starts"][-1][1] >= 3
        )
        checks.check(
            "preempt", ok,
            f"want the full count (16) from a run with SLURM_RESTART_COUNT >= 1 that resumed from its checkpoint; "
            f"_interrupt() raised {interrupt_error!r}; result {r!r}",
            ev, detail=f"result {r}" if isinstance(r, dict) else "",
        )
        st = [s for _, s, _ in runs]
        checks.check(
            "preempt accounting", len(st) >= 2 and st[-1] == "COMPLETED" and all(s == "REQUEUED" for s in st[:-1]),
            f"sacct -D states {st}, want REQUEUED run(s) then COMPLETED", ev, detail=" -> ".join(st),
        )

# --- cancel

started = wait_for(lambda: cancel_marker.exists(), 90)
if not started:
    checks.fail("cancel", f"job {cancel_job.job_id} did not start within 90 s", job_evidence(cancel_job))
else:
    time.sleep(1)
    cancel_job.cancel()  # scancel JOBID
    t = time.monotonic()
    # Slurm marks the job CANCELLED at once (squeue: COMPLETING while its
    # processes get SIGTERM, then SIGKILL after KillWait).
    st = wait_for(lambda: final_state(cancel_job.job_id).startswith("CANCELLED") and final_state(cancel_job.job_id), 5)
    _, sq = slurm("squeue", "-h", "-j", cancel_job.job_id, "-o", "%T")
    checks.check(
        "cancel state", st and sq.strip() in ("", "COMPLETING", "CANCELLED"),
        f"5 s after scancel: sacct state {final_state(cancel_job.job_id)!r}, squeue state {sq.strip()!r}; "
        "real Slurm: CANCELLED at once (squeue COMPLETING until the processes are gone)",
        job_evidence(cancel_job), detail=f"{st} after {time.monotonic() - t:.1f} s",
    )
    w = wait_job(cancel_job, 30)
    checks.check(
        "cancel seen by submitit", w and cancel_job.state.startswith("CANCELLED"),
        f"job.done() {w}, job.state {cancel_job.state!r}", job_evidence(cancel_job), detail=cancel_job.state,
    )
    gone = wait_for(lambda: slurm("squeue", "-h", "-j", cancel_job.job_id, "-o", "%T")[1].strip() == "", 30)
    checks.check(
        "cancel ends", gone, "the job is still in squeue 30 s after scancel", job_evidence(cancel_job),
        detail="gone from squeue",
    )

# --- timeout: --signal=USR2@45 with --time=1

done, r = result_of(timeout_job, "timeout", 150)
if done:
    ev = job_evidence(timeout_job) + "\n--- progress\n" + "\n".join(progress_lines(timeout_progress))
    runs = settled_runs(timeout_job.job_id)
    st = [s for _, s, _ in runs]
    ok = isinstance(r, dict) and r["done"] == 20 and r["restart"] >= 1 and len(r["starts"]) >= 2 and r["starts"][-1][1] > 0
    checks.check(
        "timeout checkpoint", ok,
        f"want the full count (20) from a run with SLURM_RESTART_COUNT >= 1 that resumed from its checkpoint, got {r!r}",
        ev, detail=f"result {r}" if isinstance(r, dict) else "",
    )
    checks.check(
        "timeout accounting", len(st) >= 2 and st[-1] == "COMPLETED" and all(s == "REQUEUED" for s in st[:-1]),
        f"sacct -D states {st}, want REQUEUED run(s) then COMPLETED (never TIMEOUT)", ev, detail=" -> ".join(st),
    )

print(f"submitit suite: {time.monotonic() - t0:.0f} s", flush=True)
checks.done()
