package scontrol

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/format"
)

// showAssocMgr is scontrol_print_assoc_mgr_info: the association
// manager's users, associations and QOS, narrowed by accounts=, flags=,
// qos= and users= (each may abbreviate to a letter and repeat). What the
// caller may see is the daemon's to decide (PrivateData).
func (s *scontrolArgs) showAssocMgr(args []string) {
	q := url.Values{}
	var asked format.AssocMgrAsked
	for _, arg := range args {
		tag, val, _ := strings.Cut(arg, "=")
		if val == "" {
			// Slurm says so and stops, without failing.
			fmt.Fprintf(s.sio.Stderr, "No value given for option %s\n", arg)
			return
		}
		switch {
		case keyword(tag, "accounts", 1):
			q.Add("accounts", val)
		case keyword(tag, "flags", 1):
			v := strings.ToLower(val)
			asked.Users = asked.Users || strings.Contains(v, "users")
			asked.Assoc = asked.Assoc || strings.Contains(v, "assoc")
			asked.QOS = asked.QOS || strings.Contains(v, "qos")
			if !asked.Users && !asked.Assoc && !asked.QOS {
				fmt.Fprintf(s.sio.Stderr, "invalid flag '%s', valid options are 'Assoc, QOS, and/or Users'\n", val)
				return
			}
		case keyword(tag, "qos", 1):
			q.Add("qos", val)
		case keyword(tag, "users", 1):
			q.Add("users", val)
		default:
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stderr, "invalid entity: %s for keyword:show assoc_mgr\n", arg)
			}
			return
		}
	}
	if !asked.Users && !asked.Assoc && !asked.QOS {
		asked = format.AssocMgrAsked{Users: true, Assoc: true, QOS: true}
	}
	for _, f := range []struct {
		on   bool
		word string
	}{{asked.Assoc, "assoc"}, {asked.Users, "users"}, {asked.QOS, "qos"}} {
		if f.on {
			q.Add("flags", f.word)
		}
	}
	if !s.connect() {
		return
	}
	var m api.AssocMgr
	if err := cli.GetJSON(s.client, api.PathAssocMgr, q, &m); err != nil {
		s.exit = 1
		if s.quiet != 1 {
			callError("scontrol", "slurm_load_assoc_mgr_info", err, s.sio)
		}
		return
	}
	io.WriteString(s.sio.Stdout, format.AssocMgr(&m, asked, s.oneLiner))
}
