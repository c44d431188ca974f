package api

import (
	"errors"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// PathUpdate is scontrol update of jobs: POST Update -> UpdateResults.
const PathUpdate = "/v1/jobs/update"

// PriorityRelease is Priority=INFINITE (4294967295): release a held job,
// or give a job its computed priority back, as Slurm reads that value.
const PriorityRelease uint32 = 1<<32 - 1

// Update is scontrol update JobId=... KEY=VALUE...: the fields to change,
// nil for those left as they are, and the jobs to change them on, as
// scontrol sends them one by one ("12", "12_3", "12_1-3,7").
type Update struct {
	Jobs []string `json:"jobs"`
	// TimeLimit is whole minutes, or slurmsyntax.Infinite for UNLIMITED.
	TimeLimit *time.Duration `json:"time_limit,omitempty"`
	Partition *string        `json:"partition,omitempty"`
	// Priority is a fixed priority; 0 holds the job, PriorityRelease
	// releases it or drops a fixed priority.
	Priority *uint32 `json:"priority,omitempty"`
	Nice     *int    `json:"nice,omitempty"`
	Name     *string `json:"name,omitempty"`
	Comment  *string `json:"comment,omitempty"`
	// Gres replaces the job's generic resources per node (Gres=, --gres's
	// syntax, "" for none); GPUs its GPUs per job (TresPerJob=gres:gpu:N,
	// or slurm-lite's NumGPUs=N), as --gpus. Either replaces every GPU
	// request the job had.
	Gres *string `json:"gres,omitempty"`
	GPUs *string `json:"gpus,omitempty"`
	// Requeue is Requeue=0|1.
	Requeue *bool `json:"requeue,omitempty"`
}

// Validate refuses an update that names no job or changes nothing.
func (u Update) Validate() error {
	if len(u.Jobs) == 0 {
		return errors.New("no job to update: name one with JobId=")
	}
	if u.TimeLimit == nil && u.Partition == nil && u.Priority == nil && u.Nice == nil && u.Name == nil &&
		u.Comment == nil && u.Gres == nil && u.GPUs == nil && u.Requeue == nil {
		return errors.New("no changes specified")
	}
	return nil
}

// UpdateResult is what happened to one job string of an Update. A plain
// job (or one array task named by its own job id) has Code and Error; an
// array has Array instead: its tasks grouped by outcome, each group named
// as slurmctld names it ("12_1-3"), ordered by their lowest task.
type UpdateResult struct {
	Job   string      `json:"job"`
	Code  slurm.Errno `json:"code,omitempty"`
	Error string      `json:"error,omitempty"`
	// Hint explains a refusal in Error's Slurm words: what is wrong and
	// the fix; scontrol prints it on a line after Slurm's.
	Hint  string   `json:"hint,omitempty"`
	Array []Result `json:"array,omitempty"`
}

// UpdateResults answers an Update, one result per job string, in order.
type UpdateResults struct {
	Results []UpdateResult `json:"results"`
}
