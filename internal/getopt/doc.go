// Package getopt parses command lines exactly as glibc's getopt_long does for
// Slurm's commands, so that sbatch, squeue, scancel, sacct, ... accept the
// same spellings and refuse the same mistakes, with the same words.
//
// A command describes its options once, in a table of [Option] values (long
// name, short letter, whether it takes an argument), and reads them back one
// at a time with a [Parser], or all at once with [Parse]:
//
//	p := getopt.NewParser(table, getopt.RequireOrder, os.Args[1:])
//	for {
//		r, ok, err := p.Next()
//		if err != nil { // *getopt.Error; Slurm prints it and exits
//			fmt.Fprintf(os.Stderr, "sbatch: %s\n", err)
//			...
//		}
//		if !ok {
//			break
//		}
//		apply(r.Option.Key(), r.Value)
//	}
//	operands := p.Operands()
//
// What glibc does, and so this package (posix/getopt.c of glibc 2.36):
//   - "-ahN" is three short flags; "-N1" and "-N 1" give -N the value "1";
//     a short option with an optional argument takes it only when attached
//     ("-k" versus "-kfoo").
//   - "--name=value" and, for required arguments only, "--name value"; an
//     optional argument must be attached with "=" ("--nice 5" leaves "5" as
//     an operand).
//   - Long names may be abbreviated to any unambiguous prefix ("--part=gpu").
//     An exact match wins over prefixes ("--cluster" beside "--clusters").
//     Several prefix matches are not ambiguous when they are the same option
//     (same key and same argument kind): glibc compares has_arg, flag and val.
//   - "--" ends the options; "-" alone is an operand.
//   - [RequireOrder] stops at the first operand (the "+" of sbatch's
//     optstring: the first operand is the script, the rest its arguments);
//     [Permute] (GNU's default) keeps scanning and returns every operand in
//     order, so squeue and scancel accept options after job ids.
//   - Errors carry glibc's exact texts, which the command prefixes with its
//     name: "unrecognized option '--foo'", "invalid option -- 'x'",
//     "option requires an argument -- 'x'", "option '--foo' requires an
//     argument", "option '--foo' doesn't allow an argument", "option '--j' is
//     ambiguous; possibilities: '--jobid' '--job-name'".
//
// One addition that glibc lacks: an [Option] marked Exact is matched only by
// its full name. slurm-lite's own extensions use it so that adding them does
// not change how real Slurm's abbreviations resolve or what an ambiguity
// message lists.
//
// Glossary:
//   - option element: an argument starting with "-" that is not "-" or "--".
//   - operand: any other argument (glibc: "non-option ARGV-element").
//   - key: what identifies an option to the caller (glibc's val); a long name
//     and its short letter share one key.
package getopt
