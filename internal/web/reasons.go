package web

// reasonWords says squeue's reason words for people who do not know
// Slurm's; the scheduler's detail (with numbers) follows them.
var reasonWords = map[string]string{
	"None":                          "not looked at yet: the next pass will",
	"Priority":                      "jobs of higher priority are ahead of it",
	"Resources":                     "waiting for GPUs, CPUs or memory to free up",
	"Dependency":                    "waiting for the jobs it depends on",
	"DependencyNeverSatisfied":      "its dependencies can never be met: cancel it",
	"JobHeldUser":                   "held by its owner (scontrol release)",
	"JobHeldAdmin":                  "held by an operator",
	"BeginTime":                     "may not start yet (--begin, or just requeued)",
	"PartitionTimeLimit":            "its time limit is over its partition's",
	"PartitionDown":                 "its partition is down",
	"PartitionInactive":             "its partition is inactive",
	"PartitionNodeLimit":            "asks for more nodes than its partition allows",
	"QOSMaxGRESPerUser":             "its user holds the most GPUs the QOS allows",
	"QOSMaxJobsPerUserLimit":        "its user runs the most jobs the QOS allows",
	"QOSMaxCpuPerUserLimit":         "its user holds the most CPUs the QOS allows",
	"QOSMaxMemoryPerUser":           "its user holds the most memory the QOS allows",
	"QOSMaxNodePerUserLimit":        "its user holds the most nodes the QOS allows",
	"QOSMaxBillingPerUser":          "its user holds the most billing the QOS allows",
	"QOSMaxWallDurationPerJobLimit": "its time limit is over its QOS's MaxWall",
	"QOSMaxCpuPerJobLimit":          "asks for more CPUs than its QOS allows a job",
	"QOSMaxGRESPerJob":              "asks for more GPUs than its QOS allows a job",
	"QOSMaxMemoryPerJob":            "asks for more memory than its QOS allows a job",
	"QOSMaxNodePerJobLimit":         "asks for more nodes than its QOS allows a job",
	"QOSMaxBillingPerJob":           "asks for more billing than its QOS allows a job",
	"JobArrayTaskLimit":             "its array runs as many tasks as its %N allows",
	"NodeDown":                      "the node is down or drained",
	"ReqNodeNotAvail":               "the GPUs it needs are drained or reserved",
	"BadConstraints":                "asks for more than this machine has",
	"InvalidAccount":                "its account is no longer valid",
	"InvalidQOS":                    "its QOS is no longer valid",
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
