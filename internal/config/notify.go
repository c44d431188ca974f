package config

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// Log formats (LogFormat).
const (
	LogText = "text"
	LogJSON = "json"
)

// NotifyHook is one [[Notify]] webhook: each event of Events (or "ALL")
// is POSTed to URL as JSON; Users, when set, keeps only those users' jobs
// (and no GPU events).
type NotifyHook struct {
	URL    string   `toml:"URL"`
	Events []string `toml:"Events"`
	Users  []string `toml:"Users"`
}

// NotifyEvents are the words a [[Notify]]'s Events may hold: Slurm's
// --mail-type words and slurm-lite's own events (internal/notify's Kinds,
// which a test keeps equal).
var NotifyEvents = []string{"BEGIN", "END", "FAIL", "REQUEUE", "INVALID_DEPEND", "TIME_LIMIT",
	"TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50",
	"YIELD", "PREEMPT", "CANCEL", "HOLD", "RELEASE", "DRAIN", "RESUME", "GPU_MEM_LOW", "BUDGET_80", "BUDGET_100", "ALL"}

// checkNotify checks MailProg, LogFormat and the webhooks, and upper-cases
// the event words.
func (p *parser) checkNotify(c *Config) {
	if c.MailProg != "" && !filepath.IsAbs(c.MailProg) {
		p.errorf(key("MailProg"), "MailProg %q is not an absolute path; write the mail program's full path, such as \"/usr/bin/mail\"", c.MailProg)
	}
	p.enum(key("LogFormat"), "LogFormat", &c.LogFormat, LogText, LogJSON)
	for i := range c.Notify {
		h := &c.Notify[i]
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.errorf(elem("Notify", i, "URL"), "Notify.URL %q is not an http:// or https:// URL; write e.g. \"https://chat.example.org/hooks/gpu\"", h.URL)
		}
		if len(h.Events) == 0 {
			p.errorf(elem("Notify", i, "Events"), "Notify.Events is empty; list the events to send, e.g. [\"END\", \"FAIL\"], or [\"ALL\"]")
		}
		for k, e := range h.Events {
			up := strings.ToUpper(e)
			if !slices.Contains(NotifyEvents, up) {
				p.errorf(elem("Notify", i, "Events").index(k), "Notify.Events %q is not one of %s", e, quoteAll(NotifyEvents))
				continue
			}
			h.Events[k] = up
		}
		for k, u := range h.Users {
			p.name(elem("Notify", i, "Users").index(k), "Notify.Users: user", u)
		}
	}
}
