package slurmsyntax

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// SignalSpec is a parsed --signal=[{R|B}:]SIG[@secs].
type SignalSpec struct {
	Signal syscall.Signal
	// Seconds before the time limit; Slurm's default is 60.
	Seconds int
	// Batch: send to the batch shell only ("B:").
	Batch bool
	// Reservation: "R:" (accepted, recorded).
	Reservation bool
}

// DefaultSignalSeconds is how long before the time limit --signal fires
// when no "@secs" is given.
const DefaultSignalSeconds = 60

// maxSignalValue bounds signal numbers and seconds: Slurm keeps both in 16
// bits.
const maxSignalValue = 0xffff

// signalNames is Slurm's signals_mapping (src/common/proc_args.c): the
// only names it knows, in its order.
var signalNames = []struct {
	name string
	sig  syscall.Signal
}{
	{"HUP", syscall.SIGHUP},
	{"INT", syscall.SIGINT},
	{"QUIT", syscall.SIGQUIT},
	{"ABRT", syscall.SIGABRT},
	{"KILL", syscall.SIGKILL},
	{"ALRM", syscall.SIGALRM},
	{"TERM", syscall.SIGTERM},
	{"USR1", syscall.SIGUSR1},
	{"USR2", syscall.SIGUSR2},
	{"URG", syscall.SIGURG},
	{"CONT", syscall.SIGCONT},
	{"STOP", syscall.SIGSTOP},
	{"TSTP", syscall.SIGTSTP},
	{"TTIN", syscall.SIGTTIN},
	{"TTOU", syscall.SIGTTOU},
	{"XCPU", syscall.SIGXCPU},
}

// ParseSignal parses an sbatch --signal value as get_signal_opts does:
// "USR1", "SIGUSR1@30", "B:USR1@30", "10@120", "R:TERM". The flags "R" and
// "B" come first, in either order, with or without a ':' after them (Slurm
// reads "BUSR1" as "B:USR1"; no signal name it knows starts with R or B).
// The signal is a name Slurm knows (see ParseSignalName) or a number from 1
// to 65535; secs is from 0 to 65535, 60 when not given. The caller reports
// an error as sbatch does: "Invalid --signal specification".
func ParseSignal(s string) (SignalSpec, error) {
	spec := SignalSpec{Seconds: DefaultSignalSeconds}
	p := s
	if hasPrefixFold(p, "R") {
		spec.Reservation = true
		p = p[1:]
	}
	// sbatch alone takes "B" (the batch shell); then "R" again, for "BR".
	if hasPrefixFold(p, "B") {
		spec.Batch = true
		p = p[1:]
	}
	if hasPrefixFold(p, "R") {
		spec.Reservation = true
		p = p[1:]
	}
	p = strings.TrimPrefix(p, ":")
	name, secs, timed := strings.Cut(p, "@")
	sig, err := ParseSignalName(name)
	if err != nil {
		return SignalSpec{}, fmt.Errorf("invalid signal spec %q: %w", s, err)
	}
	spec.Signal = sig
	if timed {
		// strtol reads "" as 0 and Slurm accepts "USR1@"; we want digits.
		v, n := strtol(secs)
		if n == 0 || n != len(secs) || v < 0 || v > maxSignalValue {
			return SignalSpec{}, fmt.Errorf("invalid signal spec %q: want seconds from 0 to %d after '@'", s, maxSignalValue)
		}
		spec.Seconds = int(v)
	}
	return spec, nil
}

// ParseSignalName parses a signal as Slurm's sig_name2num does (scancel
// --signal uses it too): a number, or one of HUP INT QUIT ABRT KILL ALRM
// TERM USR1 USR2 URG CONT STOP TSTP TTIN TTOU XCPU, case-insensitive, with
// or without "SIG", white space around it ignored. Other names, such as
// SEGV or WINCH, Slurm does not know. Numbers run from 1 to 65535 (Slurm
// wraps larger and negative ones into 16 bits; we refuse them).
func ParseSignalName(s string) (syscall.Signal, error) {
	if v, n := strtol(s); n > 0 {
		if strings.TrimLeft(s[n:], " \t\n\v\f\r") != "" {
			return 0, fmt.Errorf("unknown signal %q", s)
		}
		if v < 1 || v > maxSignalValue {
			return 0, fmt.Errorf("signal number %q out of range 1 to %d", s, maxSignalValue)
		}
		return syscall.Signal(v), nil
	}
	name := strings.TrimLeft(s, " \t\n\v\f\r")
	if hasPrefixFold(name, "SIG") {
		name = name[3:]
	}
	for _, sn := range signalNames {
		if hasPrefixFold(name, sn.name) && strings.TrimLeft(name[len(sn.name):], " \t\n\v\f\r") == "" {
			return sn.sig, nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q; want a number or one of HUP, INT, QUIT, ABRT, KILL, ALRM, "+
		"TERM, USR1, USR2, URG, CONT, STOP, TSTP, TTIN, TTOU, XCPU", s)
}

// SignalName returns Slurm's short name for sig ("USR1", "TERM") as
// sig_num2name does: a signal outside Slurm's table prints as its number
// ("11" for SIGSEGV).
func SignalName(sig syscall.Signal) string {
	for _, sn := range signalNames {
		if sn.sig == sig {
			return sn.name
		}
	}
	return strconv.Itoa(int(sig))
}

// String prints the spec as Slurm does (signal_opts_to_cmdline): "R", "B"
// and ':' when flagged, the signal name, "@secs" unless the default 60:
// "B:USR1@30", "TERM", "RB:10@120".
func (s SignalSpec) String() string {
	var b strings.Builder
	if s.Reservation {
		b.WriteByte('R')
	}
	if s.Batch {
		b.WriteByte('B')
	}
	if s.Reservation || s.Batch {
		b.WriteByte(':')
	}
	b.WriteString(SignalName(s.Signal))
	if s.Seconds != DefaultSignalSeconds {
		fmt.Fprintf(&b, "@%d", s.Seconds)
	}
	return b.String()
}
