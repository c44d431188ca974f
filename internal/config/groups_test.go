package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroupWarnings(t *testing.T) {
	c := Default()
	c.YieldGroup = "gpu"
	c.Partitions[0].AllowGroups = []string{"lab", "ghosts", "ALL"}
	exists := func(g string) bool { return g == "lab" }
	want := []string{
		`YieldGroup "gpu" is not a group on this machine, so nobody may yield other users' jobs through it: create it (groupadd gpu, then usermod -aG gpu USER for each member) or set YieldGroup = ""`,
		`partition gpu: AllowGroups names "ghosts", which is not a group on this machine, so no user is in it: create it (groupadd ghosts) or take it out of AllowGroups`,
	}
	if diff := cmp.Diff(want, c.GroupWarnings(exists)); diff != "" {
		t.Errorf("GroupWarnings (-want +got):\n%s", diff)
	}
	c.YieldGroup = "lab"
	c.Partitions[0].AllowGroups = nil
	if got := c.GroupWarnings(exists); len(got) != 0 {
		t.Errorf("GroupWarnings with every group present = %q, want none", got)
	}
}
