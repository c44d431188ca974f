package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
)

// An account's GrpTRESMins in the replay, from --config as the daemon
// reads it: account a may use 60 GPU-minutes a day (DecayHalfLife 0,
// UsageResetPeriod DAILY). Its first job runs an hour on one GPU just
// after a reset and spends the budget; its next job, submitted after,
// waits though a GPU is free, and starts at the next reset (the replay
// passes then with nothing else happening). Account b, without a budget,
// runs at once meanwhile. Without the budget the same job starts when it
// is submitted.
func TestReplayHoldsASpentBudget(t *testing.T) {
	base := time.Unix(Base, 0)
	r0 := sched.NextUsageReset("DAILY", base, time.Local).Unix() - Base
	r1 := sched.NextUsageReset("DAILY", time.Unix(Base+r0, 0), time.Local).Unix() - Base
	rows := fmt.Sprintf("0,0,b,1,60,600\n1,%d,a,1,3600,7200\n2,%d,a,1,60,600\n3,%d,b,1,60,600\n", r0, r0+3700, r0+3800)
	tr := trace(t, rows)

	c := config.Default()
	c.Priority.DecayHalfLife = 0
	c.Priority.UsageResetPeriod = "DAILY"
	c.Accounts = []config.Account{{Name: "a", Shares: 1, GrpTRESMins: config.TRES{"gres/gpu": 60}}, {Name: "b", Shares: 1}}
	setup, err := SetupFromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	opt := options(1, 2)
	opt.Setup = setup
	run, err := Simulate(tr, policy(t, "P2"), opt)
	if err != nil {
		t.Fatal(err)
	}
	got := []int64{run.Outcomes[1].FirstStart, run.Outcomes[2].FirstStart, run.Outcomes[3].FirstStart}
	if want := []int64{r0, r1, r0 + 3800}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with the budget, first starts %v, want %v (the second job of a at the reset %d)", got, want, r1)
	}

	c.Accounts[0].GrpTRESMins = nil
	if setup, err = SetupFromConfig(c); err != nil {
		t.Fatal(err)
	}
	opt.Setup = setup
	if run, err = Simulate(tr, policy(t, "P2"), opt); err != nil {
		t.Fatal(err)
	}
	if s := run.Outcomes[2].FirstStart; s != r0+3700 {
		t.Errorf("without the budget, a's second job starts at %d, want %d (at its submission)", s, r0+3700)
	}
}

// What the replay cannot count is refused with why: a QOS's budget (its
// jobs run under a QOS of its own) and a billing budget (no billing
// weights in a trace).
func TestReplayBudgetRefusals(t *testing.T) {
	c := config.Default()
	c.Accounts = []config.Account{{Name: "lab", Shares: 1, GrpTRESMins: config.TRES{"billing": 60}}}
	if _, err := SetupFromConfig(c); err == nil || err.Error() != "account lab: a GrpTRESMins of billing, which the simulator does not replay (a trace's jobs carry no TRESBillingWeights); give it in gres/gpu or cpu" {
		t.Errorf("a billing budget: %v", err)
	}
	c = config.Default()
	c.QOS = append(c.QOS, config.QOS{Name: "capped", GrpTRESMins: config.TRES{"gres/gpu": 600}})
	if _, err := SetupFromConfig(c); err == nil || err.Error() != "QOS capped has a GrpTRESMins budget, which the simulator does not replay (its jobs run under a QOS of its own); put the budget on the accounts ([[Account]] GrpTRESMins)" {
		t.Errorf("a QOS's budget: %v", err)
	}
}

// AccountingStorageEnforce safe in the --config holds in the replay too: a
// job whose time limit × GPUs is more than what is left of its account's
// budget never starts (the replay ends after its idle resets), one that
// fits starts at once.
func TestReplaySafeBudget(t *testing.T) {
	tr := trace(t, "0,0,a,1,60,7200\n1,0,a,1,60,1800\n")
	c := config.Default()
	c.AccountingStorageEnforce = "associations,limits,qos,safe"
	c.Priority.UsageResetPeriod = "DAILY"
	c.Accounts = []config.Account{{Name: "a", Shares: 1, GrpTRESMins: config.TRES{"gres/gpu": 60}}}
	setup, err := SetupFromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	opt := options(1, 2)
	opt.Setup = setup
	run, err := Simulate(tr, policy(t, "P2"), opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int64{run.Outcomes[0].FirstStart, run.Outcomes[1].FirstStart}; got[0] != -1 || got[1] != 0 {
		t.Errorf("under safe, first starts %v, want [-1 0] (120 GPU-minutes never fit a budget of 60)", got)
	}
	c.AccountingStorageEnforce = "associations,limits,qos"
	if opt.Setup, err = SetupFromConfig(c); err != nil {
		t.Fatal(err)
	}
	if run, err = Simulate(tr, policy(t, "P2"), opt); err != nil {
		t.Fatal(err)
	}
	if s := run.Outcomes[0].FirstStart; s != 0 {
		t.Errorf("without safe, the long job starts at %d, want 0 (the budget is not spent)", s)
	}
}
