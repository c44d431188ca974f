package format

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// sacct's field lists (src/sacct/sacct.h).
const (
	SacctDefault = "jobid,jobname,partition,account,alloccpus,state,exitcode"
	SacctBrief   = "jobid,state,exitcode"
	SacctLong    = "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot"
)

// How a sacct field prints (src/common/print_fields.c): text is cut with a
// '+' when too long, numbers and durations never are, dates are cut.
type acctKind int

const (
	kindStr acctKind = iota
	kindNum
	kindSecs
	kindDate
)

// AcctRow is one line of sacct: a job's run, or one of its steps.
type AcctRow struct {
	Rec  *jobrec.Record
	Step *jobrec.Step // nil for the job's line
	// Units is --units (unitNone-1 for none); NoConvert is --noconvert.
	Units     int
	NoConvert bool
	Env       *Env
}

// acctVal is a field's value; unset prints blank (Slurm's NULL, NO_VAL).
type acctVal struct {
	s     string
	unset bool
}

func val(s string) acctVal { return acctVal{s: s} }

var unset = acctVal{unset: true}

// acctField is one of sacct's fields (src/sacct/sacct.c fields[]).
type acctField struct {
	name  string
	width int // negative: left-justified
	kind  acctKind
	value func(r *AcctRow) acctVal
}

// AcctColumn is a field as -o asked for it, with its width.
type AcctColumn struct {
	f     *acctField
	Width int
}

// Name is the field's name, as the header prints it.
func (c AcctColumn) Name() string { return c.f.name }

func blank(*AcctRow) acctVal { return unset }

// acctFields is sacct's field table, in its order: -o matches the first
// field whose name begins with what was typed.
var acctFields = []*acctField{
	{"Account", 10, kindStr, func(r *AcctRow) acctVal { return str0(r.Rec.Job.Account) }},
	{"AdminComment", 15, kindStr, blank},
	{"AllocCPUS", 10, kindNum, func(r *AcctRow) acctVal { return val(strconv.Itoa(r.cpus())) }},
	{"AllocNodes", 10, kindStr, func(r *AcctRow) acctVal { return val(boolDigit(r.started())) }},
	{"AllocTRES", 10, kindStr, func(r *AcctRow) acctVal { return r.allocTRES() }},
	{"AssocID", 7, kindNum, blank},
	{"AveCPU", 10, kindStr, blank},
	{"AveCPUFreq", 10, kindStr, blank},
	{"AveDiskRead", 14, kindStr, blank},
	{"AveDiskWrite", 14, kindStr, blank},
	{"AvePages", 10, kindStr, blank},
	// AveRSS is the average over the step's tasks of each one's peak
	// (slurmstepd moves each task's max into the total it averages):
	// the batch step's one task's peak, its MaxRSS.
	{"AveRSS", 10, kindStr, func(r *AcctRow) acctVal {
		if !r.hasRSS() || r.Step.NTasks > 1 {
			return val("")
		}
		return r.rss()
	}},
	{"AveVMSize", 10, kindStr, blank},
	{"BlockID", 16, kindStr, blank},
	{"Cluster", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Env.View != nil {
			return str0(r.Env.View.ClusterName)
		}
		return unset
	}},
	// Comment is empty as with the recorded AccountingStoreFlags (no
	// job_comment).
	{"Comment", 14, kindStr, blank},
	{"Constraints", 19, kindStr, func(r *AcctRow) acctVal { return val(r.Rec.Job.Request.Constraint) }},
	{"ConsumedEnergy", 14, kindStr, func(r *AcctRow) acctVal { return val("0") }},
	{"ConsumedEnergyRaw", 17, kindNum, func(r *AcctRow) acctVal { return val("0") }},
	{"Container", 19, kindStr, blank},
	{"CPUTime", 10, kindSecs, func(r *AcctRow) acctVal { return val(slurmsyntax.FormatClock(r.elapsed() * time.Duration(r.cpus()))) }},
	{"CPUTimeRAW", 10, kindNum, func(r *AcctRow) acctVal {
		return val(strconv.FormatInt(int64(r.elapsed()/time.Second)*int64(r.cpus()), 10))
	}},
	{"DBIndex", -10, kindNum, blank},
	{"DerivedExitCode", 15, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val("")
		}
		return val("0:0")
	}},
	{"Elapsed", 10, kindSecs, func(r *AcctRow) acctVal { return val(slurmsyntax.FormatClock(r.elapsed())) }},
	{"ElapsedRaw", 10, kindNum, func(r *AcctRow) acctVal { return val(strconv.FormatInt(int64(r.elapsed()/time.Second), 10)) }},
	{"Eligible", 19, kindDate, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val(Time(r.Step.Start))
		}
		return val(Time(r.Rec.Job.Eligible))
	}},
	{"End", 19, kindDate, func(r *AcctRow) acctVal { return val(Time(r.end())) }},
	{"ExitCode", 8, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val(acctExitCode(r.Step.ExitCode))
		}
		return val(acctExitCode(r.Rec.Job.ExitCode))
	}},
	{"Flags", 19, kindStr, blank},
	{"GID", 6, kindNum, func(r *AcctRow) acctVal { return r.jobOnly(uitoa(r.Rec.Job.GID)) }},
	{"Group", 9, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil || r.Env.GroupName == nil {
			return unset
		}
		return str0(r.Env.GroupName(r.Rec.Job.GID))
	}},
	{"JobID", -12, kindStr, func(r *AcctRow) acctVal { return val(r.jobID(false)) }},
	{"JobIDRaw", -12, kindStr, func(r *AcctRow) acctVal { return val(r.jobID(true)) }},
	{"JobName", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return str0(r.Step.Name)
		}
		return str0(r.Rec.Job.Name)
	}},
	{"Layout", 9, kindStr, blank},
	{"MaxDiskRead", 12, kindStr, blank},
	{"MaxDiskReadNode", 15, kindStr, blank},
	{"MaxDiskReadTask", 15, kindNum, blank},
	{"MaxDiskWrite", 12, kindStr, blank},
	{"MaxDiskWriteNode", 16, kindStr, blank},
	{"MaxDiskWriteTask", 16, kindNum, blank},
	{"MaxPages", 8, kindStr, blank},
	{"MaxPagesNode", 12, kindStr, blank},
	{"MaxPagesTask", 14, kindNum, blank},
	// MaxRSS and its node and task are a step's (the batch step's peak,
	// as its supervisor recorded it); the job's line has them empty, as
	// Slurm's has for a job whose steps are tracked. A step with no
	// recorded peak (one that ended before Slurm's first sample) has none.
	{"MaxRSS", 10, kindStr, func(r *AcctRow) acctVal {
		if !r.hasRSS() {
			return val("")
		}
		return r.rss()
	}},
	{"MaxRSSNode", 10, kindStr, func(r *AcctRow) acctVal {
		if !r.hasRSS() {
			return val("")
		}
		return val(r.Rec.Job.Alloc.Node)
	}},
	{"MaxRSSTask", 10, kindNum, func(r *AcctRow) acctVal {
		if !r.hasRSS() || r.Step.NTasks > 1 {
			return val("")
		}
		return val("0")
	}},
	{"MaxVMSize", 10, kindStr, blank},
	{"MaxVMSizeNode", 14, kindStr, blank},
	{"MaxVMSizeTask", 14, kindNum, blank},
	{"McsLabel", 12, kindStr, blank},
	{"MinCPU", 10, kindStr, blank},
	{"MinCPUNode", 10, kindStr, blank},
	{"MinCPUTask", 10, kindNum, blank},
	{"NCPUS", 10, kindNum, func(r *AcctRow) acctVal { return val(strconv.Itoa(r.cpus())) }},
	{"NNodes", 8, kindNum, func(r *AcctRow) acctVal { return val("1") }},
	{"NodeList", 15, kindStr, func(r *AcctRow) acctVal {
		if node := r.Rec.Job.Alloc.Node; r.started() && node != "" {
			return val(node)
		}
		return val("None assigned")
	}},
	{"NTasks", 8, kindNum, func(r *AcctRow) acctVal {
		if r.Step == nil {
			return unset
		}
		return val(strconv.Itoa(max(1, r.Step.NTasks)))
	}},
	{"Partition", 10, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(r.Rec.Job.Partition) }},
	{"Priority", 10, kindNum, func(r *AcctRow) acctVal {
		// A started job's is the one it started with (jobrec.Alloc.Priority).
		j := &r.Rec.Job
		return r.jobOnly(uitoa(cmp.Or(j.Priority, j.Alloc.Priority)))
	}},
	{"QOS", 10, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(r.Rec.Job.QOS) }},
	{"QOSRAW", 6, kindNum, blank},
	{"Reason", 22, kindStr, func(r *AcctRow) acctVal {
		j := &r.Rec.Job
		switch {
		case r.Step != nil:
			return unset
		case j.State == slurm.Pending && j.Reason != "":
			return val(string(j.Reason))
		}
		return val(string(slurm.ReasonNone))
	}},
	{"ReqCPUFreq", 10, kindStr, func(r *AcctRow) acctVal { return val("Unknown") }},
	{"ReqCPUFreqGov", 13, kindStr, func(r *AcctRow) acctVal { return val("Unknown") }},
	{"ReqCPUFreqMax", 13, kindStr, func(r *AcctRow) acctVal { return val("Unknown") }},
	{"ReqCPUFreqMin", 13, kindStr, func(r *AcctRow) acctVal { return val("Unknown") }},
	{"ReqCPUS", 8, kindNum, func(r *AcctRow) acctVal {
		j := r.job()
		if r.Step != nil {
			return val(strconv.Itoa(cpus(j)))
		}
		return val(strconv.Itoa(max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)))
	}},
	{"ReqMem", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val("")
		}
		j := r.job()
		mib, perCPU := memory(j)
		if perCPU {
			mib *= uint64(max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks))
		}
		return val(r.convert(float64(mib), unitMega))
	}},
	{"ReqNodes", 8, kindStr, func(r *AcctRow) acctVal { return val("1") }},
	{"ReqTRES", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return unset
		}
		return val(r.tresString(r.reqTRES()))
	}},
	{"Reservation", 20, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(r.Rec.Job.Request.Reservation) }},
	{"ReservationId", 8, kindNum, blank},
	{"Reserved", 10, kindSecs, func(r *AcctRow) acctVal {
		j := &r.Rec.Job
		if r.Step != nil || j.Start.IsZero() || j.Eligible.IsZero() {
			return val("00:00:00")
		}
		return val(slurmsyntax.FormatClock(wholeSeconds(j.Eligible, j.Start)))
	}},
	{"ResvCPU", 10, kindSecs, blank},
	{"ResvCPURAW", 10, kindNum, blank},
	{"Start", 19, kindDate, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val(Time(r.Step.Start))
		}
		return val(Time(r.Rec.Job.Start))
	}},
	{"State", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val(string(r.Step.State))
		}
		j := &r.Rec.Job
		if j.State == slurm.Cancelled && j.CancelledBy != nil {
			return val(fmt.Sprintf("%s by %d", j.State, *j.CancelledBy))
		}
		return val(string(j.State))
	}},
	{"Submit", 19, kindDate, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return val(Time(r.Step.Start))
		}
		return val(Time(r.Rec.Job.Submit))
	}},
	{"SubmitLine", 20, kindStr, blank},
	{"Suspended", 10, kindSecs, func(r *AcctRow) acctVal { return val("00:00:00") }},
	{"SystemComment", 15, kindStr, blank},
	{"SystemCPU", 10, kindStr, func(r *AcctRow) acctVal {
		return val(cpuTime(r.cpuTimes(func(s *jobrec.Step) time.Duration { return s.SystemCPU })))
	}},
	{"Timelimit", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return unset
		}
		return val(slurmsyntax.FormatClock(limit(sq(r.job()))))
	}},
	{"TimelimitRaw", 10, kindStr, func(r *AcctRow) acctVal {
		if r.Step != nil {
			return unset
		}
		if l := limit(sq(r.job())); l != slurmsyntax.Infinite {
			return val(strconv.FormatInt(int64(l/time.Minute), 10))
		}
		return val("UNLIMITED")
	}},
	{"TotalCPU", 10, kindStr, func(r *AcctRow) acctVal {
		return val(cpuTime(r.cpuTimes(func(s *jobrec.Step) time.Duration { return s.UserCPU + s.SystemCPU })))
	}},
	{"TRESUsageInAve", 14, kindStr, blank},
	{"TRESUsageInMax", 14, kindStr, blank},
	{"TRESUsageInMaxNode", 18, kindStr, blank},
	{"TRESUsageInMaxTask", 18, kindStr, blank},
	{"TRESUsageInMin", 14, kindStr, blank},
	{"TRESUsageInMinNode", 18, kindStr, blank},
	{"TRESUsageInMinTask", 18, kindStr, blank},
	{"TRESUsageInTot", 14, kindStr, blank},
	{"TRESUsageOutAve", 15, kindStr, blank},
	{"TRESUsageOutMax", 15, kindStr, blank},
	{"TRESUsageOutMaxNode", 19, kindStr, blank},
	{"TRESUsageOutMaxTask", 19, kindStr, blank},
	{"TRESUsageOutMin", 15, kindStr, blank},
	{"TRESUsageOutMinNode", 19, kindStr, blank},
	{"TRESUsageOutMinTask", 19, kindStr, blank},
	{"TRESUsageOutTot", 15, kindStr, blank},
	{"UID", 6, kindNum, func(r *AcctRow) acctVal { return r.jobOnly(uitoa(r.Rec.Job.UID)) }},
	{"User", 9, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(r.Rec.Job.User) }},
	{"UserCPU", 10, kindStr, func(r *AcctRow) acctVal {
		return val(cpuTime(r.cpuTimes(func(s *jobrec.Step) time.Duration { return s.UserCPU })))
	}},
	{"WCKey", 10, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(strings.TrimPrefix(r.Rec.Job.Request.WCKey, "*")) }},
	{"WCKeyID", 10, kindNum, blank},
	{"WorkDir", 20, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(r.Rec.Job.SubmitDir) }},

	// slurm-lite's own fields, after Slurm's so that -o's first-prefix
	// matching of Slurm's names is unchanged: the GPUs a job held (their
	// indices), its peak GPU memory over them and their mean utilization
	// as the GPU inventory sampled them, and the daemon's notes on the run.
	{"AllocGPUs", 9, kindNum, func(r *AcctRow) acctVal {
		return r.jobOnly(strconv.Itoa(len(r.Rec.Job.Alloc.GPUs)))
	}},
	{"GPUIndex", 10, kindStr, func(r *AcctRow) acctVal {
		var idx []string
		for _, g := range r.Rec.Job.Alloc.GPUs {
			idx = append(idx, strconv.Itoa(g.Index))
		}
		return r.jobOnly(strings.Join(idx, ","))
	}},
	{"GPUMemPeak", 10, kindStr, func(r *AcctRow) acctVal {
		// Both GPU figures are taken when the run ends: empty before (no End), as
		// sacct leaves a job's usage fields until they are gathered.
		if r.Step != nil || len(r.Rec.Job.Alloc.GPUs) == 0 || r.Rec.Job.End.IsZero() {
			return unset
		}
		return val(strconv.FormatInt(r.Rec.Job.PeakGPUMem>>20, 10) + "M")
	}},
	{"GPUUtilAve", 10, kindStr, func(r *AcctRow) acctVal {
		// Unknown utilization (simulated GPUs, where sinfo -G says N/A)
		// is left empty, as sacct leaves every value it did not gather,
		// rather than a 0.0% that reads as an idle GPU.
		if r.Step != nil || len(r.Rec.Job.Alloc.GPUs) == 0 || r.Rec.Job.End.IsZero() || r.Rec.Job.MeanGPUUtil < 0 {
			return unset
		}
		return val(strconv.FormatFloat(r.Rec.Job.MeanGPUUtil, 'f', 1, 64) + "%")
	}},
	{"Notes", 30, kindStr, func(r *AcctRow) acctVal { return r.jobOnly(strings.Join(r.Rec.Job.Notes, "; ")) }},
}

// AcctFieldNames lists sacct's fields, for --helpformat.
func AcctFieldNames() []string {
	var names []string
	for _, f := range acctFields {
		names = append(names, f.name)
	}
	return names
}

// ParseAcctFields reads sacct's field list: comma-separated names, each the
// start of a field's name in any case, with an optional "%WIDTH" (negative
// for left-justified). A prefix of "ALL" is every field. It returns the
// first name that matches nothing, which sacct refuses.
func ParseAcctFields(spec string) ([]AcctColumn, string) {
	var cols []AcctColumn
	for _, tok := range strings.Split(spec, ",") {
		tok = strings.TrimLeft(tok, " \t\n\v\f\r")
		if tok == "" {
			continue
		}
		tok, width, widthSet := nameWidth(tok)
		if len(tok) <= 3 && strings.EqualFold(tok, "ALL"[:len(tok)]) {
			for _, f := range acctFields {
				cols = append(cols, acctColumn(f, width, widthSet))
			}
			continue
		}
		i := byPrefix(len(acctFields), func(i int) string { return acctFields[i].name }, tok)
		if i < 0 {
			return nil, tok
		}
		cols = append(cols, acctColumn(acctFields[i], width, widthSet))
	}
	return cols, ""
}

func acctColumn(f *acctField, width int, set bool) AcctColumn {
	if !set {
		width = f.width
	}
	return AcctColumn{f: f, Width: width}
}

// AcctPrinter prints sacct's lines with print_fields: fixed-width
// columns, or with Parsable each value followed by Delimiter ("|"),
// except after the last one with NoEnding (-P).
type AcctPrinter struct {
	Columns   []AcctColumn
	Parsable  bool
	NoEnding  bool
	Delimiter string
}

func (p *AcctPrinter) delim() string {
	if p.Delimiter == "" {
		return "|"
	}
	return p.Delimiter
}

func (p *AcctPrinter) mode() Parsable {
	switch {
	case p.Parsable && p.NoEnding:
		return ParsableNoEnding
	case p.Parsable:
		return ParsableEnding
	}
	return Fixed
}

func (p *AcctPrinter) fields() []Field {
	fields := make([]Field, len(p.Columns))
	for i, c := range p.Columns {
		fields[i] = Field{Name: c.f.name, Width: c.Width}
	}
	return fields
}

// Header is the header line and, for fixed widths, the line of dashes.
func (p *AcctPrinter) Header() string { return fieldsHeader(p.fields(), p.mode(), p.delim()) }

// Line prints one row.
func (p *AcctPrinter) Line(r *AcctRow) string {
	cells := make([]Cell, len(p.Columns))
	for i, c := range p.Columns {
		v := c.f.value(r)
		switch {
		case v.unset:
			cells[i] = Unset()
		case c.f.kind == kindStr:
			cells[i] = Str(v.s)
		case c.f.kind == kindDate:
			cells[i] = dateCell(v.s)
		default:
			cells[i] = Num(v.s)
		}
	}
	return fieldsLine(p.fields(), cells, p.mode(), p.delim())
}

// pad is printf's "%*.*s" (cut) or "%*s" with a signed width.
func pad(s string, width int, cut bool) string {
	w := abs(width)
	if cut && len(s) > w {
		s = s[:w]
	}
	if len(s) >= w {
		return s
	}
	if width < 0 {
		return s + strings.Repeat(" ", w-len(s))
	}
	return strings.Repeat(" ", w-len(s)) + s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func str0(s string) acctVal {
	if s == "" {
		return unset
	}
	return val(s)
}

// jobOnly is a job's value, blank on its steps' lines.
func (r *AcctRow) jobOnly(s string) acctVal {
	if r.Step != nil {
		return unset
	}
	return str0(s)
}

func (r *AcctRow) job() *api.Job { return &api.Job{Job: r.Rec.Job} }

// acctExitCode is sacct's ExitCode (print.c, PRINT_EXITCODE): an exit
// status of 128 or more loses 128, as if it named the signal that a shell
// reports that way, but stays in the status's place: a script that traps
// SIGTERM and exits 143 shows 15:0 (golden/sacct_n_timeout_th143.txt),
// where scontrol shows 143:0.
func acctExitCode(e jobrec.ExitCode) string {
	if e.Status >= 128 {
		e.Status -= 128
	}
	return exitCode(e)
}

func (r *AcctRow) started() bool {
	j := &r.Rec.Job
	return !j.Start.IsZero() && j.State != slurm.Pending
}

func (r *AcctRow) cpus() int {
	j := r.job()
	if len(j.Alloc.CPUs) > 0 && r.started() {
		return len(j.Alloc.CPUs)
	}
	return max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)
}

// end is the job's or step's end, the job's for a step that has none.
func (r *AcctRow) end() time.Time {
	if r.Step != nil && !r.Step.End.IsZero() {
		return r.Step.End
	}
	return r.Rec.Job.End
}

// elapsed is end minus start in Slurm's whole seconds, the time so far
// while running, 0 before.
func (r *AcctRow) elapsed() time.Duration {
	start, end := r.Rec.Job.Start, r.end()
	if r.Step != nil {
		start = r.Step.Start
	} else if !r.started() {
		return 0
	}
	if start.IsZero() {
		return 0
	}
	if end.IsZero() {
		return sinceStart(start, r.Env.Now)
	}
	return wholeSeconds(start, end)
}

// cpuTimes adds a CPU time over the job's finished steps, or is the
// step's own.
func (r *AcctRow) cpuTimes(get func(*jobrec.Step) time.Duration) time.Duration {
	if r.Step != nil {
		return get(r.Step)
	}
	var t time.Duration
	for i := range r.Rec.Steps {
		if s := &r.Rec.Steps[i]; s.State.Finished() {
			t += get(s)
		}
	}
	return t
}

// cpuTime is sacct's _elapsed_time: "MM:SS.mmm" under an hour with a
// fraction, else "HH:MM:SS", "D-HH:MM:SS", or "00:MM:SS".
func cpuTime(d time.Duration) string {
	secs := int64(d / time.Second)
	msec := int64(d%time.Second) / int64(time.Millisecond)
	days, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	case h > 0:
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	case msec > 0:
		return fmt.Sprintf("%02d:%02d.%03d", m, s, msec)
	}
	return fmt.Sprintf("00:%02d:%02d", m, s)
}

// jobID is slurmdb_get_job_id_str ("7", "8_3", "26383_[2-3%2]"), or the
// raw id; a step adds ".batch", ".0".
func (r *AcctRow) jobID(raw bool) string {
	j := &r.Rec.Job
	var s string
	switch {
	case raw:
		s = uitoa(j.ID)
	case j.ArrayRecord():
		s = uitoa(j.ArrayJobID) + "_[" + slurmsyntax.FormatTasks(j.ArrayPending, j.ArrayLimit) + "]"
	case j.ArrayJobID != 0 && j.ArrayTaskID != jobrec.NoTask:
		s = uitoa(j.ArrayJobID) + "_" + strconv.Itoa(j.ArrayTaskID)
	default:
		s = uitoa(j.ID)
	}
	if r.Step != nil {
		s += "." + r.Step.ID
	}
	return s
}

// convert prints an amount in unit orig as sacct does, honouring --units
// and --noconvert.
// hasRSS: the row is a step with a recorded peak memory.
func (r *AcctRow) hasRSS() bool { return r.Step != nil && r.Step.MaxRSS > 0 }

// rss is the step's peak memory as sacct prints a TRES usage of memory:
// bytes, converted from no unit (convert_num_unit(UNIT_NONE)), so that
// --noconvert prints bytes.
func (r *AcctRow) rss() acctVal { return val(r.convert(float64(r.Step.MaxRSS), unitNone)) }

func (r *AcctRow) convert(num float64, orig int) string {
	mode := convertExact
	if r.NoConvert {
		mode = convertNo
	}
	return convertNum(num, orig, r.Units, mode)
}

// tresItem is one TRES of a job: name and amount (MiB for mem).
type tresItem struct {
	name string
	n    uint64
}

// reqTRES is what the job asked for, with billing.
func (r *AcctRow) reqTRES() []tresItem {
	j := r.job()
	mib, perCPU := memory(j)
	ncpu := max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)
	if perCPU {
		mib *= uint64(ncpu)
	}
	items := []tresItem{{"billing", billing(j, r.Env.View)}, {"cpu", uint64(ncpu)}, {"node", 1}}
	if mib > 0 {
		items = append(items, tresItem{"mem", mib})
	}
	if n := gresCount(j, "gpu"); n > 0 {
		items = append(items, tresItem{"gres/gpu", uint64(n)})
	}
	return items
}

// allocTRES is what the job or step held: blank for a job that never ran.
func (r *AcctRow) allocTRES() acctVal {
	if !r.started() {
		return val("")
	}
	j := r.job()
	items := []tresItem{{"cpu", uint64(r.cpus())}, {"node", 1}}
	if m := memTotal(j); m > 0 {
		items = append(items, tresItem{"mem", m})
	}
	if r.Step == nil {
		items = append(items, tresItem{"billing", billing(j, r.Env.View)})
		if n := gpus(j); n > 0 {
			items = append(items, tresItem{"gres/gpu", uint64(n)})
		}
	}
	return val(r.tresString(items))
}

// tresString prints TRES as sacct does: by name, memory converted, and
// none of count 0 (a job without GPUs under GPU-only billing weights has
// billing 0, which real Slurm's strings leave out).
func (r *AcctRow) tresString(items []tresItem) string {
	slices.SortFunc(items, func(a, b tresItem) int { return strings.Compare(a.name, b.name) })
	parts := make([]string, 0, len(items))
	for _, t := range items {
		if t.n == 0 {
			continue
		}
		v := strconv.FormatUint(t.n, 10)
		if t.name == "mem" {
			v = r.convert(float64(t.n), unitMega)
		}
		parts = append(parts, t.name+"="+v)
	}
	return strings.Join(parts, ",")
}

// ParseUnits reads --units: one of K M G T P, in either case.
func ParseUnits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	i := strings.IndexByte("KMGTP", upper(s[0]))
	if i < 0 {
		return 0, false
	}
	return unitKilo + i, true
}

// NoUnits is AcctRow.Units without --units.
const NoUnits = unitNone - 1

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
