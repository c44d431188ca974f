package srun

import "github.com/slurm-lite/slurm-lite/internal/jobscript"

// srun's and salloc's option tables are their columns of the one table
// sbatch's options live in too (jobscript.Table), as Slurm keeps one
// common_options.
var (
	srunTable   = jobscript.Table(jobscript.Srun)
	sallocTable = jobscript.Table(jobscript.Salloc)
)
