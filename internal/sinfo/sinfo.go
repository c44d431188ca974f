package sinfo

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// sinfoOptions is sinfo's option table (src/sinfo/opts.c), with
// slurm-lite's GPU view (-G, --gpus) added.
var sinfoOptions = []getopt.Option{
	{Name: "all", Short: 'a'},
	{Name: "dead", Short: 'd'},
	{Name: "exact", Short: 'e'},
	{Name: "federation"},
	{Name: "help"},
	{Name: "hide"},
	{Name: "iterate", Short: 'i', Arg: getopt.RequiredArgument},
	{Name: "local"},
	{Name: "long", Short: 'l'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "nodes", Short: 'n', Arg: getopt.RequiredArgument},
	{Name: "noconvert"},
	{Name: "noheader", Short: 'h'},
	{Name: "Node", Short: 'N'},
	{Name: "format", Short: 'o', Arg: getopt.RequiredArgument},
	{Name: "Format", Short: 'O', Arg: getopt.RequiredArgument},
	{Name: "partition", Short: 'p', Arg: getopt.RequiredArgument},
	{Name: "responding", Short: 'r'},
	{Name: "list-reasons", Short: 'R'},
	{Name: "summarize", Short: 's'},
	{Name: "sort", Short: 'S', Arg: getopt.RequiredArgument},
	{Name: "states", Short: 't', Arg: getopt.RequiredArgument},
	{Name: "reservation", Short: 'T'},
	{Name: "usage"},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "json"},
	{Name: "yaml"},
	{Name: "gpus", Short: 'G', Exact: true},
}

// sinfoArgs is a parsed sinfo command line.
type sinfoArgs struct {
	all, dead, responding, long, noHeader, nodeFlag bool
	listReasons, summarize, reservations, noConvert bool
	json, gpus                                      bool
	iterate                                         int
	format                                          string
	longForm                                        bool
	formatSet                                       bool
	partFieldFlag, nodeFieldFlag                    bool
	parts                                           []string
	partsSet                                        bool
	nodes                                           []string
	states                                          *stateFilter
	sort                                            string
}

// Main is the sinfo command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseSinfo(args, sio)
	if done {
		return code
	}
	f, warnings := a.parseFormat()
	for _, w := range warnings {
		if strings.HasPrefix(w, "Invalid node format") {
			fmt.Fprintln(sio.Stderr, w) // printed with fprintf, no prefix
		} else {
			fmt.Fprintf(sio.Stderr, "sinfo: error: %s\n", w)
		}
	}
	c, _, code := cli.Dial("sinfo", sio)
	if c == nil {
		return code
	}
	if a.reservations {
		// _reservation_report: the same columns whatever -o says.
		var all api.Reservations
		ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
		defer cancel()
		if err := c.Do(ctx, "GET", api.PathReservations, nil, &all); err != nil {
			return cli.DaemonError("sinfo", err, sio)
		}
		format.SinfoReservations(sio.Stdout, all.List)
		return 0
	}
	for {
		if !a.json && !a.noHeader && (a.iterate > 0 || a.long) {
			fmt.Fprintln(sio.Stdout, format.Date(sio.Now()))
		}
		cl, err := cli.LoadCluster(c)
		if err != nil {
			return cli.DaemonError("sinfo", err, sio)
		}
		if a.json {
			io.WriteString(sio.Stdout, format.SinfoJSON(cl.View(sio.Now())))
			return 0
		}
		io.WriteString(sio.Stdout, a.render(f, cl, sio.Now()))
		if a.iterate <= 0 {
			return 0
		}
		fmt.Fprintln(sio.Stdout)
		time.Sleep(time.Duration(a.iterate) * time.Second)
	}
}

// parseSinfo reads the command line and the SINFO_* variables as sinfo's
// parse_command_line does. done is set when sinfo has nothing more to do.
func parseSinfo(args []string, sio cli.IO) (a sinfoArgs, code int, done bool) {
	env := func(name string) (string, bool) { return sio.Getenv(name) }
	_, envAll := env("SINFO_ALL")
	a.all = envAll
	envPart, envPartSet := env("SINFO_PARTITION")
	if envPartSet {
		a.parts, a.partsSet, a.all = splitParts(envPart), true, true
	}
	if envAll && envPartSet {
		fmt.Fprintln(sio.Stderr, "sinfo: error: Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. Please choose one or the other.")
		return a, 1, true
	}
	if v, ok := env("SINFO_SORT"); ok {
		a.sort = v
	}
	optA, optP := false, false
	cmdLine := &cli.Command{Name: "sinfo", Table: sinfoOptions, Ordering: getopt.Permute, Help: sinfoHelp, Usage: sinfoUsage, BadOption: 1}
	_, code, done = cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		v := r.Value
		switch r.Option.Key() {
		case "all":
			optA, a.all, a.parts, a.partsSet = true, true, nil, false
		case "dead":
			a.dead = true
		case "noheader":
			a.noHeader = true
		case "iterate":
			n, _ := strconv.Atoi(v)
			if n <= 0 {
				fmt.Fprintf(sio.Stderr, "sinfo: error: Error: invalid entry for --iterate=%s\n", v)
				return 1, true
			}
			a.iterate = n
		case "long":
			a.long = true
		case "noconvert":
			a.noConvert = true
		case "nodes":
			hosts, err := slurmsyntax.ExpandHostlist(v)
			if err != nil || len(hosts) == 0 {
				fmt.Fprintf(sio.Stderr, "sinfo: error: '%s' invalid entry for --nodes\n", v)
				return 1, true
			}
			a.nodes = hosts
		case "Node":
			a.nodeFlag = true
		case "format":
			a.format, a.longForm, a.formatSet = v, false, true
		case "Format":
			a.format, a.longForm, a.formatSet = v, true, true
		case "partition":
			optP, a.parts, a.partsSet, a.all = true, splitParts(v), true, true
		case "responding":
			a.responding = true
		case "list-reasons":
			a.listReasons = true
		case "summarize":
			a.summarize = true
		case "sort":
			a.sort = v
		case "states":
			sf, bad := parseStateFilter(v)
			if sf == nil {
				fmt.Fprintf(sio.Stderr, "sinfo: error: Bad state string: \"%s\"\n", bad)
				fmt.Fprintf(sio.Stderr, "sinfo: error: valid states: %s\n", validNodeStates)
				return 1, true
			}
			a.states = sf
		case "reservation":
			a.reservations = true
		case "hide":
			a.all = false
		case "json":
			a.json = true
		case "yaml":
			fmt.Fprintln(sio.Stderr, "sinfo: error: --yaml is not supported by slurm-lite; use --json")
			return 1, true
		case "gpus":
			a.gpus = true
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	if a.long && a.formatSet {
		fmt.Fprintln(sio.Stderr, "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
		return a, 1, true
	}
	if optA && optP {
		fmt.Fprintln(sio.Stderr, "sinfo: error: Conflicting options, -a and -p, specified. Please choose one or the other.")
		return a, 1, true
	}
	if !a.formatSet {
		a.defaultFormat(env)
	}
	if a.listReasons && a.states == nil {
		a.states, _ = parseStateFilter("down,fail,drain")
	}
	return a, 0, false
}

// defaultFormat is sinfo's choice of format when none is given.
func (a *sinfoArgs) defaultFormat(env func(string) (string, bool)) {
	a.longForm = true
	switch {
	case a.gpus:
		a.format = format.SinfoGPUs
	case a.summarize:
		a.partFieldFlag = true
		a.format = format.SinfoSummarize
	case a.nodeFlag:
		a.nodeFieldFlag, a.partFieldFlag = true, true
		a.format = format.SinfoNode
		if a.long {
			a.format = format.SinfoNodeLong
		}
	case a.listReasons:
		a.format = format.SinfoReasons
		if a.long {
			a.format = format.SinfoReasonsLong
		}
	default:
		if v, ok := env("SINFO_FORMAT"); ok {
			a.format, a.longForm = v, false
			return
		}
		a.partFieldFlag = true
		a.format = format.SinfoDefault
		if a.long {
			a.format = format.SinfoLong
		}
	}
}

func (a *sinfoArgs) parseFormat() (format.SinfoFormat, []string) {
	if a.longForm {
		return format.ParseSinfoLongFormat(a.format)
	}
	return format.ParseSinfoFormat(a.format)
}

// splitParts is _build_part_list: names split at commas, empty ones
// dropped.
func splitParts(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// render builds, sorts and prints sinfo's lines.
func (a *sinfoArgs) render(f format.SinfoFormat, cl *cli.Cluster, now time.Time) string {
	cfg := cl.Conf.Config
	v := cl.View(now)
	v.Sinfo = true
	q := format.SinfoQuery{NodeFlag: a.nodeFlag, ListReasons: a.listReasons, NodeShown: a.shows(v)}
	groups := callerGroups()
	for i := range cfg.Partitions {
		p := &cfg.Partitions[i]
		if a.partsSet && !slices.Contains(a.parts, p.PartitionName) {
			continue
		}
		if !a.all && !visible(p, groups) {
			continue
		}
		q.Partitions = append(q.Partitions, i)
	}
	entries := format.BuildSinfo(f, q, v, cfg)
	format.SortSinfo(entries, a.sort, a.nodeFlag)
	env := &format.SinfoEnv{Config: cfg, NoConvert: a.noConvert}
	if a.partFieldFlag {
		env.PartWidth = 9
		for _, e := range entries {
			if e.Part != nil {
				w := len(e.Part.PartitionName)
				if e.Part.Default {
					w++
				}
				env.PartWidth = max(env.PartWidth, w)
			}
		}
	}
	if a.nodeFieldFlag {
		env.NodeWidth = 9
		for _, e := range entries {
			if e.Node != nil {
				env.NodeWidth = max(env.NodeWidth, len(e.Node.Name))
			}
		}
	}
	var b strings.Builder
	if !a.noHeader {
		b.WriteString(f.Header(env))
	}
	for i := range entries {
		b.WriteString(f.Line(&entries[i], env))
	}
	return b.String()
}

// shows applies the node filters (_filter_out): -n, -d, -r and -t.
func (a *sinfoArgs) shows(v *format.NodeView) bool {
	if a.nodes != nil && !slices.Contains(a.nodes, v.Name) {
		return false
	}
	if a.dead { // the node always answers: it is this machine
		return false
	}
	return a.states == nil || a.states.matches(v)
}

// callerGroups are the names of the caller's groups; nil for root, who
// sees every partition.
func callerGroups() []string {
	if os.Geteuid() == 0 {
		return nil
	}
	names := []string{}
	for _, id := range userdb.CallerGroups() {
		if n := userdb.GroupName(id); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// visible is slurmctld's _part_is_visible: hidden partitions, and those
// whose AllowGroups leave the caller out, are shown only with -a.
func visible(p *config.Partition, groups []string) bool {
	if p.Hidden {
		return false
	}
	if groups == nil || len(p.AllowGroups) == 0 || slices.Contains(p.AllowGroups, "ALL") {
		return true
	}
	for _, g := range groups {
		if slices.Contains(p.AllowGroups, g) {
			return true
		}
	}
	return false
}

// validNodeStates is sinfo's _node_state_list, as 22.05 prints it.
const validNodeStates = "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,perfctrs,cloud,completing,powering_down,powered_down,power_down,powering_up,fail,maint,reboot,reboot^,unknown"

// stateFilter is sinfo -t: node states, any of which (or, with "&", all
// of which) must hold.
type stateFilter struct {
	all    bool
	states []nodeStateID
}

// nodeStateID is one state of -t as _node_state_id reads it.
type nodeStateID int

const (
	stUnknown nodeStateID = iota
	stDown
	stIdle
	stAllocated
	stError
	stMixed
	stFuture
	stDrain
	stDrained
	stDraining
	stFlag // a flag this machine's node never has (NO_RESPOND, CLOUD, ...)
)

// parseStateFilter is _build_state_list; on a bad name it returns nil and
// the name.
func parseStateFilter(spec string) (*stateFilter, string) {
	if strings.EqualFold(spec, "all") {
		return &stateFilter{states: []nodeStateID{stUnknown, stDown, stIdle, stAllocated, stError, stMixed, stFuture, stDrain}}, ""
	}
	f := &stateFilter{all: strings.Contains(spec, "&")}
	for _, s := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == '&' }) {
		id, ok := nodeStateByName(s)
		if !ok {
			return nil, s
		}
		f.states = append(f.states, id)
	}
	return f, ""
}

// nodeStateByName is _node_state_id: a prefix of a base state's long or
// compact name, then the special names, in sinfo's order.
func nodeStateByName(s string) (nodeStateID, bool) {
	prefix := func(name string) bool { return len(s) <= len(name) && strings.EqualFold(s, name[:len(s)]) }
	bases := []struct{ long, compact string }{
		{"UNKNOWN", "UNK"}, {"DOWN", "DOWN"}, {"IDLE", "IDLE"}, {"ALLOCATED", "ALLOC"},
		{"ERROR", "ERROR"}, {"MIXED", "MIX"}, {"FUTURE", "FUTR"},
	}
	for i, b := range bases {
		if prefix(b.compact) || prefix(b.long) {
			return nodeStateID(i), true
		}
	}
	switch {
	case prefix("PLANNED"), prefix("PLND"):
		return stFlag, true
	case prefix("DRAIN"):
		return stDrain, true
	case prefix("DRAINED"):
		return stDrained, true
	case prefix("RESV"), prefix("RESERVED"), prefix("PERFCTRS"), prefix("NPC"):
		return stFlag, true
	case prefix("DRAINING"), prefix("DRNG"):
		return stDraining, true
	}
	for _, name := range []string{"COMPLETING", "COMP", "NO_RESPOND", "POWERING_DOWN", "POWRING_DN",
		"POWERED_DOWN", "POWERED_DN", "POWER_DOWN", "POW_DN", "POWERING_UP", "FAIL", "MAINT",
		"REBOOT_REQUESTED", "REBOOT", "REBOOT_ISSUED", "REBOOT^", "CLOUD"} {
		if prefix(name) {
			return stFlag, true
		}
	}
	return 0, false
}

// matches is _filter_out's state test.
func (f *stateFilter) matches(v *format.NodeView) bool {
	match := false
	state := strings.ToUpper(v.StateLong())
	for _, s := range f.states {
		switch s {
		case stDrain:
			match = v.Drained
		case stDraining:
			match = state == "DRAINING"
		case stDrained:
			match = state == "DRAINED"
		case stFlag:
			match = false
		case stAllocated:
			match = v.AllocCPU > 0
		case stIdle:
			match = v.BaseState() == "IDLE"
		case stMixed:
			match = v.BaseState() == "MIXED"
		default:
			match = false
		}
		if !f.all && match || f.all && !match {
			break
		}
	}
	return match
}

const sinfoUsage = `Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]
             [-S fields] [-o format] [-O Format] [--federation] [--local]
`

// sinfoHelp is Slurm 22.05's sinfo --help (src/sinfo/opts.c _help), then
// slurm-lite's -G in a section of its own.
const sinfoHelp = `Usage: sinfo [OPTIONS]
  -a, --all                  show all partitions (including hidden and those
			     not accessible)
  -d, --dead                 show only non-responding nodes
  -e, --exact                group nodes only on exact match of configuration
      --federation           Report federated information if a member of one
  -h, --noheader             no headers on output
  --hide                     do not show hidden or non-accessible partitions
  -i, --iterate=seconds      specify an iteration period
      --json                 Produce JSON output
      --local                show only local cluster in a federation.
                             Overrides --federation.
  -l, --long                 long output - displays more information
  -M, --clusters=names       clusters to issue commands to. Implies --local.
                             NOTE: SlurmDBD must be up.
  -n, --nodes=NODES          report on specific node(s)
  --noconvert                don't convert units from their original type
			     (e.g. 2048M won't be converted to 2G).
  -N, --Node                 Node-centric format
  -o, --format=format        format specification
  -O, --Format=format        long format specification
  -p, --partition=PARTITION  report on specific partition
  -r, --responding           report only responding nodes
  -R, --list-reasons         list reason nodes are down or drained
  -s, --summarize            report state summary only
  -S, --sort=fields          comma separated list of fields to sort on
  -t, --states=node_state    specify the what states of nodes to view
  -T, --reservation          show only reservation information
  -v, --verbose              verbosity level
  -V, --version              output version information and exit
      --yaml                 Produce YAML output

slurm-lite options:
  -G, --gpus                 one line per GPU (use, memory, foreign processes,
                             drains); -O takes its Gpu* fields too
                             (man slurm-lite-gpus)

Help options:
  --help                     show this help message
  --usage                    display brief usage message
`
