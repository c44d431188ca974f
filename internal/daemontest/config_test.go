package daemontest

import (
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// The base configuration and a test's own parts make one file that the
// daemon's parser takes: the test's top-level keys before its tables, its
// own values over the base's, and its own [Node] instead of the base's.
func TestConfigJoinsTheTestsPartsToTheBase(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		node        string
		cpus        int
		killWait    time.Duration
		maxJobs     int
	}{
		{name: "nothing added", node: "gpu01", cpus: 2, killWait: time.Second},
		{name: "a top-level key and a table", extra: "MaxJobCount = 5\n\n[SchedulerParameters]\nmax_batch_requeue = 1\n",
			node: "gpu01", cpus: 2, killWait: time.Second, maxJobs: 5},
		{name: "tables only", extra: "[SchedulerParameters]\nmax_batch_requeue = 1\n", node: "gpu01", cpus: 2, killWait: time.Second},
		{name: "its own KillWait and node", extra: "KillWait = 10\n[Node]\nNodeName = \"n1\"\nCPUs = 1\nGPUs = \"none\"\n",
			node: "n1", cpus: 1, killWait: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := baseConfig("/tmp/x/d.sock", "/tmp/x/state", tc.extra)
			cfg, err := config.Parse("conf.toml", []byte(text))
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			if cfg.Node.NodeName != tc.node || cfg.Node.CPUs != tc.cpus || cfg.KillWait != tc.killWait ||
				cfg.SocketPath != "/tmp/x/d.sock" || (tc.maxJobs != 0 && cfg.MaxJobCount != tc.maxJobs) {
				t.Errorf("node %s with %d CPUs, KillWait %v, socket %s, MaxJobCount %d from:\n%s",
					cfg.Node.NodeName, cfg.Node.CPUs, cfg.KillWait, cfg.SocketPath, cfg.MaxJobCount, text)
			}
		})
	}
}
