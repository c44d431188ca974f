#!/bin/bash
# test-checkpoint.sh: checks that train_counter.py and train_counter.sh
# follow the yield protocol, by running them directly (no scheduler):
#
#   - a run straight through ends with "done: steps=N checksum=X" and the
#     checksum the recurrence gives;
#   - a run stopped by SIGTERM half-way saves, exits 0, and a second run
#     with SLURM_RESTART_COUNT=1 SLITE_BATCH_SIZE=16 resumes where it
#     stopped, with batch size 16, and ends with the straight run's checksum;
#   - the same after SIGUSR1 sent twice to the whole process group (as
#     slurm-lite signals every process of a job), and after SIGKILL between two
#     checkpoints (the steps after the last checkpoint are done again);
#   - either program resumes the other's checkpoint.
#
# With "torch" (only when named: it needs PyTorch and takes a minute),
# train_torch.py on the CPU: stopped by SIGTERM (twice, to every process,
# DataLoader workers included) and resumed with the same batch size, it ends
# with exactly the model of a straight run; resumed with a quarter of the
# batch size (--lr-scaling=accumulate) it ends after the same number of
# optimizer steps. $TORCH_PYTHON (default python3) is the interpreter.
#
# Usage: test-checkpoint.sh [python|bash|torch]...   (default: python bash;
# python and torch are skipped, with a note, when the interpreter or
# PyTorch is missing). Exits 1 when a check fails, 2 on a usage error.
# TRAIN_STEPS and TRAIN_STEP_TIME change the size of the counter runs
# (default 60 steps of 0.02 s).
set -u -o pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd) || exit 2
steps=${TRAIN_STEPS:-60}
step_time=${TRAIN_STEP_TIME:-0.02}
every=10
readonly MOD=2147483647 MULT=1000003

impls=("$@")
if ((${#impls[@]} == 0)); then
	impls=(bash python)
fi
for impl in "${impls[@]}"; do
	case $impl in
	bash | python | torch) ;;
	*)
		echo "usage: test-checkpoint.sh [python|bash|torch]..." >&2
		exit 2
		;;
	esac
done
torch_python=${TORCH_PYTHON:-python3}
if [[ " ${impls[*]} " == *" torch "* ]] && ! "$torch_python" -c 'import torch' 2>/dev/null; then
	echo "# $torch_python cannot import torch: skipping train_torch.py (set TORCH_PYTHON)"
	impls=("${impls[@]/torch/}")
fi
if ! command -v python3 >/dev/null; then
	echo "# python3 not found: skipping train_counter.py"
	impls=("${impls[@]/python/}")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/test-checkpoint.XXXXXX") || exit 2
trap 'rm -rf -- "$work"' EXIT

failures=0
fail() {
	echo "FAIL - $*"
	failures=$((failures + 1))
}
ok() { echo "ok - $*"; }

# prog IMPL: the command that runs IMPL's program.
prog() {
	case $1 in
	bash) echo "bash $here/train_counter.sh" ;;
	python) echo "python3 $here/train_counter.py" ;;
	esac
}

# run IMPL DIR LOG [VAR=VALUE...]: runs IMPL to its end in the foreground.
run() {
	local impl=$1 dir=$2 log=$3
	shift 3
	# shellcheck disable=SC2046 # prog's words are meant to split
	env -u SLITE_BATCH_SIZE -u SLURM_RESTART_COUNT SLITE_CHECKPOINT_DIR="$dir" "$@" \
		$(prog "$impl") --steps "$steps" --step-time "$step_time" --checkpoint-every "$every" \
		--batch-size 32 >"$log" 2>&1
}

# start IMPL DIR LOG: runs IMPL in the background, in a process group of
# its own, with the job's first-run environment; sets $pid.
start() {
	local impl=$1 dir=$2 log=$3
	# shellcheck disable=SC2046
	setsid env -u SLITE_BATCH_SIZE -u SLURM_RESTART_COUNT SLITE_CHECKPOINT_DIR="$dir" \
		$(prog "$impl") --steps "$steps" --step-time "$step_time" --checkpoint-every "$every" \
		--batch-size 32 >"$log" 2>&1 &
	pid=$!
}

# wait_for FILE TENTHS: until FILE exists, for at most TENTHS/10 s.
wait_for() {
	local i
	for ((i = 0; i < $2; i++)); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# last_line LOG, saved_step DIR, checksum_of LINE
last_line() { tail -n 1 -- "$1"; }
saved_step() { sed -n 's/.*"step": \([0-9]*\).*/\1/p' -- "$1/state.json"; }

# expected: the checksum of $steps steps, from the recurrence itself.
expected() {
	local c=0 s
	for ((s = 0; s < steps; s++)); do
		c=$(((c * MULT + s * s + 12345) % MOD))
	done
	echo "$c"
}
want="done: steps=$steps checksum=$(expected)"

show() {
	sed 's/^/#   /' -- "$1"
}

# check_done LOG WHAT: the run's last line is the straight run's.
check_done() {
	local got
	got=$(last_line "$1")
	if [[ $got == "$want" ]]; then
		ok "$2: $got"
	else
		fail "$2: last line is '$got', want '$want'"
		show "$1"
	fi
}

# interrupt IMPL NAME SIGNAL TARGET: starts IMPL, waits for its first
# checkpoint, sends SIGNAL to TARGET ("pid" or "group"), waits for its
# exit; sets $stopped_at (the step it saved) or fails.
interrupt() {
	local impl=$1 name=$2 sig=$3 target=$4 rc
	local dir=$work/$name log=$work/$name.1.log
	stopped_at=""
	start "$impl" "$dir" "$log"
	if ! wait_for "$dir/state.json" 100; then
		fail "$name: no checkpoint within 10 s"
		kill -KILL -- "-$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		show "$log"
		return 1
	fi
	if [[ $target == group ]]; then
		kill "-$sig" -- "-$pid"
		# A second signal (slurm-lite's, then --signal=B:'s) must not matter.
		sleep 0.02
		kill "-$sig" -- "-$pid" 2>/dev/null
	else
		kill "-$sig" "$pid"
	fi
	wait "$pid" 2>/dev/null # no "Killed" note from bash
	rc=$?
	if [[ $(last_line "$log") == done:* ]]; then
		fail "$name: finished before SIG$sig arrived; make TRAIN_STEPS larger"
		show "$log"
		return 1
	fi
	stopped_at=$(saved_step "$dir")
	if [[ $sig == KILL ]]; then
		if ((rc != 137)); then
			fail "$name: exit status $rc after SIGKILL, want 137"
			return 1
		fi
		ok "$name: killed; last checkpoint at step $stopped_at"
		return 0
	fi
	if ((rc != 0)); then
		fail "$name: exit status $rc after SIG$sig, want 0"
		show "$log"
		return 1
	fi
	if ! grep -qx "caught SIG$sig at step $stopped_at: checkpoint saved, exiting" -- "$log"; then
		fail "$name: no 'caught SIG$sig at step $stopped_at' line (state.json has step $stopped_at)"
		show "$log"
		return 1
	fi
	ok "$name: stopped by SIG$sig at step $stopped_at, exit 0"
}

# resume IMPL NAME: runs IMPL again on NAME's checkpoint as a yield's
# requeue would (restart 1, batch size 16) and checks the result.
resume() {
	local impl=$1 name=$2
	local dir=$work/$name log=$work/$name.2.log
	if ! run "$impl" "$dir" "$log" SLURM_RESTART_COUNT=1 SLITE_BATCH_SIZE=16; then
		fail "$name: the resumed run failed"
		show "$log"
		return
	fi
	if ! grep -qx "resumed at step $stopped_at with batch size 16 (restart 1)" -- "$log"; then
		fail "$name: no 'resumed at step $stopped_at with batch size 16 (restart 1)' line"
		show "$log"
	fi
	check_done "$log" "$name: resumed"
	# Steps before the stop ran with 32, the rest with 16.
	local samples=$((stopped_at * 32 + (steps - stopped_at) * 16))
	if ! grep -q "\"samples\": $samples}" -- "$dir/result.json"; then
		fail "$name: result.json $(<"$dir/result.json") lacks \"samples\": $samples"
	fi
}

for impl in "${impls[@]}"; do
	[[ -n $impl && $impl != torch ]] || continue
	echo "# $impl: $steps steps of $step_time s, a checkpoint every $every"

	run "$impl" "$work/$impl-straight" "$work/$impl-straight.log" || fail "$impl-straight: exit status $?"
	check_done "$work/$impl-straight.log" "$impl-straight"

	interrupt "$impl" "$impl-term" TERM pid && resume "$impl" "$impl-term"
	interrupt "$impl" "$impl-usr1-group" USR1 group && resume "$impl" "$impl-usr1-group"
	interrupt "$impl" "$impl-kill" KILL group && resume "$impl" "$impl-kill"
done

# Both programs write the same state.json: each resumes the other's run.
if [[ " ${impls[*]} " == *" bash "* && " ${impls[*]} " == *" python "* ]]; then
	echo "# cross: one program resumes the other's checkpoint"
	interrupt python python-then-bash TERM pid && resume bash python-then-bash
	interrupt bash bash-then-python TERM pid && resume python bash-then-python
fi

# torch_cmd NAME [VAR=VALUE...] -- [ARG...]: sets $cmd to the command that
# runs train_torch.py, small, on the CPU, with its checkpoints in $work/NAME.
torch_cmd() {
	local name=$1
	shift
	local vars=()
	while (($# > 0)) && [[ $1 != -- ]]; do
		vars+=("$1")
		shift
	done
	shift
	cmd=(env -u SLITE_BATCH_SIZE -u SLURM_RESTART_COUNT CUDA_VISIBLE_DEVICES= SLITE_CHECKPOINT_DIR="$work/$name"
		"${vars[@]}" "$torch_python" "$here/train_torch.py" --epochs 3 --samples 6000 --dim 32
		--batch-size 64 --checkpoint-every 20 --num-workers 2 "$@")
}

# same_model A B: whether two runs' model.pt are equal, bit for bit.
same_model() {
	"$torch_python" - "$work/$1/model.pt" "$work/$2/model.pt" <<-'EOF'
		import sys, torch
		a, b = (torch.load(p) for p in sys.argv[1:])
		sys.exit(0 if a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a) else 1)
	EOF
}

# torch_case NAME SCALING BATCH: a straight run, then one stopped by
# SIGTERM and resumed with batch size BATCH; sets $straight and $resumed
# to their last lines.
torch_case() {
	local name=$1 scaling=$2 batch=$3 pid rc
	straight="" resumed=""
	local cmd
	torch_cmd "$name-straight" -- --lr-scaling "$scaling"
	if ! "${cmd[@]}" >"$work/$name-straight.log" 2>&1; then
		fail "$name: the straight run failed"
		show "$work/$name-straight.log"
		return 1
	fi
	straight=$(last_line "$work/$name-straight.log")
	# In a process group of its own, signalled whole (DataLoader workers
	# too), as slurm-lite signals every process of a job.
	torch_cmd "$name" -- --lr-scaling "$scaling"
	setsid "${cmd[@]}" >"$work/$name.1.log" 2>&1 &
	pid=$!
	if ! wait_for "$work/$name/checkpoint.pt" 600; then
		fail "$name: no checkpoint within 60 s"
		kill -KILL -- "-$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		show "$work/$name.1.log"
		return 1
	fi
	kill -TERM -- "-$pid"
	sleep 0.05
	kill -TERM -- "-$pid" 2>/dev/null # a second signal must not matter
	wait "$pid"
	rc=$?
	if ((rc != 0)) || ! grep -q "^caught SIGTERM" "$work/$name.1.log"; then
		fail "$name: exit status $rc after SIGTERM, want 0 and a 'caught SIGTERM' line"
		show "$work/$name.1.log"
		return 1
	fi
	ok "$name: $(grep "^caught" "$work/$name.1.log")"
	torch_cmd "$name" SLURM_RESTART_COUNT=1 SLITE_BATCH_SIZE="$batch" -- --lr-scaling "$scaling"
	if ! "${cmd[@]}" >"$work/$name.2.log" 2>&1; then
		fail "$name: the resumed run failed"
		show "$work/$name.2.log"
		return 1
	fi
	if ! grep -q "^resumed at step [1-9][0-9]* with batch size $batch (restart 1)" "$work/$name.2.log"; then
		fail "$name: no 'resumed at step K with batch size $batch (restart 1)' line"
		show "$work/$name.2.log"
		return 1
	fi
	resumed=$(last_line "$work/$name.2.log")
}

if [[ " ${impls[*]} " == *" torch "* ]]; then
	echo "# torch: train_torch.py on the CPU"
	if torch_case torch-same none 64; then
		if [[ $resumed == "$straight" ]] && same_model torch-same-straight torch-same; then
			ok "torch-same: resumed: $resumed, the straight run's model bit for bit"
		else
			fail "torch-same: resumed run ends '$resumed', straight '$straight', or their models differ"
		fi
	fi
	if torch_case torch-accumulate accumulate 16; then
		# Same optimizer steps; the sums of gradients differ by rounding only.
		if [[ ${resumed% loss=*} == "${straight% loss=*}" ]]; then
			ok "torch-accumulate: resumed with batch size 16: $resumed (straight: $straight)"
		else
			fail "torch-accumulate: resumed run ends '$resumed', straight '$straight'"
		fi
	fi
fi

if ((failures > 0)); then
	echo "# $failures check(s) failed"
	exit 1
fi
echo "# all checks passed"
