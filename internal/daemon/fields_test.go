package daemon

import (
	"strings"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestCheckSubmitFields(t *testing.T) {
	cfg := config.Default()
	cfg.Operators = []string{"olga"}
	alice := localapi.Identity{UID: 1001, User: "alice"}
	root := localapi.Identity{UID: 0, User: "root"}
	olga := localapi.Identity{UID: 1003, User: "olga"}
	nice := func(n int) *int { return &n }
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name   string
		caller localapi.Identity
		req    jobscript.Request
		code   slurm.Errno
		words  string
		hint   string
	}{
		{name: "plain", caller: alice, req: jobscript.Request{JobName: "train", Comment: "a note", Nice: nice(100)}},
		{name: "limits exactly", caller: alice, req: jobscript.Request{JobName: long(1024), Comment: long(1024),
			Output: long(4096), Script: long(4 << 20)}},
		{name: "negative nice", caller: alice, req: jobscript.Request{Nice: nice(-2147483645)},
			code: 2123, words: "Invalid --nice value",
			hint: "only root and operators may give a negative --nice (-2147483645); give 0 or more, which lowers the job's priority"},
		{name: "root's negative nice", caller: root, req: jobscript.Request{Nice: nice(-2147483645)}},
		{name: "an operator's negative nice", caller: olga, req: jobscript.Request{Nice: nice(-5)}},
		{name: "nice out of range", caller: root, req: jobscript.Request{Nice: nice(-2147483646)},
			code: 2123, words: "Invalid --nice value", hint: "--nice=-2147483646 is out of range; give a value within ±2147483645"},
		{name: "long name", caller: alice, req: jobscript.Request{JobName: long(100000)},
			code: 2012, words: "Pathname of a file, directory or other parameter too long",
			hint: "--job-name is 100000 bytes long, more than the 1024 allowed; give a shorter --job-name"},
		{name: "long comment", caller: alice, req: jobscript.Request{Comment: long(1025)},
			code: 2012, words: "Pathname of a file, directory or other parameter too long",
			hint: "--comment is 1025 bytes long, more than the 1024 allowed; give a shorter --comment"},
		{name: "long output path", caller: alice, req: jobscript.Request{Output: long(4097)},
			code: 2012, words: "Pathname of a file, directory or other parameter too long",
			hint: "--output is 4097 bytes long, more than the 4096 allowed; give a shorter --output"},
		{name: "big script", caller: alice, req: jobscript.Request{Script: long(4<<20 + 1)},
			code: 2012, words: "Pathname of a file, directory or other parameter too long",
			hint: "the batch script is 4194305 bytes, more than max_script_size (4194304 bytes); make it smaller: have it read its data from files instead of holding them"},
		// Lengths first, as Slurm: a long comment is refused as long even
		// when the name has a newline.
		{name: "length before control", caller: alice, req: jobscript.Request{JobName: "a\nb", Comment: long(2000)},
			code: 2012, words: "Pathname of a file, directory or other parameter too long",
			hint: "--comment is 2000 bytes long, more than the 1024 allowed; give a shorter --comment"},
		{name: "newline in name", caller: alice, req: jobscript.Request{JobName: "a\nb"},
			code: 22, words: `Invalid --job-name (control character '\n')`,
			hint: "control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give --job-name on one line, in printable characters"},
		{name: "escape in comment", caller: root, req: jobscript.Request{Comment: "\x1b[2Jgone"},
			code: 22, words: `Invalid --comment (control character '\x1b')`,
			hint: "control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give --comment on one line, in printable characters"},
		{name: "C1 control in mail user", caller: alice, req: jobscript.Request{MailUser: "a\u009bb"},
			code: 22, words: `Invalid --mail-user (control character '\u009b')`,
			hint: "control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give --mail-user on one line, in printable characters"},
		{name: "unicode is fine", caller: alice, req: jobscript.Request{JobName: "训练-β", Comment: "ok ✓"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSubmitFields(tt.caller, &tt.req, cfg)
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("refused: %d %q %q", err.Code, err.Message, err.Hint)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %d %q", tt.code, tt.words)
			}
			if err.Code != tt.code || err.Message != tt.words || err.Hint != tt.hint || err.Status != 400 {
				t.Errorf("got %d %d %q %q\nwant 400 %d %q %q", err.Status, err.Code, err.Message, err.Hint, tt.code, tt.words, tt.hint)
			}
		})
	}
}

// max_script_size from the configuration is the limit in force.
func TestCheckSubmitFieldsMaxScriptSize(t *testing.T) {
	cfg := config.Default()
	cfg.SchedulerParameters.MaxScriptSize = 100
	alice := localapi.Identity{UID: 1001, User: "alice"}
	if err := checkSubmitFields(alice, &jobscript.Request{Script: strings.Repeat("x", 100)}, cfg); err != nil {
		t.Fatalf("100 bytes refused: %v", err)
	}
	err := checkSubmitFields(alice, &jobscript.Request{Script: strings.Repeat("x", 101)}, cfg)
	if err == nil || err.Code != 2012 || !strings.Contains(err.Hint, "more than max_script_size (100 bytes)") {
		t.Fatalf("101 bytes: %v", err)
	}
}

func TestCheckUpdateFields(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	tests := []struct {
		u    api.Update
		want *fieldRefusal
	}{
		{api.Update{Name: s("renamed"), Comment: s("a note"), Nice: n(-5)}, nil},
		{api.Update{Name: s(strings.Repeat("n", 1025))}, &fieldRefusal{2012, "Pathname of a file, directory or other parameter too long",
			"JobName is 1025 bytes long, more than the 1024 allowed; give a shorter JobName"}},
		{api.Update{Comment: s(strings.Repeat("c", 100000))}, &fieldRefusal{2012, "Pathname of a file, directory or other parameter too long",
			"Comment is 100000 bytes long, more than the 1024 allowed; give a shorter Comment"}},
		{api.Update{Name: s("two\nlines")}, &fieldRefusal{22, `Invalid JobName (control character '\n')`,
			"control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give JobName on one line, in printable characters"}},
		{api.Update{Comment: s("tab\there")}, &fieldRefusal{22, `Invalid Comment (control character '\t')`,
			"control characters (newlines, tabs, escapes) would print raw in everyone's squeue; give Comment on one line, in printable characters"}},
		{api.Update{Nice: n(1 << 31)}, &fieldRefusal{2123, "Invalid --nice value",
			"Nice=2147483648 is out of range; give a value within ±2147483645"}},
	}
	for _, tt := range tests {
		got := checkUpdateFields(tt.u)
		switch {
		case got == nil && tt.want == nil:
		case got == nil || tt.want == nil || *got != *tt.want:
			t.Errorf("checkUpdateFields(%+v) = %+v, want %+v", tt.u, got, tt.want)
		}
	}
}
