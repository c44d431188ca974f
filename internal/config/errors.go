package config

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a configuration file, printed as
// "FILE:LINE: MESSAGE" like a compiler's. Messages say how to fix it.
type Error struct {
	File string
	// Line is 1-based; 0 when the problem is not on one line (a missing key).
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found in one file, in line order, so that one
// run of the daemon reports them all. Its Error prints one per line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sortErrors orders errors by line, those without a line last, keeping the
// order of discovery among equals.
func sortErrors(es Errors) {
	key := func(e *Error) int {
		if e.Line == 0 {
			return int(^uint(0) >> 1)
		}
		return e.Line
	}
	sort.SliceStable(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
}

// suggest returns the candidate closest to s when it is close enough to be
// a likely typo: the same but for case, or a few edits away.
func suggest(s string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(s)/3)
	return best, bestDist >= 0 && bestDist <= limit
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
