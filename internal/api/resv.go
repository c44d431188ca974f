package api

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// PathReservations is GET -> Reservations (scontrol show reservation,
// sinfo -T: everyone may see them) and POST ResvChange -> Reservation
// (scontrol create/update/delete reservation: root and operators).
const PathReservations = "/v1/reservations"

// Reservation is an advance reservation as stored and shown.
type Reservation struct {
	Name string `json:"name"`
	// Start and End are the first window as created (or updated);
	// recurring reservations move on from it (Window, in the core).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Users may use it; with ExcludeUsers everyone but them.
	Users        []string `json:"users,omitempty"`
	ExcludeUsers bool     `json:"exclude_users,omitempty"`
	Accounts     []string `json:"accounts,omitempty"`
	Partition    string   `json:"partition,omitempty"`
	// Node is the node named by Nodes= or NodeCnt=; "" with TRES=.
	Node string `json:"node,omitempty"`
	// GPUs it holds (TRES=gres/gpu[:TYPE]=N); 0 holds the whole node.
	GPUs    int    `json:"gpus,omitempty"`
	GPUType string `json:"gpu_type,omitempty"`
	// Flags are Slurm's words, in ResvFlagWords' order.
	Flags []string `json:"flags,omitempty"`
	// PurgeComp is PURGE_COMP's idle time (5 minutes when given bare).
	PurgeComp time.Duration `json:"purge_comp,omitempty"`
	By        string        `json:"by,omitempty"`
	Created   time.Time     `json:"created,omitzero"`

	// Shown: the window in force now or next, whether it is in force,
	// and the node's name and CPUs (for Nodes=, CoreCnt= and TRES=).
	ShowStart time.Time `json:"show_start,omitzero"`
	ShowEnd   time.Time `json:"show_end,omitzero"`
	Active    bool      `json:"active,omitempty"`
	NodeName  string    `json:"node_name,omitempty"`
	// ShowPartition is PartitionName= as shown: the reservation's, or
	// for one not naming its node the default partition.
	ShowPartition string `json:"show_partition,omitempty"`
	NodeCPUs      int    `json:"node_cpus,omitempty"`
}

// Has reports whether the reservation has flag word f.
func (r *Reservation) Has(f string) bool { return slices.Contains(r.Flags, f) }

// Reservations answers GET PathReservations.
type Reservations struct {
	List []Reservation `json:"list"`
}

// Reservation change actions.
const (
	ResvCreate = "create"
	ResvUpdate = "update"
	ResvDelete = "delete"
)

// ResvChange is scontrol create, update or delete reservation: the
// Key=Value words as typed (the daemon reads times against its own clock).
type ResvChange struct {
	Action string   `json:"action"`
	Name   string   `json:"name,omitempty"`
	Words  []string `json:"words,omitempty"`
}

// ResvFlagWords are the reservation flags slurm-lite obeys, in the order
// Slurm 22.05 prints them (reservation_flags_string).
var ResvFlagWords = []string{"MAINT", "FLEX", "IGNORE_JOBS", "DAILY", "WEEKDAY", "WEEKEND", "WEEKLY", "PURGE_COMP", "MAGNETIC"}

// ResvError is a reservation request scontrol refuses before sending it,
// in Slurm's words: Diag, when set, is a line of its own before Msg.
type ResvError struct {
	Diag string
	Msg  string
}

func (e *ResvError) Error() string { return e.Msg }

func resvErr(format string, args ...any) *ResvError {
	return &ResvError{Msg: fmt.Sprintf(format, args...)}
}

// ApplyResvWords applies scontrol's Key=Value words to r, times read
// against now, as scontrol_parse_res_options does; create checks that the
// reservation is whole. The name comes from ReservationName= (on update,
// the one to change). Errors are *ResvError in Slurm's words; the caller
// adds "  No reservation created." (or updated).
func ApplyResvWords(r *Reservation, words []string, now time.Time, create bool) error {
	var (
		startSet, endSet bool
		dur              time.Duration
		durSet           bool
		shift            = r.End.Sub(r.Start)
	)
	for _, w := range words {
		key, val, ok := strings.Cut(w, "=")
		if !ok {
			return resvErr("Unknown parameter %s.", w)
		}
		switch k := strings.ToLower(key); {
		case k == "reservationname" || k == "reservation" || k == "resv":
			if val == "" {
				return resvErr("Invalid reservation name %s.", w)
			}
			r.Name = val
		case k == "starttime":
			t, err := resvTime(val, now)
			if err != nil {
				var be *slurmsyntax.BeginError
				e := resvErr("Invalid start time %s.", w)
				if errors.As(err, &be) {
					e.Diag = be.Diagnostic()
				}
				return e
			}
			r.Start, startSet = t, true
		case k == "endtime":
			t, err := resvTime(val, now)
			if err != nil {
				var be *slurmsyntax.BeginError
				e := resvErr("Invalid end time %s.", w)
				if errors.As(err, &be) {
					e.Diag = be.Diagnostic()
				}
				return e
			}
			r.End, endSet = t, true
		case k == "duration":
			d, err := slurmsyntax.ParseMinutes(val)
			if err != nil || d <= 0 || d == slurmsyntax.Infinite {
				return resvErr("Invalid duration %s.", w)
			}
			dur, durSet = d, true
		case k == "users" || k == "user":
			users, exclude, err := resvUsers(val)
			if err != nil {
				return err
			}
			r.Users, r.ExcludeUsers = users, exclude
		case k == "accounts" || k == "account":
			r.Accounts = splitList(val)
		case k == "partitionname" || k == "partition":
			r.Partition = val
		case k == "nodes":
			if val == "" {
				return resvErr("Invalid node list %s.", w)
			}
			r.Node, r.GPUs, r.GPUType = val, 0, ""
		case k == "nodecnt" || k == "nodecount":
			if n, err := strconv.Atoi(val); err != nil || n != 1 {
				return resvErr("Invalid node count %s: this machine is one node; give NodeCnt=1, Nodes=NAME or TRES=gres/gpu=N.", w)
			}
			r.Node, r.GPUs, r.GPUType = "", 0, ""
		case k == "tres":
			n, typ, err := resvTRES(val)
			if err != nil {
				return err
			}
			r.Node, r.GPUs, r.GPUType = "", n, typ
		case k == "flags":
			flags, purge, err := resvFlags(val)
			if err != nil {
				return err
			}
			r.Flags, r.PurgeComp = flags, purge
		default:
			return resvErr("Unknown parameter %s.", w)
		}
	}
	switch {
	case durSet:
		r.End = r.Start.Add(dur)
	case startSet && !endSet && !create:
		r.End = r.Start.Add(shift) // a moved reservation keeps its length
	}
	if !create {
		if !r.End.After(r.Start) {
			return resvErr("Invalid time specified: EndTime must be after StartTime.")
		}
		return nil
	}
	switch {
	case !startSet:
		return resvErr("A start time must be given.")
	case !endSet && !durSet:
		return resvErr("An end time or duration must be given.")
	case len(r.Users) == 0 && len(r.Accounts) == 0:
		return resvErr("Either Users/Groups and/or Accounts must be specified.")
	case !r.End.After(r.Start):
		return resvErr("Invalid time specified: EndTime must be after StartTime.")
	}
	return nil
}

// resvTime is a reservation's StartTime or EndTime: parse_time's forms,
// "now" and "now+N" included.
func resvTime(s string, now time.Time) (time.Time, error) {
	if strings.EqualFold(s, "now") {
		return now.Truncate(time.Second), nil
	}
	return slurmsyntax.ParseBegin(s, now)
}

// resvUsers reads Users=: all names, or all names each after '-' (every
// user but them).
func resvUsers(val string) ([]string, bool, error) {
	names := splitList(val)
	if len(names) == 0 {
		return nil, false, nil
	}
	exclude := strings.HasPrefix(names[0], "-")
	for i, n := range names {
		if strings.HasPrefix(n, "-") != exclude {
			return nil, false, resvErr("Users=%s mixes users and excluded users (-NAME); give one kind.", val)
		}
		names[i] = strings.TrimPrefix(n, "-")
		if names[i] == "" {
			return nil, false, resvErr("Invalid user name in Users=%s.", val)
		}
	}
	return names, exclude, nil
}

// resvTRES reads TRES=gres/gpu=N or gres/gpu:TYPE=N, the GPUs newer Slurm
// reserves (22.05 itself answers "TRES type 'gres/gpu' not supported
// with reservations"; slurmd-lite export says so).
func resvTRES(val string) (int, string, error) {
	n, typ := 0, ""
	for _, item := range splitList(val) {
		name, count, _ := strings.Cut(item, "=")
		c, err := strconv.Atoi(count)
		lname := strings.ToLower(name)
		switch {
		case err != nil || c <= 0:
			return 0, "", resvErr("Invalid TRES count %s: give TRES=gres/gpu=N.", item)
		case lname == "gres/gpu":
			n = c
		case strings.HasPrefix(lname, "gres/gpu:"):
			n, typ = c, name[len("gres/gpu:"):]
		default:
			return 0, "", resvErr("TRES type '%s' not supported with reservations: slurm-lite reserves GPUs (TRES=gres/gpu=N, gres/gpu:TYPE=N) or the whole node (Nodes=NAME).", name)
		}
	}
	if n == 0 {
		return 0, "", resvErr("Invalid TRES %s: give TRES=gres/gpu=N.", val)
	}
	return n, typ, nil
}

// resvFlags reads Flags=: the words of ResvFlagWords, case-insensitive,
// PURGE_COMP optionally with =TIME.
func resvFlags(val string) ([]string, time.Duration, error) {
	var purge time.Duration
	seen := map[string]bool{}
	for _, f := range splitList(val) {
		word, arg, hasArg := strings.Cut(f, "=")
		word = strings.ToUpper(word)
		if !slices.Contains(ResvFlagWords, word) || (hasArg && word != "PURGE_COMP") {
			return nil, 0, resvErr("Error parsing flags %s.", val)
		}
		if word == "PURGE_COMP" {
			purge = 5 * time.Minute
			if hasArg {
				d, err := slurmsyntax.ParseMinutes(arg)
				if err != nil || d <= 0 {
					return nil, 0, resvErr("Error parsing flags %s.", val)
				}
				purge = d
			}
		}
		seen[word] = true
	}
	n := 0
	for _, w := range []string{"DAILY", "WEEKDAY", "WEEKEND", "WEEKLY"} {
		if seen[w] {
			n++
		}
	}
	if n > 1 {
		return nil, 0, resvErr("Error parsing flags %s: give one of DAILY, WEEKDAY, WEEKEND and WEEKLY.", val)
	}
	var out []string
	for _, w := range ResvFlagWords {
		if seen[w] {
			out = append(out, w)
		}
	}
	return out, purge, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
