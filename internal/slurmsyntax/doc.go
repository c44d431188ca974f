// Package slurmsyntax reads and prints Slurm's text formats: time limits,
// memory sizes, job array specs, dependency specs, --begin times, --signal
// specs, output filename patterns and hostlists. Each behaves as Slurm
// 22.05 does; the Slurm source each follows is named at the function.
//
// All functions are pure: ParseBegin and ParseTime take the current time,
// nothing reads the environment, and every parser bounds its work (an array
// or hostlist cannot expand without limit), returns an error rather than
// panicking, and leaves wording Slurm's own messages to the caller (each
// doc comment says which message Slurm prints).
//
//	limit.go       ParseTimeLimit, ParseMinutes, ParseSeconds, FormatDuration, FormatClock
//	size.go        ParseSize, FormatSize
//	array.go       ParseArray, Array.String, FormatTasks, ArrayTaskStep
//	dependency.go  ParseDependency, Dependency.String, Dependency.Show
//	begin.go       ParseBegin, ParseTime (parse_time with its past flag, for sacct)
//	signal.go      ParseSignal, ParseSignalName, SignalName, SignalSpec.String
//	pattern.go     ExpandPattern, ShowPattern
//	hostlist.go    ExpandHostlist, NormalizeHostlist, CompressHostlist
//	scan.go        Strtol (C's strtol, for the commands and jobscript too) and the parsers' C-style reading
//
// # Glossary
//
//   - Time limit: a job's longest run, in whole minutes ("-t 5:30" is six
//     minutes: seconds round up). UNLIMITED (Infinite) is none; sbatch also
//     reads 0 as none. squeue prints "1-02:03:04", "2:03:04", "3:04";
//     scontrol, sinfo and sacct print "02:03:04" (FormatClock).
//   - MaxArraySize: slurm.conf's bound on array task ids (all below it);
//     1001 by default, at most 4000001.
//   - Throttle: the "%N" of --array, at most N tasks running at once.
//   - Dependency: a condition on other jobs before a job may start;
//     "after" (started), "afterok" (succeeded), "afternotok" (failed),
//     "afterany" (ended), "aftercorr" (the same task of another array
//     succeeded), "singleton" (no other job of this name and user runs),
//     "afterburstbuffer", "expand". Joined by "," all must hold; by "?"
//     any one.
//   - Begin time: the earliest a job may start (--begin); until then it
//     pends with reason BeginTime.
//   - Warning signal: --signal's signal, sent that many seconds before the
//     time limit; "B:" sends it to the batch shell only.
//   - NO_VAL: Slurm's "no value", 4294967294; an output pattern's %a is
//     this when the job is not an array.
//   - Hostlist: a compact list of host names, "gpu[01-03,7],cpu1".
//
// # Where we differ from Slurm
//
// Slurm's parsers are C, and some of what they accept comes from the way C
// reads numbers rather than from a design: a number with no digits reads
// as 0 and a negative one wraps when cast to unsigned. Where that lets odd
// input through with a meaning no one would choose, we refuse it:
//
//   - --array: "%8" or "-" alone (Slurm: task 0), "0-15%" (Slurm: no
//     throttle), a negative throttle.
//   - --dependency: "afterok:-5" (Slurm: job 4294967291), "afterok:5_"
//     (Slurm: task 0), "after:5+" (Slurm refuses too), text after a delay or
//     a state ("after:5+10x": Slurm stops reading there), stray characters
//     in "ID_[...]".
//   - --signal: "USR1@" (Slurm: 0 seconds), signal numbers outside 1..65535
//     (Slurm keeps the low 16 bits).
//   - --time: "-5" (Slurm: a negative limit used as unsigned).
//   - --mem: values that overflow (Slurm wraps).
//   - hostlists: an unclosed '[' (Slurm mangles the name: "gpu[1" becomes
//     "gpu]"), signs, blanks or text inside brackets.
//
// Other rules that may surprise, all as Slurm 22.05 does them: "1-" is one
// day; "afterok:1,afterok:2?afterok:3" is accepted and every clause becomes
// "any" (only one kind of separator is documented); "elevenses" is not a
// --begin time before Slurm 24.05; squeue prints times over a year as
// INVALID; "afterok:5_[1-9:2]" stops before 9 (bit_unfmt's step form).
package slurmsyntax
