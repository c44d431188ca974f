// Package jobscript reads a batch job exactly as Slurm 22.05's sbatch does:
// its command line, the #SBATCH directives of its script, the SBATCH_*
// environment variables, and slurm-lite's own #SLITE directives, into one
// typed Request; or into the error sbatch would print, with its exit code.
//
// It is pure: the caller reads the script file, the environment and the
// clock, and passes them in, so every quirk can be tested in a table.
//
//	cl, err := jobscript.ParseCommandLine(os.Args[1:])  // sbatch's first pass
//	... handle cl.Action (--help, --version), read cl.Script (or stdin) ...
//	req, err := jobscript.Parse(jobscript.Input{
//		Script: body, Command: cl, Env: os.LookupEnv, Now: time.Now(),
//	})
//	var e *jobscript.Error
//	if errors.As(err, &e) {
//		fmt.Fprint(os.Stderr, e.Stderr("sbatch"))
//		os.Exit(e.Exit)
//	}
//
// The pipeline follows src/sbatch/opt.c and src/sbatch/sbatch.c:
//
//	command line ──getopt "+"──▶ CommandLine  (every value checked: errors first)
//	script ──checks──▶ header lines ──get_argument──▶ one argv ──getopt──▶ options
//	#SLITE lines ──same rules──▶ extension options
//	SBATCH_* variables, in sbatch's table order ──▶ options
//	CommandLine's options ──▶ options            (each step overrides the last)
//	_opt_verify, GRES check ──▶ Request          (defaults, consistency; the
//	                                              GRES check may set tasks,
//	                                              nodes and CPUs per task)
//	controller's refusals (bad --dependency, --array, --nodes>1) ──▶ KindRejected
//
// Everything sbatch accepts is accepted: all 106 options of sbatch's table
// (src/common/slurm_opt.c), by long name, unambiguous prefix or letter. The
// ones that only matter on a cluster are kept in Request.Other so that
// scontrol can show them; an option outside the table is refused with
// sbatch's words.
//
// Where this package departs from Slurm, on purpose:
//   - #SLITE lines, which Slurm reads as comments, carry --gpu-mem,
//     --yieldable, --batch-size and --checkpoint-interval; these also work
//     on the command line.
//     On an #SBATCH line they are refused (real sbatch would refuse them
//     too, less helpfully), and a Slurm option on an #SLITE line is refused
//     (real sbatch would silently ignore it).
//   - --nodes above 1 is refused at submission with the words slurmctld
//     uses under EnforcePartLimits=ALL ("Node count specification
//     invalid"). Real slurmctld with its default EnforcePartLimits=NO
//     accepts such a job and leaves it pending for ever
//     (Reason=PartitionNodeLimit); on one machine it could never run.
//   - A negative time limit ("-t -5", which sbatch reads as minus five
//     days and slurmctld keeps as some 2982611 days) is refused.
//   - GRES names are not checked against a configuration (real sbatch
//     refuses a name missing from slurm.conf's GresTypes); the daemon
//     judges them.
//   - --uid and --gid are kept as given: whether the caller may use them
//     (root only) and whether the names exist is the caller's question
//     (Request.RequireRoot).
//   - Heterogeneous jobs (":" and "#SBATCH hetjob") are refused.
//   - #PBS and #BSUB directives are not translated (sbatch's xlate.c), and
//     the values of the cluster-only options that sbatch hands to plugins
//     (--cpu-freq, --gpu-freq, --mem-bind, --hint,
//     --acctg-freq, --power, --propagate) are kept as given, unchecked.
//
// Glossary:
//   - directive: a script line starting, at its very first byte, with
//     "#SBATCH" (or "#SLURM", with a warning); its words are options.
//   - header: the lines sbatch reads directives from: from the top to the
//     first line that is neither blank nor a comment.
//   - first pass: sbatch's reading of its command line before it opens the
//     script (ParseCommandLine); the second pass applies script,
//     environment and command line in that order (Parse).
//   - early option: -h, -V, -Q, -v, --usage, --wrap; read in the first pass
//     only, ignored in a script.
//   - set by CLI: Slurm's term for an option given in the script or on the
//     command line, as opposed to the environment; --mem and
//     --mem-per-cpu/--mem-per-gpu conflict only when both are "set by CLI".
//   - error_exit: the exit code of most of sbatch's failures: 1, or
//     $SLURM_EXIT_ERROR. Bad option values mostly exit 255 instead
//     (Slurm's exit(-1)).
//   - controller refusal: a request sbatch sends but slurmctld refuses
//     ("Batch job submission failed: Job dependency problem"); KindRejected.
//
// The corpus (testdata/corpus) records what real Slurm 22.05 does, and
// realslurm_test.go (build tag realslurm) replays it through a real sbatch
// on the golden cluster; the cases that differ on purpose are listed there
// with their reason.
package jobscript
