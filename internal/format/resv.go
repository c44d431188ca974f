package format

import (
	"fmt"
	"io"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// NoReservations is what scontrol show reservation and sinfo -T print for
// an empty list.
const NoReservations = "No reservations in the system"

// ShowReservation is scontrol show reservation's text for one reservation
// (Slurm 22.05's slurm_sprint_reservation_info): five lines and a blank
// one, or with oneLiner one line.
func ShowReservation(r *api.Reservation, oneLiner bool) string {
	core, tres := r.NodeCPUs, fmt.Sprintf("cpu=%d", r.NodeCPUs)
	if r.GPUs > 0 {
		core, tres = 0, fmt.Sprintf("gres/gpu=%d", r.GPUs)
		if r.GPUType != "" {
			tres = fmt.Sprintf("gres/gpu:%s=%d", r.GPUType, r.GPUs)
		}
	}
	state := "INACTIVE"
	if r.Active {
		state = "ACTIVE"
	}
	users := orNullStr(strings.Join(r.Users, ","))
	if r.ExcludeUsers {
		users = "-" + strings.Join(r.Users, ",-")
	}
	lines := []string{
		fmt.Sprintf("ReservationName=%s StartTime=%s EndTime=%s Duration=%s", r.Name, Time(r.ShowStart), Time(r.ShowEnd),
			slurmsyntax.FormatClock(r.ShowEnd.Sub(r.ShowStart))),
		fmt.Sprintf("Nodes=%s NodeCnt=1 CoreCnt=%d Features=(null) PartitionName=%s Flags=%s", r.NodeName, core,
			orNullStr(r.ShowPartition), ResvFlags(r)),
		"TRES=" + tres,
		fmt.Sprintf("Users=%s Groups=(null) Accounts=%s Licenses=(null) State=%s BurstBuffer=(null) Watts=n/a",
			users, orNullStr(strings.Join(r.Accounts, ",")), state),
		"MaxStartDelay=(null)",
	}
	if oneLiner {
		return strings.Join(lines, " ") + "\n"
	}
	return strings.Join(lines, "\n   ") + "\n\n"
}

// ResvFlags is a reservation's Flags= as Slurm prints them: its words in
// Slurm's order, PURGE_COMP with its time, SPEC_NODES for one that named
// its node.
func ResvFlags(r *api.Reservation) string {
	var out []string
	for _, f := range r.Flags {
		if f == "MAGNETIC" && r.Node != "" {
			out = append(out, "SPEC_NODES")
		}
		if f == "PURGE_COMP" {
			f += "=" + slurmsyntax.FormatClock(r.PurgeComp)
		}
		out = append(out, f)
	}
	if r.Node != "" && !r.Has("MAGNETIC") {
		out = append(out, "SPEC_NODES")
	}
	return strings.Join(out, ",")
}

// SinfoReservations is sinfo -T (sinfo.c's _print_reservation): name,
// state, start, end, duration and nodes, whatever -o asks.
func SinfoReservations(w io.Writer, list []api.Reservation) {
	if len(list) == 0 {
		fmt.Fprintln(w, NoReservations)
		return
	}
	width := len("RESV_NAME")
	for _, r := range list {
		width = max(width, len(r.Name))
	}
	row := func(name, state, start, end, dur, nodes string) {
		fmt.Fprintf(w, "%-*s  %8s  %19s  %19s  %11s  %s\n", width, name, state, start, end, dur, nodes)
	}
	row("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	for _, r := range list {
		state := "INACTIVE"
		if r.Active {
			state = "ACTIVE"
		}
		row(r.Name, state, Time(r.ShowStart), Time(r.ShowEnd), slurmsyntax.FormatClock(r.ShowEnd.Sub(r.ShowStart)), r.NodeName)
	}
}
