package daemon

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/jobmap"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmrest"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/sreport"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// webState is what the loop publishes for the web listener ([Web]) and
// the job mapping (JobMappingDir), beside view: each a pointer swapped
// whole, so that a scrape, a page load or a mapping write reads the last
// pass without mu and the loop never waits for them.
type webState struct {
	// passed is the last pass's snapshot, its usage advanced (the fair
	// share tree is computed from it on demand, not by the loop).
	passed atomic.Pointer[sched.Snapshot]
	// The passes' planning cost (sdiag's cycle times).
	cycles    atomic.Uint64
	planned   atomic.Int64 // nanoseconds, all passes
	lastCycle atomic.Int64 // nanoseconds
	depth     atomic.Int64 // pending jobs the passes considered, all passes
	// Yields and preemptions carried out since the start.
	yields      atomic.Uint64
	preemptions atomic.Uint64
	// started runs from the daemon's start, on the machine's clock (the
	// passes are paced on it).
	started clock.Stopwatch
	// mapKick wakes the job mapping writer after a pass.
	mapKick chan struct{}
	// gpuSecs caches store.GPUSeconds: an aggregate over every run.
	gpuSecsMu sync.Mutex
	gpuSecs   map[string]float64
	gpuSecsAt clock.Stopwatch // runs from gpuSecs' sum
}

// gpuSecondsEvery is how long the GPU-seconds by account are reused: a
// scrape every 15 s would otherwise sum the whole history each time.
const gpuSecondsEvery = time.Minute

// publishPass records a pass for the web listener: its snapshot (with
// its usage) and what planning it cost. Two stores: the loop does not
// wait here.
func (w *webState) publishPass(snap sched.Snapshot, took time.Duration) {
	w.passed.Store(&snap)
	w.cycles.Add(1)
	w.planned.Add(int64(took))
	w.lastCycle.Store(int64(took))
	pending := 0
	for i := range snap.Jobs {
		if snap.Jobs[i].State == slurm.Pending {
			pending++
		}
	}
	w.depth.Add(int64(pending))
	if w.mapKick != nil {
		select {
		case w.mapKick <- struct{}{}:
		default:
		}
	}
}

// webSource is the daemon as the web listener's source.
type webSource struct{ d *Daemon }

// State reads the published view, the store's cache of recent jobs, the
// last GPU sample and the last pass's snapshot; it takes no lock the loop
// holds. It is what the anonymous viewer (anonymousViewer: no one, who
// owns no job) may see, by the rule of the socket API's answers: every
// job, share row and event goes through the viewer, and the web's rows
// are made from what it returns. Counts count every job, as sinfo's do.
func (s webSource) State(ctx context.Context) (*web.State, error) {
	d := s.d
	now := d.now()
	v := d.liveView()
	cfg := v.cfg
	who := anonymousViewer(cfg)
	jobs, err := d.st.Jobs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute))})
	if err != nil {
		return nil, err
	}
	// The newest events the viewer may see: under PrivateData=jobs, the
	// node's and the GPUs' only (the last 30 of them, not those among the
	// last 30 of all).
	events, err := d.st.Events(ctx, store.EventFilter{Limit: 30, NoJob: !who.seesOthersJobs()})
	if err != nil {
		return nil, err
	}
	secs, err := d.web.gpuSeconds(ctx, d.st, now)
	if err != nil {
		return nil, err
	}
	st := &web.State{Time: now.Unix(), Cluster: cfg.ClusterName, Node: cfg.Node.NodeName, CPUs: cfg.Node.CPUs,
		Mem: int64(cfg.Node.RealMemory), Private: !who.seesOthersJobs(), States: map[string]int{}, GPUSeconds: secs,
		Yields: d.web.yields.Load(), Preemptions: d.web.preemptions.Load(), Budgets: d.budgets(cfg, now)}
	st.Reservations = d.webReservations(now)

	gs := v.sample()
	onGPU := map[string][]web.GPUJob{}
	reserved := map[string]uint64{}
	inUse := map[string]bool{}
	total := map[string]uint64{}
	owners := map[uint32]uint32{} // job id -> its user's uid, for the events
	names := map[uint32]string{}  // job id -> as squeue names it, of the jobs seen
	for _, g := range gs.GPUs {
		total[g.UUID] = g.MemoryTotal
	}
	for i := range jobs {
		raw := &jobs[i]
		owners[raw.ID] = raw.UID
		// 1. The counts, of every job, seen or not; the names of those
		// seen, finished ones included, for the events.
		st.States[string(raw.State)]++
		j, seen := who.job(*raw)
		if seen {
			names[j.ID] = eventJobID(&j)
		}
		if raw.State.Finished() {
			continue
		}
		if raw.State != slurm.Pending {
			st.CPUsAlloc += len(raw.Alloc.CPUs)
			st.MemAlloc += raw.Alloc.Mem
			for _, a := range raw.Alloc.GPUs {
				inUse[a.UUID] = true
				if a.Mem > 0 {
					reserved[a.UUID] += uint64(a.Mem)
				} else {
					reserved[a.UUID] = total[a.UUID]
				}
			}
		}
		// 2. The rows, of the jobs the viewer sees, from the viewer's
		// copy.
		if !seen {
			continue
		}
		l := v.live(&j)
		wj := web.Job{ID: jobID(&j, l.ArrayTasks), User: j.User, Account: j.Account, Partition: j.Partition,
			Name: j.Name, State: string(j.State), Priority: l.Priority, CPUs: l.NumCPUs,
			Submit: unixTime(j.Submit), Start: unixTime(j.Start), Limit: int64(l.Limit / time.Second)}
		if l.Limit == slurmsyntax.Infinite || l.Limit < 0 {
			wj.Limit = 0
		}
		req := schedRequest(&j.Request, cfg.ShardSize)
		wj.GPUs, wj.GPUMem = req.GPUs, uint64(max(req.GPUMem, 0))
		if wj.GPUMem > 0 && wj.GPUs == 0 {
			wj.GPUs = 1
		}
		if j.State == slurm.Pending {
			wj.Reason = string(l.Reason)
			wj.Why = web.Why(wj.Reason, l.ReasonDetail)
			wj.ExpectedStart = unixTime(l.ExpectedStart)
		} else {
			for _, a := range j.Alloc.GPUs {
				gj := web.GPUJob{ID: wj.ID, User: wj.User, Account: j.Account, Name: wj.Name, Start: wj.Start,
					Mem: uint64(max(a.Mem, 0))}
				if wj.Limit > 0 && wj.Start > 0 {
					gj.End = wj.Start + wj.Limit
				}
				onGPU[a.UUID] = append(onGPU[a.UUID], gj)
			}
		}
		st.Jobs = append(st.Jobs, wj)
	}
	// The order: 1. jobs that run (running, completing, suspended) before
	// the queue; 2. the queue by priority, highest first, as the next pass
	// takes it; 3. then by submit time; 4. then as the store lists them
	// (by id): a stable sort.
	slices.SortStableFunc(st.Jobs, func(a, b web.Job) int {
		ap, bp := a.State == string(slurm.Pending), b.State == string(slurm.Pending)
		if ap != bp {
			return cmp.Compare(boolRank(ap), boolRank(bp))
		}
		if !ap {
			return 0
		}
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Submit, b.Submit))
	})

	used := 0
	for _, g := range gs.GPUs {
		state := "UP"
		switch {
		case g.Index < 0 || g.State == gpu.Lost:
			state = "LOST"
		case g.State == gpu.Drained:
			state = "DRAINED"
		}
		wg := web.GPU{Index: g.Index, NVMLIndex: g.NVMLIndex, UUID: g.UUID, Type: g.Type, Model: g.Model,
			State: state, Reason: g.Reason, MemTotal: g.MemoryTotal, MemUsed: g.MemoryUsed,
			MemReserved: min(reserved[g.UUID], g.MemoryTotal), Util: g.Utilization, InUse: inUse[g.UUID],
			Jobs: onGPU[g.UUID]}
		if wg.Jobs == nil {
			wg.Jobs = []web.GPUJob{}
		}
		if wg.InUse {
			used++
		}
		st.GPUs = append(st.GPUs, wg)
	}
	switch {
	case gs.NodeDrain != "":
		st.NodeState = "DRAIN"
	case st.CPUsAlloc >= st.CPUs && st.CPUs > 0:
		st.NodeState = "ALLOCATED"
	case st.CPUsAlloc > 0 || used > 0:
		st.NodeState = "MIXED"
	default:
		st.NodeState = "IDLE"
	}

	if snap := d.web.passed.Load(); snap != nil {
		view := *snap
		view.Usage = chargedUsage(view) // as sshare shows it
		for _, r := range sched.FairShareTree(view) {
			if !who.seesUsage(r.User) {
				continue
			}
			ws := web.Share{Account: r.Account, User: r.User, Depth: r.Depth,
				RawShares: r.RawShares, NormShares: r.NormShares, RawUsage: r.RawUsage,
				EffUsage: r.EffectvUsage, FairShare: r.FairShare}
			if fs := r.LevelFS; !math.IsNaN(fs) && !math.IsInf(fs, 0) {
				ws.LevelFS = &fs
			}
			st.Shares = append(st.Shares, ws)
		}
	}
	index := map[string]string{}
	for _, g := range gs.GPUs {
		if g.Index >= 0 {
			index[g.UUID] = strconv.Itoa(g.Index)
		}
	}
	for _, e := range events {
		owner, known := owners[e.JobID]
		if e.JobID != 0 && !known {
			// A job older than the window: its owner and its name from
			// the store.
			if j, err := d.st.Job(ctx, e.JobID); err == nil {
				owner, known = j.UID, true
				owners[j.ID] = j.UID
				if seen, ok := who.job(j); ok {
					names[j.ID] = eventJobID(&seen)
				}
			}
		}
		if !who.seesTrail(e.JobID, owner, known) {
			continue
		}
		ev := web.Event{Time: e.Time.Unix(), Who: e.ActorName, Action: e.Action, JobID: e.JobID, GPU: e.GPU, Detail: e.Detail}
		if e.JobID != 0 {
			ev.ID = cmp.Or(names[e.JobID], strconv.FormatUint(uint64(e.JobID), 10))
		}
		if i, ok := index[e.GPU]; ok {
			ev.GPU = i // as sinfo and scontrol name it
		}
		st.Events = append(st.Events, ev)
	}
	if st.Jobs == nil {
		st.Jobs = []web.Job{}
	}
	if st.Shares == nil {
		st.Shares = []web.Share{}
	}
	if st.Events == nil {
		st.Events = []web.Event{}
	}

	n := d.web.cycles.Load()
	st.Sched = web.Sched{Cycles: n, LastCycle: float64(d.web.lastCycle.Load()) / 1e3,
		Backfill: cfg.SchedulerType == config.SchedBackfill}
	if n > 0 {
		st.Sched.MeanCycle = float64(d.web.planned.Load()) / 1e3 / float64(n)
		st.Sched.Depth = float64(d.web.depth.Load()) / float64(n)
	}
	// Real time since the start: the passes run on the machine's clock.
	if up := d.web.started.Elapsed().Minutes(); up > 0 {
		st.Sched.CyclesPerMinute = float64(n) / up
	}
	return st, nil
}

// gpuSeconds is store.GPUSeconds, reused for gpuSecondsEvery; the running
// jobs' seconds since the cached sum are not added (a scrape within the
// minute sees the sum as of its start).
func (w *webState) gpuSeconds(ctx context.Context, st *store.Store, now time.Time) (map[string]float64, error) {
	w.gpuSecsMu.Lock()
	defer w.gpuSecsMu.Unlock()
	if w.gpuSecs != nil && w.gpuSecsAt.Elapsed() < gpuSecondsEvery {
		return w.gpuSecs, nil
	}
	secs, err := st.GPUSeconds(ctx, now)
	if err != nil {
		return nil, err
	}
	w.gpuSecs, w.gpuSecsAt = secs, clock.Start()
	return secs, nil
}

// jobID is a job's id as squeue prints it: 7, 7_3 for an array task, 7_[4-9]
// for an array's pending tasks.
func jobID(j *store.Job, tasks string) string {
	switch {
	case j.ArrayRecord():
		return fmt.Sprintf("%d_[%s]", j.ArrayJobID, tasks)
	case j.ArrayJobID != 0:
		return strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" + strconv.Itoa(j.ArrayTaskID)
	}
	return strconv.FormatUint(uint64(j.ID), 10)
}

// eventJobID is a job's id in the events: 7, 7_3 for an array task, 7_*
// for an array's pending tasks together (slurmctld's name for an array's
// record), which change while the event stays.
func eventJobID(j *store.Job) string {
	if j.ArrayRecord() {
		return strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_*"
	}
	return jobID(j, "")
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func unixTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// keepJobMap keeps JobMappingDir (dcgm-exporter's job mapping) in step
// with the running jobs: woken after each pass, it restates the whole
// mapping; only changed files are written (jobmap.Writer). Its own
// goroutine: the loop never waits on this disk.
func (d *Daemon) keepJobMap(ctx context.Context, dir string) {
	w := jobmap.New(dir)
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			// Jobs outlive the daemon: their files stay, still true.
			return
		case <-d.web.mapKick:
		}
		err := d.syncJobMap(ctx, w)
		switch {
		case err != nil && err.Error() != lastErr:
			d.log.Error("JobMappingDir: the job mapping is not kept", "dir", dir, "err", err)
			lastErr = err.Error()
		case err == nil && lastErr != "":
			d.log.Info("JobMappingDir: the job mapping is kept again", "dir", dir)
			lastErr = ""
		}
	}
}

// syncJobMap writes which job is on which GPU, by NVML index (DCGM's GPU
// numbering), from the running jobs' allocations and the last sample.
func (d *Daemon) syncJobMap(ctx context.Context, w *jobmap.Writer) error {
	jobs, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running, slurm.Completing}})
	if err != nil {
		return err
	}
	nvml := map[string]int{}
	if gs := d.liveView().gpus; gs != nil {
		for _, g := range gs.GPUs {
			if g.NVMLIndex >= 0 {
				nvml[g.UUID] = g.NVMLIndex
			}
		}
	}
	m := map[int][]string{}
	for _, j := range jobs {
		for _, a := range j.Alloc.GPUs {
			idx, ok := nvml[a.UUID]
			if !ok {
				// A GPU gone from the bus has no NVML index, and DCGM
				// no metrics for it.
				continue
			}
			m[idx] = append(m[idx], strconv.FormatUint(uint64(j.ID), 10))
		}
	}
	return w.Sync(m)
}

// startWeb opens the [Web] listener, refusing to start when its address
// is taken or not this machine's: nil when Listen is "".
func (d *Daemon) startWeb(cfg *config.Config) (*web.Server, error) {
	if cfg.Web.Listen == "" {
		return nil, nil
	}
	ln, err := web.Listen(cfg.Web.Listen)
	if err != nil {
		return nil, err
	}
	hosts := web.NewHosts(cfg.Web.Listen, cfg.Web.AllowedHosts, d.cfgPath, d.log)
	h := web.Handler(webSource{d}, d.log)
	if d.jwtKey != nil {
		// slurmrestd's paths beside the dashboard's, which has none of them.
		mux := http.NewServeMux()
		rest := slurmrest.Handler(restBackend{d}, d.log)
		for _, p := range slurmrest.Prefixes {
			mux.Handle(p, rest)
		}
		mux.Handle("/", h)
		h = mux
	}
	srv := web.Serve(ln, h, hosts)
	d.log.Info("web listening", "metrics", "http://"+srv.Addr()+"/metrics", "dashboard", "http://"+srv.Addr()+"/")
	return srv, nil
}

// Usage is the monthly usage view (/api/usage): the month's job runs from
// the store, attributed as sreport does (sreport.Compute: slurmdbd's
// hourly rollup), by account and user. The anonymous viewer's rule is
// sshare's: under PrivateData=usage the accounts' totals only.
func (s webSource) Usage(ctx context.Context, month time.Time) (*web.Usage, error) {
	d := s.d
	now := d.now()
	cfg := d.liveView().cfg
	who := anonymousViewer(cfg)
	if month.IsZero() {
		month = now
	}
	start := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, month.Location())
	end := start.AddDate(0, 1, 0)
	recs, err := d.st.Records(ctx, store.Filter{Since: start, Until: end, EarlierRuns: true})
	if err != nil {
		return nil, fmt.Errorf("reading the job records of %s: %w", start.Format("2006-01"), err)
	}
	gpus := 0
	if p := d.liveView().gpus; p != nil {
		for _, g := range p.GPUs {
			if g.Index >= 0 {
				gpus++
			}
		}
	}
	cl := sreport.NewCluster(cfg, cfg.Node.CPUs, int64(cfg.Node.RealMemory/slurmsyntax.MiB), gpus)
	r := sreport.Compute(cl, sreport.Jobs(cfg, recs), start, end, now)
	rolled := now.Truncate(time.Hour)
	if rolled.After(end) {
		rolled = end
	}
	if rolled.Before(start) {
		rolled = start
	}
	u := &web.Usage{Cluster: cfg.ClusterName, Month: start.Format("2006-01"), Start: start.Unix(), End: end.Unix(),
		RolledUp: rolled.Unix(), GPUs: gpus, CPUs: cfg.Node.CPUs, Private: who.privateUsage,
		Accounts: []web.AccountUsage{},
		Sreport: fmt.Sprintf("sreport -t hours cluster AccountUtilizationByUser start=%s end=%s -T gres/gpu,cpu,billing",
			start.Format("2006-01-02"), end.Format("2006-01-02"))}
	figs := func(m map[string]int64) web.UsageFigures {
		return web.UsageFigures{GPU: m["gres/gpu"], CPU: m["cpu"], Billing: m["billing"]}
	}
	add := func(f *web.UsageFigures, g web.UsageFigures) { f.GPU += g.GPU; f.CPU += g.CPU; f.Billing += g.Billing }
	for _, a := range r.Assocs { // by account, then user
		n := len(u.Accounts)
		if n == 0 || u.Accounts[n-1].Account != a.Account {
			u.Accounts = append(u.Accounts, web.AccountUsage{Account: a.Account, Users: []web.UserUsage{}})
			n++
		}
		acct := &u.Accounts[n-1]
		f := figs(a.Used)
		add(&acct.UsageFigures, f)
		add(&u.Total, f)
		if who.seesUsage(a.User) {
			acct.Users = append(acct.Users, web.UserUsage{User: a.User, UsageFigures: f})
		}
	}
	return u, nil
}
