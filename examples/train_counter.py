#!/usr/bin/env python3
"""A stand-in for a training program that follows slurm-lite's yield protocol.

It "trains" by stepping a counter, and does everything a real trainer must
do to be stopped and resumed without losing or repeating work:

  - the batch size comes from SLITE_BATCH_SIZE (set by slurm-lite: the
    job's declared --batch-size on the first run, the one a yield asked
    for after it), else --batch-size, else 32;
  - its state lives in $SLITE_CHECKPOINT_DIR/state.json (./checkpoint
    without slurm-lite, e.g. under real Slurm), written atomically: a
    temporary file, fsync, rename, fsync of the directory, so a kill at
    any moment leaves either the old state or the new one;
  - it saves every --checkpoint-every steps, and on SIGTERM, SIGUSR1,
    SIGUSR2 or SIGINT: the handler only sets a flag, the loop finishes the
    step it is in, saves, and exits 0;
  - when state.json exists it resumes from it.

The checksum chains every step's index into one number, in order, and
does not depend on the batch size: a run that was stopped and resumed (any
number of times, with any batch sizes) ends with the same checksum as one
that ran straight through only if every step was done exactly once. Its
last line is "done: steps=N checksum=X"; it also writes result.json.

train_counter.sh is the same program in bash; the two read and write the
same state.json, so either can resume the other's run.

Standard library only; Python 3.6 or later.
"""

import argparse
import json
import os
import signal
import sys
import time

# The checksum's recurrence: c = (c * MULT + step * step + 12345) mod MOD.
# MOD is a prime below 2^31, so bash's 64-bit arithmetic computes the same
# numbers (train_counter.sh), and c -> c * MULT is a bijection mod MOD, so
# a step applied twice or skipped changes the result.
MOD = 2147483647
MULT = 1000003

DEFAULT_BATCH_SIZE = 32
STATE = "state.json"
RESULT = "result.json"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT)

# Set by the signal handler, read by the training loop: saving from inside
# the handler could write a state that is half-way through a step.
stop_signal = None


def on_signal(signum, frame):
    global stop_signal
    if stop_signal is None:  # slurm-lite may signal every process: once is enough
        stop_signal = signum


def die(msg):
    """Exits 2 with msg, as train_counter.sh does."""
    print("train_counter: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


def advance(checksum, step):
    """The checksum after doing step (0-based)."""
    return (checksum * MULT + step * step + 12345) % MOD


def positive_int(name, text):
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        die("%s=%r is not a positive whole number" % (name, text))
    return n


def write_atomically(path, data):
    """Write data to path so that a crash leaves the old file or the new one."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    # The rename is durable only once the directory is on disk too.
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def encode(state):
    # One fixed layout, which train_counter.sh also writes and reads.
    return '{"step": %d, "batch_size": %d, "checksum": %d, "samples": %d}\n' % (
        state["step"], state["batch_size"], state["checksum"], state["samples"])


def load(path):
    """The saved state, or None when there is none yet."""
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError as e:
        # Never start over silently: that would redo (or hide) finished work.
        die("%s is not a checkpoint (%s); move it away to start over" % (path, e))
    try:
        return {k: int(raw[k]) for k in ("step", "batch_size", "checksum", "samples")}
    except (KeyError, TypeError, ValueError):
        die("%s lacks step, batch_size, checksum or samples; move it away to start over" % path)


def parse_args(argv):
    p = argparse.ArgumentParser(description="A counter that checkpoints, stops on a signal and resumes.")
    p.add_argument("--steps", type=int, default=300, help="steps in all (default 300)")
    p.add_argument("--step-time", type=float, default=0.05, help="seconds per step (default 0.05)")
    p.add_argument("--checkpoint-every", type=int, default=50, help="save every N steps (default 50)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="batch size when SLITE_BATCH_SIZE is unset (default 32)")
    p.add_argument("--checkpoint-dir", default="checkpoint",
                   help="where to save when SLITE_CHECKPOINT_DIR is unset (default ./checkpoint)")
    a = p.parse_args(argv)
    if a.steps < 0 or a.step_time < 0 or a.checkpoint_every < 1 or (a.batch_size is not None and a.batch_size < 1):
        p.error("--steps and --step-time must be 0 or more, --checkpoint-every and --batch-size 1 or more")
    return a


def main(argv):
    args = parse_args(argv)
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)

    env_batch = os.environ.get("SLITE_BATCH_SIZE", "")
    if env_batch:
        batch, source = positive_int("SLITE_BATCH_SIZE", env_batch), "SLITE_BATCH_SIZE"
    elif args.batch_size is not None:
        batch, source = args.batch_size, "--batch-size"
    else:
        batch, source = DEFAULT_BATCH_SIZE, "default"
    restart = os.environ.get("SLURM_RESTART_COUNT", "") or "0"
    ckdir = os.environ.get("SLITE_CHECKPOINT_DIR", "") or args.checkpoint_dir
    os.makedirs(ckdir, exist_ok=True)
    state_path = os.path.join(ckdir, STATE)
    print("batch size %d (%s), checkpoints in %s" % (batch, source, ckdir), flush=True)

    state = load(state_path)
    if state is None:
        state = {"step": 0, "batch_size": batch, "checksum": 0, "samples": 0}
        print("starting at step 0 (restart %s)" % restart, flush=True)
    else:
        print("resumed at step %d with batch size %d (restart %s)" % (state["step"], batch, restart), flush=True)
        if state["batch_size"] != batch:
            # A real trainer rescales its learning rate here (train_torch.py).
            print("batch size changed from %d to %d" % (state["batch_size"], batch), flush=True)
        state["batch_size"] = batch

    def save():
        write_atomically(state_path, encode(state))

    while state["step"] < args.steps:
        if stop_signal is not None:
            break
        time.sleep(args.step_time)  # the work of one step
        state["checksum"] = advance(state["checksum"], state["step"])
        state["samples"] += batch
        state["step"] += 1
        if state["step"] % args.checkpoint_every == 0:
            save()

    # From here on the program only saves and exits. Python's shutdown puts
    # back the default action of a signal that had a handler, so a second
    # SIGTERM (slurm-lite signals every process; --signal=B: comes on top)
    # would turn exit 0 into death by signal: ignore them now.
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)

    if state["step"] < args.steps:
        save()
        name = signal.Signals(stop_signal).name
        print("caught %s at step %d: checkpoint saved, exiting" % (name, state["step"]), flush=True)
        return 0

    save()
    result = '{"steps": %d, "checksum": %d, "batch_size": %d, "samples": %d}\n' % (
        state["step"], state["checksum"], state["batch_size"], state["samples"])
    write_atomically(os.path.join(ckdir, RESULT), result)
    print("done: steps=%d checksum=%d" % (state["step"], state["checksum"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
