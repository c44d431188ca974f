"""Snakemake 7.21's built-in --slurm executor against slurm-lite:
scripts/test-clients runs this with PATH starting with the logging shim and
SLURM_LITE_CONF pointing at a fresh daemon.

    python3 snakemake_suite.py SNAKEMAKE_DIR WORKDIR

It runs the workflow in SNAKEMAKE_DIR/Snakefile (five rules, GPU rules
asking --gpus=1 and --gpus=2 through slurm_extra) in WORKDIR with
--default-resources slurm_account=lab ("lab" is the account every user is
in when no accounts are configured: the default ClusterName). Snakemake
checks the account with `sacctmgr -n -s list user $USER format=account%20`,
finds the default partition with `sinfo -o %P`, submits each rule with
`sbatch ... -A lab -p gpu ... --wrap=...`, polls `sacct -P -n
--format=JobIdRaw,State -j ID`, and runs each rule inside its job as
`srun -n1 --cpu-bind=q snakemake --slurm-jobstep ...`.

Checks (each as real Slurm 22.05 behaves):
  workflow     snakemake exits 0
  outputs      the numbers come out right (prepare -> train x2 -> evaluate -> report)
  gpus         train jobs see one GPU each, evaluate sees two
  account      every job ran in account lab (SLURM_JOB_ACCOUNT, sacct)
  accounting   sacct lists the 5 jobs COMPLETED
  sbatch calls 5 submissions, each with -A lab, GPU rules with their --gpus
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import Checks, slurm, tail

SRC = Path(sys.argv[1]).resolve()
WORK = Path(sys.argv[2]).resolve()
CMDLOG = Path(os.environ.get("SLITE_CLIENT_DIR", WORK)) / "commands.log"
checks = Checks("snakemake")
t0 = time.monotonic()

shutil.copy(SRC / "Snakefile", WORK / "Snakefile")
cmd = [
    "snakemake", "--slurm", "--jobs", "4",
    "--snakefile", "Snakefile", "--directory", str(WORK),
    "--default-resources", "slurm_account=lab", "runtime=5", "mem_mb=100",
    # 7.21's --slurm polls sacct every 33 s by default (0.03/s), and
    # above 1/s it falls back to that default
    "--max-status-checks-per-second", "1",
    "--latency-wait", "10", "--printshellcmds", "--nocolor",
]
print("$ " + " ".join(cmd), flush=True)
log = WORK / "snakemake.out"
try:
    with open(log, "w") as f:
        rc = subprocess.run(cmd, cwd=WORK, stdout=f, stderr=subprocess.STDOUT, timeout=240).returncode
except subprocess.TimeoutExpired:
    rc = "timeout (240 s)"
snakelog = "--- snakemake's output (last lines)\n" + tail(log, 60)


def job_logs():
    out = []
    for p in sorted((WORK / ".snakemake" / "slurm_logs").glob("*/*.log")):
        out += [f"--- {p.relative_to(WORK)} (last lines)", tail(p, 15)]
    return "\n".join(out)


checks.check("workflow", rc == 0, f"snakemake exited {rc}", snakelog + "\n" + job_logs(),
             detail=f"snakemake exit 0 in {time.monotonic() - t0:.0f} s")


def read(path):
    try:
        return (WORK / path).read_text().strip()
    except OSError as e:
        return f"<{e.strerror}>"


want = {"models/a.txt": "110", "models/b.txt": "165", "results/eval.txt": "275", "results/report.txt": "total 275"}
got = {p: read(p) for p in want}
files = "\n".join(sorted(str(p.relative_to(WORK)) for d in ("data", "models", "results", "meta") for p in (WORK / d).glob("*")))
checks.check("outputs", got == want, f"want {want}, got {got}", "files made:\n" + (files or "(none)"),
             detail=got["results/report.txt"])

meta = {}
for name in ("prepare", "train_a", "train_b", "evaluate", "report"):
    m = re.fullmatch(r"job=(\S*) account=(\S*) partition=(\S*) gpus=(\S*)", read(f"meta/{name}.env"))
    meta[name] = m.groups() if m else None
metatext = "\n".join(f"meta/{k}.env: {read(f'meta/{k}.env')}" for k in meta)

ok = all(meta[k] and re.fullmatch(r"[0-3]", meta[k][3]) for k in ("train_a", "train_b")) and meta["evaluate"] and re.fullmatch(
    r"[0-3],[0-3]", meta["evaluate"][3]) and len(set(meta["evaluate"][3].split(","))) == 2
checks.check("gpus", ok, "want one GPU in each train job and two in evaluate", metatext,
             detail=", ".join(f"{k}: {meta[k][3]}" for k in ("train_a", "train_b", "evaluate") if meta[k]))

accounts = {k: v[1] if v else None for k, v in meta.items()}
jobids = [v[0] for v in meta.values() if v]
_, sacct = slurm("sacct", "-X", "-n", "-P", "-o", "JobID,JobName,State,Account,Partition")
rows = [line.split("|") for line in sacct.splitlines() if line.count("|") == 4]
checks.check(
    "account", set(accounts.values()) == {"lab"} and rows and all(r[3] == "lab" for r in rows),
    f"SLURM_JOB_ACCOUNT per rule {accounts}; sacct accounts {[r[3] for r in rows]}", metatext + "\n--- sacct\n" + sacct,
    detail="SLURM_JOB_ACCOUNT=lab in all 5 jobs, sacct Account lab",
)
checks.check(
    "accounting", len(rows) == 5 and all(r[2] == "COMPLETED" for r in rows) and sorted(r[0] for r in rows) == sorted(jobids),
    f"want the 5 jobs {sorted(jobids)} COMPLETED", sacct, detail=f"{len(rows)} jobs COMPLETED in partition {rows[0][4] if rows else '?'}",
)

calls = [line for line in CMDLOG.read_text().splitlines()] if CMDLOG.exists() else []
sbatch = [c for c in calls if re.match(r"\S+ sbatch ", c)]
gpu_opts = sorted(m.group(0) for c in sbatch for m in [re.search(r"--gpus=\d", c)] if m)
checks.check(
    "sbatch calls", len(sbatch) == 5 and all(" -A lab " in c for c in sbatch) and gpu_opts == ["--gpus=1", "--gpus=1", "--gpus=2"],
    f"want 5 sbatch calls with -A lab, GPU options --gpus=1 x2 and --gpus=2; got {len(sbatch)}, GPU options {gpu_opts}",
    "\n".join(sbatch), detail=f"{len(sbatch)} x sbatch -A lab, {' '.join(gpu_opts)}",
)
print(f"snakemake suite: {time.monotonic() - t0:.0f} s", flush=True)
checks.done()
