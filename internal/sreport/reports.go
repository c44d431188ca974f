package sreport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Report is which report to print.
type Report int

const (
	ClusterUtilization Report = iota
	AccountUtilizationByUser
	UserUtilizationByAccount
	UserTopUsage
	JobSizesByAccount
)

// tresLabel is a TRES's name as "TRES Name" prints it.
func tresLabel(t string) string { return t }

// usageField is a figure column named name.
func usageField(key, name string) field { return field{key: key, name: name} }

// columns resolves format= (or the report's default) into fields: each
// item a case-insensitive prefix of a column name, at least as long as
// Slurm's minimum, optionally with %WIDTH.
func columns(o *Options, defs []string, known []colDef) ([]field, error) {
	items := o.Format
	if len(items) == 0 {
		items = defs
	}
	var fs []field
	for _, it := range items {
		width := 0
		if i := strings.IndexByte(it, '%'); i >= 0 {
			fmt.Sscanf(it[i+1:], "%d", &width)
			it = it[:i]
		}
		var got *colDef
		for k := range known {
			c := &known[k]
			n := max(len(it), c.min)
			if len(it) <= len(c.word) && strings.EqualFold(it, c.word[:min(n, len(c.word))]) && n <= len(c.word) {
				got = c
				break
			}
		}
		if got == nil {
			return nil, fmt.Errorf("Unknown field '%s'", it)
		}
		f := field{key: got.key, name: got.name, width: got.width, str: got.str}
		if width > 0 {
			f.width = width
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// colDef is a column sreport knows: the word format= matches, its minimum
// abbreviation, header and width (0: a figure, sized from the values).
type colDef struct {
	word  string
	min   int
	key   string
	name  string
	width int
	str   bool
}

var clusterCols = []colDef{
	{"Accounts", 2, "account", "Account", 15, true},
	{"Allocated", 2, "alloc", "Allocated", 0, false},
	{"Cluster", 2, "cluster", "Cluster", 9, true},
	{"Down", 1, "down", "Down", 0, false},
	{"Energy", 1, "energy", "Energy", 0, false},
	{"Idle", 1, "idle", "Idle", 0, false},
	{"Login", 1, "login", "Login", 9, true},
	{"Overcommitted", 1, "over", "Over Comm", 0, false},
	{"PlannedDown", 2, "plndown", "PLND Down", 0, false},
	{"Proper", 2, "proper", "Proper Name", 15, true},
	{"Reported", 3, "reported", "Reported", 0, false},
	{"Reserved", 3, "planned", "Planned", 0, false},
	{"Planned", 4, "planned", "Planned", 0, false},
	{"TresCount", 5, "count", "TRES Count", 10, false},
	{"count", 2, "count", "TRES Count", 10, false},
	{"TresName", 5, "tres", "TRES Name", 14, true},
	{"Used", 1, "used", "Used", 0, false},
}

// sizeFigures are the figure keys whose width comes from the values.
func sizeFigures(fs []field, o *Options, largest int64) {
	for i := range fs {
		if fs[i].width == 0 {
			fs[i].width = o.Time.usageWidth(largest)
		}
	}
}

// Print writes the report o asks for from r.
func Print(o *Options, r *Result) string {
	switch o.Report {
	case ClusterUtilization:
		return printUtilization(o, r)
	case AccountUtilizationByUser:
		return printAUBU(o, r)
	case UserUtilizationByAccount:
		return printUBUA(o, r, false)
	case UserTopUsage:
		return printUBUA(o, r, true)
	}
	return printSizes(o, r)
}

func printUtilization(o *Options, r *Result) string {
	defs := []string{"Cluster", "Allocated", "Down", "PlannedDown", "Idle", "Reserved", "Reported"}
	if o.TRESGiven {
		defs = []string{"Cluster", "TresName", "Allocated", "Down", "PlannedDown", "Idle", "Reserved", "Reported"}
	}
	fs, err := columns(o, defs, clusterCols)
	if err != nil {
		return ""
	}
	var largest int64
	for _, t := range o.TRES {
		largest = max(largest, r.Total(t))
	}
	sizeFigures(fs, o, largest)
	tb := &table{fields: fs, opts: o}
	for _, t := range o.TRES {
		u, total := r.Util[t], r.Total(t)
		row := make([]string, len(fs))
		for i, f := range fs {
			fig := func(v int64) string { return o.Time.value(v, total) }
			switch f.key {
			case "cluster":
				row[i] = r.Cluster.Name
			case "tres":
				row[i] = tresLabel(t)
			case "count":
				row[i] = fmt.Sprint(r.Cluster.count(t))
			case "alloc":
				row[i] = fig(u.Alloc)
			case "down":
				row[i] = fig(u.Down)
			case "plndown":
				row[i] = fig(u.PlannedDown)
			case "idle":
				row[i] = fig(u.Idle)
			case "planned":
				row[i] = fig(u.Planned)
			case "over":
				row[i] = fig(u.Over)
			case "reported":
				row[i] = fig(u.Reported)
			case "energy":
				row[i] = fig(0)
			}
		}
		tb.add(row...)
	}
	return banner(o, "Cluster Utilization", false, usageLine(o)) + tb.String()
}

// assocRow is one line of the by-user and by-account reports.
type assocRow struct {
	account, user string
	used          map[string]int64
}

func (o *Options) wantsAccount(a string) bool {
	return len(o.Accounts) == 0 || slices.Contains(o.Accounts, a)
}

func (o *Options) wantsUser(u string) bool {
	return len(o.Users) == 0 || slices.Contains(o.Users, u)
}

// printAUBU is cluster AccountUtilizationByUser: the association tree,
// root first, each account followed by its users. With users= only the
// users' own lines are printed (no account totals), last account first, as
// slurmdbd hands the associations back.
func printAUBU(o *Options, r *Result) string {
	var rows []assocRow
	sum := func(m map[string]int64, add map[string]int64) {
		for k, v := range add {
			m[k] += v
		}
	}
	if len(o.Users) > 0 {
		for i := len(r.Assocs) - 1; i >= 0; i-- {
			a := r.Assocs[i]
			if o.wantsUser(a.User) && o.wantsAccount(a.Account) {
				rows = append(rows, assocRow{a.Account, a.User, a.Used})
			}
		}
	} else {
		if len(o.Accounts) == 0 {
			root := map[string]int64{}
			for _, a := range r.Assocs {
				sum(root, a.Used)
			}
			if len(r.Assocs) > 0 {
				rows = append(rows, assocRow{"root", "", root})
			}
		}
		for i := 0; i < len(r.Assocs); {
			acct := r.Assocs[i].Account
			j := i
			tot := map[string]int64{}
			for ; j < len(r.Assocs) && r.Assocs[j].Account == acct; j++ {
				sum(tot, r.Assocs[j].Used)
			}
			if o.wantsAccount(acct) {
				rows = append(rows, assocRow{acct, "", tot})
				for _, a := range r.Assocs[i:j] {
					rows = append(rows, assocRow{a.Account, a.User, a.Used})
				}
			}
			i = j
		}
	}
	defs := []string{"Cluster", "Accounts", "Login", "Proper", "Used", "Energy"}
	if o.TRESGiven {
		defs = []string{"Cluster", "Accounts", "Login", "Proper", "TresName", "Used"}
	}
	title := "Cluster/Account/User Utilization"
	return banner(o, title, true, usageLine(o)) + assocTable(o, r, defs, rows, largestOf(o, rows))
}

// assocTable prints rows, one line per row and TRES.
func assocTable(o *Options, r *Result, defs []string, rows []assocRow, largest int64) string {
	fs, err := columns(o, defs, clusterCols)
	if err != nil {
		return ""
	}
	sizeFigures(fs, o, largest)
	tb := &table{fields: fs, opts: o}
	for _, ar := range rows {
		for _, t := range o.TRES {
			row := make([]string, len(fs))
			for i, f := range fs {
				switch f.key {
				case "cluster":
					row[i] = r.Cluster.Name
				case "account":
					row[i] = ar.account
				case "login":
					row[i] = ar.user
				case "proper":
					if ar.user != "" && o.Proper != nil {
						row[i] = o.Proper(ar.user)
					}
				case "tres":
					row[i] = tresLabel(t)
				case "used":
					row[i] = o.Time.value(ar.used[t], r.Total(t))
				case "energy":
					row[i] = o.Time.value(0, r.Total(t))
				default:
					row[i] = ""
				}
			}
			tb.add(row...)
		}
	}
	return tb.String()
}

// printUBUA is cluster UserUtilizationByAccount (users by their CPU time,
// most first, each with their accounts) and, with top, user TopUsage (each
// user's account a line of its own, by the first TRES of -T, at most
// TopCount lines).
func printUBUA(o *Options, r *Result, top bool) string {
	var rows []assocRow
	for _, a := range r.Assocs {
		if a.User != "" && o.wantsUser(a.User) && o.wantsAccount(a.Account) {
			rows = append(rows, assocRow{a.Account, a.User, a.Used})
		}
	}
	if top {
		key := o.TRES[0]
		slices.SortStableFunc(rows, func(x, y assocRow) int {
			return cmp.Or(cmp.Compare(y.used[key], x.used[key]), cmp.Compare(x.user, y.user), cmp.Compare(x.account, y.account))
		})
		if len(rows) > o.TopCount {
			rows = rows[:o.TopCount]
		}
	} else {
		cpu := map[string]int64{}
		for _, ar := range rows {
			cpu[ar.user] += ar.used["cpu"]
		}
		slices.SortStableFunc(rows, func(x, y assocRow) int {
			return cmp.Or(cmp.Compare(cpu[y.user], cpu[x.user]), cmp.Compare(x.user, y.user), cmp.Compare(x.account, y.account))
		})
	}
	defs := []string{"Cluster", "Login", "Proper", "Accounts", "Used", "Energy"}
	if o.TRESGiven {
		defs = []string{"Cluster", "Login", "Proper", "Accounts", "TresName", "Used"}
	}
	title := "Cluster/User/Account Utilization"
	if top {
		title = fmt.Sprintf("Top %d Users", o.TopCount)
	}
	return banner(o, title, true, usageLine(o)) + assocTable(o, r, defs, rows, largestOf(o, rows))
}

// largestOf is the largest figure of rows in the TRES printed, which sizes
// the figure columns (sreport_set_usage_column_width).
func largestOf(o *Options, rows []assocRow) int64 {
	var largest int64
	for _, ar := range rows {
		for _, t := range o.TRES {
			largest = max(largest, ar.used[t])
		}
	}
	return largest
}

// printSizes is job SizesByAccount: per account, the CPU time of its jobs
// by job size, and its share of all of it.
func printSizes(o *Options, r *Result) string {
	rows := r.Sizes(o.Accounts)
	var all int64
	for _, row := range rows {
		for _, v := range row.Secs {
			all += v
		}
	}
	names := []string{"0-49 CPUs", "50-249 CPUs", "250-499 CPUs", "500-999 CPUs", ">= 1000 CPUs"}
	fs := []field{{key: "cluster", name: "Cluster", width: 9, str: true}, {key: "account", name: "Account", width: 9, str: true}}
	for _, n := range names {
		fs = append(fs, field{key: "bucket", name: n, width: 13})
	}
	fs = append(fs, field{key: "pct", name: "% of cluster", width: 12})
	tb := &table{fields: fs, opts: o}
	for _, row := range rows {
		cells := []string{r.Cluster.Name, row.Account}
		var tot int64
		for _, v := range row.Secs {
			cells = append(cells, o.Time.value(v, all))
			tot += v
		}
		pct := 0.0
		if all > 0 {
			pct = float64(tot) / float64(all) * 100
		}
		cells = append(cells, fmt.Sprintf("%.2f%%", pct))
		tb.add(cells...)
	}
	unit := "Time reported in " + o.Time.String()
	return banner(o, "Job Sizes", true, unit) + tb.String()
}
