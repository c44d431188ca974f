package format

import "time"

// MgrEvent is one row of sacctmgr show event: a node's or GPU's drain
// (event_functions.c's fields), or, in slurm-lite's job listing (Jobs=),
// one line of a job's audit trail.
type MgrEvent struct {
	Cluster  string
	NodeName string
	// Start and End bound a drain; End is zero while it lasts.
	Start, End time.Time
	State      string
	Reason     string
	// User is "name(uid)", as sacctmgr prints reason_uid.
	User string
	// JobID, Time and Action are a job event's.
	JobID  uint32
	Time   time.Time
	Action string
}

// ListEvents is sacctmgr list events; an event not over yet lasts until
// now (the command's clock).
func ListEvents(cols []MgrColumn, events []MgrEvent, o MgrOutput, now time.Time) string {
	var recs []mgrRecord
	for i := range events {
		e := &events[i]
		recs = append(recs, func(key string) (Cell, bool) {
			switch key {
			case "cluster":
				return Str(e.Cluster), true
			case "nodename":
				return Str(e.NodeName), true
			case "timestart":
				return dateCell(Time(e.Start)), true
			case "timeend":
				return dateCell(Time(e.End)), true
			case "ts":
				return dateCell(Time(e.Time)), true
			case "state":
				return Str(e.State), true
			case "reason":
				return Str(e.Reason), true
			case "user":
				return Str(e.User), true
			case "event":
				if e.JobID != 0 {
					return Str("Job"), true
				}
				return Str("Node"), true
			case "eventraw":
				return Uint(2), true // SLURMDB_EVENT_NODE
			case "jobid":
				return Uint(e.JobID), true
			case "action":
				return Str(e.Action), true
			case "duration":
				if e.Start.IsZero() {
					return Cell{}, false
				}
				end := e.End
				if end.IsZero() {
					end = now
				}
				return Num(secsTime(int64(end.Sub(e.Start) / time.Second))), true
			}
			return Cell{}, false
		})
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}
