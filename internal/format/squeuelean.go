package format

import "strings"

// leanLetters are the -o letters whose values read only what
// api.SqueueJobs carries (the job's ids, names, owner, state, reason,
// times, limit, priority and node), or print a constant. squeue asks for
// the compact list when its format, sort and filters keep to them; the
// others (the request's resources, paths, command, ...) need full records.
const leanLetters = "aABCdDeFgGHiIjJKlLMNOpPqQrRsStTuUVXYz"

// leanSortLetters are the -S letters that sort on what the compact list
// carries, with those squeue accepts without sorting (cfhnO, b) and the
// signs and commas of the list.
const leanSortLetters = "BCdDeGHgiIjJlLMNpPQStTuUVzcfhnOb,+-"

// Lean reports whether every field of the format prints from the compact
// list (api.SqueueJobs).
func (f Format) Lean() bool {
	for _, c := range f {
		if c.f != nil && (c.f.letter == 0 || strings.IndexByte(leanLetters, c.f.letter) < 0) {
			return false
		}
	}
	return true
}

// LeanSort reports whether an -S specification sorts on the compact list's
// fields alone. "cluster" (every job ties) counts as one.
func LeanSort(spec string) bool {
	const cluster = "cluster"
	for i := 0; i < len(spec); i++ {
		if i+len(cluster) <= len(spec) && strings.EqualFold(spec[i:i+len(cluster)], cluster) {
			i += len(cluster) - 1
			continue
		}
		if strings.IndexByte(leanSortLetters, spec[i]) < 0 {
			return false
		}
	}
	return true
}
