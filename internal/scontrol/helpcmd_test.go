package scontrol

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

// TestHelpCommand: "scontrol help" (or "he", any case) prints the usage and
// exits 0, needing no daemon; with more words it also says "too many
// arguments" and exits 1, as Slurm's scontrol does; "h" alone is no
// keyword (Slurm takes at least two letters).
func TestHelpCommand(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string
		wantStderr string
	}{
		{[]string{"help"}, 0, scontrolHelp, ""},
		{[]string{"HE"}, 0, scontrolHelp, ""},
		{[]string{"help", "show"}, 1, scontrolHelp, "too many arguments for keyword:help\n"},
		{[]string{"h"}, 1, "", "invalid keyword: h\n"},
	} {
		var out, errb bytes.Buffer
		sio := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv:   func(string) (string, bool) { return "", false },
			Now:      func() time.Time { return time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC) },
			ReadFile: os.ReadFile}
		code := Main(tc.args, sio)
		if code != tc.code || out.String() != tc.stdout || errb.String() != tc.wantStderr {
			t.Errorf("scontrol %q: exit %d, stdout %d bytes (want %d), stderr %q; want exit %d, stderr %q",
				tc.args, code, out.Len(), len(tc.stdout), errb.String(), tc.code, tc.wantStderr)
		}
	}
}
