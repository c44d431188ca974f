package api

import "fmt"

// WordsPathnameTooLong is slurm_strerror(ESLURM_PATHNAME_TOO_LONG): what
// slurmctld answers a submission with a string over its limit, the batch
// script over max_script_size included; sbatch prints it after "Batch job
// submission failed: ".
const WordsPathnameTooLong = "Pathname of a file, directory or other parameter too long"

// CodePathnameTooLong is ESLURM_PATHNAME_TOO_LONG.
const CodePathnameTooLong = 2012

// ScriptTooBig is the hint after Slurm's words for a batch script of size
// bytes over max_script_size (limit): the daemon answers it, and sbatch,
// which checks a script's size before reading it, prints the same.
func ScriptTooBig(size int64, limit int) string {
	return fmt.Sprintf("the batch script is %d bytes, more than max_script_size (%d bytes); make it smaller: have it read its data from files instead of holding them", size, limit)
}
