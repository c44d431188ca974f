package export

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// The daemon's reservations become scontrol create reservation lines: a
// whole-node one as it is, a GPU one commented out, since Slurm 22.05
// refuses TRES=gres/gpu in a reservation (recorded), with the whole node
// as the nearest 22.05 can do.
func TestReservationLines(t *testing.T) {
	start := time.Date(2026, 12, 11, 18, 0, 0, 0, time.Local)
	resvs := []api.Reservation{
		{Name: "evening", Users: []string{"alice", "bob"}, Flags: []string{"DAILY"}, ShowStart: start, ShowEnd: start.Add(4 * time.Hour)},
		{Name: "deadline", Users: []string{"bob"}, ExcludeUsers: true, GPUs: 2, Flags: []string{"PURGE_COMP"}, PurgeComp: 5 * time.Minute,
			ShowStart: start.Add(24 * time.Hour), ShowEnd: start.Add(72 * time.Hour)},
	}
	files, _, _ := generated(t, fromText(t, node), Input{GPUs: fourA100(), Reservations: resvs})
	var got []string
	for _, l := range strings.Split(files[Reservations], "\n") {
		if strings.Contains(l, "scontrol create reservation ReservationName=") {
			got = append(got, l)
		}
	}
	want := []string{
		"scontrol create reservation ReservationName=evening StartTime=2026-12-11T18:00:00 Duration=04:00:00 Users=alice,bob Nodes=gpu01 Flags=DAILY",
		"# scontrol create reservation ReservationName=deadline StartTime=2026-12-12T18:00:00 Duration=2-00:00:00 Users=-bob TRES=gres/gpu=2 Flags=PURGE_COMP=00:05:00",
		"# scontrol create reservation ReservationName=deadline StartTime=2026-12-12T18:00:00 Duration=2-00:00:00 Users=-bob Nodes=gpu01 Flags=PURGE_COMP=00:05:00",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reservation lines (-want +got):\n%s", diff)
	}
	if out, err := exec.Command("/bin/sh", "-n", "-c", files[Reservations]).CombinedOutput(); err != nil {
		t.Errorf("%s is not sh: %v %s", Reservations, err, out)
	}
	if files, _, _ := generated(t, fromText(t, node), Input{GPUs: fourA100()}); files[Reservations] != "" {
		t.Errorf("no reservations, yet %s was written", Reservations)
	}
}
