// Package e2e runs Slurm's commands end to end: testscript scripts
// (testdata/) that start slurmd-lite and run sbatch, squeue, srun, ... as
// real processes (this test binary re-executed under each command's name),
// against the real daemon or a fake one serving recorded situations, and
// compare what they print with the golden outputs of real Slurm. It has
// tests only.
package e2e
