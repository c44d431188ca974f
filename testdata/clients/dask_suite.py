"""dask-jobqueue 0.9.0 against slurm-lite: scripts/test-clients runs this with
PYTHONPATH holding dask-jobqueue's source and this folder (Debian's
python3-distributed beside it), PATH starting with the logging shim, and
SLURM_LITE_CONF pointing at a fresh daemon.

    python3 dask_suite.py WORKDIR

Checks (each as real Slurm 22.05 behaves):
  job script   SLURMCluster's job script carries --gpus=1 (job_extra_directives)
  scale        scale(2): two worker jobs start and both workers join the
               scheduler
  gpus         each worker sees one GPU, and not the same one
  compute      a computation spread over both workers gives the right answer
  close        cluster.close(): both jobs end (COMPLETED or CANCELLED) and
               leave the queue
"""

import logging
import os
import re
import sys
import time
from pathlib import Path

from dask.distributed import Client
from dask_jobqueue import SLURMCluster

from common import Checks, final_state, sacct_text, slurm, tail, wait_for

WORK = Path(sys.argv[1]).resolve()
LOGS = WORK / "dask-logs"
checks = Checks("dask")
logging.basicConfig(level=logging.WARNING)
t0 = time.monotonic()


def worker_logs():
    out = []
    for p in sorted(LOGS.glob("*")):
        out += [f"--- {p.name} (last lines)", tail(p, 20)]
    return "\n".join(out)


def job_ids(cluster):
    return [j.job_id for j in cluster.workers.values() if getattr(j, "job_id", None)]


def evidence(ids):
    return "\n".join([sacct_text(i) for i in ids] + [worker_logs()])


def gpu_of_worker():
    return os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("SLURM_JOB_ID")


def work(x):
    import os
    import time

    time.sleep(0.01)
    return x * x, os.environ.get("SLURM_JOB_ID")


cluster = SLURMCluster(
    cores=1,
    processes=1,
    memory="1GB",
    walltime="00:10:00",
    job_name="dask-worker",
    job_extra_directives=["--gpus=1"],
    log_directory=str(LOGS),
    local_directory=str(WORK / "dask-tmp"),
    python=sys.executable,
    death_timeout=60,
    scheduler_options={"host": "127.0.0.1", "dashboard_address": None},
)
ids = []
try:
    script = cluster.job_script()
    checks.check(
        "job script", re.search(r"^#SBATCH --gpus=1$", script, re.M), "no '#SBATCH --gpus=1' line", script,
        detail="#SBATCH --gpus=1",
    )
    cluster.scale(2)
    client = Client(cluster, timeout=30)
    try:
        # Both jobs submitted (sbatch), both workers joined the scheduler.
        try:
            client.wait_for_workers(2, timeout=120)
            joined = True
        except Exception as e:  # TimeoutError
            joined = False
            why = repr(e)
        ids = job_ids(cluster)
        checks.check(
            "scale", joined and len(ids) == 2,
            f"want 2 jobs and 2 workers; jobs {ids}, workers {len(client.scheduler_info()['workers'])}"
            + ("" if joined else f", {why}"),
            evidence(ids), detail=f"jobs {ids}, 2 workers in {time.monotonic() - t0:.0f} s",
        )
        if joined:
            gpus = client.run(gpu_of_worker)  # {worker address: (CUDA_VISIBLE_DEVICES, SLURM_JOB_ID)}
            vals = sorted(g for g, _ in gpus.values())
            checks.check(
                "gpus", len(vals) == 2 and all(v is not None and re.fullmatch(r"[0-3]", v) for v in vals) and vals[0] != vals[1],
                f"want one distinct GPU per worker, got {gpus}", evidence(ids),
                detail=", ".join(f"job {j}: CUDA_VISIBLE_DEVICES={g}" for g, j in sorted(gpus.values(), key=lambda v: v[1] or "")),
            )
            # The computation: squares summed, each worker given half of it.
            workers = list(client.scheduler_info()["workers"])
            futs = [client.submit(work, x, workers=[workers[x % 2]], pure=False) for x in range(200)]
            res = client.gather(futs)
            total = client.submit(sum, [r[0] for r in res]).result()
            seen = sorted({j for _, j in res})
            checks.check(
                "compute", total == sum(x * x for x in range(200)) and seen == sorted(ids),
                f"sum {total} (want {sum(x * x for x in range(200))}), computed in jobs {seen} (want {sorted(ids)})",
                evidence(ids), detail=f"sum of squares {total} from jobs {seen}",
            )
    finally:
        client.close()
finally:
    ids = ids or job_ids(cluster)
    cluster.close()  # scancel each job

ended = wait_for(lambda: all(final_state(i) in ("COMPLETED", "CANCELLED") or final_state(i).startswith("CANCELLED") for i in ids), 30)
gone = wait_for(lambda: slurm("squeue", "-h", "-o", "%i")[1].strip() == "", 30)
_, sq = slurm("squeue", "-o", "%i %j %T %M")
checks.check(
    "close", ids and ended and gone,
    f"jobs {ids} after cluster.close(): states {[final_state(i) for i in ids]}, squeue:\n{sq}", evidence(ids),
    detail=f"jobs {', '.join(f'{i} {final_state(i)}' for i in ids)}",
)
print(f"dask suite: {time.monotonic() - t0:.0f} s", flush=True)
checks.done()
