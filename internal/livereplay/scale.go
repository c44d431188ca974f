package livereplay

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sim"
)

// A replay is exact only where every time it gives the daemon comes to a
// whole number of the daemon's units at the scale: the scheduler counts
// whole seconds (Slurm's time_t), bf_window whole minutes. A job of 15
// trace seconds at --scale 0.5 would run 7.5 s, which the replay's job
// rounds up to the second (it ends on one, see work): at that scale no job
// matched the simulator. Such a scale is refused, naming the first time
// that does not come out whole and the scales that would do.

// replayTime is one time the replay hands the daemon, in trace time.
type replayTime struct {
	what string
	d    time.Duration
	// unit is what the daemon counts it in: a second, or a minute.
	unit time.Duration
}

// times lists every time the replay of tr under pol gives the daemon:
// each job's submission (from the first), duration and limit, and the
// times of the configuration Config writes.
func times(tr *sim.Trace, pol sim.Policy, opt sim.Options) []replayTime {
	var ts []replayTime
	sec := func(what string, d time.Duration) {
		if d > 0 {
			ts = append(ts, replayTime{what, d, time.Second})
		}
	}
	where := func(j sim.TraceJob) string {
		if j.Line > 0 && tr.File != "" {
			return fmt.Sprintf(" (%s:%d)", tr.File, j.Line)
		}
		return ""
	}
	for _, j := range tr.Jobs {
		s := func(n int64) time.Duration { return time.Duration(n) * time.Second }
		sec(fmt.Sprintf("trace job %s's submission at trace second %d%s", j.Name, j.Submit-tr.Jobs[0].Submit, where(j)), s(j.Submit-tr.Jobs[0].Submit))
		sec(fmt.Sprintf("trace job %s's duration%s", j.Name, where(j)), s(j.Duration))
		sec(fmt.Sprintf("trace job %s's time limit%s", j.Name, where(j)), s(j.TimeLimit))
	}
	as, c := opt.Assumptions, opt.Setup.Config
	sec("the checkpoint interval (--checkpoint)", as.Checkpoint)
	if pol.Fillers {
		sec("the fillers' limit (--filler-limit)", as.FillerLimit)
	}
	if pol.ShortRoute > 0 {
		sec("the short route's MaxTime", pol.ShortRoute)
	}
	if pol.Yield {
		sec("[Yield] Cost (--stop-time + --restart-time + --checkpoint)", as.Stop+as.Restart+as.Checkpoint)
		sec("[Yield] MinRun (--restart-time + --checkpoint)", sim.MinRun(as))
	}
	res := c.Backfill.Resolution
	if res <= 0 {
		res = time.Minute
	}
	sec("bf_resolution", res)
	window := c.Backfill.Window
	if window <= 0 {
		window = 1440 * time.Minute
	}
	ts = append(ts, replayTime{"bf_window", window, time.Minute})
	sec("PriorityMaxAge", c.MaxAge)
	sec("PriorityDecayHalfLife", c.DecayHalfLife)
	return ts
}

// whole reports whether d at scale is a whole number of units.
func whole(t replayTime, scale float64) bool {
	v := float64(t.d) * scale / float64(t.unit)
	return math.Abs(v-math.Round(v)) <= 1e-9*max(1, math.Abs(v))
}

// CheckScale refuses a scale at which some time of the replay of tr
// under pol would not be a whole number of the daemon's units, saying
// which and naming the scales nearest to it that would do.
func CheckScale(tr *sim.Trace, pol sim.Policy, opt sim.Options, scale float64) error {
	ts := times(tr, pol, opt)
	for _, t := range ts {
		if whole(t, scale) {
			continue
		}
		unit := "seconds"
		if t.unit == time.Minute {
			unit = "minutes"
		}
		return fmt.Errorf("--scale %g cannot be replayed exactly: the daemon counts whole %s, and %s, %s, would be %s %s at this scale "+
			"(its job would end on the next whole second, and every later decision move with it); %s",
			scale, unit, t.what, fmtTrace(t.d), strconv.FormatFloat(float64(t.d)*scale/float64(t.unit), 'f', -1, 64), unit, scalesThatDo(ts, scale))
	}
	return nil
}

// fmtTrace is a trace time for a message: seconds, or minutes when whole.
func fmtTrace(d time.Duration) string {
	if d%time.Minute == 0 && d >= time.Minute {
		return fmt.Sprintf("%d trace minutes", d/time.Minute)
	}
	return fmt.Sprintf("%s trace seconds", strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
}

// scalesThatDo names the scales nearest to scale at which every time is
// whole: the multiples of 1/G, G being the greatest common divisor of the
// times in seconds (milliseconds where they have any), that also keep
// bf_window whole.
func scalesThatDo(ts []replayTime, scale float64) string {
	var g int64 // in milliseconds
	for _, t := range ts {
		if t.unit == time.Second {
			g = gcd(g, t.d.Milliseconds())
		}
	}
	if g <= 0 {
		return "give a scale such as 1"
	}
	step := 1000 / float64(g) // every multiple of step keeps the seconds whole
	ok := func(k int64) bool {
		s := float64(k) * step
		for _, t := range ts {
			if !whole(t, s) {
				return false
			}
		}
		return true
	}
	// The nearest below the scale and the nearest above it.
	var found []string
	for k := int64(math.Floor(scale/step + 1e-9)); k >= 1 && k > int64(math.Floor(scale/step+1e-9))-10000; k-- {
		if ok(k) {
			found = append(found, strconv.FormatFloat(float64(k)*step, 'g', 6, 64))
			break
		}
	}
	for k := max(1, int64(math.Ceil(scale/step-1e-9))); k < int64(math.Ceil(scale/step))+10000; k++ {
		if ok(k) {
			found = append(found, strconv.FormatFloat(float64(k)*step, 'g', 6, 64))
			break
		}
	}
	if len(found) == 0 {
		return "give --scale 1"
	}
	return fmt.Sprintf("the times of this replay are whole at multiples of %s; the nearest: --scale %s", strconv.FormatFloat(step, 'g', 6, 64), joinOr(found))
}

func joinOr(s []string) string {
	if len(s) == 2 {
		return s[0] + " or " + s[1]
	}
	return s[0]
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
