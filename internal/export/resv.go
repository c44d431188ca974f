package export

import (
	"fmt"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Reservations is the file of scontrol create reservation lines that
// carry the daemon's advance reservations to real Slurm.
const Reservations = "reservations.sh"

// reservationsSh writes one scontrol create reservation line per
// reservation the running daemon holds, at its window in force or next.
// A reservation of GPUs (TRES=gres/gpu=N) is written as newer Slurm takes
// it; Slurm 22.05 answers "TRES type 'gres/gpu' not supported with
// reservations" (recorded: testdata/golden/README.md), so on 22.05 the
// line stays commented out with a whole-node line beside it, also
// commented: reserving the node takes every GPU, which may not be meant.
func (g gen) reservationsSh() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	g.header(&b, "scontrol create reservation lines for real Slurm", "# ")
	b.WriteString(`#
# slurm-lite's advance reservations, as the running daemon held them when this was
# written, at their window in force or next. Run it once as root (or SlurmUser) after
# slurmctld starts; scontrol show reservation lists them, scontrol delete reservation
# NAME removes one.
set -eu
`)
	for i := range g.in.Reservations {
		r := &g.in.Reservations[i]
		line := resvLine(r, g.nodes)
		if r.GPUs == 0 {
			b.WriteString(line + "\n")
			continue
		}
		fmt.Fprintf(&b, "# %s holds %d GPUs. Slurm 22.05 cannot reserve GPUs (\"TRES type 'gres/gpu' not supported\n", r.Name, r.GPUs)
		b.WriteString("# with reservations\"); Slurm 23.02 and later take this line (remove the '#'):\n")
		b.WriteString("# " + line + "\n")
		b.WriteString("# On 22.05, the nearest is the whole node, every GPU of it:\n")
		whole := *r
		whole.GPUs, whole.GPUType = 0, ""
		b.WriteString("# " + resvLine(&whole, g.nodes) + "\n")
	}
	return b.String()
}

// resvLine is the scontrol create reservation line of r on nodes.
func resvLine(r *api.Reservation, nodes string) string {
	w := []string{"scontrol", "create", "reservation", "ReservationName=" + r.Name,
		"StartTime=" + r.ShowStart.Format("2006-01-02T15:04:05"),
		"Duration=" + slurmsyntax.FormatClock(r.ShowEnd.Sub(r.ShowStart))}
	if len(r.Users) > 0 {
		users := strings.Join(r.Users, ",")
		if r.ExcludeUsers {
			users = "-" + strings.Join(r.Users, ",-")
		}
		w = append(w, "Users="+users)
	}
	if len(r.Accounts) > 0 {
		w = append(w, "Accounts="+strings.Join(r.Accounts, ","))
	}
	if r.Partition != "" {
		w = append(w, "PartitionName="+r.Partition)
	}
	switch {
	case r.GPUs > 0 && r.GPUType != "":
		w = append(w, fmt.Sprintf("TRES=gres/gpu:%s=%d", r.GPUType, r.GPUs))
	case r.GPUs > 0:
		w = append(w, fmt.Sprintf("TRES=gres/gpu=%d", r.GPUs))
	default:
		w = append(w, "Nodes="+nodes)
	}
	if len(r.Flags) > 0 {
		flags := make([]string, len(r.Flags))
		for i, f := range r.Flags {
			if f == "PURGE_COMP" {
				f += "=" + slurmsyntax.FormatClock(r.PurgeComp)
			}
			flags[i] = f
		}
		w = append(w, "Flags="+strings.Join(flags, ","))
	}
	return strings.Join(w, " ")
}
