#!/usr/bin/env python3
"""A PyTorch training loop that follows slurm-lite's yield protocol.

train_counter.py shows the protocol with a counter; this is the same
pattern for a real model (a small regression network on synthetic data, so
it runs anywhere; put your own model and dataset in make_model and
make_dataset). What makes it stoppable and resumable:

  - Batch size: $SLITE_BATCH_SIZE (the job's declared --batch-size on its
    first run, the one a yield asked for after), else --batch-size, else 32.
    The DataLoader is built from it on every run.
  - Checkpoint: $SLITE_CHECKPOINT_DIR/checkpoint.pt (./checkpoint when the
    variable is unset, e.g. under real Slurm) holds the model, the
    optimizer, the epoch, the number of samples of that epoch already seen,
    the optimizer step and the random number generators. It is written with
    torch.save to a temporary file, fsynced and renamed, so a kill at any
    moment leaves the old checkpoint or the new one.
  - Position in samples, not batches: each epoch visits the samples in a
    fixed order (a permutation seeded by the epoch), and a resumed run
    skips the samples already seen. A batch count would mean something
    else once the batch size changes; a sample count does not.
  - Signals: SIGTERM (what a yield, scancel and the time limit send),
    SIGUSR1/SIGUSR2 (for jobs that ask --signal=B:USR1@...) and SIGINT only
    set a flag. The loop checks it after each optimizer step, saves and
    exits 0. A step must therefore take less than the grace time (the
    partition's GraceTime, else KillWait: 30 s by default), and so must the
    save.
  - DataLoader workers: slurm-lite signals every process of the job, and a
    worker that dies of SIGTERM makes PyTorch raise in the main process
    ("DataLoader worker ... is killed by signal"), possibly in the middle
    of a step. The workers therefore ignore those signals (worker_init_fn);
    the main process alone decides when to stop, and the workers end with
    it.

Learning rate when the batch size changes (--lr-scaling):
  linear      lr = base_lr * batch / base_batch (Goyal et al., 2017, "Accurate,
              Large Minibatch SGD"): the usual rule for SGD; the default.
  sqrt        lr = base_lr * sqrt(batch / base_batch): often better for Adam.
  none        keep base_lr.
  accumulate  keep base_lr and the effective batch: accumulate the gradients
              of base_batch / batch smaller batches before each optimizer step.
              The same training, in less GPU memory, at some cost in speed.
              (When batch does not divide base_batch: the nearest whole number
              of batches, and linear scaling for the difference.)
base_batch is --base-batch-size (default: --batch-size, else 32), the batch
size base_lr was tuned for. Optimizer state (momentum, Adam's moments) is
kept across a change; the learning rate is set after loading it, since
load_state_dict restores the old one.

Needs PyTorch 1.13 or later (torch.load's weights_only). Run it from a
job script like checkpoint-torch.slurm, or directly: python3 train_torch.py.
"""

import argparse
import math
import os
import signal
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

CHECKPOINT = "checkpoint.pt"
DEFAULT_BATCH_SIZE = 32
STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT)

# Set by the signal handler, read by the training loop after each optimizer
# step: saving from inside the handler could catch a step half-way.
stop_signal = None


def on_signal(signum, frame):
    global stop_signal
    if stop_signal is None:  # slurm-lite may signal more than once: keep the first
        stop_signal = signum


def ignore_stop_signals(worker_id):
    """Ignore the stop signals: in DataLoader workers (worker_init_fn), so
    that the main process alone reacts to them; in the main process once it
    has saved, since Python's shutdown puts back the default action of a
    signal that had a handler, and a second SIGTERM then would turn exit 0
    into death by signal."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


class ResumableSampler(Sampler):
    """The samples of one epoch in a fixed order, from sample `start` on.

    The order depends only on (seed, epoch), so a run that resumes half-way
    through an epoch, with any batch size, sees exactly the samples the
    stopped run had not.
    """

    def __init__(self, n, seed, epoch, start=0):
        self.n, self.seed, self.epoch, self.start = n, seed, epoch, start

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed * 100003 + self.epoch)
        return iter(torch.randperm(self.n, generator=g)[self.start:].tolist())

    def __len__(self):
        return self.n - self.start


def make_dataset(n, dim, seed):
    """Synthetic regression data, the same on every run (seeded)."""
    g = torch.Generator()
    g.manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    w = torch.randn(dim, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def make_model(dim):
    return nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))


def positive_int(name, text):
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise SystemExit("train_torch: %s=%r is not a positive whole number" % (name, text))
    return n


def batch_size(args):
    """The batch size for this run, and where it came from."""
    env = os.environ.get("SLITE_BATCH_SIZE", "")
    if env:
        return positive_int("SLITE_BATCH_SIZE", env), "SLITE_BATCH_SIZE"
    if args.batch_size is not None:
        return args.batch_size, "--batch-size"
    return DEFAULT_BATCH_SIZE, "default"


def learning_rate(rule, base_lr, base_batch, batch):
    """The learning rate and the gradient accumulation steps for batch."""
    if rule == "linear":
        return base_lr * batch / base_batch, 1
    if rule == "sqrt":
        return base_lr * math.sqrt(batch / base_batch), 1
    if rule == "accumulate":
        # A requeued job must not fail on an awkward batch size: the nearest
        # whole number of batches, and linear scaling for what is left over.
        steps = max(1, round(base_batch / batch))
        return base_lr * batch * steps / base_batch, steps
    return base_lr, 1


def save_atomically(obj, path):
    """torch.save that leaves the old file or the new one, never half of one."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)  # makes the rename itself durable
    finally:
        os.close(dfd)


def parse_args(argv):
    p = argparse.ArgumentParser(description="Train a small model; stop on a signal and resume.")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--samples", type=int, default=50000, help="size of the synthetic dataset")
    p.add_argument("--dim", type=int, default=64, help="input features of the synthetic dataset")
    p.add_argument("--batch-size", type=int, default=None, help="when SLITE_BATCH_SIZE is unset (default 32)")
    p.add_argument("--base-batch-size", type=int, default=None,
                   help="the batch size --lr was tuned for (default: --batch-size, else 32)")
    p.add_argument("--lr", type=float, default=0.01, help="learning rate at the base batch size")
    p.add_argument("--lr-scaling", choices=("linear", "sqrt", "none", "accumulate"), default="linear")
    p.add_argument("--checkpoint-every", type=int, default=500, help="optimizer steps between checkpoints")
    p.add_argument("--checkpoint-dir", default="checkpoint", help="when SLITE_CHECKPOINT_DIR is unset")
    p.add_argument("--num-workers", type=int, default=2, help="DataLoader worker processes")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    for name in ("epochs", "samples", "dim", "batch_size", "base_batch_size", "checkpoint_every"):
        v = getattr(a, name)
        if v is not None and v < 1:
            p.error("--%s must be 1 or more" % name.replace("_", "-"))
    return a


def main(argv):
    args = parse_args(argv)
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)

    batch, source = batch_size(args)
    base_batch = args.base_batch_size or args.batch_size or DEFAULT_BATCH_SIZE
    lr, accumulate = learning_rate(args.lr_scaling, args.lr, base_batch, batch)
    restart = os.environ.get("SLURM_RESTART_COUNT", "") or "0"
    ckdir = os.environ.get("SLITE_CHECKPOINT_DIR", "") or args.checkpoint_dir
    os.makedirs(ckdir, exist_ok=True)
    path = os.path.join(ckdir, CHECKPOINT)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print("batch size %d (%s), lr %g (%s), %s, checkpoints in %s"
          % (batch, source, lr, args.lr_scaling, device, ckdir), flush=True)

    torch.manual_seed(args.seed)
    data = make_dataset(args.samples, args.dim, args.seed)
    model = make_model(args.dim).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()

    # Where training stands: the epoch, the samples of it already seen, and
    # the optimizer steps taken.
    epoch, offset, step = 0, 0, 0
    if os.path.exists(path):
        # A full unpickle: the file is our own, in a directory only the
        # job's user can write, and torch 1.13's weights_only loader refuses
        # the optimizer's floats.
        ck = torch.load(path, map_location=device, weights_only=False)
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        epoch, offset, step = ck["epoch"], ck["offset"], ck["step"]
        torch.set_rng_state(ck["rng_cpu"])
        if device.type == "cuda" and ck.get("rng_cuda"):
            torch.cuda.set_rng_state_all(ck["rng_cuda"])
        print("resumed at step %d with batch size %d (restart %s): epoch %d, sample %d"
              % (step, batch, restart, epoch, offset), flush=True)
        if ck["batch_size"] != batch:
            print("batch size changed from %d to %d: lr %g -> %g"
                  % (ck["batch_size"], batch, ck["lr"], lr), flush=True)
    else:
        print("starting at step 0 (restart %s)" % restart, flush=True)
    for group in optimizer.param_groups:
        group["lr"] = lr  # after load_state_dict, which brought back the old one

    def save():
        save_atomically({
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "epoch": epoch,
            "offset": offset,
            "step": step,
            "batch_size": batch,
            "lr": lr,
            "rng_cpu": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state_all() if device.type == "cuda" else [],
        }, path)

    def stop(where):
        save()
        ignore_stop_signals(None)
        print("caught %s %s: checkpoint saved at step %d (epoch %d, sample %d), exiting"
              % (signal.Signals(stop_signal).name, where, step, epoch, offset), flush=True)
        return 0

    loss = None
    while epoch < args.epochs:
        if stop_signal is not None:
            return stop("between epochs")
        # A new DataLoader for every epoch and every run: the batch size and
        # the starting sample may have changed.
        loader = DataLoader(data, batch_size=batch, num_workers=args.num_workers,
                            sampler=ResumableSampler(len(data), args.seed, epoch, offset),
                            worker_init_fn=ignore_stop_signals, pin_memory=device.type == "cuda")
        # in_step: the model and optimizer are between two optimizer steps'
        # states, and so not fit to save.
        in_step, micro, seen = False, 0, 0
        total, batches = 0.0, 0
        try:
            for x, y in loader:
                in_step = True
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                out = loss_fn(model(x), y)
                (out / accumulate).backward()
                total, batches = total + out.item(), batches + 1
                micro, seen = micro + 1, seen + len(x)
                if micro < accumulate:
                    continue
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                offset, step, micro, seen = offset + seen, step + 1, 0, 0
                in_step = False
                if step % args.checkpoint_every == 0:
                    save()
                if stop_signal is not None:
                    return stop("at step %d" % step)
        except RuntimeError:
            # Most likely a DataLoader worker killed before worker_init_fn
            # ran. What is in memory is sound only between two steps.
            if stop_signal is None:
                raise
            if in_step:
                print("caught %s in the middle of a step: exiting; the last checkpoint stands"
                      % signal.Signals(stop_signal).name, flush=True)
                return 0
            return stop("while loading data")
        if micro > 0:
            # The epoch's last samples did not fill an accumulation: use them.
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            offset, step = offset + seen, step + 1
        loss = total / max(batches, 1)
        epoch, offset = epoch + 1, 0
        save()
        print("epoch %d: loss %.4f (step %d)" % (epoch, loss, step), flush=True)

    save_atomically(model.state_dict(), os.path.join(ckdir, "model.pt"))
    ignore_stop_signals(None)  # the work is saved: see ignore_stop_signals
    print("done: epochs=%d steps=%d loss=%s" % (epoch, step, "%.4f" % loss if loss is not None else "-"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
