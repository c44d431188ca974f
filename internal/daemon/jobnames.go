package daemon

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// shownJobID is a job's id as squeue shows it: "4_2" for task 2 of array
// 4 (whatever id the task runs under), else the id.
func shownJobID(id, arrayID uint32, task int) string {
	if arrayID != 0 && task >= 0 {
		return fmt.Sprintf("%d_%d", arrayID, task)
	}
	return strconv.FormatUint(uint64(id), 10)
}

// cmpShownIDs orders "4", "4_2", "4_10" as squeue -S i does: by job or
// array id, then task.
func cmpShownIDs(a, b string) int {
	split := func(s string) (uint64, int) {
		id, task, ok := strings.Cut(s, "_")
		n, _ := strconv.ParseUint(id, 10, 32)
		t, _ := strconv.Atoi(task)
		if !ok {
			t = -1
		}
		return n, t
	}
	an, at := split(a)
	bn, bt := split(b)
	return cmp.Or(cmp.Compare(an, bn), cmp.Compare(at, bt))
}
