package squeue

import (
	"io"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// squeueJSON is squeue --json: as 22.05's squeue, it dumps every job the
// daemon holds (finished ones still kept included), whatever the other
// options say.
func squeueJSON(c *sockclient.Client, cfg *config.View, sio cli.IO) int {
	jobs, err := cli.GetJobs(c, nil)
	if err != nil {
		return cli.LoadJobsError("squeue", err, sio)
	}
	format.ControllerOrder(jobs)
	io.WriteString(sio.Stdout, format.SqueueJSON(jobs, cli.NewViewEnv(sio, cfg)))
	return 0
}
