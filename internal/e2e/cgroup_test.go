package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

func init() { e2eCmds["cgroup"] = cmdCgroup }

// cgroupCondition answers the scripts' [cgroup2] (root, and a cgroup v2
// hierarchy to make a test's cgroup in) and [cgroupmem] (a cgroup made
// there is given the memory controller, so a test's jobs can be held to
// --mem: a unified hierarchy whose root hands memory down, as systemd's
// does; not a hybrid one, whose memory controller is cgroup v1's).
func cgroupCondition(cond string) bool {
	mnt, err := stepd.Cgroup2Mount()
	if err != nil || os.Geteuid() != 0 {
		return false
	}
	if cond == "cgroup2" {
		return true
	}
	b, _ := os.ReadFile(filepath.Join(mnt, "cgroup.subtree_control"))
	return slices.Contains(strings.Fields(string(b)), "memory")
}

// cgroup VAR: make a cgroup of the test's own at the top of the cgroup v2
// hierarchy ($VAR its directory, $VAR_REL its path as /proc/PID/cgroup
// shows it), where a script puts its daemon and other processes. When
// the script ends, every process left in it is killed (cgroup.kill) and
// it is removed with what was made under it: the test touches no other
// cgroup.
func cmdCgroup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cgroup VAR")
	}
	mnt, err := stepd.Cgroup2Mount()
	ts.Check(err)
	name := fmt.Sprintf("slurm-lite-e2e-%d-%s", os.Getpid(), filepath.Base(ts.Getenv("WORK")))
	dir := filepath.Join(mnt, name)
	for i := 1; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			ts.Fatalf("making a test cgroup: %v", err)
		}
		dir = filepath.Join(mnt, fmt.Sprintf("%s-%d", name, i))
	}
	ts.Defer(func() { removeCgroupTree(dir) })
	ts.Setenv(args[0], dir)
	ts.Setenv(args[0]+"_REL", "/"+filepath.Base(dir))
}

// removeCgroupTree kills what is left in a test's cgroup and removes it,
// its children first (rmdir fails while a cgroup has processes or
// children); for up to 10 s, as killed processes take a moment to go.
func removeCgroupTree(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var dirs []string
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			_ = os.Remove(d)
		}
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
