package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// AssocMgrAsked are the sections scontrol asked for (its flags=): a section
// asked for and empty says so.
type AssocMgrAsked struct{ Users, Assoc, QOS bool }

// AssocMgr is scontrol show assoc_mgr (scontrol's _print_assoc_mgr_info,
// Slurm 22.05), with -o one record a line.
func AssocMgr(m *api.AssocMgr, asked AssocMgrAsked, oneLiner bool) string {
	var b strings.Builder
	nl := "\n    "
	if oneLiner {
		nl = " "
	}
	// head is a section's heading: a blank line either side, none with -o.
	head := func(s string) {
		if oneLiner {
			b.WriteString(s + "\n")
		} else {
			b.WriteString("\n" + s + "\n\n")
		}
	}
	tres := func(name string, limits []int64, used []uint64, divider uint64) {
		b.WriteString(name + "=")
		comma := false
		for i, n := range m.TRES {
			lim := api.NoLimit
			if i < len(limits) {
				lim = limits[i]
			}
			if used == nil && lim == api.NoLimit {
				continue
			}
			if comma {
				b.WriteByte(',')
			}
			b.WriteString(n + "=")
			if lim == api.NoLimit {
				b.WriteByte('N')
			} else {
				b.WriteString(strconv.FormatInt(lim, 10))
			}
			if used != nil {
				var u uint64
				if i < len(used) {
					u = used[i]
				}
				if divider > 0 {
					u /= divider
				}
				fmt.Fprintf(&b, "(%d)", u)
			}
			comma = true
		}
	}
	// grp is "Name=LIMIT(USED)", N for no limit.
	grp := func(name string, limit int64, used string) {
		if limit == api.NoLimit {
			fmt.Fprintf(&b, "%s=N(%s)", name, used)
		} else {
			fmt.Fprintf(&b, "%s=%d(%s)", name, limit, used)
		}
	}
	// maxLimit is "Name=LIMIT(USED) ", or "Name= " unset.
	maxLimit := func(name string, limit int64, used int) {
		if limit == api.NoLimit {
			fmt.Fprintf(&b, "%s= ", name)
		} else {
			fmt.Fprintf(&b, "%s=%d(%d) ", name, limit, used)
		}
	}
	opt := func(name string, v int64, trail string) {
		if v == api.NoLimit {
			fmt.Fprintf(&b, "%s=%s", name, trail)
		} else {
			fmt.Fprintf(&b, "%s=%d%s", name, v, trail)
		}
	}
	wall := func(secs float64) string { return fmt.Sprintf("%.2f", secs/60) }

	b.WriteString("Current Association Manager state\n")
	if len(m.Users) == 0 {
		if asked.Users {
			head("No users currently cached in Slurm.")
		}
	} else {
		head("User Records")
		for _, u := range m.Users {
			fmt.Fprintf(&b, "UserName=%s(%d) DefAccount=%s DefWckey= AdminLevel=%s\n", u.Name, u.UID, u.DefAccount, u.AdminLevel)
		}
	}

	if len(m.Assocs) == 0 {
		if asked.Assoc {
			head("No associations currently cached in Slurm.")
		}
	} else {
		head("Association Records")
		for _, a := range m.Assocs {
			fmt.Fprintf(&b, "ClusterName=%s Account=%s ", a.Cluster, a.Account)
			if a.User != "" {
				fmt.Fprintf(&b, "UserName=%s(%d) ", a.User, a.UID)
			} else {
				b.WriteString("UserName= ")
			}
			fmt.Fprintf(&b, "Partition=%s Priority=%d ID=%d%s", a.Partition, a.Priority, a.ID, nl)
			fmt.Fprintf(&b, "SharesRaw/Norm/Level/Factor=%d/%.2f/%d/%.2f%s", a.SharesRaw, a.SharesNorm, a.LevelShares, a.FSFactor, nl)
			fmt.Fprintf(&b, "UsageRaw/Norm/Efctv=%.2f/%.2f/%.2f%s", a.UsageRaw, a.UsageNorm, a.UsageEfctv, nl)
			if a.ParentAccount != "" {
				fmt.Fprintf(&b, "ParentAccount=%s(%d) ", a.ParentAccount, a.ParentID)
			} else {
				b.WriteString("ParentAccount= ")
			}
			def := "No"
			if a.IsDefault {
				def = "Yes"
			}
			fmt.Fprintf(&b, "Lft=%d DefAssoc=%s%s", a.Lft, def, nl)
			grp("GrpJobs", a.GrpJobs, strconv.Itoa(a.UsedJobs))
			b.WriteByte(' ')
			grp("GrpJobsAccrue", a.GrpJobsAccrue, strconv.Itoa(a.AccrueCount))
			b.WriteString(nl)
			grp("GrpSubmitJobs", a.GrpSubmitJobs, strconv.Itoa(a.UsedSubmit))
			b.WriteByte(' ')
			grp("GrpWall", a.GrpWall, wall(a.UsedWallSecs))
			b.WriteString(nl)
			tres("GrpTRES", a.GrpTRES, a.GrpTRESUsed, 0)
			b.WriteString(nl)
			tres("GrpTRESMins", a.GrpTRESMins, a.TRESUsageSecs, 60)
			b.WriteString(nl)
			tres("GrpTRESRunMins", a.GrpTRESRunMins, a.TRESRunSecs, 60)
			b.WriteString(nl)
			maxLimit("MaxJobs", a.MaxJobs, a.UsedJobs)
			maxLimit("MaxJobsAccrue", a.MaxJobsAccrue, a.AccrueCount)
			maxLimit("MaxSubmitJobs", a.MaxSubmitJobs, a.UsedSubmit)
			opt("MaxWallPJ", a.MaxWallPJ, nl)
			tres("MaxTRESPJ", a.MaxTRESPJ, nil, 0)
			b.WriteString(nl)
			tres("MaxTRESPN", a.MaxTRESPN, nil, 0)
			b.WriteString(nl)
			tres("MaxTRESMinsPJ", a.MaxTRESMinsPJ, nil, 0)
			b.WriteString(nl)
			opt("MinPrioThresh", a.MinPrioThreshold, "\n")
		}
	}

	if len(m.QOS) == 0 {
		if asked.QOS {
			head("No QOS currently cached in Slurm.")
		}
		return b.String()
	}
	head("QOS Records")
	for _, q := range m.QOS {
		fmt.Fprintf(&b, "QOS=%s(%d)%s", q.Name, q.ID, nl)
		fmt.Fprintf(&b, "UsageRaw=%f%s", q.UsageRaw, nl)
		grp("GrpJobs", q.GrpJobs, strconv.Itoa(q.UsedJobs))
		b.WriteByte(' ')
		grp("GrpJobsAccrue", q.GrpJobsAccrue, strconv.Itoa(q.AccrueCount))
		b.WriteByte(' ')
		grp("GrpSubmitJobs", q.GrpSubmitJobs, strconv.Itoa(q.UsedSubmit))
		b.WriteByte(' ')
		grp("GrpWall", q.GrpWall, wall(q.UsedWallSecs))
		b.WriteString(nl)
		tres("GrpTRES", q.GrpTRES, q.GrpTRESUsed, 0)
		b.WriteString(nl)
		tres("GrpTRESMins", q.GrpTRESMins, q.TRESUsageSecs, 60)
		b.WriteString(nl)
		tres("GrpTRESRunMins", q.GrpTRESRunMins, q.TRESRunSecs, 60)
		b.WriteString(nl)
		opt("MaxWallPJ", q.MaxWallPJ, nl)
		tres("MaxTRESPJ", q.MaxTRESPJ, nil, 0)
		b.WriteString(nl)
		tres("MaxTRESPN", q.MaxTRESPN, nil, 0)
		b.WriteString(nl)
		tres("MaxTRESMinsPJ", q.MaxTRESMinsPJ, nil, 0)
		b.WriteString(nl)
		// Slurm's trailing space after MinPrioThresh, set or not.
		opt("MinPrioThresh", q.MinPrioThreshold, " "+nl)
		tres("MinTRESPJ", q.MinTRESPJ, nil, 0)
		b.WriteString(nl)
		fmt.Fprintf(&b, "PreemptMode=%s%s", q.PreemptMode, nl)
		fmt.Fprintf(&b, "Priority=%d%s", q.Priority, nl)
		// used is one account's or user's line of limits (Slurm's
		// _print_used_acct_limit, _print_used_user_limit).
		used := func(name, suffix string, jobs, accrue, submit int64, tresLimits []int64, u api.AssocMgrQOSUsage) {
			inner := "\n        "
			if oneLiner {
				inner = " "
				fmt.Fprintf(&b, " %s={", name)
			} else {
				fmt.Fprintf(&b, "\n      %s%s", name, inner)
			}
			lim := func(key string, l int64, v int, trail string) {
				if l == api.NoLimit {
					fmt.Fprintf(&b, "%s=N(%d)%s", key, v, trail)
				} else {
					fmt.Fprintf(&b, "%s=%d(%d)%s", key, l, v, trail)
				}
			}
			lim("MaxJobs"+suffix, jobs, u.Jobs, " ")
			lim("MaxJobsAccrue"+suffix, accrue, u.Accruing, " ")
			lim("MaxSubmitJobs"+suffix, submit, u.Submitted, inner)
			tres("MaxTRES"+suffix, tresLimits, u.TRES, 0)
			if oneLiner {
				b.WriteByte('}')
			}
		}
		b.WriteString("Account Limits")
		if oneLiner {
			b.WriteByte('=')
		}
		if q.Accounts == nil {
			if !oneLiner {
				b.WriteString("\n        ")
			}
			b.WriteString("No Accounts")
		}
		for _, u := range q.Accounts {
			used(u.Name, "PA", q.MaxJobsPA, q.MaxJobsAccruePA, q.MaxSubmitPA, q.MaxTRESPA, u)
		}
		b.WriteString(nl)
		b.WriteString("User Limits")
		if oneLiner {
			b.WriteByte('=')
		}
		if q.Users == nil {
			if !oneLiner {
				b.WriteString("\n        ")
			}
			b.WriteString("No Users")
		}
		for _, u := range q.Users {
			used(strconv.FormatUint(uint64(u.UID), 10), "PU", q.MaxJobsPU, q.MaxJobsAccruePU, q.MaxSubmitPU, q.MaxTRESPU, u)
		}
		b.WriteString("\n")
	}
	return b.String()
}
