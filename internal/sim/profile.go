package sim

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Speedup models how fast a data-parallel job progresses on g GPUs of one
// node, relative to one GPU: Speedup[g] for g = 0..len-1 (Speedup[0] is 0).
// A job that ran for D seconds on G GPUs has D × Speedup[G] seconds of
// one-GPU work; shrunk to m GPUs it progresses Speedup[m] / Speedup[G] as
// fast.
type Speedup struct {
	Factor []float64
	// Source says where the factors come from, for the assumptions line.
	Source string
}

// LinearSpeedup is the model without profiles: g GPUs are g times as fast.
func LinearSpeedup(maxGPUs int) *Speedup {
	s := &Speedup{Factor: make([]float64, maxGPUs+1), Source: "linear (no step-time profiles)"}
	for g := range s.Factor {
		s.Factor[g] = float64(g)
	}
	return s
}

// At is the factor for g GPUs; beyond the table it grows linearly from the
// last entry.
func (s *Speedup) At(g int) float64 {
	if g <= 0 {
		return 0
	}
	if g < len(s.Factor) {
		return s.Factor[g]
	}
	last := len(s.Factor) - 1
	return s.Factor[last] * float64(g) / float64(last)
}

// LoadProfiles reads the Pollux/Sia step-time profiles
// (<app>_placements-rtx.csv: local_bsz,step_time,sync_time,placement) in
// dir and derives the speedup of 1..maxGPUs GPUs on one node. For every
// application and local batch size measured both on one GPU (placement
// "1") and on g GPUs of one node (placement "g"), g GPUs process
// g × local_bsz samples per step_time against local_bsz per step_time on
// one: the ratio g × step_time(1) / step_time(g). Speedup[g] is the
// geometric mean of these ratios over every such pair; a g without a
// measurement is interpolated linearly between its neighbours. The local
// batch stays fixed, so a shrunk job's global batch shrinks with its GPUs
// (what scontrol yield BatchSize= asks of the job), and its progress per
// sample is assumed unchanged.
func LoadProfiles(dir string, maxGPUs int) (*Speedup, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no step-time profiles (*.csv) in %s: point --profiles at pollux_sia/profiles_rtx, or pass --profiles=none for a linear model", dir)
	}
	slices.Sort(files)
	sums := make([]float64, maxGPUs+1)
	counts := make([]int, maxGPUs+1)
	for _, path := range files {
		// step[placement][local_bsz] = step_time
		step, err := readProfile(path)
		if err != nil {
			return nil, err
		}
		one := step["1"]
		for g := 2; g <= maxGPUs; g++ {
			at, ok := step[strconv.Itoa(g)]
			if !ok {
				continue
			}
			// In key order: a float sum in map order would differ from run
			// to run in its last bits.
			for _, bsz := range slices.Sorted(maps.Keys(one)) {
				t1 := one[bsz]
				if tg, ok := at[bsz]; ok && t1 > 0 && tg > 0 {
					sums[g] += math.Log(float64(g) * t1 / tg)
					counts[g]++
				}
			}
		}
	}
	s := &Speedup{Factor: make([]float64, maxGPUs+1), Source: "step-time profiles in " + dir}
	if maxGPUs >= 1 {
		s.Factor[1] = 1
	}
	known := []int{1}
	for g := 2; g <= maxGPUs; g++ {
		if counts[g] > 0 {
			s.Factor[g] = math.Exp(sums[g] / float64(counts[g]))
			known = append(known, g)
		}
	}
	for g := 2; g <= maxGPUs; g++ {
		if counts[g] > 0 {
			continue
		}
		lo, hi := 1, -1
		for _, k := range known {
			if k < g {
				lo = k
			} else if k > g && hi < 0 {
				hi = k
			}
		}
		if hi < 0 {
			s.Factor[g] = s.Factor[lo] * float64(g) / float64(lo)
		} else {
			w := float64(g-lo) / float64(hi-lo)
			s.Factor[g] = s.Factor[lo]*(1-w) + s.Factor[hi]*w
		}
	}
	return s, nil
}

func readProfile(path string) (map[string]map[int]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading profile: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: empty profile", path)
	}
	col, missing := columns(strings.Split(strings.TrimSpace(sc.Text()), ","), "local_bsz", "step_time", "placement")
	if missing != "" {
		return nil, fmt.Errorf("%s:1: no column %q: a step-time profile needs local_bsz,step_time,placement", path, missing)
	}
	out := map[string]map[int]float64{}
	line := 1
	for sc.Scan() {
		line++
		f := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(f) < len(col) {
			continue
		}
		bsz, err1 := strconv.Atoi(f[col["local_bsz"]])
		st, err2 := strconv.ParseFloat(f[col["step_time"]], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: local_bsz and step_time must be numbers", path, line)
		}
		pl := f[col["placement"]]
		if out[pl] == nil {
			out[pl] = map[int]float64{}
		}
		out[pl][bsz] = st
	}
	return out, sc.Err()
}
