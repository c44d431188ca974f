package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A key that is accepted is obeyed, or refused with why (issue 24 item 1):
// every key of the schema (examples/slurm-lite.toml's, and `slurmd-lite
// config`'s, which writes the same schema) names the tests that prove it
// does something, through the daemon where it can; a key that only some
// values of are refused names the test of the refusal. A key added to
// Config without an entry here fails TestEveryKeyIsProven, and so does an
// entry whose test is gone or no longer mentions the key.
//
// A proof is "DIR:TestName" (a Go test in that directory, from the
// repository's root) or "script:NAME" (internal/e2e/testdata/script/NAME.txtar,
// run by the e2e package's TestScripts); the test's body (the script) must
// mention the key's last name, or the word given after "~" when the test
// speaks of it in the core's terms ("internal/sched:TestBackfill~Window").
var keyProofs = map[string][]string{
	"ClusterName":        {"script:fairshare_migration"},
	"SocketPath":         {"script:accounts_implicit"},
	"StateSaveLocation":  {"script:state_restored", "internal/daemon:TestTheDaemonRefusesDirectoriesAUserCanSteer"},
	"Operators":          {"script:sbatch_limits", "internal/daemon:TestCheckSubmitFields"},
	"PrivateData":        {"internal/daemon:TestPrivateData", "internal/daemon:TestAssocMgrViewerRules"},
	"YieldGroup":         {"script:yield_handover"},
	"KillWait":           {"internal/stepd:TestTimeLimit~KillWait"},
	"MessageTimeout":     {"script:daemon_stopped"},
	"ShardSize":          {"script:config_keys"},
	"MinJobAge":          {"script:sbatch_user_share"},
	"MaxArraySize":       {"internal/sched:TestCheckSubmit"},
	"MaxJobCount":        {"script:daemon_limits"},
	"MaxJobCountPerUser": {"script:sbatch_user_share"},
	"DefMemPerCPU":       {"script:exclusive_memory", "internal/daemon:TestDefaultMemoryIsGivenAtSubmission"},
	"DefMemPerNode":      {"script:exclusive_memory"},
	"CheckpointDir":      {"internal/daemon:TestCheckpointDirectoriesAreTheUsersAlone"},
	"CheckpointKeepDays": {"internal/daemon:TestCheckpointKeepDaysRemovesOldCheckpoints"},
	"IdleGPUTimeout":     {"internal/daemon:TestIdleTracker~timeout"},
	"AllowUnlistedUsers": {"script:accounts_implicit"},
	"EnforcePartLimits":  {"script:refusals_numbers"},
	"GPUSampleInterval":  {"internal/daemon:TestFairShareUsageDecaysOnTheDaemonsClock"},
	"GPUViolationPolicy": {"internal/daemon:TestNVMLViolationPolicyKill"},
	"SchedulerType":      {"internal/sched:TestBackfill~SchedBuiltin"},
	"PriorityType":       {"internal/sched:TestPriorityFactors~PriorityBasic"},
	// Validation alone: a REQUEUE partition needs preempt/partition_prio,
	// and with every PreemptMode OFF the two plugins do the same.
	"PreemptType":        {"internal/config:TestParseErrors"},
	"TRESBillingWeights": {"script:priority_recorded"},

	"SchedulerParameters.bf_window":       {"internal/sched:TestBackfill~Window"},
	"SchedulerParameters.bf_max_job_test": {"internal/sched:TestBackfill~MaxJobTest"},
	"SchedulerParameters.bf_resolution":   {"internal/sched:TestBackfill~Resolution"},
	// Refused unless Slurm's default: slurm-lite backfills every pending
	// job at every pass.
	"SchedulerParameters.bf_interval":         {"internal/config:TestParseErrors"},
	"SchedulerParameters.bf_continue":         {"internal/config:TestParseErrors"},
	"SchedulerParameters.default_queue_depth": {"internal/config:TestParseErrors"},
	"SchedulerParameters.max_script_size":     {"script:sbatch_limits"},
	"SchedulerParameters.max_batch_requeue":   {"script:requeue_exit", "internal/daemon:TestASupervisorThatCannotStartIsRequeuedHeld"},

	"Node.NodeName":              {"script:nodes"},
	"Node.CPUs":                  {"script:config_keys"},
	"Node.RealMemory":            {"script:refusals_numbers"},
	"Node.GPUs":                  {"script:gpu_packing"},
	"Node.SimulatedGPU.*.Type":   {"script:gpu_packing"},
	"Node.SimulatedGPU.*.Memory": {"script:gpu_packing"},
	"Node.SimulatedGPU.*.Count":  {"script:gpu_packing"},
	"Node.TypeAliases":           {"internal/gpu:TestInventoryOfMockMachines~Types"},

	"Priority.WeightAge":        {"internal/daemon:TestAgePriorityGrowsOnTheDaemonsClock"},
	"Priority.WeightFairshare":  {"script:fairshare"},
	"Priority.WeightPartition":  {"script:config_keys"},
	"Priority.WeightQOS":        {"script:config_keys"},
	"Priority.WeightJobSize":    {"script:config_keys"},
	"Priority.WeightAssoc":      {"script:priority_recorded"},
	"Priority.WeightTRES":       {"script:priority_recorded"},
	"Priority.DecayHalfLife":    {"internal/daemon:TestFairShareUsageDecaysOnTheDaemonsClock"},
	"Priority.MaxAge":           {"internal/daemon:TestAgePriorityGrowsOnTheDaemonsClock"},
	"Priority.CalcPeriod":       {"internal/daemon:TestFairShareRecalculatedEveryCalcPeriod"},
	"Priority.Recalc":           {"internal/daemon:TestRecalcPassRecomputesAtEveryPass", "internal/sim:TestRecalcPeriodHoldsPriorities"},
	"Priority.FavorSmall":       {"script:config_keys"},
	"Priority.UsageResetPeriod": {"internal/daemon:TestUsageResetPeriodClearsUsage"},
	"Priority.Flags":            {"internal/sched:TestTRESAndAssocFactors~Flags", "script:qos_limits"},

	"Partition.*.PartitionName":      {"script:config_keys"},
	"Partition.*.Default":            {"script:config_keys"},
	"Partition.*.MaxTime":            {"script:refusals_numbers"},
	"Partition.*.DefaultTime":        {"internal/sched:TestBackfill"},
	"Partition.*.PriorityTier":       {"script:yield"},
	"Partition.*.PriorityJobFactor":  {"script:config_keys"},
	"Partition.*.PreemptMode":        {"script:yield"},
	"Partition.*.GraceTime":          {"script:yield"},
	"Partition.*.State":              {"internal/daemon:TestAgePriorityGrowsOnTheDaemonsClock"},
	"Partition.*.Hidden":             {"script:config_keys"},
	"Partition.*.AllowAccounts":      {"script:config_keys"},
	"Partition.*.AllowGroups":        {"script:user_refusals"},
	"Partition.*.QOS":                {"script:qos_limits"},
	"Partition.*.TRESBillingWeights": {"internal/sched:TestBilling~Billing"},

	"QOS.*.Name":                 {"script:qos_limits"},
	"QOS.*.Priority":             {"script:config_keys"},
	"QOS.*.MaxTRESPerUser":       {"script:qos_limits"},
	"QOS.*.MaxTRESPerJob":        {"script:qos_limits"},
	"QOS.*.MaxJobsPerUser":       {"script:qos_limits"},
	"QOS.*.MaxSubmitJobsPerUser": {"script:sbatch_user_share"},
	"QOS.*.MaxWall":              {"script:qos_limits"},
	"QOS.*.UsageFactor":          {"script:fairshare"},
	"QOS.*.Flags":                {"script:qos_limits"},

	"Account.*.Name":              {"script:fairshare"},
	"Account.*.Parent":            {"internal/sched:TestAssocPriorityInherited~\"dept\""},
	"Account.*.Shares":            {"script:priority_recorded~Users"},
	"Account.*.Priority":          {"script:priority_recorded"},
	"Account.*.Users":             {"script:fairshare"},
	"AccountingStorageEnforce":    {"internal/sched:TestGrpTRESMinsSafe", "script:quota_budget"},
	"Account.*.GrpTRES":           {"internal/sched:TestAssocLimits", "script:quota_recorded"},
	"Account.*.GrpTRESRunMins":    {"internal/sched:TestAssocLimits", "script:quota_recorded"},
	"Account.*.MaxTRESMinsPerJob": {"internal/sched:TestAssocLimits", "script:quota_recorded"},
	"Account.*.MaxJobs":           {"script:quota_budget", "internal/sched:TestAssocLimits"},
	"User.*.MaxJobs":              {"internal/sched:TestAssocLimits~MaxJobs", "script:quota_recorded"},
	"QOS.*.GrpTRESMins":           {"internal/sched:TestQOSGrpTRESMins"},
	"Account.*.GrpTRESMins":       {"internal/daemon:TestGrpTRESMinsBudgetWaitsForTheReset~GrpTRESMins"},

	"User.*.Name":           {"script:priority_recorded"},
	"User.*.Account":        {"script:priority_recorded"},
	"User.*.Shares":         {"script:priority_recorded"},
	"User.*.Priority":       {"script:priority_recorded"},
	"User.*.DefaultAccount": {"script:priority_recorded"},
	"User.*.QOS":            {"script:qos_limits"},
	"User.*.AdminLevel":     {"script:config_keys"},

	"Yield.Shrink":        {"script:yield_shrink"},
	"Yield.MinRun":        {"script:yield_minrun", "internal/sched:TestAResumedJobRunsItsMinimum"},
	"Yield.ShrinkTries":   {"internal/sched:TestShrinkTries"},
	"Yield.ShrinkPayback": {"internal/sched:TestShrinkPayback"},
	"Yield.ShrinkRegrow":  {"script:yield_shrink"},
	"Yield.Payback":       {"internal/sched:TestYieldPayback~YieldPayback"},
	"Yield.Own":           {"internal/sched:TestYieldPayback~YieldOwn"},
	"Yield.Cost":          {"script:yield_shrink"},

	"Route.*.MaxTime":   {"script:config_keys"},
	"Route.*.Partition": {"script:config_keys"},

	"MailProg":        {"script:notify"},
	"RequeueExit":     {"script:requeue_exit", "script:requeue_exit_recorded"},
	"ScronParameters": {"script:scrontab"},
	"RequeueExitHold": {"script:requeue_exit", "script:requeue_exit_recorded"},
	"MpiParams":       {"script:resv_ports", "internal/sched:TestPortsAreAResource"},
	"Notify.*.URL":    {"internal/notify:TestWebhookRetried"},
	"Notify.*.Events": {"script:notify"},
	"Notify.*.Users":  {"internal/notify:TestWebhookRetried"},
	"LogFormat":       {"internal/daemon:TestMailWebhooksAndJSONLog~json"},
	"JobMappingDir":   {"internal/daemon:TestTheJobMappingFollowsNoLink"},

	"AuthAltTypes":      {"internal/daemon:TestRESTActsAsTheTokensUser", "internal/daemon:TestRESTAnswersAsSlurmrestd"},
	"AuthAltParameters": {"internal/daemon:TestRESTKeyFile"},

	"Web.Listen":       {"internal/daemon:TestWebAnswersOnlyItsOwnNames"},
	"Web.AllowedHosts": {"internal/daemon:TestWebAnswersOnlyItsOwnNames"},
}

// valueProofs are the values of the keys whose values are features, each
// obeyed or refused: Priority.Flags' and QOS.Flags'.
var valueProofs = map[string][]string{
	"Priority.Flags=ACCRUE_ALWAYS":          {"internal/sched:TestPriorityFlagsOfTheFactors~FlagAccrueAlways"},
	"Priority.Flags=NO_FAIR_TREE":           {"internal/sched:TestClassicFairShareReproducesTheWorkedExample~classicExample"},
	"Priority.Flags=MAX_TRES":               {"internal/sched:TestBilling~FlagMaxTRES"},
	"Priority.Flags=NO_NORMAL_ALL":          {"internal/sched:TestParsePriorityFlagsNoNormalAll"},
	"Priority.Flags=NO_NORMAL_ASSOC":        {"internal/sched:TestTRESAndAssocFactors~FlagNoNormalAssoc"},
	"Priority.Flags=NO_NORMAL_PART":         {"internal/sched:TestPriorityFlagsOfTheFactors~FlagNoNormalPart"},
	"Priority.Flags=NO_NORMAL_QOS":          {"internal/sched:TestPriorityFlagsOfTheFactors~FlagNoNormalQOS"},
	"Priority.Flags=NO_NORMAL_TRES":         {"internal/sched:TestTRESAndAssocFactors~FlagNoNormalTRES"},
	"Priority.Flags=SMALL_RELATIVE_TO_TIME": {"internal/sched:TestJobSizeRelativeToTime~FlagSmallRelativeToTime"},
	"Priority.Flags=CALCULATE_RUNNING":      {"internal/config:TestParseErrors", "script:qos_limits"},
	"Priority.Flags=DEPTH_OBLIVIOUS":        {"internal/config:TestParseErrors", "script:qos_limits"},
	"Priority.Flags=INCR_ONLY":              {"internal/config:TestParseErrors", "script:qos_limits"},

	"QOS.*.Flags=DenyOnLimit":           {"script:qos_limits"},
	"QOS.*.Flags=EnforceUsageThreshold": {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=NoDecay":               {"internal/sched:TestQOSGrpTRESMins"},
	"QOS.*.Flags=NoReserve":             {"script:qos_limits"},
	"QOS.*.Flags=OverPartQOS":           {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=PartitionMaxNodes":     {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=PartitionMinNodes":     {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=PartitionTimeLimit":    {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=RequiresReservation":   {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
	"QOS.*.Flags=UsageFactorSafe":       {"internal/config:TestUnsupportedQOSFlagsAreRefused~unsupportedQOSFlags"},
}

func TestEveryKeyIsProven(t *testing.T) {
	root := filepath.Join("..", "..")
	var keys []string
	for _, k := range schemaKeys(reflect.TypeOf(Config{}), nil) {
		keys = append(keys, strings.Join(k, "."))
	}
	for _, k := range keys {
		if _, ok := keyProofs[k]; !ok {
			t.Errorf("key %s names no test that proves it does something: add one (or refuse the key, saying why) and list it in keyProofs", k)
		}
	}
	for k := range keyProofs {
		if !slices.Contains(keys, k) {
			t.Errorf("keyProofs lists %s, which is no key of the schema", k)
		}
	}
	var values []string
	for _, f := range priorityFlags {
		values = append(values, "Priority.Flags="+f)
	}
	for _, f := range qosFlags {
		values = append(values, "QOS.*.Flags="+f)
	}
	for _, v := range values {
		if _, ok := valueProofs[v]; !ok {
			t.Errorf("%s names no test that proves it is obeyed or refused: add one to valueProofs", v)
		}
	}
	for v := range valueProofs {
		if !slices.Contains(values, v) {
			t.Errorf("valueProofs lists %s, which is no value of the schema", v)
		}
	}
	bodies := testBodies(t, root)
	check := func(what string, proofs []string) {
		for _, p := range proofs {
			ref, mention, _ := strings.Cut(p, "~")
			if mention == "" {
				name := what
				if _, v, ok := strings.Cut(what, "="); ok {
					name = v
				}
				mention = name[strings.LastIndex(name, ".")+1:]
			}
			body, ok := bodies.lookup(t, root, ref)
			if !ok {
				t.Errorf("%s: proof %s does not exist", what, ref)
				continue
			}
			if !strings.Contains(body, mention) {
				t.Errorf("%s: %s does not mention %q", what, ref, mention)
			}
		}
	}
	for _, k := range keys {
		check(k, keyProofs[k])
	}
	for _, v := range values {
		check(v, valueProofs[v])
	}
}

// Each QOS flag slurm-lite cannot obey is refused, saying why.
func TestUnsupportedQOSFlagsAreRefused(t *testing.T) {
	for _, r := range unsupportedQOSFlags {
		flag := r.word
		data := "[[QOS]]\nName = \"normal\"\nFlags = [\"" + flag + "\"]\n"
		_, err := Parse("f.toml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), "flag "+flag+" is not supported: ") {
			t.Errorf("QOS flag %s: error %v, want a refusal saying why", flag, err)
		}
	}
}

// goBodies maps "DIR:TestName" to the test function's text, read lazily
// per directory.
type goBodies map[string]map[string]string

func testBodies(t *testing.T, root string) goBodies { return goBodies{} }

var funcStart = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

func (g goBodies) lookup(t *testing.T, root, ref string) (string, bool) {
	dir, name, ok := strings.Cut(ref, ":")
	if !ok {
		return "", false
	}
	if dir == "script" {
		data, err := os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "script", name+".txtar"))
		return string(data), err == nil
	}
	funcs, seen := g[dir]
	if !seen {
		funcs = map[string]string{}
		files, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(data)
			locs := funcStart.FindAllStringSubmatchIndex(src, -1)
			for i, l := range locs {
				end := len(src)
				if next := strings.Index(src[l[1]:], "\nfunc "); next >= 0 {
					end = l[1] + next
				}
				if i+1 < len(locs) && locs[i+1][0] < end {
					end = locs[i+1][0]
				}
				funcs[src[l[2]:l[3]]] = src[l[0]:end]
			}
		}
		g[dir] = funcs
	}
	body, ok := funcs[name]
	return body, ok
}
