package cli

import (
	"io"

	"github.com/slurm-lite/slurm-lite/internal/sbatch"
)

// slurmVersion is the Slurm release whose behaviour and output we follow;
// every command's --version prints it because tools check it.
const slurmVersion = sbatch.Version

// Sbatch is the sbatch command. Its body is internal/sbatch, which
// cmd/sbatch calls directly so that the binary does not link this package
// (see there); tests drive it here with the other commands.
func Sbatch(args []string, sio IO) int { return sbatch.Main(args, sio) }

// printJobError prints a jobscript error in sbatch's words
// (sbatch.PrintJobError).
func printJobError(prog string, err error, w io.Writer) int {
	return sbatch.PrintJobError(prog, err, w)
}
