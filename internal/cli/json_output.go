package cli

import (
	"io"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// squeueJSON is squeue --json: as 22.05's squeue, it dumps every job the
// daemon holds (finished ones still kept included), whatever the other
// options say.
func squeueJSON(c *sockclient.Client, cfg *config.Config, sio IO) int {
	jobs, err := getJobs(c, nil)
	if err != nil {
		return loadJobsError("squeue", err, sio)
	}
	format.ControllerOrder(jobs)
	io.WriteString(sio.Stdout, format.SqueueJSON(jobs, newEnv(sio, cfg)))
	return 0
}

// sacctJSON is sacct --json over the runs sacct selected (which, for
// --json, include the earlier runs of requeued jobs); -X leaves the steps
// out, as it sets skip_steps.
func sacctJSON(recs []jobrec.Record, noSteps bool, cfg *config.Config, sio IO) int {
	if noSteps {
		for i := range recs {
			recs[i].Steps = nil
		}
	}
	io.WriteString(sio.Stdout, format.SacctJSON(recs, newEnv(sio, cfg), userNameByID))
	return 0
}

// userNameByID is getpwuid's name for uid, "" when there is none.
func userNameByID(uid uint32) string {
	return userdb.Name(uid)
}
