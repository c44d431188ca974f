package cli

// The arguments several commands read alike.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// SplitList is strtok(s, ","): the non-empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ContainsFold reports whether list holds s, case aside.
func ContainsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// IndexFold is the index of s in list, case aside; -1 when it is not there.
func IndexFold(list []string, s string) int {
	for i, v := range list {
		if strings.EqualFold(v, s) {
			return i
		}
	}
	return -1
}

// KnownClusters checks -M: slurm-lite is one cluster, named in the
// configuration ("all" is it too).
func KnownClusters(prog, names string, cfg *config.Config, sio IO) bool {
	for _, n := range format.AddToCharList(nil, names) {
		if n == "all" || strings.EqualFold(n, cfg.ClusterName) {
			continue
		}
		fmt.Fprintf(sio.Stderr, "%s: error: No cluster '%s' known by database.\n", prog, n)
		fmt.Fprintf(sio.Stderr, "%s: error: '%s' can't be reached now, or it is an invalid entry for --cluster.  "+
			"Use 'sacctmgr list clusters' to see available clusters.\n", prog, names)
		return false
	}
	return true
}

// UserNames reads sshare -u: comma-separated names, or uids that sshare
// turns into names (refusing an unknown one, as _convert_to_name does).
func UserNames(list string, sio IO) ([]string, bool) {
	var names []string
	for _, n := range format.AddToCharList(nil, list) {
		if n != "" && n[0] >= '0' && n[0] <= '9' {
			id, _ := strconv.ParseUint(leadingDigits(n), 10, 32)
			u, err := userdb.ByID(uint32(id))
			if err != nil {
				fmt.Fprintf(sio.Stderr, "Invalid user id: %d\n", id)
				return nil, false
			}
			n = u.Name
		}
		if IndexFold(names, n) < 0 {
			names = append(names, n)
		}
	}
	return names, true
}

// leadingDigits is what strtoul reads of s.
func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
