package config

import (
	"slices"
	"strings"
	"testing"
)

// PrivateData takes Slurm's "jobs" and "usage" in any case, in Slurm's
// order, and refuses Slurm's values that slurm-lite does not enforce
// rather than ignoring them.
func TestPrivateData(t *testing.T) {
	if c := mustParse(t, ""); len(c.PrivateData) != 0 || c.Private(PrivateJobs) {
		t.Errorf("default PrivateData = %v, want none (Slurm's default)", c.PrivateData)
	}
	c := mustParse(t, `PrivateData = ["Usage", "jobs", "usage"]`)
	if !slices.Equal(c.PrivateData, []string{"jobs", "usage"}) || !c.Private(PrivateJobs) || !c.Private(PrivateUsage) {
		t.Errorf("PrivateData = %v, want [jobs usage]", c.PrivateData)
	}
	for file, want := range map[string]string{
		`PrivateData = ["nodes"]`: `slurm-lite.toml:1: PrivateData "nodes" is not supported`,
		`PrivateData = ["jobz"]`:  `slurm-lite.toml:1: PrivateData "jobz" is not one of "jobs", "usage", "users"`,
	} {
		_, err := Parse("slurm-lite.toml", []byte(file))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}
