package config

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

func TestSiteWarnings(t *testing.T) {
	machine := Machine{
		Host:        Host{CPUs: 8, Memory: 32 * slurmsyntax.GiB},
		GroupExists: func(string) bool { return true },
		Runnable: func(p string) error {
			if p == "/bin/mail" {
				return nil
			}
			return errors.New("it does not exist")
		},
	}
	c := Default()
	c.Node.CPUs, c.Node.RealMemory = 8, 32*slurmsyntax.GiB
	if got := c.SiteWarnings(machine); len(got) != 0 {
		t.Errorf("a node the size of the machine, /bin/mail there: %q, want no warning", got)
	}

	c.Node.CPUs, c.Node.RealMemory = 32, 256*slurmsyntax.GiB
	c.MailProg = "/usr/local/bin/mailx"
	want := []string{
		`MailProg "/usr/local/bin/mailx" cannot run (it does not exist), so the mail of --mail-type is never sent: install it (for /usr/bin/mail: apt install mailutils) or set MailProg to a program that exists`,
		`Node.CPUs 32 is more than this machine's 8 CPUs: jobs are not pinned to CPUs and more of them run at once than there are CPUs; write CPUs = 8 or leave CPUs out to use the detected count`,
		`Node.RealMemory 256G is more than this machine's memory (32G): jobs are given memory the machine does not have, and --mem does not protect them from each other; write RealMemory = "32G" or less, or leave RealMemory out to use the detected size`,
	}
	if diff := cmp.Diff(want, c.SiteWarnings(machine)); diff != "" {
		t.Errorf("SiteWarnings (-want +got):\n%s", diff)
	}

	// No MailProg and no default program: --mail-type would be accepted
	// and send nothing.
	c = Default()
	machine.Runnable = func(string) error { return errors.New("it does not exist") }
	want = []string{"no mail program: MailProg is not set and neither /usr/bin/mail nor /bin/mail can run, so --mail-type is accepted and sends nothing: install one (apt install mailutils) or set MailProg"}
	if diff := cmp.Diff(want, c.SiteWarnings(machine)); diff != "" {
		t.Errorf("SiteWarnings without a mail program (-want +got):\n%s", diff)
	}
}

func TestRunnable(t *testing.T) {
	if err := Runnable("/bin/sh"); err != nil {
		t.Errorf("Runnable(/bin/sh) = %v", err)
	}
	for path, want := range map[string]string{
		"/nonexistent/mail": "it does not exist",
		"/":                 "it is not a regular file",
		"/etc/passwd":       "it is not executable",
	} {
		if err := Runnable(path); err == nil || err.Error() != want {
			t.Errorf("Runnable(%s) = %v, want %q", path, err, want)
		}
	}
}

func TestNoDaemonAdviceSaysWhatWasTriedAndWhoFixesIt(t *testing.T) {
	tests := []struct{ path, env, want string }{{
		path: "/home/alice/sl/slurm-lite.toml", env: "/home/alice/sl/slurm-lite.toml",
		want: "  tried: $SLURM_LITE_CONF=/home/alice/sl/slurm-lite.toml, whose SocketPath that is\n" +
			"  a user: if the file is your own daemon's, start it with: slurmd-lite; for the lab's daemon, unset SLURM_LITE_CONF (or set it to the lab's file)\n" +
			"  an administrator: start the daemon of that file as root: slurmd-lite -f /home/alice/sl/slurm-lite.toml",
	}, {
		path: DefaultPath,
		want: "  tried: $SLURM_LITE_CONF (not set), then /etc/slurm-lite/slurm-lite.toml, whose SocketPath that is\n" +
			"  a user: ask the administrator to start the lab's daemon; to run one of your own, write a file with a SocketPath and StateSaveLocation of yours and export SLURM_LITE_CONF=FILE (README, \"The first hour\")\n" +
			"  an administrator: start it as root: systemctl start slurmd-lite (or: slurmd-lite -D)",
	}, {
		// The case of the report: a user who forgot SLURM_LITE_CONF on a
		// box whose daemon has its file elsewhere is not told to start the
		// defaults' daemon, which only root can.
		want: "  tried: $SLURM_LITE_CONF (not set), then /etc/slurm-lite/slurm-lite.toml (does not exist), so the built-in SocketPath\n" +
			"  a user: export SLURM_LITE_CONF=FILE, the lab's configuration file (ask the administrator), or a file of your own to run your own daemon (README, \"The first hour\")\n" +
			"  an administrator: install the configuration as /etc/slurm-lite/slurm-lite.toml, then start the daemon as root: systemctl start slurmd-lite (or: slurmd-lite -D)",
	}}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, NoDaemonAdvice(tt.path, tt.env)); diff != "" {
			t.Errorf("NoDaemonAdvice(%q, %q) (-want +got):\n%s", tt.path, tt.env, diff)
		}
	}
}
