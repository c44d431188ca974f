package sprio

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
)

func TestPrioRows(t *testing.T) {
	prios := []api.PriorityRow{
		{JobID: "5", Partition: "gpu"},
		{JobID: "9_0", Partition: "gpu"}, {JobID: "9_1", Partition: "gpu"}, {JobID: "9_1", Partition: "scavenger"},
		{JobID: "9_3", Partition: "gpu"},
	}
	pending := []api.Job{
		{Job: jobrec.Job{ID: 9, ArrayJobID: 9, ArrayTaskID: jobrec.NoTask, ArrayPending: []int{0, 1}}},
		{Job: jobrec.Job{ID: 12, ArrayJobID: 9, ArrayTaskID: 3}},
	}
	type row struct {
		ID   uint32
		Part string
	}
	var got []row
	for _, r := range prioRows(prios, pending) {
		got = append(got, row{r.ID, r.Partition})
	}
	// The pending record's tasks are one row per partition under the
	// array's id; task 3, requeued under an id of its own, shows that id.
	want := []row{{5, "gpu"}, {9, "gpu"}, {9, "scavenger"}, {12, "gpu"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
