package web

// reasonWords says squeue's reason words for people who do not know
// Slurm's; the scheduler's detail (with numbers) follows them.
var reasonWords = map[string]string{
	"None":                     "not looked at yet: the next pass will",
	"Priority":                 "jobs of higher priority are ahead of it",
	"Resources":                "waiting for GPUs, CPUs or memory to free up",
	"Dependency":               "waiting for the jobs it depends on",
	"DependencyNeverSatisfied": "its dependencies can never be met: cancel it",
	"JobHeldUser":              "held by its owner (scontrol release)",
	"JobHeldAdmin":             "held by an operator",
	"BeginTime":                "may not start yet (--begin, or just requeued)",
	"PartitionTimeLimit":       "its time limit is over its partition's",
	"PartitionDown":            "its partition is down",
	"PartitionInactive":        "its partition is inactive",
	"PartitionNodeLimit":       "asks for more nodes than its partition allows",
	"QOSMaxGRESPerUser":        "its user holds the most GPUs the QOS allows",
	"QOSMaxJobsPerUserLimit":   "its user runs the most jobs the QOS allows",
	"QOSMaxCpuPerUserLimit":    "its user holds the most CPUs the QOS allows",
	"JobArrayTaskLimit":        "its array runs as many tasks as its %N allows",
	"NodeDown":                 "the node is down or drained",
	"ReqNodeNotAvail":          "the GPUs it needs are drained or reserved",
	"BadConstraints":           "asks for more than this machine has",
	"InvalidAccount":           "its account is no longer valid",
	"InvalidQOS":               "its QOS is no longer valid",
}

// Why is a pending job's reason in words, with the scheduler's detail.
func Why(reason, detail string) string {
	w, ok := reasonWords[reason]
	if !ok {
		w = reason
	}
	if detail != "" {
		w += " (" + detail + ")"
	}
	return w
}
