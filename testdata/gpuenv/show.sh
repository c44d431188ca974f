#!/bin/bash
# The GPU variables of the batch step, then of each task of one srun step.
gpuvars() { env | grep -E '^(CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES|SLURM_JOB_GPUS|SLURM_STEP_GPUS|SLURM_GPUS_ON_NODE|SLURMD_TRES_BIND|SLURM_GPUS|SLURM_GPUS_PER_NODE|SLURM_GPUS_PER_TASK|SLURM_GPUS_PER_SOCKET|SLURM_GPU_BIND|SLURM_NTASKS)=' | sort; }
echo "--- batch ---"
gpuvars
export -f gpuvars
srun bash -c 'gpuvars > task-$SLURM_JOB_ID-$SLURM_PROCID.env'
for f in task-$SLURM_JOB_ID-*.env; do
	t=${f%.env}
	echo "--- task ${t##*-} ---"
	cat "$f"
done
