// Package format prints jobs as Slurm 22.05's commands print them: squeue's
// -o and -O fields with their widths and justification and its sort order,
// scontrol show job's record, and sacct's columns. Everything here is pure:
// jobs (api.Job, store.Record) and an Env (clock, configuration, group
// names) in, text out; the commands (internal/squeue, internal/sacct, ...)
// fetch the jobs and decide which to show.
//
//	squeue    NewRow per api.SqueueJob (compact list) or Rows(jobs) (full
//	          records) -> ControllerOrderRows -> SortRows
//	          ParseFormat (-o) / ParseLongFormat (-O) -> Format.Header, Format.Line
//	scontrol  ShowJob(job, task, details, oneLiner, env)
//	sacct     ParseAcctFields (-o) -> AcctPrinter{Columns}.Header, .Line(AcctRow)
//	sinfo     NewNodeView(node, drains, cfg, host) -> ParseSinfoFormat (-o) /
//	          ParseSinfoLongFormat (-O) -> BuildSinfo -> SortSinfo -> Header, Line;
//	          SinfoJSON for --json
//	scontrol  ShowNode(view), ShowPartition(p, node), ShowConfig(view)
//	sprio     ParsePrioFormat (-o) -> PrioFormat.Header, .Line, .Weights
//	sshare    ParseShareFields (-o) -> Sshare; sacctmgr MgrColumns -> List*
//
// One column engine (columns.go) serves the commands whose format the
// user chooses: each declares a table of fields (jobFields, sinfoFields,
// prioFields) and shares parseShort (-o "%.18i"), parseLong (-O
// "name:.18") and the _print_str renderer; sacct, sshare and sacctmgr
// share nameWidth ("name%width") and print_fields (printfields.go).
//
// What slurm-lite does not keep, but Slurm prints, comes from what it does
// keep: a job's memory and TRES from its request and allocation (billing
// by the partition's weights), AccrueTime from its eligible time,
// LastSchedEval from its start (else submission), AllocNode:Sid from the
// node's name. Values that only mean something on a cluster (sockets, core
// specialisation, federation, burst buffers) print what Slurm prints for a
// job that never set them.
//
// Orders follow Slurm's code to its ties: squeue sorts with glibc's merge
// sort (stable) from slurmctld's list order, whose quirks (array tasks taking
// the pending record's slot, jobs without a start time reversed) decide what
// equal keys leave; sacct sorts by submission, array, task and id.
//
// Glossary:
//   - pending record: an array's row for its tasks not started yet,
//     printed A_[0-3%2] (Row.Tasks holds what is inside the brackets).
//   - Null: a C NULL string in a field, which printf shows as "(null)", or
//     as nothing when a precision under six cuts it (glibc).
//   - cut: _print_str's cut_output; a right-justified value longer than its
//     width is cut unless the field is printed whole (node lists, times).
//   - TRES: trackable resources, "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=2".
package format
