package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNotifyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want string
	}{
		{"a relative MailProg", lines(`MailProg = "mail"`),
			`slurm-lite.toml:1: MailProg "mail" is not an absolute path; write the mail program's full path, such as "/usr/bin/mail"`},
		{"an unknown LogFormat", lines(`LogFormat = "xml"`),
			`slurm-lite.toml:1: LogFormat "xml" is not one of "text", "json"`},
		{"a webhook that is not http", lines(`[[Notify]]`, `URL = "ftp://x"`, `Events = ["END"]`),
			`slurm-lite.toml:2: Notify.URL "ftp://x" is not an http:// or https:// URL; write e.g. "https://chat.example.org/hooks/gpu"`},
		{"a webhook without events", lines(`[[Notify]]`, `URL = "http://x"`, `Events = []`),
			`slurm-lite.toml:3: Notify.Events is empty; list the events to send, e.g. ["END", "FAIL"], or ["ALL"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("slurm-lite.toml", []byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Event words are upper-cased as --mail-type's are.
func TestNotifyEventsUpperCased(t *testing.T) {
	c, err := Parse("slurm-lite.toml", []byte(lines(`LogFormat = "JSON"`, `[[Notify]]`, `URL = "https://x.org/h"`, `Events = ["end", "Yield"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"END", "YIELD"}, c.Notify[0].Events); diff != "" || c.LogFormat != LogJSON {
		t.Errorf("events (-want +got):\n%s; LogFormat %q", diff, c.LogFormat)
	}
}
