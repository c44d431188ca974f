package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Share is part of a count: a number ("5000") or a percentage ("50%") of it,
// as MaxJobCountPerUser is of MaxJobCount. The file may write a number bare
// (5000) or quoted, a percentage quoted; it is kept in one canonical form,
// "5000" or "50%". "" and "0" are no limit.
type Share string

// ParseShare reads a Share: a whole number, 0 or more, or a whole
// percentage from 1 to 100 followed by %.
func ParseShare(s string) (Share, error) {
	t := strings.TrimSpace(s)
	if num, ok := strings.CutSuffix(t, "%"); ok {
		p, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || p < 1 || p > 100 {
			return "", fmt.Errorf("%q is not a percentage from 1%% to 100%%", s)
		}
		return Share(strconv.Itoa(p) + "%"), nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return "", fmt.Errorf("%q is neither a count (0 or more) nor a percentage such as \"50%%\"", s)
	}
	return Share(strconv.Itoa(n)), nil
}

// Of is the count the share stands for out of n: a count as it is, a
// percentage of n rounded down but at least 1; 0 is no limit.
func (s Share) Of(n int) int {
	if p, ok := s.Percent(); ok {
		return max(n*p/100, 1)
	}
	c, _ := strconv.Atoi(string(s))
	return max(c, 0)
}

// Percent is the percentage a share is written as, if it is one.
func (s Share) Percent() (int, bool) {
	num, ok := strings.CutSuffix(string(s), "%")
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(num)
	return p, err == nil
}
