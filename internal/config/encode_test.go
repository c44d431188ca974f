package config

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// WriteTOML's output reads back as the configuration it was written from:
// the defaults, and the documented example with every key set.
func TestWriteTOMLRoundTrip(t *testing.T) {
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	fromExample, err := Parse("slurm-lite.toml", example)
	if err != nil {
		t.Fatal(err)
	}
	defaults := Default()
	for name, c := range map[string]*Config{"defaults": defaults, "example": fromExample} {
		t.Run(name, func(t *testing.T) {
			roundTrip(t, c)
		})
	}
}

// roundTrip checks that c, written out, reads back as c. The machine's
// facts are applied first, as the daemon holds a configuration: written
// empty, they would be refused.
func roundTrip(t *testing.T, c *Config) {
	t.Helper()
	c.ApplyHost(Host{Name: "gpu01", CPUs: 16, Memory: 64000 * slurmsyntax.MiB})
	var b strings.Builder
	if err := c.WriteTOML(&b); err != nil {
		t.Fatal(err)
	}
	back, err := Parse("written.toml", []byte(b.String()))
	if err != nil {
		t.Fatalf("the written configuration does not read back: %v\n%s", err, b.String())
	}
	back.ApplyHost(Host{Name: "gpu01", CPUs: 16, Memory: 64000 * slurmsyntax.MiB})
	if diff := cmp.Diff(c, back, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("read back (-written +read):\n%s\nfrom:\n%s", diff, b.String())
	}
}

// Every key the issue found missing from `slurmd-lite config` is written.
func TestWriteTOMLNamesEverySetting(t *testing.T) {
	c := Default()
	c.YieldGroup = "gpu"
	c.IdleGPUTimeout = 3600e9
	c.Partitions[0].AllowGroups = []string{"lab"}
	c.Partitions[0].GraceTime = 60e9
	c.QOS[0].MaxJobsPerUser = 4
	var b strings.Builder
	if err := c.WriteTOML(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nYieldGroup = \"gpu\"\n", "\nIdleGPUTimeout = \"1:00:00\"\n", "\nEnforcePartLimits = \"ALL\"\n",
		"\n[[Partition]]\nPartitionName = \"gpu\"\n", "\nAllowGroups = [\"lab\"]\n", "\nGraceTime = 60\n",
		"\n[[QOS]]\nName = \"normal\"\n", "\nMaxJobsPerUser = 4\n", "\nMaxSubmitJobsPerUser = 0\n", "\nMaxTRESPerUser = \"\"\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteTOML lacks %q:\n%s", want, b.String())
		}
	}
}
