package sacct

import (
	"io"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// sacctJSON is sacct --json over the runs sacct selected (which, for
// --json, include the earlier runs of requeued jobs); -X leaves the steps
// out, as it sets skip_steps.
func sacctJSON(recs []jobrec.Record, noSteps bool, cfg *config.View, sio cli.IO) int {
	if noSteps {
		for i := range recs {
			recs[i].Steps = nil
		}
	}
	io.WriteString(sio.Stdout, format.SacctJSON(recs, cli.NewViewEnv(sio, cfg), userNameByID))
	return 0
}

// userNameByID is getpwuid's name for uid, "" when there is none.
func userNameByID(uid uint32) string {
	return userdb.Name(uid)
}
