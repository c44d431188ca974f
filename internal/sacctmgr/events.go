package sacctmgr

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// sacctmgr show event, from the daemon's audit trail
// (GET /v1/events, api.PathEvents):
//
//   - as Slurm's (src/sacctmgr/event_functions.c): the node's drains, one
//     row per drain from its start to its resume (TimeEnd Unknown while it
//     lasts), and slurm-lite's drains of one GPU, named NODE/gpuINDEX;
//     conditions Start=, End=, All_time, Nodes=, States=, Reason=, User=,
//     Events=Node|Cluster, Format=;
//   - slurm-lite's Jobs=ID[,ID...]: those jobs' whole trail (start, end,
//     requeue, preempt, yield, cancel, hold, release, update), who, when
//     and why.

// eventCond is what show event's conditions ask for.
type eventCond struct {
	format            []string
	start, end        time.Time
	startSet, allTime bool
	nodes, states     []string
	reasons, users    []string
	jobs              []string
	clusterOnly       bool
}

func (m *sacctmgr) listEvents(argv []string) {
	now := m.sio.Now()
	var c eventCond
	ok := true
	for _, arg := range argv {
		w := parseMgrWord(arg)
		add := func(list *[]string) { *list = format.AddToCharList(*list, w.value) }
		switch {
		case w.bare("All_clusters", 5):
		case w.bare("All_time", 5):
			c.allTime = true
		case w.bare("Where", 5) || w.bare("Set", 3):
		case !w.hasEq || w.is("Events", 1):
			for _, e := range format.AddToCharList(nil, w.value) {
				switch {
				case kw(e, "Node", len(e), 1):
				case kw(e, "Cluster", len(e), 1):
					c.clusterOnly = true
				default:
					fmt.Fprintf(m.sio.Stderr, " Unknown event type: '%s'  Valid events are Cluster and Node.\n", e)
					ok = false
				}
			}
		case w.is("Clusters", 2):
		case w.is("End", 1):
			t, err := slurmtime.ParseBegin(w.value, now)
			if err != nil {
				fmt.Fprintf(m.sio.Stderr, " Invalid time: %s; write it as sacctmgr does, e.g. End=2026-03-01T12:00 or End=now\n", w.value)
				ok = false
			}
			c.end = t
		case w.is("Format", 1):
			add(&c.format)
		case w.is("Jobs", 1) && w.n > 1:
			add(&c.jobs)
		case w.is("Nodes", 1):
			add(&c.nodes)
		case w.is("Reason", 1):
			add(&c.reasons)
		case w.is("Start", 4):
			t, err := slurmtime.ParseBegin(w.value, now)
			if err != nil {
				fmt.Fprintf(m.sio.Stderr, " Invalid time: %s; write it as sacctmgr does, e.g. Start=2026-03-01 or Start=now-1days\n", w.value)
				ok = false
			}
			c.start, c.startSet = t, true
		case w.is("States", 4):
			add(&c.states)
		case w.is("User", 1):
			add(&c.users)
		default:
			fmt.Fprintf(m.sio.Stderr, " Unknown condition: %s\n", arg)
			ok = false
		}
	}
	if !ok {
		m.exitCode = 1
		return
	}
	if !c.allTime && !c.startSet && len(c.jobs) == 0 {
		// Slurm's default: since the start of yesterday.
		y, mo, d := now.AddDate(0, 0, -1).Date()
		c.start = time.Date(y, mo, d, 0, 0, 0, 0, now.Location())
	}
	def := "Cluster,NodeName,Start,End,State,Reason,User"
	switch {
	case c.clusterOnly:
		def = "Cluster,TRES,Start,End,ClusterNodes"
	case len(c.jobs) > 0:
		def = "TimeStamp,JobID,Action%-8,User%-20,Reason%-60"
	}
	cols, ok := m.columns(mgrCond{format: c.format}, def)
	if !ok {
		return
	}
	if _, ok := m.config(); !ok {
		return
	}
	var events []format.MgrEvent
	if !c.clusterOnly {
		q := url.Values{}
		if len(c.jobs) > 0 {
			q["job"] = c.jobs
		} else {
			q.Set("node", "1")
		}
		var got []api.Event
		if err := cli.GetJSON(m.client, api.PathEvents, q, &got); err != nil {
			m.exitCode = cli.DaemonError("sacctmgr", err, m.sio)
			return
		}
		if len(c.jobs) > 0 {
			events = jobEvents(got, c)
		} else {
			events = nodeEvents(got, m.cfg.ClusterName, c)
		}
	}
	io.WriteString(m.sio.Stdout, format.ListEvents(cols, events, m.out, m.sio.Now()))
}

// actor is sacctmgr's User: "name(uid)".
func actor(e api.Event) string {
	return e.ActorName + "(" + strconv.FormatUint(uint64(e.Actor), 10) + ")"
}

// nodeEvents pairs each drain with the resume that ended it, and keeps
// the drains that overlap the window and match the conditions.
func nodeEvents(evs []api.Event, cluster string, c eventCond) []format.MgrEvent {
	var out []format.MgrEvent
	open := map[string]int{} // GPU (or "node") -> its open drain in out
	for _, e := range evs {
		switch e.Action {
		case "drain":
			name := e.Node
			if e.GPU != api.NodeDrainUUID {
				name = fmt.Sprintf("%s/gpu%d", e.Node, e.GPUIndex)
				if e.GPUIndex < 0 {
					name = e.Node + "/" + e.GPU
				}
			}
			if i, ok := open[e.GPU]; ok {
				out[i].End = e.Time // drained again: the first one ends here
			}
			open[e.GPU] = len(out)
			out = append(out, format.MgrEvent{Cluster: cluster, NodeName: name, Start: e.Time, State: "DRAIN",
				Reason: e.Detail, User: actor(e)})
		case "resume":
			if i, ok := open[e.GPU]; ok {
				out[i].End = e.Time
				delete(open, e.GPU)
			}
		}
	}
	return slices.DeleteFunc(out, func(r format.MgrEvent) bool {
		if !c.start.IsZero() && !r.End.IsZero() && r.End.Before(c.start) {
			return true
		}
		if !c.end.IsZero() && r.Start.After(c.end) {
			return true
		}
		node, _, _ := strings.Cut(r.NodeName, "/")
		if len(c.nodes) > 0 && !slices.Contains(c.nodes, node) && !slices.Contains(c.nodes, r.NodeName) {
			return true
		}
		if len(c.states) > 0 && !slices.ContainsFunc(c.states, func(s string) bool { return strings.EqualFold(s, r.State) }) {
			return true
		}
		if len(c.reasons) > 0 && !slices.ContainsFunc(c.reasons, func(s string) bool { return strings.Contains(r.Reason, s) }) {
			return true
		}
		user, _, _ := strings.Cut(r.User, "(")
		return len(c.users) > 0 && !slices.Contains(c.users, user)
	})
}

// jobEvents are the jobs' trails in the window.
func jobEvents(evs []api.Event, c eventCond) []format.MgrEvent {
	var out []format.MgrEvent
	for _, e := range evs {
		if !c.start.IsZero() && e.Time.Before(c.start) || !c.end.IsZero() && e.Time.After(c.end) {
			continue
		}
		if len(c.users) > 0 && !slices.Contains(c.users, e.ActorName) {
			continue
		}
		out = append(out, format.MgrEvent{JobID: e.JobID, Time: e.Time, Action: e.Action, User: actor(e), Reason: e.Detail})
	}
	return out
}
