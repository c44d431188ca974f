package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// formatTasks writes task ids as the array_pending column keeps them
// (slurm.FormatRanges: "0-3,7,9-10"). Unlike Slurm's printed form
// (slurmsyntax.FormatTasks) it is never cut short, and it stays small for
// the usual ranges. The ids must be ascending and distinct.
func formatTasks(ids []int) string { return slurm.FormatRanges(ids) }

// parseTasks reads what formatTasks writes.
func parseTasks(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("array tasks %q: bad id %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("array tasks %q: bad range %q", s, part)
			}
		}
		if len(ids) > 0 && a <= ids[len(ids)-1] {
			return nil, fmt.Errorf("array tasks %q: ids out of order at %q", s, part)
		}
		for id := a; id <= b; id++ {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// normTasks returns ids sorted without duplicates or negative ids, as a new
// slice.
func normTasks(ids []int) []int {
	out := slices.DeleteFunc(slices.Clone(ids), func(id int) bool { return id < 0 })
	slices.Sort(out)
	return slices.Compact(out)
}
