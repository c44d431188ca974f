// Package daemon is slurmd-lite: it ties the configuration, the durable
// store, the GPU inventory and the pure scheduling core to real processes,
// and serves the commands over the local socket.
//
// Start-up, in order (Run):
//
//  1. configuration (-f, $SLURM_LITE_CONF, /etc/slurm-lite/slurm-lite.toml,
//     defaults) and the host's facts;
//  2. the store under StateSaveLocation (refused, never reset, if damaged);
//  3. the GPU inventory (NVML, simulated or none) with stored drains;
//  4. the socket (refused if another daemon answers on it);
//  5. reattach: every job the store says runs is matched with its supervisor
//     (boot id + process start time), or its final status, or is lost;
//  6. the API, then the scheduling loop.
//
// The loop (loop.go) is the only goroutine that starts and finishes jobs.
// It wakes on a submission, a job's end, a cancel or a reload, and on the
// GPU sampling tick; each pass samples the GPUs, builds a snapshot, calls
// sched.Cycle and carries out the plan.
//
// Glossary:
//   - supervisor: `slurmd-lite stepd run DIR/spec.json`, one per running
//     job (internal/stepd); it outlives the daemon.
//   - run directory: StateSaveLocation/jobs/ID/run-N, the supervisor's world
//     for run N (N = restarts) of job ID: spec, identity, status, socket.
//   - pending record: an array's row holding its tasks not started yet.
//   - placeholder id: the id the scheduling core sees for an array task not
//     split from its pending record yet (see arrayKey).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Options are the daemon's command-line settings.
type Options struct {
	// ConfigPath is -f; "" looks in the usual places.
	ConfigPath string
	// Exe is the slurmd-lite binary that supervisors are started from.
	Exe string
	// Log receives the daemon's log lines; nil is stderr.
	Log io.Writer
	// OpenNVML opens the inventory for GPUs = "nvml"; nil is the real
	// driver (gpu.FromDriver). Tests give a go-nvml mock machine.
	OpenNVML func(gpu.Options) *gpu.Inventory
	// Fresh starts over where the state database is missing or empty but
	// earlier jobs left traces (traces.go): slurmd-lite --fresh.
	Fresh bool
	// Rebuild rebuilds a missing or empty state database from the job
	// directories (adopt.go): slurmd-lite --rebuild.
	Rebuild bool
	// Clock is the time the daemon schedules by: jobs' ages, starts and
	// ends as the daemon records them, time limits, usage and its decay.
	// nil is the real clock. Tests give a fake one to run hours of
	// schedule in milliseconds where real time is not the point.
	//
	// It decides every time of a job that is stored or shown (submit,
	// eligible, start, end: see finish.go), and the store stamps by it
	// (store.OpenClock). What it does not move: the timers and tickers
	// that pace the loop and bound waits for processes and sockets (they
	// wait real time, for real processes: clock.Deadline), and the
	// supervisors (separate processes that count a job's limit on the
	// machine's monotonic clock from their own start, unless given the
	// same clock: SupervisorEnv). A fake clock suits tests where no job's
	// run depends on the two clocks agreeing.
	Clock Clock
	// SupervisorEnv is added to the supervisors' own environment (never
	// the jobs'). The end-to-end test binary, whose supervisors are that
	// binary, passes its test clock's file with it so that the
	// supervisors count limits and KillWait on the daemon's Clock
	// (stepd.MainClock); the real slurmd-lite passes nothing, and its
	// supervisors read no environment for a clock.
	SupervisorEnv []string
	// NotifyBackoff is the wait before a webhook's second try (doubled
	// before each next); 0 is the notifier's default. Tests shorten it.
	NotifyBackoff time.Duration
	// Passed, when set, is called by the loop after each whole pass
	// (sampled, planned, carried out). Tests wait for passes with it
	// where they would otherwise sleep "a pass or two": a count of
	// passes holds on a loaded machine, a sleep may see none.
	Passed func()
}

// Clock tells the time; see Options.Clock.
type Clock = clock.Clock

// Daemon is one running slurmd-lite.
//
// Its fields have one of four owners, grouped below:
//
//  1. set while Run starts the daemon and never changed after: read by
//     any goroutine without a lock;
//  2. guarded by mu;
//  3. the scheduling loop's (loop.go): only the loop goroutine touches
//     them, without a lock;
//  4. state with a lock of its own;
//  5. published: an immutable value that the holder of mu replaces after
//     each change (publishLocked), read by the handlers without a lock:
//     a read-only route reads only this, 1. and 4., never mu, so it never
//     waits for a scheduling pass (TestReadOnlyRoutesNeverTakeMu).
//
// Lock order: d.admin.mu before mu (updateGPUs and updateWholeNode take
// mu under it). A job list holding the store's cache must not take mu
// (see liveView).
type Daemon struct {
	// 1. Set at start, then read-only.

	opts  Options
	clock Clock
	log   *slog.Logger
	st    *store.Store   // safe for concurrent use
	inv   *gpu.Inventory // safe for concurrent use
	ln    *localapi.Listener
	srv   *localapi.Server
	// restSrv is srv for the web listener's REST API, which starts first
	// (nil until srv is made, when restReady closes); jwtKey is the
	// auth/jwt key, nil when off.
	restSrv   atomic.Pointer[localapi.Server]
	restReady chan struct{}
	jwtKey    []byte
	exe       string
	// stepd is the command that starts a job's supervisor: slurmstepd-lite
	// beside the daemon's binary when it is there, else the daemon's own
	// binary as `slurmd-lite stepd`.
	stepd   []string
	jobsDir string
	cfgPath string
	boot    time.Time
	// cg is where job cgroups go and what they get (cgroups.go); set
	// after reattach, before the API serves and the loop starts jobs.
	cg stepd.Delegation
	// kick wakes the loop (wake); ended carries the jobs whose supervisors
	// ended to the loop (finishAll). The channels are fixed; anyone sends.
	kick  chan struct{}
	ended chan uint32
	// idleKick wakes the loop for a change no pass can act on yet
	// (wakeIdle): its pass is rationed harder (heldPace).
	idleKick chan struct{}

	// 2. Guarded by mu.

	mu sync.Mutex
	// cfg is the configuration in force; reload replaces it (never
	// changes it in place), so a caller may keep the pointer it read.
	// Written under mu and published with it; read through config(),
	// from the view.
	cfg *config.Config
	// gsnap is the last GPU sample (written by the loop's sample, read by
	// the node updates; the views read it published, from view).
	gsnap gpu.Snapshot
	// decisions and prio are the last pass's pending decisions and
	// priorities: replaced whole by each pass, never changed in place, so
	// a reader may keep the maps it read. Handlers read them, with cfg,
	// from view (5.); alloc.go still reads decisions here, under mu.
	decisions map[uint32]sched.Decision
	prio      map[uint32]uint32
	// usage is every association's usage as of usageAt (usage.go); it,
	// calc and the budget usages are published in view too.
	usage   []sched.Usage
	usageAt time.Time
	// usageSaved is when usage was last written to the store.
	usageSaved time.Time
	// calc is the last fair-share recalculation and nextCalc when the
	// next is due (usage.go, recalcLocked).
	calc     sched.Calc
	nextCalc time.Time
	// budgetUsage is each account's usage per TRES at the last pass, for
	// GrpTRESMins (quota.go); started is when the daemon started (the
	// reset of PriorityUsageResetPeriod NOW).
	budgetUsage    []sched.TRESUsage
	qosBudgetUsage []sched.TRESUsage
	started        time.Time
	// budgetTold is what tellBudgets last told of each budget (0, 80,
	// 100), by account and TRES; budgetRuns the runs budgets count
	// (quota.go). The loop's alone.
	budgetTold map[string]int
	budgetRuns budgetRuns
	// watched are the running jobs whose supervisors the daemon watches.
	watched map[uint32]bool
	// gpuUse accumulates each running job's GPU samples.
	gpuUse map[uint32]gpu.Usage
	// releasing are ended jobs whose GPUs NVML has not shown released yet.
	releasing map[uint32]gpu.Job
	// drained are the GPUs (by UUID) whose drain is in the store.
	drained map[string]bool
	// idle follows IdleGPUTimeout. Only the loop uses it (checkIdle), but
	// under mu all the same.
	idle idleTracker
	// violated are the (job/kind) GPU violations already acted on. Only
	// the loop uses it (sample), but under mu all the same.
	violated map[string]bool
	// timeoutChecks are the jobs whose supervisors are being asked
	// whether their limits ended them (ending.go): the loop adds, the
	// goroutine that asks removes.
	timeoutChecks map[uint32]bool

	// 3. The scheduling loop's alone.

	// lastSweep is the last checkpoint sweep (sweepCheckpoints).
	lastSweep time.Time
	// limitWake wakes the loop when the next running job reaches its
	// time limit (ending.go).
	limitWake *time.Timer
	// limitMailed are the TIME_LIMIT mails sent, by job/run/kind
	// (events.go).
	limitMailed map[limitKey]bool
	// dependMailed are the jobs sent their INVALID_DEPEND mail.
	dependMailed map[uint32]bool

	// 4. With locks of their own.

	// stops are the stops in progress: why the daemon is stopping each
	// job it stops, until its end is recorded (stops.go).
	stops stopIntents
	// yieldWaits are the yields a caller waits for (yield.go).
	yieldWaits yieldWaiters
	// checks are what submissions are checked against (submitcheck.go).
	checks submitChecks
	// users are the users the store has seen (accounts.go).
	users knownUsers
	// admin is the node's administrative state (nodeupdate.go); its lock
	// also serializes node updates.
	admin nodeAdminState
	// resv holds the advance reservations (resv.go).
	resv resvState
	// x holds the running steps and interactive allocations (steps.go,
	// alloc.go); the pointer is set by newDaemon and never replaced.
	x *extras
	// notifier sends mail and webhooks (events.go); replaced by a reload.
	// A nil notifier sends nothing.
	notifier atomic.Pointer[notify.Notifier]
	// web is what the loop publishes for the web listener and the job
	// mapping (web.go): atomics, and a lock of its own for a cache.
	web webState

	// 5. Published.

	// view is cfg, decisions, prio, the GPU sample and the usage as of
	// the last change (liveView): what config(), every read-only route
	// and scontrol update read, without mu.
	view atomic.Pointer[liveView]
}

// newDaemon is a Daemon with its maps, channels and clock made, and
// nothing opened: Run fills in the rest, tests what they need.
func newDaemon(opts Options, cfg *config.Config) *Daemon {
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	d := &Daemon{
		opts:       opts,
		clock:      clk,
		cfg:        cfg,
		boot:       clk.Now(),
		kick:       make(chan struct{}, 1),
		idleKick:   make(chan struct{}, 1),
		restReady:  make(chan struct{}),
		ended:      make(chan uint32, 64),
		decisions:  map[uint32]sched.Decision{},
		prio:       map[uint32]uint32{},
		watched:    map[uint32]bool{},
		yieldWaits: yieldWaiters{byJob: map[uint32]*yieldPlan{}},
		gpuUse:     map[uint32]gpu.Usage{},
		releasing:  map[uint32]gpu.Job{},
		drained:    map[string]bool{},
		idle:       idleTracker{since: map[uint32]time.Time{}, warned: map[uint32]bool{}},
		violated:   map[string]bool{},
		x:          newExtras(),
	}
	d.publishLocked()
	return d
}

// publishLocked publishes cfg, decisions, prio, the GPU sample and the
// usage as they are now (view). Whoever changes one of them calls it in
// the same hold of mu, so a read-only route never needs mu. The caller
// holds mu, so that publications happen in the order of the
// changes they show: a pass's and a reload's cannot cross.
func (d *Daemon) publishLocked() {
	v := &liveView{cfg: d.cfg, decisions: d.decisions, prio: d.prio, fs: &fairShareView{
		usage: d.usage, usageAt: d.usageAt, calc: d.calc,
		budgetUsage: d.budgetUsage, qosBudgetUsage: d.qosBudgetUsage}}
	if !d.gsnap.Time.IsZero() { // nil until the first sample
		gs := d.gsnap
		v.gpus = &gs
	}
	d.view.Store(v)
}

// now is the daemon's time (Options.Clock).
func (d *Daemon) now() time.Time { return d.clock.Now() }

// Run starts the daemon and serves until ctx ends or SIGTERM/SIGINT comes;
// SIGHUP reloads the configuration. Running jobs are left running.
func Run(ctx context.Context, opts Options) error {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	cfg, path, cfgID, err := loadConfigID(opts.ConfigPath)
	if err != nil {
		return err
	}
	settings := config.ViewOf(cfg)
	log := newLogger(opts.Log, cfg.LogFormat)
	exe := opts.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding slurmd-lite's own binary for the job supervisors: %w", err)
		}
	}
	d := newDaemon(opts, cfg)
	d.log, d.exe, d.stepd, d.cfgPath = log, exe, supervisorCommand(exe), path
	d.jobsDir = filepath.Join(cfg.StateSaveLocation, "jobs")
	from := path
	if from == "" {
		from = "built-in defaults"
	}
	log.Info("starting", "config", from, "node", cfg.Node.NodeName, "cpus", cfg.Node.CPUs,
		"memory_mb", int64(cfg.Node.RealMemory/slurmsyntax.MiB), "users", localapi.UserDatabase)

	warnSite(cfg, log)
	// Before anything is written there: directories that other users
	// could steer are refused (dirs.go).
	if err := checkDirs(cfg); err != nil {
		return err
	}
	if err := checkState(cfg.StateSaveLocation, d.jobsDir, opts.Fresh, opts.Rebuild, d.now(), log); err != nil {
		return err
	}
	if d.st, err = store.OpenClock(cfg.StateSaveLocation, d.clock); err != nil {
		return err
	}
	// "stopped" is the log's last line, said once the state directory's
	// lock is given back: a restart that follows it must find the state
	// free (issue 23 item 6: a hanging webhook kept it 5 s past "stopped").
	stopped := false
	defer func() {
		if err := d.st.Close(); err != nil {
			log.Error("closing the state database", "err", err)
		}
		if stopped {
			log.Info("stopped")
		}
	}()
	// Once this daemon holds the state: the commands' settings, beside the
	// file.
	leaveSettings(log, path, cfgID, settings)
	// squeue, every scheduling pass and every submission's checks read
	// the jobs of the last MinJobAge: the store keeps those decoded.
	if err := d.st.CacheJobs(ctx, max(cfg.MinJobAge, time.Minute)); err != nil {
		return err
	}
	if err := os.MkdirAll(d.jobsDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", d.jobsDir, err)
	}
	// Checkpoints under the state directory must be reachable by their
	// users: let them pass through it (the database and the job
	// directories stay private by their own modes).
	if rel, err := filepath.Rel(cfg.StateSaveLocation, cfg.CheckpointDir); err == nil && !strings.HasPrefix(rel, "..") && os.Geteuid() == 0 {
		_ = os.Chmod(cfg.StateSaveLocation, 0o711)
	}
	if d.inv, err = openGPUs(cfg, opts.OpenNVML); err != nil {
		return err
	}
	defer d.inv.Close()
	log.Info("gpus", "mode", string(d.inv.Mode()), "comment", d.inv.Comment())
	log.Info("job supervisors", "command", strings.Join(d.stepd, " "))
	// The inventory learns its GPUs from a first sample; only then can
	// the stored drains be applied to them (by UUID).
	d.mu.Lock()
	d.gsnap = d.inv.Sample(d.now(), nil)
	d.publishLocked()
	d.mu.Unlock()
	if drains, err := d.st.Drains(ctx); err == nil {
		for _, dr := range drains {
			d.drained[dr.UUID] = true
			if dr.UUID == api.NodeDrainUUID {
				continue
			}
			if err := d.inv.Drain(dr.UUID, dr.Reason); err != nil {
				log.Warn("a drained GPU is not on the bus", "gpu", dr.UUID, "reason", dr.Reason, "err", err)
			}
		}
	}
	d.started = d.now()
	if err := d.loadUsage(ctx, d.started); err != nil {
		return err
	}
	d.mu.Lock()
	d.publishLocked() // the usage loaded
	d.mu.Unlock()
	d.startNotifier(cfg)
	// Stopping delivers nothing more: what is under way is abandoned and
	// what is queued dropped, said in the log, so that a webhook or a
	// MailProg that hangs does not hold the stop (and the state lock).
	defer func() {
		if n := d.notifier.Load().Close(0); n > 0 {
			log.Warn("notifications not sent: the daemon stopped before they could be delivered", "dropped", n)
		}
	}()

	// The web listener first: a taken address stops the start before
	// the socket says a daemon is here.
	d.web.started = clock.Start()
	if err := d.loadJWTKey(cfg); err != nil {
		return err
	}
	webSrv, err := d.startWeb(cfg)
	if err != nil {
		return err
	}
	if webSrv != nil {
		defer func() {
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = webSrv.Shutdown(shut)
		}()
	}

	if d.ln, err = localapi.Listen(cfg.SocketPath, localapi.AccessFor(os.Geteuid())); err != nil {
		return err
	}
	defer d.ln.Close()

	if err := d.adoptTraces(ctx); err != nil {
		return err
	}
	if err := d.reattach(ctx); err != nil {
		return err
	}
	// Said once here, not per job: whether jobs get a cgroup (cgroup.kill,
	// cpuset, --mem enforced, OOM kills recorded) or a subreaper.
	d.setUpCgroups(ctx)
	// Fair share and priorities are recalculated at the start, before the
	// first request is served, as slurmctld's decay thread runs when it
	// starts: after reattach, so that the jobs that ended meanwhile are
	// charged up to their ends, and the running ones up to now.
	d.chargeUntil(ctx, d.now())
	d.mu.Lock()
	d.recalcLocked(cfg.Priority, d.usageAt)
	d.publishLocked()
	d.mu.Unlock()

	d.srv = &localapi.Server{Routes: d.routes(), Logf: func(f string, a ...any) { log.Warn(fmt.Sprintf(f, a...)) }}
	d.restSrv.Store(d.srv)
	close(d.restReady)
	serveErr := make(chan error, 1)
	go func() { serveErr <- d.srv.Serve(d.ln) }()
	log.Info("listening", "socket", cfg.SocketPath)

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	loopCtx, stop := context.WithCancel(ctx)
	if cfg.JobMappingDir != "" {
		d.web.mapKick = make(chan struct{}, 1)
		go d.keepJobMap(loopCtx, cfg.JobMappingDir)
	}
	loopDone := make(chan struct{})
	go func() { d.loop(loopCtx); close(loopDone) }()

	for {
		select {
		case <-ctx.Done():
		case err := <-serveErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				log.Error("serving stopped", "err", err)
			}
		case s := <-sigs:
			if s == syscall.SIGHUP {
				d.reload()
				continue
			}
			log.Info("stopping", "signal", s.String(), "running_jobs", "left running")
		}
		break
	}
	stop()
	<-loopDone
	d.releaseCgroups()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(shut)
	stopped = true // said once the deferred closes have given the state back
	return nil
}

// loadConfig reads the configuration and fills in the host's facts.
func loadConfig(path string) (*config.Config, string, error) {
	cfg, used, _, err := loadConfigID(path)
	return cfg, used, err
}

// loadConfigID is loadConfig, also returning the file's identity from
// before it was read, or nil where it may have changed while it was read
// (or there is no file): the identity the commands' settings file is
// written for (leaveSettings).
func loadConfigID(path string) (*config.Config, string, *syscall.Stat_t, error) {
	located, _ := config.Locate(path, os.Getenv, func(p string) bool { _, err := os.Stat(p); return err == nil })
	before, beforeErr := config.StatConfig(located)
	cfg, used, err := config.Find(path)
	if err != nil {
		return nil, "", nil, err
	}
	var id *syscall.Stat_t
	if after, err := config.StatConfig(used); beforeErr == nil && err == nil && used == located && config.SameConfig(before, after) {
		id = &before
	}
	host, err := config.DetectHost()
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading this machine's CPUs and memory: %w", err)
	}
	cfg.ApplyHost(host)
	return cfg, used, id, nil
}

// leaveSettings writes what sbatch, squeue, sacct and scancel read of the
// configuration beside its file (config.WriteSettings), so that they need
// not parse the file; where it cannot (a read-only directory), they parse
// the file as before.
func leaveSettings(log *slog.Logger, used string, id *syscall.Stat_t, s *config.View) {
	if id == nil || used == "" {
		return
	}
	if err := config.WriteSettings(used, *id, s); err != nil {
		log.Info("the commands will parse the configuration file themselves", "err", err)
	}
}

// reload is SIGHUP: a new configuration replaces the old one only when it
// is valid, and keeps what cannot change without a restart.
func (d *Daemon) reload() {
	cfg, used, id, err := loadConfigID(d.cfgPath)
	var settings *config.View
	if err == nil {
		// What the file says, before what cannot change without a
		// restart is put back: what the commands would read from it.
		settings = config.ViewOf(cfg)
		// The directories as they will be in force: those that change
		// only with a restart stay as they are (below), and a new value
		// of theirs is neither made nor checked now.
		check := *cfg
		old := d.config()
		check.StateSaveLocation, check.JobMappingDir = old.StateSaveLocation, old.JobMappingDir
		err = checkDirs(&check)
	}
	if err != nil {
		d.log.Error("reload refused, keeping the configuration in force", "err", err)
		return
	}
	d.mu.Lock()
	old := d.cfg
	if cfg.SocketPath != old.SocketPath || cfg.StateSaveLocation != old.StateSaveLocation {
		d.log.Warn("SocketPath and StateSaveLocation change only with a restart")
		cfg.SocketPath, cfg.StateSaveLocation = old.SocketPath, old.StateSaveLocation
	}
	if cfg.Web.Listen != old.Web.Listen || !slices.Equal(cfg.Web.AllowedHosts, old.Web.AllowedHosts) ||
		cfg.JobMappingDir != old.JobMappingDir {
		d.log.Warn("[Web] and JobMappingDir change only with a restart")
		cfg.Web, cfg.JobMappingDir = old.Web, old.JobMappingDir
	}
	d.cfg = cfg
	d.publishLocked()
	d.mu.Unlock()
	if cfg.LogFormat != old.LogFormat {
		d.log.Warn("LogFormat changes only with a restart")
	}
	d.startNotifier(cfg)
	leaveSettings(d.log, used, id, settings)
	d.log.Info("configuration reloaded", "config", d.cfgPath)
	warnSite(cfg, d.log)
	d.wake()
}

// warnSite logs each setting that will not do what it says on this
// machine (config.SiteWarnings): a group it lacks, as the system's NSS sees
// groups, a mail program that cannot run, a node larger than the machine.
func warnSite(cfg *config.Config, log *slog.Logger) {
	host, _ := config.DetectHost()
	for _, w := range cfg.SiteWarnings(config.Machine{Host: host, Runnable: config.Runnable,
		GroupExists: func(g string) bool {
			_, err := user.LookupGroup(g)
			return err == nil
		}}) {
		log.Warn(w)
	}
}

// supervisorCommand is how jobs' supervisors are started. slurmstepd-lite
// (installed beside slurmd-lite by make build and make install, and in
// /usr/lib/slurm-lite by the Debian package, as Debian puts slurmstepd
// beside slurmd in /usr/sbin but helpers under /usr/lib) links only the
// supervisor: it starts in under a millisecond, where the daemon's
// binary, with SQLite, NVML and HTTP in it, takes a few, twice per job
// (the supervisor and its launcher). Without it, the daemon's binary does
// the same work as `slurmd-lite stepd`.
func supervisorCommand(exe string) []string {
	dir := filepath.Dir(exe)
	for _, small := range []string{
		filepath.Join(dir, "slurmstepd-lite"),
		filepath.Join(filepath.Dir(dir), "lib", "slurm-lite", "slurmstepd-lite"),
	} {
		if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return []string{small}
		}
	}
	return []string{exe, "stepd"}
}

// openGPUs opens the inventory the configuration names; nvml opens the
// driver's (nil: the real one).
func openGPUs(cfg *config.Config, nvml func(gpu.Options) *gpu.Inventory) (*gpu.Inventory, error) {
	opts := gpu.Options{Types: cfg.Node.ShortGPUTypes()}
	switch cfg.Node.GPUs {
	case config.GPUsNone:
		return gpu.None("GPUs = none in the configuration"), nil
	case config.GPUsSimulated:
		var sims []gpu.SimGPU
		for _, g := range cfg.Node.SimulatedGPUs {
			sims = append(sims, gpu.SimGPU{Type: g.Type, Memory: uint64(g.Memory), Count: g.Count})
		}
		return gpu.Simulated(sims, opts)
	default:
		if nvml != nil {
			return nvml(opts), nil
		}
		return gpu.FromDriver(opts), nil
	}
}

// config returns the configuration in force.
func (d *Daemon) config() *config.Config {
	// The published view, without mu: every change of cfg is published
	// under mu in the same step (publishLocked), so this is the config in
	// force, and a handler never waits on a pass for it.
	return d.view.Load().cfg
}

// wake asks the loop for a pass soon; several asks make one pass.
func (d *Daemon) wake() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// wakeIdle asks the loop for a pass that nothing waits for: one after a
// change that cannot start, stop or reorder any job (a held job, see
// submit). It comes later than wake's (heldPace), and a wake meanwhile
// brings it forward.
func (d *Daemon) wakeIdle() {
	select {
	case d.idleKick <- struct{}{}:
	default:
	}
}

// runDir is the supervisor's directory for one run of a job.
func (d *Daemon) runDir(id uint32, run int) string {
	return filepath.Join(d.jobsDir, fmt.Sprint(id), fmt.Sprintf("run-%d", run))
}
