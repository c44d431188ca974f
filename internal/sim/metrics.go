package sim

import (
	"math"
	"slices"
)

// Metrics summarise one run. Times are seconds; job-time metrics cover the
// trace's jobs that finished, never fillers.
type Metrics struct {
	Policy string `json:"policy"`
	// Jobs finished; Unfinished could never start (the run ended without
	// them) and count in no time metric.
	Jobs       int     `json:"jobs"`
	Unfinished int     `json:"unfinished"`
	AvgJCT     float64 `json:"avg_jct_s"`
	MedianJCT  float64 `json:"median_jct_s"`
	P99JCT     float64 `json:"p99_jct_s"`
	AvgWait    float64 `json:"avg_wait_s"`
	P99Wait    float64 `json:"p99_wait_s"`
	// P99WaitShort is over jobs whose trace runtime is at most an hour.
	P99WaitShort float64 `json:"p99_wait_short_s"`
	AvgBSld      float64 `json:"avg_bounded_slowdown"`
	Makespan     float64 `json:"makespan_s"`
	UtilWindow   float64 `json:"util_window"`
	FairGap      float64 `json:"fair_gap"`
	// GPUHours is what the trace's jobs held (stops and restarts included).
	GPUHours       float64 `json:"gpu_hours"`
	FillerGPUHours float64 `json:"filler_gpu_hours"`
	Preemptions    int     `json:"preemptions"`
	Shrinks        int     `json:"shrinks"`
	TimedOut       int     `json:"timed_out"`
	// LostGPUHours is the trace jobs' lost work; LostFrac its share of
	// GPUHours. Fillers' lost work is apart.
	LostGPUHours       float64   `json:"lost_gpu_hours"`
	LostFrac           float64   `json:"lost_frac"`
	FillerLostGPUHours float64   `json:"filler_lost_gpu_hours"`
	Passes             int       `json:"passes"`
	Accounts           []Account `json:"accounts"`
	// WallS is the simulator's own run time; 0 with --no-wall.
	WallS float64 `json:"wall_s"`
}

// Account is one account's share of a run.
type Account struct {
	Account  string  `json:"account"`
	Jobs     int     `json:"jobs"`
	AvgJCT   float64 `json:"avg_jct_s"`
	AvgWait  float64 `json:"avg_wait_s"`
	GPUHours float64 `json:"gpu_hours"`
}

// ShortJob is the longest runtime of a "short" job, for P99WaitShort.
const ShortJob = 3600

// BSldBound is the bounded slowdown's floor on the runtime (seconds).
const BSldBound = 10

// Summarize computes a run's metrics.
func Summarize(r *Run) Metrics {
	m := Metrics{Policy: r.Policy.Name, Preemptions: r.Preemptions, Shrinks: r.Shrinks, Passes: r.Passes}
	var jct, wait, short []float64
	var bsld float64
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	type acc struct {
		jobs       int
		jct, wait  float64
		gpuSeconds float64
	}
	accts := map[string]*acc{}
	var names []string
	for _, o := range r.Outcomes {
		a := accts[o.Account]
		if a == nil {
			a = &acc{}
			accts[o.Account] = a
			names = append(names, o.Account)
		}
		m.GPUHours += o.GPUSeconds / 3600
		m.LostGPUHours += o.LostGPUSeconds / 3600
		a.gpuSeconds += o.GPUSeconds
		first = min(first, o.Submit)
		if o.End < 0 {
			m.Unfinished++
			continue
		}
		if o.TimedOut {
			m.TimedOut++
		}
		last = max(last, o.End)
		c, w := float64(o.End-o.Submit), float64(o.FirstStart-o.Submit)
		jct, wait = append(jct, c), append(wait, w)
		if o.Runtime <= ShortJob {
			short = append(short, w)
		}
		bsld += BoundedSlowdown(c, float64(o.Runtime))
		a.jobs++
		a.jct += c
		a.wait += w
	}
	m.Jobs = len(jct)
	if m.Jobs > 0 {
		m.AvgJCT, m.AvgWait, m.AvgBSld = mean(jct), mean(wait), bsld/float64(m.Jobs)
		m.MedianJCT, m.P99JCT = Percentile(jct, 50), Percentile(jct, 99)
		m.P99Wait, m.P99WaitShort = Percentile(wait, 99), Percentile(short, 99)
		m.Makespan = float64(last - first)
	}
	if span := float64(r.WindowEnd-r.WindowStart) * float64(r.Capacity); span > 0 {
		m.UtilWindow = r.BusyGPUSeconds / span
	}
	if r.GapTime > 0 {
		m.FairGap = r.GapIntegral / r.GapTime
	}
	m.FillerGPUHours = r.FillerGPUSeconds / 3600
	m.FillerLostGPUHours = r.FillerLostGPUSeconds / 3600
	if m.GPUHours > 0 {
		m.LostFrac = m.LostGPUHours / m.GPUHours
	}
	slices.Sort(names)
	for _, n := range names {
		a := accts[n]
		row := Account{Account: n, Jobs: a.jobs, GPUHours: a.gpuSeconds / 3600}
		if a.jobs > 0 {
			row.AvgJCT, row.AvgWait = a.jct/float64(a.jobs), a.wait/float64(a.jobs)
		}
		m.Accounts = append(m.Accounts, row)
	}
	return m
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Percentile is the nearest-rank percentile: the smallest value with at
// least p% of the values at or below it; 0 for no values.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// BoundedSlowdown is max(1, completion / max(runtime, BSldBound)).
func BoundedSlowdown(jct, runtime float64) float64 {
	return max(1, jct/max(runtime, BSldBound))
}

// FairGap is the fair-share gap at one instant: when the accounts' demand
// (GPUs of their jobs pending or holding GPUs) exceeds the capacity, the
// sum over accounts of |held - fair| / capacity, halved, where fair is the
// weighted max-min fair share of the capacity given the demands (see
// MaxMinFair). It is 0 when every GPU is where fairness wants it and 1 when
// all of them are elsewhere. ok is false when demand does not exceed
// capacity: then everyone can have what they ask, and no gap is counted.
func FairGap(held, demand []int, shares []float64, capacity int) (gap float64, ok bool) {
	total := 0
	for _, d := range demand {
		total += d
	}
	if total <= capacity || capacity <= 0 {
		return 0, false
	}
	fair := MaxMinFair(demand, shares, float64(capacity))
	for a := range held {
		gap += math.Abs(float64(held[a]) - fair[a])
	}
	return gap / float64(capacity) / 2, true
}

// MaxMinFair is the weighted max-min fair allocation of capacity among
// demands (water-filling): every unsatisfied account gets capacity in
// proportion to its share, those asking for less get what they ask, and
// what they leave is shared again among the rest.
func MaxMinFair(demand []int, shares []float64, capacity float64) []float64 {
	out := make([]float64, len(demand))
	open := make([]bool, len(demand))
	for a, d := range demand {
		open[a] = d > 0 && shares[a] > 0
	}
	left := capacity
	for {
		var w float64
		for a := range open {
			if open[a] {
				w += shares[a]
			}
		}
		if w == 0 || left <= 0 {
			return out
		}
		settled := false
		for a := range open {
			if open[a] && float64(demand[a])-out[a] <= left*shares[a]/w {
				left -= float64(demand[a]) - out[a]
				out[a] = float64(demand[a])
				open[a] = false
				settled = true
			}
		}
		if !settled {
			for a := range open {
				if open[a] {
					out[a] += left * shares[a] / w
				}
			}
			return out
		}
	}
}
