package api

import "fmt"

// ScriptTooBig is the hint after Slurm's words for a batch script of size
// bytes over max_script_size (limit): the daemon answers it, and sbatch,
// which checks a script's size before reading it, prints the same.
func ScriptTooBig(size int64, limit int) string {
	return fmt.Sprintf("the batch script is %d bytes, more than max_script_size (%d bytes); make it smaller: have it read its data from files instead of holding them", size, limit)
}
