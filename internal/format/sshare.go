package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
)

// sshare's fields (src/sshare/process.c), in its table's order, which is
// the order a prefix is matched in.
var shareFields = []Field{
	{"Account", -20},
	{"Cluster", 10},
	{"EffectvUsage", 13},
	{"FairShare", 10},
	{"GrpTRESMins", 30},
	{"GrpTRESRaw", 30},
	{"ID", 6},
	{"LevelFS", 10},
	{"NormShares", 11},
	{"NormUsage", 11},
	{"Partition", 12},
	{"RawShares", 10},
	{"RawUsage", 11},
	{"TRESRunMins", 30},
	{"User", 10},
}

// sshare's default field lists: the Fair Tree ones print LevelFS with -l.
const (
	ShareFormat           = "A,User,RawShares,NormShares,RawUsage,Eff,Fairshare"
	ShareFormatPart       = "A,User,P,RawShares,NormShares,RawUsage,Eff,Fairshare"
	ShareFormatLong       = "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,GrpTRESMins,TRESRunMins"
	ShareFormatLongPart   = "A,User,P,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,GrpTRESMins,TRESRunMins"
	ShareFormatClassic    = "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,GrpTRESMins,TRESRunMins"
	ShareFormatClassicPrt = "A,User,P,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,GrpTRESMins,TRESRunMins"
)

// ShareFieldNames is sshare --helpformat: the names four to a line, each
// padded to 17 characters.
func ShareFieldNames() string {
	var b strings.Builder
	for i, f := range shareFields {
		switch {
		case i&3 != 0:
			b.WriteByte(' ')
		case i != 0:
			b.WriteByte('\n')
		}
		b.WriteString(cPad(f.Name, 17, true))
	}
	b.WriteByte('\n')
	return b.String()
}

// ParseShareFields reads sshare's field list (the -o values, each followed
// by a comma): names that start a field's name, in any case, each with an
// optional "%WIDTH". A width applies to the field wherever it appears, the
// last one given winning, because sshare sets it in its one table. The
// second result is the first name that matches no field.
func ParseShareFields(spec string) ([]Field, string) {
	table := append([]Field(nil), shareFields...)
	var picked []int
	for _, tok := range AddToCharList(nil, spec) {
		name, width, _ := nameWidth(tok)
		i := byPrefix(len(table), func(i int) string { return table[i].Name }, name)
		if i < 0 {
			return nil, name
		}
		if width != 0 {
			table[i].Width = width
		}
		picked = append(picked, i)
	}
	fields := make([]Field, len(picked))
	for k, i := range picked {
		fields[k] = table[i]
	}
	return fields, ""
}

// ShareLine is one row of sshare: the daemon's values, where it hangs in
// the tree, and what sshare prints beside the shares.
type ShareLine struct {
	api.ShareRow
	// Parent is the parent account of an account row ("" for the root).
	Parent string
	// ID numbers the associations (Slurm's assoc_id).
	ID int
	// GrpTRESRaw and TRESRunMins are TRES minutes per TRES, by name.
	GrpTRESRaw, TRESRunMins map[string]uint64
	// GrpTRESMins is the association's budget, TRES-minutes by name (an
	// account's [[Account]] GrpTRESMins); nil for none.
	GrpTRESMins map[string]uint64
}

// ShareOptions say how sshare prints.
type ShareOptions struct {
	Fields []Field
	Mode   Parsable
	Header bool
	// UsersOnly is -U: user rows only.
	UsersOnly bool
	// Classic is PriorityFlags=NO_FAIR_TREE: every row gets a fair-share
	// factor, 2^(-EffectvUsage/NormShares).
	Classic bool
	Cluster string
	// TRES names the TRES columns list, in Slurm's id order.
	TRES []string
}

// Sshare prints the rows as sshare's process() does.
func Sshare(rows []ShareLine, o ShareOptions) string {
	var b strings.Builder
	if o.Header {
		b.WriteString(FieldsHeader(o.Fields, o.Mode))
	}
	var tree printTree
	for i := range rows {
		r := &rows[i]
		if o.UsersOnly && r.User == "" {
			continue
		}
		cells := make([]Cell, len(o.Fields))
		for k, f := range o.Fields {
			cells[k] = o.shareCell(f.Name, r, &tree)
		}
		b.WriteString(FieldsLine(o.Fields, cells, o.Mode))
	}
	return b.String()
}

func (o *ShareOptions) shareCell(name string, r *ShareLine, tree *printTree) Cell {
	root := r.Depth == 0 && r.User == ""
	switch name {
	case "Account":
		if r.User != "" {
			return Str(tree.name("|"+r.User, r.Account))
		}
		return Str(tree.name(r.Account, r.Parent))
	case "Cluster":
		return Str(o.Cluster)
	case "EffectvUsage":
		return Double(r.EffectvUsage)
	case "FairShare":
		switch {
		case o.Classic && r.User == "":
			return Double(classicFS(r.EffectvUsage, r.NormShares))
		case o.Classic || r.User != "":
			return Double(r.FairShare)
		}
		return Str("")
	case "GrpTRESMins":
		// The TRES without a limit (INFINITE64) are left out.
		return Str(TRESSet(o.TRES, r.GrpTRESMins))
	case "GrpTRESRaw":
		return Str(TRESList(o.TRES, r.GrpTRESRaw))
	case "ID":
		return Uint(r.ID)
	case "LevelFS":
		switch {
		case r.LevelFSNone || root:
			return Unset()
		case r.LevelFSInf:
			return Double(math.Inf(1))
		}
		return Double(r.LevelFS)
	case "NormShares":
		return Double(r.NormShares)
	case "NormUsage":
		if root {
			return Unset()
		}
		return Double(r.NormUsage)
	case "Partition":
		return Str("")
	case "RawShares":
		if root {
			return Unset()
		}
		return Uint(r.RawShares)
	case "RawUsage":
		return Uint(uint64(max(0, r.RawUsage)))
	case "TRESRunMins":
		return Str(TRESList(o.TRES, r.TRESRunMins))
	case "User":
		return Str(r.User)
	}
	return Str("")
}

// classicFS is priority_p_calc_fs_factor with a dampening factor of 1.
func classicFS(effUsage, normShares float64) float64 {
	if normShares <= 0 {
		return 0
	}
	return math.Exp2(-(effUsage / normShares))
}

// printTree is slurmdb_tree_name_get's list: the accounts printed so far,
// each with the spaces that indent its children.
type printTree []treeEntry

type treeEntry struct {
	name, spaces, print string
	user                bool
}

// name returns the Account column of an account (name, its parent) or of
// a user ("|user", its account): the account indented one space deeper
// than its parent, when the parent was printed before it. An account
// already printed keeps its first name.
func (t *printTree) name(name, parent string) string {
	var found, par *treeEntry
	for i := range *t {
		e := &(*t)[i]
		if e.user {
			continue
		}
		if e.name == name {
			found = e
			break
		}
		if parent != "" && e.name == parent {
			par = e
		}
	}
	if parent != "" && found != nil {
		return found.print
	}
	e := treeEntry{name: name}
	if par != nil {
		e.spaces = " " + par.spaces
	}
	if strings.HasPrefix(name, "|") {
		e.print, e.user = e.spaces+parent, true
	} else {
		e.print = e.spaces + name
	}
	*t = append(*t, e)
	return e.print
}

// ShareTRES are the TRES sshare's TRES columns list, in Slurm's id order:
// AccountingStorageTRES as scontrol show config prints it (the built-in
// ones and gres/gpu).
var ShareTRES = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"}

// TRESList is slurmdb_make_tres_string_from_arrays: every TRES with its
// count, 0 when none.
func TRESList(names []string, counts map[string]uint64) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatUint(counts[n], 10)
	}
	return strings.Join(parts, ",")
}

// TRESSet is slurmdb_make_tres_string_from_arrays with
// TRES_STR_FLAG_REMOVE: the TRES given, in names' order, the rest left out.
func TRESSet(names []string, counts map[string]uint64) string {
	var parts []string
	for _, n := range names {
		if v, ok := counts[n]; ok {
			parts = append(parts, n+"="+strconv.FormatUint(v, 10))
		}
	}
	return strings.Join(parts, ",")
}

// partitionWeights are the billing weights of partition's jobs under cfg,
// as billing finds them in a View.
func partitionWeights(cfg *config.Config, partition string) config.TRESWeights {
	if cfg == nil {
		return nil
	}
	if p := cfg.Partition(partition); p != nil {
		return p.TRESBillingWeights
	}
	return cfg.TRESBillingWeights
}

// TRESRunMins is what a running job holds times the time it has left, in
// TRES-minutes (Slurm's grp_used_tres_run_secs / 60, per TRES): the time
// left runs to its limit, or a year for a job without one, from the whole
// seconds it has run.
func TRESRunMins(j *api.Job, now time.Time, cfg *config.Config) map[string]uint64 {
	if !isRunning(j) || j.Start.IsZero() {
		return nil
	}
	left := endTime(sq(j)).Sub(j.Start) - timeUsed(sq(j), now)
	if left <= 0 {
		return nil
	}
	secs := uint64(left / time.Second)
	counts := map[string]uint64{
		"cpu":        uint64(cpus(j)),
		"mem":        memTotal(j),
		"node":       1,
		"billing":    billingUnder(j, partitionWeights(cfg, j.Partition)),
		"gres/gpu":   uint64(gpus(j)),
		"gres/shard": uint64(gresCount(j, "shard")),
	}
	out := map[string]uint64{}
	for n, c := range counts {
		out[n] = c * secs / 60
	}
	return out
}
