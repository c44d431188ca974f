package cli

// What several commands do with the jobs they load.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// HostsIntersect is -w: does the job run on one of the hosts?
func HostsIntersect(hostlist, node string, st slurm.JobState) bool {
	if node == "" || st == slurm.Pending {
		return false
	}
	hosts, err := slurmsyntax.ExpandHostlist(hostlist)
	if err != nil {
		return false
	}
	return slices.Contains(hosts, node)
}

// CancelName is _build_jobid_str: how scancel names a loaded job to the
// daemon.
func CancelName(j *api.Job) string {
	switch {
	case j.ArrayRecord():
		return fmt.Sprintf("%d_[%s]", j.ArrayJobID, format.BitFmt(j.ArrayPending))
	case j.ArrayJobID != 0 && j.ArrayTaskID >= 0:
		return fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID)
	}
	return strconv.FormatUint(uint64(j.ID), 10)
}
