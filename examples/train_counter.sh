#!/bin/bash
# train_counter.sh: train_counter.py in plain bash, for machines without
# Python. The same options, the same output lines, the same state.json and
# result.json (either program can resume the other's run), and the same
# checksum. Needs bash 4 and coreutils (sleep with fractions, sync, mv).
#
# The protocol, as train_counter.py's docstring explains it:
#   - batch size: $SLITE_BATCH_SIZE, else --batch-size, else 32;
#   - state in $SLITE_CHECKPOINT_DIR/state.json (else ./checkpoint), written
#     to a temporary file, synced, renamed, and the directory synced;
#   - saved every --checkpoint-every steps, and on SIGTERM, SIGUSR1,
#     SIGUSR2 or SIGINT: the trap only sets a flag, the loop finishes its
#     step, saves and exits 0;
#   - resumed from state.json when it exists;
#   - the last line is "done: steps=N checksum=X", plus result.json.
set -u -o pipefail

# c = (c * MULT + step * step + 12345) mod MOD; see train_counter.py.
readonly MOD=2147483647 MULT=1000003

die() {
	echo "train_counter: $*" >&2
	exit 2
}

usage() {
	echo "usage: train_counter.sh [--steps N] [--step-time SECONDS] [--checkpoint-every N] [--batch-size N] [--checkpoint-dir DIR]"
}

is_count() { [[ $1 =~ ^[0-9]+$ ]]; }
is_positive() { [[ $1 =~ ^[0-9]+$ && $1 =~ [1-9] ]]; }

options="--steps --step-time --checkpoint-every --batch-size --checkpoint-dir"
steps=300 step_time=0.05 every=50 flag_batch="" flag_dir=checkpoint
while (($# > 0)); do
	opt=$1 val=""
	case $opt in
	-h | --help)
		usage
		exit 0
		;;
	--*=*) val=${opt#*=} opt=${opt%%=*} ;;
	--*)
		[[ " $options " == *" $opt "* ]] || die "unknown option '$opt'; $(usage)"
		(($# >= 2)) || die "$opt needs a value"
		val=$2
		shift
		;;
	*) die "unexpected argument '$opt'; $(usage)" ;;
	esac
	shift
	case $opt in
	--steps) is_count "$val" || die "--steps=$val is not a whole number"; steps=$val ;;
	--step-time) [[ $val =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || die "--step-time=$val is not a number of seconds"; step_time=$val ;;
	--checkpoint-every) is_positive "$val" || die "--checkpoint-every=$val is not a positive whole number"; every=$val ;;
	--batch-size) is_positive "$val" || die "--batch-size=$val is not a positive whole number"; flag_batch=$val ;;
	--checkpoint-dir) [[ -n $val ]] || die "--checkpoint-dir is empty"; flag_dir=$val ;;
	*) die "unknown option '$opt'; $(usage)" ;;
	esac
done
# Strip leading zeros, which $(( )) would read as octal.
steps=$((10#$steps)) every=$((10#$every))

# The trap only sets a flag: saving from inside it could write a state that
# is half-way through a step. slurm-lite may signal every process of the
# job, so the first signal is the one reported.
stop=""
for sig in TERM USR1 USR2 INT; do
	# shellcheck disable=SC2064 # $sig is meant to expand now, $stop later
	trap "[[ -n \$stop ]] || stop=SIG$sig" "$sig"
done

if [[ -n ${SLITE_BATCH_SIZE:-} ]]; then
	is_positive "$SLITE_BATCH_SIZE" || die "SLITE_BATCH_SIZE='$SLITE_BATCH_SIZE' is not a positive whole number"
	batch=$((10#$SLITE_BATCH_SIZE)) source=SLITE_BATCH_SIZE
elif [[ -n $flag_batch ]]; then
	batch=$((10#$flag_batch)) source=--batch-size
else
	batch=32 source=default
fi
restart=${SLURM_RESTART_COUNT:-0}
ckdir=${SLITE_CHECKPOINT_DIR:-$flag_dir}
mkdir -p -- "$ckdir" || die "cannot create $ckdir"
state=$ckdir/state.json
echo "batch size $batch ($source), checkpoints in $ckdir"

# write_atomically PATH TEXT: a crash leaves the old file or the new one.
write_atomically() {
	local tmp=$1.tmp
	printf '%s\n' "$2" >"$tmp" || die "cannot write $tmp"
	# sync FILE fsyncs just that file (coreutils 8.24+); older: everything.
	sync -- "$tmp" 2>/dev/null || sync
	mv -f -- "$tmp" "$1" || die "cannot rename $tmp to $1"
	sync -- "$(dirname -- "$1")" 2>/dev/null || sync
}

save() {
	write_atomically "$state" \
		"{\"step\": $step, \"batch_size\": $batch, \"checksum\": $checksum, \"samples\": $samples}"
}

# field NAME: NAME's value in $saved (the one layout both programs write).
field() {
	[[ $saved =~ \"$1\":\ *(-?[0-9]+) ]] || die "$state lacks $1; move it away to start over"
	echo "$((10#${BASH_REMATCH[1]}))"
}

if [[ -e $state ]]; then
	# Never start over silently: that would redo (or hide) finished work.
	saved=$(<"$state") || die "cannot read $state"
	step=$(field step) && old_batch=$(field batch_size) && checksum=$(field checksum) &&
		samples=$(field samples) || exit 2
	echo "resumed at step $step with batch size $batch (restart $restart)"
	if ((old_batch != batch)); then
		echo "batch size changed from $old_batch to $batch"
	fi
else
	step=0 checksum=0 samples=0
	echo "starting at step 0 (restart $restart)"
fi

while ((step < steps)); do
	[[ -z $stop ]] || break
	# The work of one step. A signal sent to every process of the job kills
	# sleep too; the loop then sees the flag after this step.
	sleep "$step_time" || true
	checksum=$(((checksum * MULT + step * step + 12345) % MOD))
	samples=$((samples + batch))
	step=$((step + 1))
	if ((step % every == 0)); then
		save
	fi
done

if ((step < steps)); then
	save
	echo "caught $stop at step $step: checkpoint saved, exiting"
	exit 0
fi

save
write_atomically "$ckdir/result.json" \
	"{\"steps\": $step, \"checksum\": $checksum, \"batch_size\": $batch, \"samples\": $samples}"
echo "done: steps=$step checksum=$checksum"
