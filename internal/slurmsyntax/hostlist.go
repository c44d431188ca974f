package slurmsyntax

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxHostlistHosts bounds how many host names a hostlist may stand for
// (Slurm's MAX_RANGES, 256Ki). ExpandHostlist and NormalizeHostlist refuse
// more, so that "n[0-9999999999]" cannot exhaust memory.
const MaxHostlistHosts = 256 * 1024

// maxRange is Slurm's MAX_RANGE and MAX_PREFIX_CNT: the most hosts one
// bracket may name.
const maxRange = 64 * 1024

// hostRange is Slurm's hostrange_t: prefix followed by the numbers lo..hi
// zero-padded to width, or, when single, the name prefix alone.
type hostRange struct {
	prefix string
	lo, hi uint64
	width  int
	single bool
}

func (h *hostRange) count() uint64 {
	if h.single {
		return 1
	}
	return h.hi - h.lo + 1
}

// hostList is Slurm's hostlist_t for a one-dimensional cluster.
type hostList struct {
	ranges []*hostRange
	hosts  uint64
}

// ExpandHostlist expands a hostlist as `scontrol show hostnames` does:
// "gpu[01-03,7],cpu1" is gpu01 gpu02 gpu03 gpu7 cpu1, in that order,
// duplicates kept. Names are separated by commas, spaces or tabs; each
// number in brackets keeps the width it is written with ("7" takes no
// padding, "01-03" pads to 2, "8-10" gives 8 9 10). Brackets may appear
// more than once ("r[1-2]n[1-2]"). "" is no hosts. Bad ranges, an
// unclosed '[', text after the last ']' and more than MaxHostlistHosts
// names are errors; scontrol reports them as "Invalid hostlist: LIST".
func ExpandHostlist(s string) ([]string, error) {
	hl, err := parseHostlist(s)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, hl.hosts)
	for _, h := range hl.ranges {
		if h.single {
			names = append(names, h.prefix)
			continue
		}
		for i := h.lo; ; i++ {
			names = append(names, h.prefix+padNumber(i, h.width))
			if i == h.hi {
				break
			}
		}
	}
	return names, nil
}

// NormalizeHostlist prints a hostlist as `scontrol show hostlist LIST`
// does: its ranges in the order given, neighbours merged
// ("gpu[01-02],gpu03" is "gpu[01-03]"), nothing sorted or removed.
func NormalizeHostlist(s string) (string, error) {
	hl, err := parseHostlist(s)
	if err != nil {
		return "", err
	}
	return hl.String(), nil
}

// CompressHostlist prints host names as one hostlist, as Slurm's
// hostlist_ranged_string does for names pushed in this order: each name
// splits into a prefix and its trailing number, a name that continues the
// range before it joins it, and neighbouring ranges with one prefix share
// brackets: gpu01 gpu02 gpu03 gpu7 cpu1 is "gpu[01-03,7],cpu1". Names are
// neither sorted nor deduplicated.
func CompressHostlist(names []string) string {
	var hl hostList
	for _, n := range names {
		hl.push(hostRangeOf(n))
	}
	return hl.String()
}

// hostRangeOf is hostname_create and hostlist_push_host: the trailing
// digits of name are its number, with their width. A name whose number
// does not fit in 64 bits stays whole (Slurm's strtoul would change it).
func hostRangeOf(name string) *hostRange {
	i := len(name)
	for i > 0 && isDigit(name[i-1]) {
		i--
	}
	if i == len(name) {
		return &hostRange{prefix: name, single: true}
	}
	n, err := strconv.ParseUint(name[i:], 10, 64)
	if err != nil {
		return &hostRange{prefix: name, single: true}
	}
	return &hostRange{prefix: name[:i], lo: n, hi: n, width: len(name) - i}
}

// push is hostlist_push_range: a range that continues the last one, with
// the same prefix and a compatible width, extends it.
func (hl *hostList) push(h *hostRange) {
	if n := len(hl.ranges); n > 0 {
		tail := hl.ranges[n-1]
		if h.lo > 0 && tail.hi == h.lo-1 && samePrefix(tail, h) && widthEquiv(tail.lo, &tail.width, h.lo, &h.width) {
			tail.hi = h.hi
			hl.hosts += h.count()
			return
		}
	}
	c := *h
	hl.ranges = append(hl.ranges, &c)
	hl.hosts += h.count()
}

// samePrefix is hostrange_prefix_cmp(a, b) == 0: the same prefix, and both
// or neither a single name without a number.
func samePrefix(a, b *hostRange) bool { return a.prefix == b.prefix && a.single == b.single }

// withinRange is hostrange_within_range: a and b go in one bracket.
func withinRange(a, b *hostRange) bool { return samePrefix(a, b) && !a.single && !b.single }

// zeroPadded is _zero_padded: how many zeros pad num to width.
func zeroPadded(num uint64, width int) int {
	n := len(strconv.FormatUint(num, 10))
	return max(width-n, 0)
}

// widthEquiv is _width_equiv: whether numbers n and m written with widths
// wn and wm can share one width without changing the zero padding of
// either; if so it sets the one that must change.
func widthEquiv(n uint64, wn *int, m uint64, wm *int) bool {
	if *wn == *wm {
		return true
	}
	npad, nmpad := zeroPadded(n, *wn), zeroPadded(n, *wm)
	mpad, mnpad := zeroPadded(m, *wm), zeroPadded(m, *wn)
	switch {
	case npad != nmpad && mpad != mnpad:
		return false
	case npad != nmpad:
		*wm = *wn
	default:
		*wn = *wm
	}
	return true
}

func padNumber(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// String is hostlist_ranged_string for one dimension.
func (hl *hostList) String() string {
	var b strings.Builder
	r := hl.ranges
	for i := 0; i < len(r); {
		if i > 0 {
			b.WriteByte(',')
		}
		bracket := r[i].count() > 1 || (i+1 < len(r) && withinRange(r[i], r[i+1]))
		b.WriteString(r[i].prefix)
		if bracket {
			b.WriteByte('[')
		}
		start := i
		for {
			if i > start {
				b.WriteByte(',')
			}
			if h := r[i]; !h.single {
				b.WriteString(padNumber(h.lo, h.width))
				if h.lo < h.hi {
					b.WriteString("-" + padNumber(h.hi, h.width))
				}
			}
			i++
			if i >= len(r) || !withinRange(r[i], r[i-1]) {
				break
			}
		}
		if bracket {
			b.WriteByte(']')
		}
	}
	return b.String()
}

// parseHostlist is hostlist_create: tokens separated by commas, spaces or
// tabs, where a bracket may hold separators.
func parseHostlist(s string) (*hostList, error) {
	hl := &hostList{}
	for _, tok := range hostTokens(s) {
		if err := hl.pushToken(tok); err != nil {
			return nil, fmt.Errorf("invalid hostlist %q: %w", s, err)
		}
	}
	return hl, nil
}

func isHostSep(c byte) bool { return c == ',' || c == ' ' || c == '\t' }

// hostTokens is _next_tok: a token runs to the next separator, but a
// separator inside a "[...]" does not end it.
func hostTokens(s string) []string {
	var toks []string
	for i := 0; ; {
		for i < len(s) && isHostSep(s[i]) {
			i++
		}
		if i >= len(s) {
			return toks
		}
		end := tokenEnd(s, i)
		toks = append(toks, s[i:end])
		i = end
	}
}

// tokenEnd returns where the token starting at start ends.
func tokenEnd(s string, start int) int {
	parse, end := start, start
	for {
		for end < len(s) && !isHostSep(s[end]) {
			end++
		}
		// Skip bracket pairs that close before the separator; one that
		// closes after it carries the token on past its ']'.
		for {
			open := strings.IndexByte(s[parse:], '[')
			if open < 0 || parse+open > end {
				return end
			}
			closing := strings.IndexByte(s[parse:], ']')
			if closing < 0 || closing < open {
				return end
			}
			if parse+closing > end {
				end = parse + closing
				break
			}
			parse += closing + 1
		}
	}
}

// pushToken is the body of _hostlist_create_bracketed for one token.
func (hl *hostList) pushToken(tok string) error {
	open := strings.LastIndexByte(tok, '[')
	if open < 0 {
		hl.push(hostRangeOf(tok))
		return hl.checkCount()
	}
	closing := strings.IndexByte(tok[open:], ']')
	if closing < 0 {
		// Slurm pushes a mangled name here ("gpu[1" becomes "gpu]").
		return fmt.Errorf("%q: no ']' after '['", tok)
	}
	closing += open
	if closing != len(tok)-1 {
		return fmt.Errorf("%q: unexpected %q after ']'", tok, tok[closing+1:])
	}
	ranges, err := parseRangeList(tok[open+1 : closing])
	if err != nil {
		return fmt.Errorf("%q: %w", tok, err)
	}
	return hl.pushRangeList(tok[:open], ranges)
}

func (hl *hostList) checkCount() error {
	if hl.hosts > MaxHostlistHosts {
		return fmt.Errorf("more than %d hosts", MaxHostlistHosts)
	}
	return nil
}

// pushRangeList is _push_range_list: a prefix may itself hold a bracket
// ("rack[1-2]n"), expanded from the last one back, each value in turn.
func (hl *hostList) pushRangeList(prefix string, ranges []hostRange) error {
	open := strings.LastIndexByte(prefix, '[')
	closing := -1
	if open >= 0 {
		closing = strings.LastIndexByte(prefix[open:], ']')
	}
	if closing < 0 {
		for i := range ranges {
			if hl.hosts+ranges[i].count() > MaxHostlistHosts {
				return fmt.Errorf("more than %d hosts", MaxHostlistHosts)
			}
			hl.push(&hostRange{prefix: prefix, lo: ranges[i].lo, hi: ranges[i].hi, width: ranges[i].width})
		}
		return nil
	}
	closing += open
	pre, inner, suffix := prefix[:open], prefix[open+1:closing], prefix[closing+1:]
	prefixRanges, err := parseRangeList(inner)
	if err != nil {
		return err
	}
	var cnt uint64
	for _, pr := range prefixRanges {
		cnt += pr.count()
		if cnt > maxRange {
			return fmt.Errorf("more than %d values in %q", maxRange, "["+inner+"]")
		}
		for j := pr.lo; ; j++ {
			if err := hl.pushRangeList(pre+padNumber(j, pr.width)+suffix, ranges); err != nil {
				return err
			}
			if j == pr.hi {
				break
			}
		}
	}
	return nil
}

// parseRangeList is _parse_range_list: "1-3,7,010-012".
func parseRangeList(s string) ([]hostRange, error) {
	var out []hostRange
	for _, part := range strings.Split(s, ",") {
		r, err := parseHostRange(part)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseHostRange is _parse_single_range: "lo" or "lo-hi", the width that of
// lo as written. Slurm lets strtoul take white space, signs and trailing
// text in lo; we want digits.
func parseHostRange(s string) (hostRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	r := hostRange{width: len(lo)}
	var err error
	if r.lo, err = hostNumber(lo); err != nil {
		return hostRange{}, fmt.Errorf("invalid range %q: %w", s, err)
	}
	r.hi = r.lo
	if isRange && hi != "" { // "5-" is 5, as in Slurm
		if r.hi, err = hostNumber(hi); err != nil {
			return hostRange{}, fmt.Errorf("invalid range %q: %w", s, err)
		}
	}
	if r.lo > r.hi {
		return hostRange{}, fmt.Errorf("invalid range %q: ends before it starts", s)
	}
	if r.hi-r.lo >= maxRange {
		return hostRange{}, fmt.Errorf("too many hosts in range %q (at most %d)", s, maxRange)
	}
	return r, nil
}

func hostNumber(s string) (uint64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("want digits, got %q", s)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == math.MaxUint64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n, nil
}
