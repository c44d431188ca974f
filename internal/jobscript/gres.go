package jobscript

import (
	"fmt"
	"strings"
)

// noVal marks a count that sbatch does not send (Slurm's NO_VAL, NO_VAL16).
const noVal = -1

// gresJob is one record of the list gres_job_state_validate builds
// (gres_job_state_t in src/common/gres.c): what the job asks of one GRES
// name and type. Specs that name the same name and type share a record, the
// last count winning: "--gpus-per-task=1 --gpus=2" is one record.
type gresJob struct {
	name, typ                           string
	perJob, perNode, perSocket, perTask uint64
	cpusPer                             uint64
	// total is the record's total_gres: the most any of its counts adds up
	// to over the job's nodes, sockets or tasks.
	total uint64
}

// gresList is the records of a request, one per GRES name and type, in
// the order first named.
type gresList []*gresJob

// record is the list's record of g's name and type, added when there is
// none yet.
func (l *gresList) record(g Gres) *gresJob {
	for _, j := range *l {
		if j.name == g.Name && j.typ == g.Type {
			return j
		}
	}
	j := &gresJob{name: g.Name, typ: g.Type}
	*l = append(*l, j)
	return j
}

// counted is the negation of _generic_state: the record asks for the GRES
// itself, not only carries --cpus-per-gpu or --mem-per-gpu.
func (g *gresJob) counted() bool {
	return g.perJob != 0 || g.perNode != 0 || g.perSocket != 0 || g.perTask != 0
}

// jobCounts are the numbers of the job description that
// gres_job_state_validate reads and may set; noVal where sbatch sends none.
type jobCounts struct {
	numTasks, minNodes, maxNodes                   int
	ntasksPerNode, ntasksPerSocket, socketsPerNode int
	cpusPerTask, ntasksPerTres                     int
}

// checkGres is gres_job_state_validate as sbatch runs it while building the
// job description (slurm_opt_create_job_desc), unless --clusters sends the
// job elsewhere, in its order:
//
//  1. every GPU and GRES spec must parse;
//  2. --gpus-per-task (or --ntasks-per-gpu) on a fixed node count implies a
//     task count;
//  3. each spec fills the record of its name and type;
//  4. --ntasks-per-gpu turns the GPU count into a task count, or the task
//     count into GPUs;
//  5. --mem-per-gpu needs GPUs;
//  6. each record's counts must agree with each other and with the task,
//     node and CPU counts, some of which they set (_test_gres_cnt):
//     "--gpus=4 --gpus-per-task=1" is four tasks, "--gpus-per-task=1
//     --cpus-per-gpu=4" four CPUs per task;
//  7. GPUs cannot be mixed with shards of GPUs;
//  8. one GRES cannot be asked for both with and without a type
//     ("gpu:a100:2,gpu:1"), unless the untyped one only carries
//     --cpus-per-gpu or --mem-per-gpu (_merge_generic_data).
//
// What it sets goes into the Request: the job is sent with those counts.
// Unknown GRES names are kept: which exist is the configuration's business
// (real sbatch checks them against slurm.conf's GresTypes).
func (s *state) checkGres() *Error {
	r := s.r
	bad := func(first ...string) *Error {
		return &Error{Kind: KindInvalid, Exit: s.exitErr, Msg: strings.Join(append(first, MsgInvalidGres), "\n")}
	}

	// 1. Parse, in the order gres_job_state_validate reads the specs.
	gres := ""
	if s.gresSet && strings.EqualFold(s.gres, "none") {
		r.GresNone = true
	} else if s.gresSet {
		gres = s.gres
	}
	specs := []struct {
		raw string
		gpu bool
		dst *[]Gres
	}{
		{s.gpus, true, &r.GPUs},
		{s.gpusPerNode, true, &r.GPUsPerNode},
		{gres, false, &r.Gres},
		{s.gpusPerSocket, true, nil},
		{s.gpusPerTask, true, &r.GPUsPerTask},
	}
	parsed := make([][]Gres, len(specs))
	for i, sp := range specs {
		g, ok := parseGres(gresItems(sp.raw, sp.gpu))
		if !ok {
			if r.Clusters != "" {
				continue
			}
			return bad()
		}
		parsed[i] = g
		if sp.dst != nil {
			*sp.dst = g
		}
	}
	if r.Clusters != "" {
		return nil
	}
	perJob, perNode := parsed[0], append(append([]Gres(nil), parsed[1]...), parsed[2]...)
	perSocket, perTask := parsed[3], parsed[4]

	c := s.jobCounts()
	nTres := c.ntasksPerTres != noVal
	if r.CPUsPerGPU == 0 && s.gpus == "" && s.gpusPerNode == "" && gres == "" &&
		s.gpusPerSocket == "" && s.gpusPerTask == "" && r.MemPerGPU == nil && !nTres {
		return nil
	}

	// 2. An implicit task count.
	if (s.gpusPerTask != "" || nTres) && c.numTasks == noVal && c.minNodes != noVal && c.minNodes == c.maxNodes {
		switch {
		case nTres:
			c.numTasks = c.minNodes * c.ntasksPerTres
		case c.ntasksPerNode != noVal:
			c.numTasks = c.minNodes * c.ntasksPerNode
		case c.cpusPerTask == noVal:
			c.numTasks = c.minNodes
		}
	}

	// 3. The records.
	var list gresList
	record := list.record
	requestedGPU := false
	fill := func(gs []Gres, set func(j *gresJob, n uint64) (total uint64)) {
		for _, g := range gs {
			j := record(g)
			if g.Name == "gpu" {
				requestedGPU = true
			}
			j.total = max(j.total, set(j, g.Count))
		}
	}
	if r.CPUsPerGPU > 0 {
		record(Gres{Name: "gpu"}).cpusPer = uint64(r.CPUsPerGPU)
	}
	fill(perJob, func(j *gresJob, n uint64) uint64 { j.perJob = n; return n })
	fill(perNode, func(j *gresJob, n uint64) uint64 {
		j.perNode = n
		if c.minNodes != noVal {
			n *= uint64(c.minNodes)
		}
		return n
	})
	fill(perSocket, func(j *gresJob, n uint64) uint64 {
		j.perSocket = n
		switch {
		case c.minNodes != noVal && c.socketsPerNode != noVal:
			n *= uint64(c.minNodes * c.socketsPerNode)
		case c.numTasks != noVal && c.ntasksPerSocket != noVal && c.ntasksPerSocket > 0:
			n *= uint64((c.numTasks + c.ntasksPerSocket - 1) / c.ntasksPerSocket)
		}
		return n
	})
	fill(perTask, func(j *gresJob, n uint64) uint64 {
		j.perTask = n
		if c.numTasks != noVal {
			n *= uint64(c.numTasks)
		}
		return n
	})
	if r.MemPerGPU != nil && *r.MemPerGPU != 0 { // a count of 0 makes no record
		record(Gres{Name: "gpu"})
	}

	// 4. --ntasks-per-gpu.
	if nTres {
		switch {
		case requestedGPU && len(list) > 0:
			gpus, found := uint64(0), false
			for _, j := range list {
				if j.name == "gpu" && j.total != 0 {
					gpus, found = gpus+j.total, true
				}
			}
			if !found {
				return bad("gres_job_state_validate: Can't set num_tasks = gpus * *ntasks_per_tres because there are no allocated GPUs")
			}
			c.numTasks = int(gpus) * c.ntasksPerTres
		case c.numTasks != noVal && c.numTasks != 0:
			gpus := uint64(c.numTasks / c.ntasksPerTres)
			if gpus == 0 {
				s.warn(fmt.Sprintf("error: gres_job_state_validate: Failed to add generated GRES gres:gpu:%d (via ntasks_per_tres) to gres_list", gpus))
				break
			}
			j := record(Gres{Name: "gpu"})
			j.perJob, j.total = gpus, max(j.total, gpus)
			requestedGPU = true
		default:
			return bad("gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a node/ntask specification")
		}
	}
	if len(list) == 0 {
		return nil
	}

	// 5. --mem-per-gpu.
	if r.MemPerGPU != nil && !requestedGPU {
		return bad(fmt.Sprintf("Requested mem_per_tres=gres:gpu:%d but did not request any GPU.", *r.MemPerGPU))
	}

	// 6-8.
	sharing, shared := false, false
	typed, untyped := map[string]bool{}, map[string]*gresJob{}
	var names []string
	for _, j := range list {
		if msg := testGresCount(j, &c, nTres); msg != "" {
			return bad(msg)
		}
		switch j.name {
		case "gpu":
			sharing = true
		case "shard", "mps":
			shared = true
			if (j.perJob != 0 && c.maxNodes != 1) || (j.perSocket != 0 && c.socketsPerNode != 1) ||
				(j.perTask != 0 && c.numTasks != 1) {
				return bad()
			}
		}
		if sharing && shared {
			return bad()
		}
		if !typed[j.name] && untyped[j.name] == nil {
			names = append(names, j.name)
		}
		if j.typ != "" {
			typed[j.name] = true
		} else {
			untyped[j.name] = j
		}
	}
	for _, n := range names {
		if typed[n] && untyped[n] != nil && untyped[n].counted() {
			return &Error{Kind: KindInvalid, Exit: s.exitErr, Msg: MsgGresType}
		}
	}
	s.applyCounts(c)
	return nil
}

// jobCounts reads the counts slurm_opt_create_job_desc sends.
func (s *state) jobCounts() jobCounts {
	r := s.r
	orNo := func(n int) int {
		if n <= 0 {
			return noVal
		}
		return n
	}
	c := jobCounts{
		numTasks: noVal, minNodes: noVal, maxNodes: noVal, cpusPerTask: noVal,
		ntasksPerNode:  orNo(r.NTasksPerNode),
		socketsPerNode: orNo(s.sockets),
		ntasksPerTres:  orNo(s.ntasksPerTres),
	}
	if c.ntasksPerTres == noVal {
		c.ntasksPerTres = orNo(s.ntasksPerGPU)
	}
	c.ntasksPerSocket = noVal
	if v, ok := r.OtherValue("ntasks-per-socket"); ok {
		if n, err := parseInt("--ntasks-per-socket", v, true); err == nil {
			c.ntasksPerSocket = orNo(n)
		}
	}
	if r.NTasksSet {
		c.numTasks = r.NTasks
	}
	if r.NodesSet {
		c.minNodes = r.Nodes.Min
		if r.Nodes.Max != 0 {
			c.maxNodes = r.Nodes.Max
		}
	}
	if s.cpusSet {
		c.cpusPerTask = r.CPUsPerTask
	}
	return c
}

// applyCounts keeps what gres_job_state_validate set: the job is sent with
// it, and slurmctld shows it (NumTasks, NumNodes, CPUs/Task, NtasksPerN).
func (s *state) applyCounts(c jobCounts) {
	r, was := s.r, s.jobCounts()
	if c.numTasks != was.numTasks && c.numTasks != noVal {
		r.NTasks, r.NTasksSet = c.numTasks, true
	}
	if (c.minNodes != was.minNodes || c.maxNodes != was.maxNodes) && c.minNodes != noVal {
		r.Nodes, r.NodesSet = NodeRange{Min: c.minNodes, Max: max(c.maxNodes, 0)}, true
	}
	if c.ntasksPerNode != was.ntasksPerNode && c.ntasksPerNode != noVal {
		r.NTasksPerNode = c.ntasksPerNode
	}
	if c.cpusPerTask != was.cpusPerTask && c.cpusPerTask != noVal {
		r.CPUsPerTask = c.cpusPerTask
	}
}

// testGresCount is _test_gres_cnt: the checks of one record against the
// job's counts, in Slurm's order, and the counts they set. It returns the
// line sbatch prints before "Invalid generic resource (gres)
// specification", or "".
func testGresCount(j *gresJob, c *jobCounts, nTres bool) string {
	n := j.name
	noU := func(v int) uint64 { // a count as %u prints it: NO_VAL is 4294967294
		if v == noVal {
			return 0xfffffffe
		}
		return uint64(v)
	}
	if j.perJob != 0 && ((j.perNode != 0 && j.perNode > j.perJob) ||
		(j.perTask != 0 && j.perTask > j.perJob) || (j.perSocket != 0 && j.perSocket > j.perJob)) {
		return fmt.Sprintf("Failed to ensure --%ss >= --gres=%s/--%ss-per-node >= --%ss-per-socket", n, n, n, n)
	}
	if j.perNode != 0 && ((j.perTask != 0 && j.perTask > j.perNode) || (j.perSocket != 0 && j.perSocket > j.perNode)) {
		return fmt.Sprintf("Failed to ensure --%ss >= --%ss-per-task", n, n)
	}
	if j.perSocket != 0 && c.socketsPerNode == noVal {
		return fmt.Sprintf("--%ss-per-socket option requires --sockets-per-node specification", n)
	}
	if j.cpusPer != 0 && c.cpusPerTask != noVal {
		return fmt.Sprintf("--cpus-per-%s is mutually exclusive with --cpus-per-task", n)
	}
	if j.perJob != 0 && j.perNode != 0 {
		if j.perJob%j.perNode != 0 {
			return fmt.Sprintf("Failed to validate job spec, --%ss is not multiple of --gres=%s/--%ss-per-node", n, n, n)
		}
		req := j.perJob / j.perNode
		if (c.minNodes != noVal && req < uint64(c.minNodes)) || req > noU(c.maxNodes) {
			return fmt.Sprintf("Failed to validate job spec. Based on --%s and --gres=%s/--%ss-per-node required nodes (%d) "+
				"doesn't fall between min_nodes (%d) and max_nodes (%d) boundaries.", n, n, n, req, noU(c.minNodes), noU(c.maxNodes))
		}
		c.minNodes, c.maxNodes = int(req), int(req)
	}
	if j.perNode != 0 && j.perSocket != 0 {
		if j.perNode%j.perSocket != 0 {
			return fmt.Sprintf("Failed to validate job spec, --gres=%s/--%ss-per-node not multiple of --%ss-per-socket.", n, n, n)
		}
		req := int(j.perNode / j.perSocket)
		switch c.socketsPerNode {
		case noVal:
			c.socketsPerNode = req
		case req:
		default:
			return fmt.Sprintf("Failed to validate job spec. Based on --gres=%s/--%ss-per-node and --%ss-per-socket "+
				"required number of sockets differ from --sockets-per-node.", n, n, n)
		}
	}
	if nTres && c.numTasks != noVal && c.numTasks%c.ntasksPerTres != 0 {
		return fmt.Sprintf("Failed to validate job spec, -n/--ntasks has to be a multiple of --ntasks-per-%s.", n)
	}
	if j.perTask != 0 {
		switch {
		case j.perJob != 0:
			if j.perJob%j.perTask != 0 {
				return fmt.Sprintf("Failed to validate job spec, --%ss not multiple of --%ss-per-task", n, n)
			}
			req := int(j.perJob / j.perTask)
			if c.numTasks == noVal {
				c.numTasks = req
			} else if c.numTasks != req {
				return fmt.Sprintf("Failed to validate job spec. Based on --%ss and --%ss-per-task "+
					"number of requested tasks differ from -n/--ntasks.", n, n)
			}
		case c.numTasks != noVal:
			j.perJob = uint64(c.numTasks) * j.perTask
		default:
			return fmt.Sprintf("Failed to validate job spec. --%ss-per-task used without either --%ss or -n/--ntasks is not allowed.", n, n)
		}
	}
	if j.perNode != 0 && j.perTask != 0 {
		if j.perNode%j.perTask != 0 {
			return fmt.Sprintf("Failed to validate job spec, --gres=%s/--%ss-per-node not multiple of --%ss-per-task.", n, n, n)
		}
		req := int(j.perNode / j.perTask)
		if c.ntasksPerNode == noVal {
			c.ntasksPerNode = req
		} else if c.ntasksPerNode != req {
			return fmt.Sprintf("Failed to validate job spec. Based on --gres=%s/--%ss-per-node and --%ss-per-task "+
				"requested number of tasks per node differ from --ntasks-per-node.", n, n, n)
		}
	}
	if j.perSocket != 0 && j.perTask != 0 {
		if j.perSocket%j.perTask != 0 {
			return fmt.Sprintf("Failed to validate job spec, --%ss-per-socket not multiple of --%ss-per-task.", n, n)
		}
		req := int(j.perSocket / j.perTask)
		if c.ntasksPerSocket == noVal {
			c.ntasksPerSocket = req
		} else if c.ntasksPerSocket != req {
			return fmt.Sprintf("Failed to validate job spec. Based on --%ss-per-socket and --%ss-per-task "+
				"requested number of tasks per sockets differ from --ntasks-per-socket.", n, n)
		}
	}
	if j.cpusPer != 0 && j.perTask != 0 {
		req := int(j.cpusPer * j.perTask)
		if c.cpusPerTask == noVal {
			c.cpusPerTask = req
		} else if c.cpusPerTask != req {
			return fmt.Sprintf("Failed to validate job spec. Based on --cpus-per-%s and --%ss-per-task "+
				"requested number of cpus differ from -c/--cpus-per-task.", n, n)
		}
	}
	if j.perJob != 0 {
		if c.minNodes != noVal && j.perJob < uint64(c.minNodes) {
			return fmt.Sprintf("Failed to validate job spec, --%ss < -N", n)
		}
		if c.maxNodes != noVal && j.perJob < uint64(c.maxNodes) {
			c.maxNodes = int(j.perJob)
		}
	}
	return ""
}
