package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Machine is what SiteWarnings learns of the machine the configuration is
// used on; the caller fills it, so that the checks stay testable.
type Machine struct {
	// Host is the detected machine (DetectHost); a zero field is unknown
	// and not compared.
	Host Host
	// GroupExists says whether a Unix group exists.
	GroupExists func(group string) bool
	// Runnable says why the program at path cannot be run, or nil.
	Runnable func(path string) error
}

// SiteWarnings are the settings that parse but will not do what they say
// on this machine: the groups GroupWarnings names, a mail program that
// is not there, and a node larger than the machine. None is an error (a
// file may be written before the machine is ready, or shared between
// machines), but each would otherwise fail silently later (the first
// job's mail, a placement on memory that does not exist), so the daemon
// logs them when it starts and reloads, and `slurmd-lite config` prints
// them, each with its fix.
func (c *Config) SiteWarnings(m Machine) []string {
	var out []string
	if m.GroupExists != nil {
		out = c.GroupWarnings(m.GroupExists)
	}
	if m.Runnable != nil {
		out = append(out, c.mailWarnings(m.Runnable)...)
	}
	if h := m.Host; h.CPUs > 0 && c.Node.CPUs > h.CPUs {
		out = append(out, fmt.Sprintf("Node.CPUs %d is more than this machine's %d CPUs: jobs are not pinned to CPUs and more of them run at once than there are CPUs; write CPUs = %d or leave CPUs out to use the detected count",
			c.Node.CPUs, h.CPUs, h.CPUs))
	}
	if h := m.Host; h.Memory > 0 && c.Node.RealMemory > h.Memory {
		fits := slurmsyntax.Bytes(int64(h.Memory) / int64(slurmsyntax.MiB) * int64(slurmsyntax.MiB))
		out = append(out, fmt.Sprintf("Node.RealMemory %s is more than this machine's memory (%s): jobs are given memory the machine does not have, and --mem does not protect them from each other; write RealMemory = %q or less, or leave RealMemory out to use the detected size",
			slurmsyntax.FormatSize(c.Node.RealMemory), slurmsyntax.FormatSize(fits), slurmsyntax.FormatSize(fits)))
	}
	return out
}

// DefaultMailProgs are the programs tried, in order, when MailProg is not
// set, as slurmctld's default is /bin/mail.
var DefaultMailProgs = []string{"/usr/bin/mail", "/bin/mail"}

func (c *Config) mailWarnings(runnable func(string) error) []string {
	if c.MailProg != "" {
		if err := runnable(c.MailProg); err != nil {
			return []string{fmt.Sprintf("MailProg %q cannot run (%v), so the mail of --mail-type is never sent: install it (for /usr/bin/mail: apt install mailutils) or set MailProg to a program that exists",
				c.MailProg, err)}
		}
		return nil
	}
	for _, p := range DefaultMailProgs {
		if runnable(p) == nil {
			return nil
		}
	}
	return []string{"no mail program: MailProg is not set and neither /usr/bin/mail nor /bin/mail can run, so --mail-type is accepted and sends nothing: install one (apt install mailutils) or set MailProg"}
}

// Runnable is Machine.Runnable on this machine: a regular file with an
// execute bit.
func Runnable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("it does not exist")
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("it is not a regular file")
	case fi.Mode()&0o111 == 0:
		return errors.New("it is not executable")
	}
	return nil
}
