package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// TRES is a set of trackable-resource counts, as in
// MaxTRESPerUser = "gres/gpu=4,cpu=16". Keys are Slurm's TRES names in lower
// case: "cpu", "mem", "node", "billing", "gres/gpu", "gres/gpu:TYPE",
// "gres/shard". Memory counts megabytes (MiB), Slurm's unit for mem; it may
// be written with a unit ("mem=64G").
type TRES map[string]int64

// TRESWeights maps TRES names (as in TRES) to weights, as in
// TRESBillingWeights = "CPU=0,Mem=0,GRES/gpu=1.0". A weight written with a
// unit suffix is per that unit (Slurm's "mem=.25G" is 0.25 per GiB) and is
// stored per base unit (per MiB for mem). Empty weights mean Slurm's
// default: billing is the number of allocated CPUs.
type TRESWeights map[string]float64

// TRES names slurm-lite counts, in Slurm's TRES id order for printing.
var tresOrder = []string{"cpu", "mem", "node", "billing"}

const tresKnown = "cpu, mem, node, billing, gres/gpu, gres/gpu:TYPE and gres/shard"

// tresName canonicalises a TRES name and reports whether slurm-lite knows it.
// Slurm matches TRES names without regard to case ("GRES/gpu", "Mem").
func tresName(s string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(s))
	switch n {
	case "cpu", "mem", "node", "billing", "gres/gpu", "gres/shard":
		return n, true
	}
	if typ, ok := strings.CutPrefix(n, "gres/gpu:"); ok && validName(typ) {
		return n, true
	}
	return n, false
}

// splitTRES splits "a=1,b=2" into its pairs, rejecting empty items, missing
// values, unknown and repeated names.
func splitTRES(s string) (names, values []string, err error) {
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(item, "=")
		value = strings.TrimSpace(value)
		if !ok || strings.TrimSpace(name) == "" || value == "" {
			return nil, nil, fmt.Errorf("%q is not NAME=VALUE", strings.TrimSpace(item))
		}
		n, known := tresName(name)
		if !known {
			return nil, nil, fmt.Errorf("unknown TRES %q (slurm-lite counts %s)", strings.TrimSpace(name), tresKnown)
		}
		if seen[n] {
			return nil, nil, fmt.Errorf("TRES %q is given twice", n)
		}
		seen[n] = true
		names, values = append(names, n), append(values, value)
	}
	return names, values, nil
}

// ParseTRES parses "gres/gpu=4,cpu=16,mem=64G". The empty string is no TRES.
func ParseTRES(s string) (TRES, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	names, values, err := splitTRES(s)
	if err != nil {
		return nil, err
	}
	t := TRES{}
	for i, n := range names {
		v := values[i]
		if n == "mem" {
			b, err := slurmsyntax.ParseSize(v, slurmsyntax.MiB)
			if err != nil {
				return nil, fmt.Errorf("mem=%s: %w", v, err)
			}
			if b < 0 {
				return nil, fmt.Errorf("mem=%s is negative", v)
			}
			// Round up: a limit of 1500K still allows 1500K.
			t[n] = int64((b + slurmsyntax.MiB - 1) / slurmsyntax.MiB)
			continue
		}
		c, err := strconv.ParseInt(v, 10, 64)
		if err != nil || c < 0 {
			return nil, fmt.Errorf("%s=%s: want a whole number of at least 0", n, v)
		}
		t[n] = c
	}
	return t, nil
}

// unitSteps is how many factors of 1024 suffix u is above one unit, 0
// for none.
func unitSteps(u byte) int {
	return strings.IndexByte("KMGTP", u) + 1
}

// ParseTRESWeights parses "CPU=0,Mem=0.25G,GRES/gpu=1.0". The empty string
// is no weights.
func ParseTRESWeights(s string) (TRESWeights, error) {
	if strings.TrimSpace(s) == "" {
		return TRESWeights{}, nil
	}
	names, values, err := splitTRES(s)
	if err != nil {
		return nil, err
	}
	w := TRESWeights{}
	for i, n := range names {
		v := values[i]
		steps := 0
		if u := unitSteps(strings.ToUpper(v[len(v)-1:])[0]); u > 0 {
			steps = u
			v = v[:len(v)-1]
			if n == "mem" {
				steps -= unitSteps('M') // mem's base unit is the megabyte
			}
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%s=%s: want a number such as 1.0 or 0.25G", n, values[i])
		}
		w[n] = f / math.Pow(1024, float64(steps))
	}
	return w, nil
}

// sortedTRES orders names as Slurm prints TRES: its fixed ids first, then
// GRES by name.
func sortedTRES[V any](m map[string]V) []string {
	var names []string
	for _, n := range tresOrder {
		if _, ok := m[n]; ok {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range m {
		if !slices.Contains(tresOrder, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// String prints the counts in Slurm's form, mem with its unit:
// "cpu=16,mem=64G,gres/gpu=4".
func (t TRES) String() string {
	var parts []string
	for _, n := range sortedTRES(t) {
		v := strconv.FormatInt(t[n], 10)
		if n == "mem" {
			v = slurmsyntax.FormatSize(slurmsyntax.Bytes(t[n]) * slurmsyntax.MiB)
		}
		parts = append(parts, n+"="+v)
	}
	return strings.Join(parts, ",")
}

// Names are the weights' TRES names in Slurm's TRES order: its fixed ids
// first, then GRES by name.
func (w TRESWeights) Names() []string { return sortedTRES(w) }

// String prints the weights in Slurm's form, per base unit:
// "cpu=0,mem=0.000244140625,gres/gpu=1".
func (w TRESWeights) String() string {
	var parts []string
	for _, n := range sortedTRES(w) {
		parts = append(parts, n+"="+strconv.FormatFloat(w[n], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}
