// Package format prints jobs as Slurm 22.05's commands print them: squeue's
// -o and -O fields with their widths and justification, its sort order,
// scontrol show job's record and sacct's columns. Everything here is pure:
// jobs (api.Job, store.Record) and an Env (clock, configuration, group
// names) in, text out; the commands in internal/cli fetch the jobs and
// decide which to show.
//
//	squeue   ParseFormat / ParseLongFormat -> Format; NewRow per job;
//	         SortRows; Format.Header and Format.Line
//
// Where a value is Slurm's C NULL the field holds Null, which prints
// "(null)" as glibc's printf does (or nothing, when a precision under six
// cuts it). Values that only mean something on a cluster (sockets, core
// specialisation, federation, burst buffers) print what Slurm prints for a
// job that never set them.
//
// Glossary:
//   - pending record: an array's row for its tasks not started yet,
//     printed A_[0-3%2] (Row.Tasks holds what is inside the brackets).
//   - cut: _print_str's cut_output; a right-justified value longer than its
//     width is cut unless the field is printed whole (node lists, times).
package format
