#!/usr/bin/env python3
"""A lab's REST client of Slurm, standard library only: what a web service or
a laptop script does with slurmrestd's v0.0.38 API and a token from
`scontrol token`. It runs unchanged against slurm-lite (make test-clients)
and against Debian's real slurmrestd 22.05 (make test-slurm).

    SLURM_REST_URL=http://127.0.0.1:6820 python3 rest_client.py [WORKDIR]

It gets a token with `scontrol token` (the scontrol first on PATH), then:
pings; submits a GPU job (gres gpu:1) and polls it to COMPLETED; checks that
it ran as this user with a GPU; reads its accounting from slurmdb (polling
until the record is there: slurmdbd takes a moment); submits a second job
and cancels it with DELETE; and checks that a forged token is refused.
WORKDIR (default: the current directory) must be writable by this user:
the jobs run there and write their output there.

Prints "ok   rest: CHECK (detail)" or "FAIL rest: CHECK: why" per check
and exits 1 if a check failed (scripts/test-clients counts these lines).
"""

import getpass
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("SLURM_REST_URL", "http://127.0.0.1:6820").rstrip("/")
V = "/slurm/v0.0.38"
DB = "/slurmdb/v0.0.38"
USER = getpass.getuser()
failed = 0


def ok(name, detail=""):
    print(f"ok   rest: {name}" + (f" ({detail})" if detail else ""), flush=True)


def fail(name, why, evidence=""):
    global failed
    failed += 1
    print(f"FAIL rest: {name}: {why}", flush=True)
    for line in str(evidence).splitlines()[:40]:
        print("     " + line)


def token():
    out = subprocess.run(["scontrol", "token", "lifespan=900"], capture_output=True, text=True, timeout=30)
    for line in out.stdout.splitlines():
        if line.startswith("SLURM_JWT="):
            return line[len("SLURM_JWT="):]
    raise SystemExit(f"FAIL rest: scontrol token: no SLURM_JWT= line\n{out.stdout}{out.stderr}")


TOKEN = token()


def call(method, path, body=None, tok=None):
    """(status, decoded JSON or text) of one request."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("X-SLURM-USER-NAME", USER)
    req.add_header("X-SLURM-USER-TOKEN", tok or TOKEN)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def wait(what, fn, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.5)
    return None


def job_state(jobid):
    status, ans = call("GET", f"{V}/job/{jobid}")
    if status != 200 or not ans.get("jobs"):
        return None
    return ans["jobs"][0]


def submit(name, script, **props):
    job = {"name": name, "current_working_directory": WORK,
           "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin"}, **props}
    status, ans = call("POST", f"{V}/job/submit", {"script": script, "job": job})
    jobid = ans.get("job_id") if isinstance(ans, dict) else None
    if status != 200 or not jobid:
        fail(f"submit {name}", f"status {status}", json.dumps(ans, indent=1) if isinstance(ans, dict) else ans)
        return None
    return jobid


WORK = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")

# 1. ping
status, ans = call("GET", f"{V}/ping")
if status == 200 and ans["pings"] and ans["pings"][0]["ping"] == "UP":
    ok("ping", f"{ans['pings'][0]['hostname']} {ans['meta']['Slurm']['release']}")
else:
    fail("ping", f"status {status}", ans)

# 2. a GPU job, polled to its end
gpu = submit("rest-gpu", "#!/bin/bash\necho gpus=$CUDA_VISIBLE_DEVICES user=$(id -un)\n", gres="gpu:1", time_limit=5)
if gpu:
    ok("submit GPU job", f"job {gpu}")
    j = wait("end", lambda: (lambda s: s if s and s["job_state"] not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING") else None)(job_state(gpu)))
    if j and j["job_state"] == "COMPLETED":
        ok("GPU job polled to COMPLETED", f"tres {j['tres_req_str']}, user {j['user_name']}")
    else:
        fail("GPU job polled to COMPLETED", "it did not complete", json.dumps(j, indent=1)[:2000] if j else "no answer")
    if j and j["user_name"] == USER and "gres/gpu=1" in j["tres_req_str"]:
        ok("the job is this user's and asked for one GPU")
    elif j:
        fail("the job is this user's and asked for one GPU", f"user {j['user_name']}, tres {j['tres_req_str']}")
    out = os.path.join(WORK, f"slurm-{gpu}.out")
    text = wait("output", lambda: open(out).read() if os.path.exists(out) and os.path.getsize(out) else None, 30) or ""
    if f"user={USER}" in text and "gpus=\n" not in text and "gpus=" in text:
        ok("the job ran as this user with a GPU", text.strip())
    else:
        fail("the job ran as this user with a GPU", f"{out}", text)

    # 3. its accounting from slurmdb
    def record():
        status, ans = call("GET", f"{DB}/job/{gpu}")
        jobs = ans.get("jobs") if isinstance(ans, dict) else None
        if status == 200 and jobs and jobs[0]["state"]["current"] == "COMPLETED":
            return jobs[0]
        return None

    rec = wait("accounting", record, 60)
    if rec:
        gres = [t for t in rec["tres"]["allocated"] if t["type"] == "gres" and t["name"] == "gpu"]
        if rec["user"] == USER and rec["exit_code"]["return_code"] == 0 and gres and gres[0]["count"] == 1:
            ok("slurmdb accounting", f"job {rec['job_id']} {rec['state']['current']}, gres/gpu={gres[0]['count']}, elapsed {rec['time']['elapsed']} s")
        else:
            fail("slurmdb accounting", "user, exit code or GPU count wrong", json.dumps(rec, indent=1)[:3000])
    else:
        fail("slurmdb accounting", "no COMPLETED record", call("GET", f"{DB}/job/{gpu}"))

# 4. another job, cancelled
other = submit("rest-sleeper", "#!/bin/bash\nsleep 300\n", time_limit=10)
if other:
    wait("running", lambda: (job_state(other) or {}).get("job_state") == "RUNNING", 60)
    status, ans = call("DELETE", f"{V}/job/{other}?signal=KILL")
    if status == 200 and not ans["errors"]:
        ok("DELETE job", f"job {other}")
    else:
        fail("DELETE job", f"status {status}", ans)
    j = wait("cancelled", lambda: (lambda s: s if s and s["job_state"] == "CANCELLED" else None)(job_state(other)), 60)
    if j:
        ok("the cancelled job is CANCELLED")
    else:
        fail("the cancelled job is CANCELLED", "it is not", job_state(other))

# 5. a forged token is refused
head, claims, sig = TOKEN.split(".")
forged = f"{head}.{claims}.{'A' if sig[0] != 'A' else 'B'}{sig[1:]}"
status, ans = call("GET", f"{V}/jobs", tok=forged)
if status != 200 and isinstance(ans, dict) and ans["errors"] and not ans.get("jobs"):
    ok("forged token refused", f"{status} {ans['errors'][0]['error']}")
else:
    fail("forged token refused", f"status {status}", ans)

sys.exit(1 if failed else 0)
