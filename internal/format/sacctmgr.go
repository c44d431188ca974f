package format

import (
	"fmt"
	"strconv"
	"strings"
)

// sacctmgr's listings (src/sacctmgr/common.c _get_print_field, and the
// list functions of user_functions.c, account_functions.c,
// association_functions.c, qos_functions.c, cluster_functions.c and
// tres_function.c), printed with print_fields.

// mgrKind is the print routine a sacctmgr field uses.
type mgrKind int

const (
	kStr     mgrKind = iota // print_fields_str
	kUint                   // print_fields_uint (uint32)
	kUint16                 // print_fields_uint16
	kUint64                 // print_fields_uint64
	kMins                   // print_fields_time: minutes as [D-]HH:MM:SS
	kSecs                   // print_fields_time_from_secs
	kDouble                 // print_fields_double
	kTRES                   // sacctmgr_print_tres
	kQOS                    // sacctmgr_print_qos_list
	kQOSBits                // sacctmgr_print_qos_bitstr
	kList                   // print_fields_char_list, sacctmgr_print_coord_list
	kDate                   // print_fields_date
)

// mgrName is one spelling a field is matched by: a prefix of Name at
// least Min characters long, or all of Name.
type mgrName struct {
	Name string
	Min  int
}

type mgrField struct {
	names  []mgrName
	key    string // Slurm's PRINT_* type, lower case
	header string
	width  int
	kind   mgrKind
}

// mgrFields is _get_print_field's chain, in its order: the first match wins.
var mgrFields = []mgrField{
	{[]mgrName{{"Account", 3}, {"Acct", 4}}, "acct", "Account", -20, kStr},
	{[]mgrName{{"ActionRaw", 7}}, "actionraw", "ActionRaw", 10, kUint},
	{[]mgrName{{"Action", 4}}, "action", "Action", 20, kStr},
	{[]mgrName{{"Actor", 4}}, "actor", "Actor", 10, kStr},
	{[]mgrName{{"AdminLevel", 2}}, "admin", "Admin", 9, kStr},
	{[]mgrName{{"Allowed", 2}}, "allowed", "% Allowed", 10, kUint16},
	{[]mgrName{{"Associations", 2}}, "assoc_name", "Assocs", 10, kStr},
	{[]mgrName{{"TRES", 2}}, "tres", "TRES", 20, kStr},
	{[]mgrName{{"Classification", 3}}, "class", "Class", 9, kStr},
	{[]mgrName{{"ClusterNodes", 8}}, "cluster_nodes", "Cluster Nodes", 20, kStr},
	{[]mgrName{{"Clusters", 2}}, "cluster", "Cluster", 10, kStr},
	{[]mgrName{{"Coordinators", 2}}, "coords", "Coord Accounts", 20, kList},
	{[]mgrName{{"ControlHost", 8}}, "chost", "ControlHost", 15, kStr},
	{[]mgrName{{"ControlPort", 8}}, "cport", "ControlPort", 12, kUint},
	{[]mgrName{{"Count", 3}}, "count", "Count", 6, kUint},
	{[]mgrName{{"CountAllowed", 6}}, "callowed", "# Allowed", 10, kUint},
	{[]mgrName{{"CountUsed", 6}}, "callowed", "# Used", 10, kUint},
	{[]mgrName{{"CPUCount", 2}}, "cpus", "CPU Cnt", 7, kStr},
	{[]mgrName{{"DefaultAccount", 8}}, "dacct", "Def Acct", 10, kStr},
	{[]mgrName{{"DefaultQOS", 8}}, "dqos", "Def QOS", 9, kStr},
	{[]mgrName{{"DefaultWCKey", 8}}, "dwckey", "Def WCKey", 10, kStr},
	{[]mgrName{{"Description", 3}}, "desc", "Descr", 20, kStr},
	{[]mgrName{{"Duration", 2}}, "duration", "Duration", 13, kSecs},
	{[]mgrName{{"EventRaw", 6}}, "eventraw", "EventRaw", 8, kUint},
	{[]mgrName{{"Event", 2}}, "event", "Event", 7, kStr},
	{[]mgrName{{"Features", 3}}, "features", "Features", 20, kList},
	{[]mgrName{{"Federation", 3}}, "federation", "Federation", 10, kStr},
	{[]mgrName{{"FedState", 4}}, "fedstate", "FedState", 12, kStr},
	{[]mgrName{{"FedStateRaw", 9}}, "fedstateraw", "FedStateRaw", 11, kUint},
	{[]mgrName{{"Flags", 2}}, "flags", "Flags", 20, kStr},
	{[]mgrName{{"GraceTime", 3}}, "grace", "GraceTime", 10, kSecs},
	{[]mgrName{{"GrpCPUs", 6}}, "grpc", "GrpCPUs", 8, kUint64},
	{[]mgrName{{"GrpCPUMins", 7}}, "grpcm", "GrpCPUMins", 11, kUint64},
	{[]mgrName{{"GrpCPURunMins", 7}}, "grpcrm", "GrpCPURunMins", 13, kUint64},
	{[]mgrName{{"GrpTRES", 7}}, "grpt", "GrpTRES", 13, kTRES},
	{[]mgrName{{"GrpTRESMins", 7}}, "grptm", "GrpTRESMins", 13, kTRES},
	{[]mgrName{{"GrpTRESRunMins", 7}}, "grptrm", "GrpTRESRunMins", 13, kTRES},
	{[]mgrName{{"GrpJobs", 4}}, "grpj", "GrpJobs", 7, kUint},
	{[]mgrName{{"GrpJobsAccrue", 8}}, "grpja", "GrpJobsAccrue", 13, kUint},
	{[]mgrName{{"GrpMemory", 4}}, "grpmem", "GrpMem", 7, kUint},
	{[]mgrName{{"GrpNodes", 4}}, "grpn", "GrpNodes", 8, kUint},
	{[]mgrName{{"GrpSubmitJobs", 4}}, "grps", "GrpSubmit", 9, kUint},
	{[]mgrName{{"GrpWall", 4}}, "grpw", "GrpWall", 11, kMins},
	{[]mgrName{{"ID", 2}}, "id", "ID", 6, kUint},
	{[]mgrName{{"Info", 2}}, "info", "Info", 20, kStr},
	// slurm-lite's: a job's audit trail (sacctmgr show event Jobs=N).
	{[]mgrName{{"JobID", 4}}, "jobid", "JobID", 10, kUint},
	{[]mgrName{{"LFT", 1}}, "lft", "LFT", 6, kUint},
	{[]mgrName{{"servertype", 10}}, "servertype", "ServerType", 10, kStr},
	{[]mgrName{{"MaxCPUMinsPerJob", 7}}, "maxcm", "MaxCPUMins", 11, kUint64},
	{[]mgrName{{"MaxCPURunMinsPerUser", 7}, {"MaxCPURunMinsPU", 7}}, "maxcrm", "MaxCPURunMinsPU", 15, kUint64},
	{[]mgrName{{"MaxCPUsPerJob", 7}}, "maxc", "MaxCPUs", 8, kUint64},
	{[]mgrName{{"MaxCPUsPerUser", 11}, {"MaxCPUsPU", 9}}, "maxcu", "MaxCPUsPU", 9, kUint},
	{[]mgrName{{"MaxTRES", 7}, {"MaxTRESPerJob", 11}}, "maxt", "MaxTRES", 13, kTRES},
	{[]mgrName{{"MaxTRESPerNode", 11}}, "maxtn", "MaxTRESPerNode", 14, kTRES},
	{[]mgrName{{"MaxTRESMinsPerJob", 8}}, "maxtm", "MaxTRESMins", 13, kTRES},
	{[]mgrName{{"MaxTRESRunMinsPerAccount", 18}, {"MaxTRESRunMinsPerAcct", 18}, {"MaxTRESRunMinsPA", 15}}, "maxtrma", "MaxTRESRunMinsPA", 15, kTRES},
	{[]mgrName{{"MaxTRESRunMinsPerUser", 8}, {"MaxTRESRunMinsPU", 8}}, "maxtrm", "MaxTRESRunMinsPU", 15, kTRES},
	{[]mgrName{{"MaxTRESPerAccount", 11}, {"MaxTRESPerAcct", 11}, {"MaxTRESPA", 9}}, "maxta", "MaxTRESPA", 13, kTRES},
	{[]mgrName{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}, "maxtu", "MaxTRESPU", 13, kTRES},
	{[]mgrName{{"MaxJobs", 4}}, "maxj", "MaxJobs", 7, kUint},
	{[]mgrName{{"MaxJobsAccrue", 4}}, "maxja", "MaxJobsAccrue", 13, kUint},
	{[]mgrName{{"MaxJobsAccruePerAccount", 17}, {"MaxJobsAccruePerAcct", 17}, {"MaxJobsAccruePA", 15}}, "maxjaa", "MaxJobsAccruePA", 15, kUint},
	{[]mgrName{{"MaxJobsAccruePerUser", 17}, {"MaxJobsAccruePU", 15}}, "maxjau", "MaxJobsAccruePU", 15, kUint},
	{[]mgrName{{"MaxJobsPerAccount", 11}, {"MaxJobsPerAcct", 11}, {"MaxJobsPA", 9}}, "maxjpa", "MaxJobsPA", 9, kUint},
	{[]mgrName{{"MaxJobsPerUser", 11}, {"MaxJobsPU", 9}}, "maxj", "MaxJobsPU", 9, kUint},
	{[]mgrName{{"MaxNodesPerJob", 4}}, "maxn", "MaxNodes", 8, kUint},
	{[]mgrName{{"MaxNodesPerUser", 12}, {"MaxNodesPU", 10}}, "maxnu", "MaxNodesPU", 10, kUint},
	{[]mgrName{{"MinPrioThreshold", 4}}, "minpt", "MinPrioThres", 12, kUint},
	{[]mgrName{{"MaxSubmitJobs", 4}}, "maxs", "MaxSubmit", 9, kUint},
	{[]mgrName{{"MaxSubmitJobsPerAccount", 17}, {"MaxSubmitJobsPerAcct", 17}, {"MaxSubmitJobsPA", 15}, {"MaxSubmitPA", 11}}, "maxsa", "MaxSubmitPA", 11, kUint},
	{[]mgrName{{"MaxSubmitJobsPerUser", 10}, {"MaxSubmitJobsPU", 10}, {"MaxSubmitPU", 6}}, "maxs", "MaxSubmitPU", 11, kUint},
	{[]mgrName{{"MaxWallDurationPerJob", 4}}, "maxw", "MaxWall", 11, kMins},
	{[]mgrName{{"MinCPUsPerJob", 7}}, "minc", "MinCPUs", 8, kUint},
	{[]mgrName{{"MinTRESPerJob", 7}}, "mint", "MinTRES", 13, kTRES},
	{[]mgrName{{"Name", 2}}, "name", "Name", 10, kStr},
	{[]mgrName{{"NodeCount", 5}}, "nodecnt", "NodeCount", 9, kUint},
	{[]mgrName{{"NodeInx", 5}}, "nodeinx", "NodeInx", 9, kStr},
	{[]mgrName{{"NodeNames", 5}}, "nodename", "NodeName", -15, kStr},
	{[]mgrName{{"Organization", 1}}, "org", "Org", 20, kStr},
	{[]mgrName{{"ParentID", 7}}, "pid", "ParentID", 8, kUint},
	{[]mgrName{{"ParentName", 7}}, "pname", "ParentName", 10, kStr},
	{[]mgrName{{"Partition", 4}}, "part", "Partition", 10, kStr},
	{[]mgrName{{"PluginIDSelect", 2}}, "select", "PluginIDSelect", 14, kUint},
	{[]mgrName{{"PreemptMode", 8}}, "preem", "PreemptMode", 11, kStr},
	{[]mgrName{{"Preempt", 7}}, "pree", "Preempt", 10, kQOSBits},
	{[]mgrName{{"PreemptExemptTime", 8}}, "prxmpt", "PreemptExemptTime", 19, kSecs},
	{[]mgrName{{"Priority", 3}}, "prio", "Priority", 10, kUint},
	{[]mgrName{{"Problem", 1}}, "problem", "Problem", 40, kStr},
	{[]mgrName{{"QOSLevel", 3}}, "qos", "QOS", 20, kQOS},
	{[]mgrName{{"QOSRAWLevel", 4}}, "qos_raw", "QOS_RAW", 10, kList},
	{[]mgrName{{"Reason", 1}}, "reason", "Reason", 30, kStr},
	{[]mgrName{{"RGT", 1}}, "rgt", "RGT", 6, kUint},
	{[]mgrName{{"RPC", 1}}, "rpc_version", "RPC", 5, kUint},
	{[]mgrName{{"Server", 3}}, "server", "Server", 10, kStr},
	{[]mgrName{{"Share", 1}, {"FairShare", 2}}, "fairshare", "Share", 9, kUint},
	{[]mgrName{{"StateRaw", 6}}, "stateraw", "StateRaw", 8, kUint},
	{[]mgrName{{"State", 1}}, "state", "State", 6, kStr},
	{[]mgrName{{"TimeStamp", 2}}, "ts", "Time", 19, kDate},
	{[]mgrName{{"TimeEligible", 6}, {"Eligible", 2}}, "timeeligible", "TimeEligible", 19, kDate},
	{[]mgrName{{"TimeEnd", 6}, {"End", 2}}, "timeend", "TimeEnd", 19, kDate},
	{[]mgrName{{"TimeStart", 7}, {"Start", 3}}, "timestart", "TimeStart", 19, kDate},
	{[]mgrName{{"TimeSubmit", 6}, {"Submit", 2}}, "timesubmit", "TimeSubmit", 19, kDate},
	{[]mgrName{{"TRES", 2}}, "tres", "TRES", 20, kStr},
	{[]mgrName{{"Type", 2}}, "type", "Type", 8, kStr},
	{[]mgrName{{"UnusedWall", 2}}, "unused", "UnusedWall", 10, kDouble},
	{[]mgrName{{"UsageFactor", 6}}, "uf", "UsageFactor", 11, kDouble},
	{[]mgrName{{"UsageThreshold", 6}}, "ut", "UsageThres", 10, kDouble},
	{[]mgrName{{"LimitFactor", 6}}, "lf", "LimitFactor", 11, kDouble},
	{[]mgrName{{"Allocated", 7}}, "allocated", "% Allocated", 11, kUint16},
	{[]mgrName{{"User", 1}}, "user", "User", 10, kStr},
	{[]mgrName{{"WCKeys", 2}}, "wckeys", "WCKeys", 20, kList},
	{[]mgrName{{"Where", 2}}, "where", "Where", 20, kStr},
}

// matchMgrName is !xstrncasecmp(name, object, MAX(strlen(object), min)).
func matchMgrName(n mgrName, object string) bool {
	for i := 0; i < max(len(object), n.Min); i++ {
		var a, b byte
		if i < len(n.Name) {
			a = lowerASCII(n.Name[i])
		}
		if i < len(object) {
			b = lowerASCII(object[i])
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// MgrColumn is one column of a sacctmgr listing.
type MgrColumn struct {
	Field
	Key  string
	kind mgrKind
}

// MgrColumns is sacctmgr_process_format_list: each name (with an optional
// "%WIDTH") is the first field of the chain it matches. Account is 20
// wide, left-justified, in a tree listing. It returns the first name that
// matches nothing; sacctmgr then prints "Unknown field" and exits.
func MgrColumns(names []string, tree bool) ([]MgrColumn, string) {
	var cols []MgrColumn
	for _, object := range names {
		object, width, _ := nameWidth(object)
		c, ok := mgrColumn(object, tree)
		if !ok {
			return nil, object
		}
		if width != 0 {
			c.Width = width
		}
		cols = append(cols, c)
	}
	return cols, ""
}

func mgrColumn(object string, tree bool) (MgrColumn, bool) {
	for _, f := range mgrFields {
		for _, n := range f.names {
			if matchMgrName(n, object) {
				c := MgrColumn{Field: Field{Name: f.header, Width: f.width}, Key: f.key, kind: f.kind}
				if f.key == "acct" && !tree {
					c.Width = 10
				}
				return c, true
			}
		}
	}
	return MgrColumn{}, false
}

// mgrRecord gives a row's value for a field key; false for a field the
// listing does not fill, which sacctmgr prints from a NULL (zero) value.
type mgrRecord func(key string) (Cell, bool)

// nullCell is what print_routine(field, NULL) prints for each kind.
func nullCell(k mgrKind) Cell {
	switch k {
	case kUint, kUint16, kUint64:
		return Num("0")
	case kMins, kSecs:
		return Num("00:00:00")
	case kDouble:
		return Unset()
	case kDate:
		return Str("Unknown")
	}
	return Str("")
}

// mgrLines prints the header (unless noHeader) and one line per record.
func mgrLines(cols []MgrColumn, recs []mgrRecord, mode Parsable, header bool) string {
	var b strings.Builder
	fields := make([]Field, len(cols))
	for i, c := range cols {
		fields[i] = c.Field
	}
	if header {
		b.WriteString(FieldsHeader(fields, mode))
	}
	for _, r := range recs {
		cells := make([]Cell, len(cols))
		for i, c := range cols {
			v, ok := r(c.Key)
			if !ok {
				v = nullCell(c.kind)
			}
			cells[i] = v
		}
		b.WriteString(FieldsLine(fields, cells, mode))
	}
	return b.String()
}

// MgrOutput is how sacctmgr prints: -n, -p and -P.
type MgrOutput struct {
	Mode     Parsable
	NoHeader bool
}

// MgrAssoc is an association as sacctmgr shows it.
type MgrAssoc struct {
	ID, LFT, RGT, ParentID int
	Cluster, Account       string
	// User is "" for an account's own association; Parent is then the
	// account above it ("" for root).
	User, Parent string
	Shares       int
	// QOS are the names the association may use, QOSIDs their ids.
	QOS    []string
	QOSIDs []int
	// GrpTRESMins, GrpTRES, GrpTRESRunMins and MaxTRESMins (per job) are
	// the association's limits as sacctmgr prints them ("gres/gpu=60"), ""
	// for none; MaxJobs 0 for none. The max_* ones are inherited.
	GrpTRESMins, GrpTRES, GrpTRESRunMins, MaxTRESMins string
	MaxJobs                                           int
}

// record prints an association (sacctmgr_print_assoc_rec). tree, when
// not nil, indents Account as in "list associations tree".
func (a *MgrAssoc) record(tree *printTree) mgrRecord {
	return func(key string) (Cell, bool) {
		switch key {
		case "acct":
			if tree == nil {
				return Str(a.Account), true
			}
			if a.User != "" {
				return Str(tree.name("|"+a.Account, a.Account)), true
			}
			return Str(tree.name(a.Account, a.Parent)), true
		case "cluster":
			return Str(a.Cluster), true
		case "grptm":
			return Str(a.GrpTRESMins), true
		case "grpt":
			return Str(a.GrpTRES), true
		case "grptrm":
			return Str(a.GrpTRESRunMins), true
		case "maxtm":
			return Str(a.MaxTRESMins), true
		case "maxj":
			if a.MaxJobs <= 0 {
				return Unset(), true
			}
			return Uint(a.MaxJobs), true
		case "dqos", "part", "maxtrm", "maxt", "maxtn":
			return Str(""), true
		case "fairshare":
			return Uint(a.Shares), true
		case "grpcm", "grpcrm", "grpc", "grpj", "grpja", "grpmem", "grpn", "grps", "grpw",
			"maxcm", "maxcrm", "maxc", "maxja", "minpt", "maxn", "maxs", "maxw", "prio":
			return Unset(), true
		case "id":
			return Uint(a.ID), true
		case "lft":
			return Uint(a.LFT), true
		case "rgt":
			return Uint(a.RGT), true
		case "pid":
			return Uint(a.ParentID), true
		case "pname":
			return Str(a.Parent), true
		case "qos":
			return Str(strings.Join(a.QOS, ",")), true
		case "qos_raw":
			ids := make([]string, len(a.QOSIDs))
			for i, id := range a.QOSIDs {
				ids[i] = strconv.Itoa(id)
			}
			return Str(strings.Join(ids, ",")), true
		case "user":
			return Str(a.User), true
		}
		return Cell{}, false
	}
}

// ListAssocs is sacctmgr list associations: the associations in the order
// given (slurmdb_sort_hierarchical_assoc_list's), Account indented by the
// tree with tree.
func ListAssocs(cols []MgrColumn, assocs []MgrAssoc, tree bool, o MgrOutput) string {
	var recs []mgrRecord
	var t *printTree
	cluster := ""
	for i := range assocs {
		a := &assocs[i]
		if t == nil || a.Cluster != cluster {
			t, cluster = &printTree{}, a.Cluster
		}
		if tree {
			recs = append(recs, a.record(t))
		} else {
			recs = append(recs, a.record(nil))
		}
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// MgrUser is a user as sacctmgr shows it.
type MgrUser struct {
	Name, DefaultAccount, Admin string
	// Assocs are the user's associations, for withassoc.
	Assocs []MgrAssoc
}

// ListUsers is sacctmgr list users: one line per user, or with withAssoc
// one per association of each.
func ListUsers(cols []MgrColumn, users []MgrUser, withAssoc bool, o MgrOutput) string {
	var recs []mgrRecord
	for i := range users {
		u := &users[i]
		own := func(key string) (Cell, bool) {
			switch key {
			case "admin":
				return Str(u.Admin), true
			case "coords", "dwckey":
				return Str(""), true
			case "dacct":
				return Str(u.DefaultAccount), true
			}
			return Cell{}, false
		}
		if !withAssoc {
			recs = append(recs, func(key string) (Cell, bool) {
				switch key {
				case "qos":
					return Str(""), true
				case "user":
					return Str(u.Name), true
				case "prio":
					return Unset(), true
				}
				return own(key)
			})
			continue
		}
		for k := range u.Assocs {
			assoc := u.Assocs[k].record(nil)
			recs = append(recs, func(key string) (Cell, bool) {
				if c, ok := own(key); ok {
					return c, true
				}
				return assoc(key)
			})
		}
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// MgrAccount is an account as sacctmgr shows it.
type MgrAccount struct {
	Name, Description, Organization string
	// Assocs are the account's own association and its users', for
	// withassoc.
	Assocs []MgrAssoc
}

// ListAccounts is sacctmgr list accounts.
func ListAccounts(cols []MgrColumn, accts []MgrAccount, withAssoc bool, o MgrOutput) string {
	var recs []mgrRecord
	for i := range accts {
		a := &accts[i]
		own := func(key string) (Cell, bool) {
			switch key {
			case "acct":
				return Str(a.Name), true
			case "coords":
				return Str(""), true
			case "desc":
				return Str(a.Description), true
			case "org":
				return Str(a.Organization), true
			}
			return Cell{}, false
		}
		if !withAssoc {
			recs = append(recs, func(key string) (Cell, bool) {
				switch key {
				case "qos":
					return Str(""), true
				case "prio":
					return Unset(), true
				}
				return own(key)
			})
			continue
		}
		for k := range a.Assocs {
			assoc := a.Assocs[k].record(nil)
			recs = append(recs, func(key string) (Cell, bool) {
				if c, ok := own(key); ok {
					return c, true
				}
				return assoc(key)
			})
		}
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// MgrQOS is a QOS as sacctmgr shows it; unset limits are blank.
type MgrQOS struct {
	ID                       int
	Name, Description        string
	Priority                 int
	Flags                    string
	UsageFactor              float64
	MaxTRESPerJob, MaxTRESPU string
	MaxCPUsPU, MaxNodesPU    int64 // from MaxTRESPU; 0 for none
	MaxNodes                 int64 // from MaxTRESPerJob
	MaxJobsPU, MaxSubmitPU   int
	MaxWallMinutes           int64 // 0 for none
	GraceSeconds             int64
	GrpTRESMins              string // "" for none
}

// ListQOS is sacctmgr list qos.
func ListQOS(cols []MgrColumn, qos []MgrQOS, o MgrOutput) string {
	var recs []mgrRecord
	for i := range qos {
		q := &qos[i]
		limit := func(v int64) Cell {
			if v <= 0 {
				return Unset()
			}
			return Uint(v)
		}
		recs = append(recs, func(key string) (Cell, bool) {
			switch key {
			case "desc":
				return Str(q.Description), true
			case "flags":
				return Str(q.Flags), true
			case "ut", "lf":
				return Unset(), true
			case "grace":
				return Num(secsTime(q.GraceSeconds)), true
			case "grpcm", "grpcrm", "grpc", "grpj", "grpja", "grpmem", "grpn", "grps", "grpw",
				"maxcm", "maxcrm", "maxc", "minpt", "maxjpa", "maxjaa", "maxjau", "maxsa", "minc", "prxmpt":
				return Unset(), true
			case "grptm":
				return Str(q.GrpTRESMins), true
			case "grptrm", "grpt", "maxtm", "maxtrm", "maxtrma", "maxta", "maxtn", "mint", "pree":
				return Str(""), true
			case "id":
				return Uint(q.ID), true
			case "maxcu":
				return limit(q.MaxCPUsPU), true
			case "maxt":
				return Str(q.MaxTRESPerJob), true
			case "maxtu":
				return Str(q.MaxTRESPU), true
			case "maxj":
				return limit(int64(q.MaxJobsPU)), true
			case "maxn":
				return limit(q.MaxNodes), true
			case "maxnu":
				return limit(q.MaxNodesPU), true
			case "maxs":
				return limit(int64(q.MaxSubmitPU)), true
			case "maxw":
				if q.MaxWallMinutes <= 0 {
					return Unset(), true
				}
				return Num(secsTime(q.MaxWallMinutes * 60)), true
			case "name":
				return Str(q.Name), true
			case "preem":
				return Str("cluster"), true
			case "prio":
				return Uint(q.Priority), true
			case "uf":
				return Double(q.UsageFactor), true
			}
			return Cell{}, false
		})
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// MgrCluster is the cluster as sacctmgr shows it.
type MgrCluster struct {
	Name, ControlHost string
	ControlPort, RPC  int
	QOS               []string
}

// ListClusters is sacctmgr list clusters.
func ListClusters(cols []MgrColumn, clusters []MgrCluster, o MgrOutput) string {
	var recs []mgrRecord
	for i := range clusters {
		c := &clusters[i]
		recs = append(recs, func(key string) (Cell, bool) {
			switch key {
			case "cluster":
				return Str(c.Name), true
			case "chost":
				return Str(c.ControlHost), true
			case "cport":
				return Uint(c.ControlPort), true
			case "rpc_version":
				return Uint(c.RPC), true
			case "fairshare":
				return Uint(1), true
			case "qos":
				return Str(strings.Join(c.QOS, ",")), true
			case "dqos", "grpt", "maxt", "flags", "federation", "features", "class", "tres":
				return Str(""), true
			case "grpj", "grps", "maxj", "maxs", "maxw", "grpc", "grpmem", "grpn", "maxc", "maxcm", "maxn", "grpcm", "nodecnt":
				return Unset(), true
			}
			return Cell{}, false
		})
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// MgrTRES is one TRES as sacctmgr list tres shows it.
type MgrTRES struct {
	ID         int
	Type, Name string
}

// ListTRES is sacctmgr list tres.
func ListTRES(cols []MgrColumn, tres []MgrTRES, o MgrOutput) string {
	var recs []mgrRecord
	for i := range tres {
		t := &tres[i]
		recs = append(recs, func(key string) (Cell, bool) {
			switch key {
			case "name":
				return Str(t.Name), true
			case "id":
				return Uint(t.ID), true
			case "type":
				return Str(t.Type), true
			}
			return Cell{}, false
		})
	}
	return mgrLines(cols, recs, o.Mode, !o.NoHeader)
}

// secsTime is secs2time_str: [D-]HH:MM:SS.
func secsTime(s int64) string {
	d, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}
