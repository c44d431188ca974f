"""Shared helpers of the client suites (scripts/test-clients).

Each suite prints one line per check, "ok   SUITE: NAME (detail)" or
"FAIL SUITE: NAME: WHY" followed by indented evidence, and exits 1 when a
check failed. The driver counts those lines.

The checks' own queries (sacct, squeue) call slurm-lite's commands by full
path ($SLITE_BIN), past the logging shim on PATH: the command log then holds
only what the client itself ran.
"""

import os
import subprocess
import sys
import time

BIN = os.environ.get("SLITE_BIN", "")


def slurm(*args, timeout=20):
    """Runs one of slurm-lite's commands unlogged; returns (rc, stdout+stderr)."""
    cmd = [os.path.join(BIN, args[0]) if BIN else args[0], *args[1:]]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(cmd)}: no answer in {timeout} s"
    return p.returncode, p.stdout + p.stderr


def sacct_runs(jobid):
    """Every run of the job (sacct -D -X), as [(JobID, State, ExitCode)]."""
    _, out = slurm("sacct", "-D", "-X", "-n", "-P", "-o", "JobID,State,ExitCode", "-j", str(jobid))
    return [tuple(line.split("|")) for line in out.splitlines() if line.count("|") == 2]


# States of a job (or array task) that has not ended yet.
ACTIVE = {"", "PENDING", "RUNNING", "COMPLETING", "REQUEUED", "CONFIGURING", "SUSPENDED", "RESIZING", "SIGNALING",
          "STAGE_OUT", "STOPPED", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT"}


def settled_runs(jobid, timeout=30):
    """sacct_runs(jobid) once every job in it (each array task) has ended,
    or as it is after timeout seconds. A result file is written before the
    job's end: its state may still be RUNNING for a moment, in Slurm too."""

    def settled():
        runs = sacct_runs(jobid)
        last = {}
        for r in runs:
            last[r[0]] = r[1]
        return runs if runs and not any(s in ACTIVE for s in last.values()) else None

    return wait_for(settled, timeout) or sacct_runs(jobid)


def sacct_text(jobid):
    _, out = slurm("sacct", "-D", "-o", "JobID,JobName,State,ExitCode,Start,End,Elapsed,Account,AllocTRES%40", "-j", str(jobid))
    return out


def final_state(jobid):
    """The state of the job's last run, '' if sacct does not know it."""
    runs = sacct_runs(jobid)
    return runs[-1][1] if runs else ""


def wait_for(pred, timeout, step=0.5):
    """Polls pred() until it returns something true or timeout seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return f"({e})"
    return "\n".join(lines[-n:])


class Checks:
    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0

    def ok(self, name, detail=""):
        self.passed += 1
        print(f"ok   {self.suite}: {name}" + (f" ({detail})" if detail else ""), flush=True)

    def fail(self, name, why, evidence=""):
        self.failed += 1
        print(f"FAIL {self.suite}: {name}: {why}", flush=True)
        for line in str(evidence).rstrip().splitlines():
            print(f"    | {line}", flush=True)

    def check(self, name, cond, why, evidence="", detail=""):
        if cond:
            self.ok(name, detail)
        else:
            self.fail(name, why, evidence)
        return bool(cond)

    def done(self):
        print(f"{self.suite}: {self.passed} checks passed, {self.failed} failed", flush=True)
        sys.exit(1 if self.failed else 0)
