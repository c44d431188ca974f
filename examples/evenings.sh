#!/bin/sh
# "The evening is for long runs": a DAILY reservation, as Slurm writes one.
# Every day from 18:00 to 08:00 (14 hours) two of the GPUs are set aside for
# the accounts that train long; jobs of other accounts never get those two
# GPUs then, and a job whose time limit would run into the evening waits for
# the GPUs outside it, or until 08:00 (squeue: ReqNodeNotAvail, May be
# reserved for other job). Root or an operator runs this once; it recurs by
# itself and survives daemon restarts.
#
#   sh examples/evenings.sh                   # Reservation created: evenings
#   sinfo -T                                  # its window in force or next
#   scontrol show reservation evenings        # the whole of it
#   sbatch --reservation=evenings -t 12:00:00 train.slurm   # a long run, inside it
#   scontrol update ReservationName=evenings TRES=gres/gpu=3   # more GPUs from now on
#   scontrol delete reservation evenings
#
# On real Slurm 23.02 and later the same line works; 22.05 cannot reserve GPUs
# (TRES=gres/gpu) and reserves whole nodes instead (Nodes=...): slurmd-lite export
# writes reservations.sh with both.
set -eu
scontrol create reservation ReservationName=evenings \
	StartTime=18:00 Duration=14:00:00 Flags=DAILY \
	Accounts="${ACCOUNTS:-lab}" TRES=gres/gpu="${GPUS:-2}"
