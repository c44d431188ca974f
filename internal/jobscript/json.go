package jobscript

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends r as encoding/json writes it, byte for byte
// (TestAppendJSONIsMarshal), without encoding/json's reflection: building
// its encoders for Request's 69 fields was a tenth of sbatch's CPU time
// (docs/bench.md, "The fast paths"). The pointers to rarely given
// structures (--array, --dependency, --signal, --export, --get-user-env)
// still go through encoding/json, paid only by the jobs that give them.
// A field added to Request must be added here: the test fails otherwise.
func (r *Request) AppendJSON(dst []byte) ([]byte, error) {
	w := jsonWriter{b: append(dst, '{'), first: true}
	if r.Script != "" {
		w.str("script", r.Script)
	}
	if r.ScriptPath != "" {
		w.str("script_path", r.ScriptPath)
	}
	if r.ScriptName != "" {
		w.str("script_name", r.ScriptName)
	}
	if len(r.Args) > 0 {
		w.strs("args", r.Args)
	}
	if r.Wrap != "" {
		w.str("wrap", r.Wrap)
	}
	if r.HasWrap {
		w.boolean("has_wrap", true)
	}
	w.str("job_name", r.JobName)
	if r.Partition != "" {
		w.str("partition", r.Partition)
	}
	if r.Account != "" {
		w.str("account", r.Account)
	}
	if r.QOS != "" {
		w.str("qos", r.QOS)
	}
	if len(r.GPUs) > 0 {
		w.gres("gpus", r.GPUs)
	}
	if len(r.GPUsPerNode) > 0 {
		w.gres("gpus_per_node", r.GPUsPerNode)
	}
	if len(r.GPUsPerTask) > 0 {
		w.gres("gpus_per_task", r.GPUsPerTask)
	}
	if len(r.Gres) > 0 {
		w.gres("gres", r.Gres)
	}
	if r.GresNone {
		w.boolean("gres_none", true)
	}
	if r.CPUsPerGPU != 0 {
		w.integer("cpus_per_gpu", int64(r.CPUsPerGPU))
	}
	if r.CPUsPerTask != 0 {
		w.integer("cpus_per_task", int64(r.CPUsPerTask))
	}
	w.integer("ntasks", int64(r.NTasks))
	if r.NTasksSet {
		w.boolean("ntasks_set", true)
	}
	if r.NTasksPerNode != 0 {
		w.integer("ntasks_per_node", int64(r.NTasksPerNode))
	}
	if r.ResvPorts != nil {
		w.integer("resv_ports", int64(*r.ResvPorts))
	}
	w.nodes("nodes", r.Nodes)
	if r.NodesSet {
		w.boolean("nodes_set", true)
	}
	if r.MemPerNode != nil {
		w.unsigned("mem_mib", uint64(*r.MemPerNode))
	}
	if r.MemPerCPU != nil {
		w.unsigned("mem_per_cpu_mib", uint64(*r.MemPerCPU))
	}
	if r.MemPerGPU != nil {
		w.unsigned("mem_per_gpu_mib", uint64(*r.MemPerGPU))
	}
	if r.TimeLimit != 0 {
		w.str("time_limit", r.TimeLimit.String())
	}
	if r.TimeMin != 0 {
		w.str("time_min", r.TimeMin.String())
	}
	if r.Output != "" {
		w.str("output", r.Output)
	}
	if r.Error != "" {
		w.str("error", r.Error)
	}
	if r.Input != "" {
		w.str("input", r.Input)
	}
	if r.Chdir != "" {
		w.str("chdir", r.Chdir)
	}
	if r.Array != nil {
		w.value("array", r.Array)
	}
	if r.Dependency != nil {
		w.value("dependency", r.Dependency)
	}
	if !r.Begin.IsZero() {
		w.time("begin", r.Begin)
	}
	if !r.Deadline.IsZero() {
		w.time("deadline", r.Deadline)
	}
	if r.Hold {
		w.boolean("hold", true)
	}
	if r.Nice != nil {
		w.integer("nice", int64(*r.Nice))
	}
	if r.Priority != nil {
		w.unsigned("priority", uint64(*r.Priority))
	}
	if r.Requeue != nil {
		w.boolean("requeue", *r.Requeue)
	}
	if r.Signal != nil {
		w.value("signal", r.Signal)
	}
	if r.Export != nil {
		w.value("export", r.Export)
	}
	if r.ExportFile != "" {
		w.str("export_file", r.ExportFile)
	}
	if r.GetUserEnv != nil {
		w.value("get_user_env", r.GetUserEnv)
	}
	if len(r.MailType) > 0 {
		w.strs("mail_type", r.MailType)
	}
	if r.MailUser != "" {
		w.str("mail_user", r.MailUser)
	}
	if r.Comment != "" {
		w.str("comment", r.Comment)
	}
	if r.TestOnly {
		w.boolean("test_only", true)
	}
	if r.Parsable {
		w.boolean("parsable", true)
	}
	if r.Wait {
		w.boolean("wait", true)
	}
	if r.Quiet {
		w.boolean("quiet", true)
	}
	if r.Verbose != 0 {
		w.integer("verbose", int64(r.Verbose))
	}
	if r.Sharing != "" {
		w.str("sharing", string(r.Sharing))
	}
	if r.OpenMode != "" {
		w.str("open_mode", r.OpenMode)
	}
	if r.WCKey != "" {
		w.str("wckey", r.WCKey)
	}
	if r.Constraint != "" {
		w.str("constraint", r.Constraint)
	}
	if r.NodeList != "" {
		w.str("nodelist", r.NodeList)
	}
	if r.Exclude != "" {
		w.str("exclude", r.Exclude)
	}
	if r.Reservation != "" {
		w.str("reservation", r.Reservation)
	}
	if r.Clusters != "" {
		w.str("clusters", r.Clusters)
	}
	if r.Licenses != "" {
		w.str("licenses", r.Licenses)
	}
	if r.UID != "" {
		w.str("uid", r.UID)
	}
	if r.GID != "" {
		w.str("gid", r.GID)
	}
	if r.GPUMem != 0 {
		w.integer("gpu_mem", int64(r.GPUMem))
	}
	if r.Yieldable {
		w.boolean("yieldable", true)
	}
	if r.BatchSize != 0 {
		w.integer("batch_size", int64(r.BatchSize))
	}
	if r.CheckpointInterval != 0 {
		w.str("checkpoint_interval", r.CheckpointInterval.String())
	}
	if r.Cron != nil { // the daemon's own requests (scrontab), not sbatch's
		w.value("cron", r.Cron)
	}
	if len(r.Other) > 0 {
		w.settings("other", r.Other)
	}
	if len(r.Warnings) > 0 {
		w.strs("warnings", r.Warnings)
	}
	if w.err != nil {
		return dst, w.err
	}
	return append(w.b, '}'), nil
}

// jsonWriter appends an object's members; the first error stops it.
type jsonWriter struct {
	b     []byte
	first bool
	err   error
}

func (w *jsonWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(k, v string) {
	w.key(k)
	w.b = AppendJSONString(w.b, v)
}

func (w *jsonWriter) boolean(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *jsonWriter) integer(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jsonWriter) unsigned(k string, v uint64) {
	w.key(k)
	w.b = strconv.AppendUint(w.b, v, 10)
}

func (w *jsonWriter) strs(k string, v []string) {
	w.key(k)
	w.b = AppendJSONStrings(w.b, v)
}

func (w *jsonWriter) gres(k string, v []Gres) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, g := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, `{"name":`...)
		w.b = AppendJSONString(w.b, g.Name)
		if g.Type != "" {
			w.b = append(w.b, `,"type":`...)
			w.b = AppendJSONString(w.b, g.Type)
		}
		w.b = append(w.b, `,"count":`...)
		w.b = strconv.AppendUint(w.b, g.Count, 10)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) settings(k string, v []Setting) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, `{"name":`...)
		w.b = AppendJSONString(w.b, s.Name)
		if s.Value != "" {
			w.b = append(w.b, `,"value":`...)
			w.b = AppendJSONString(w.b, s.Value)
		}
		if s.HasValue {
			w.b = append(w.b, `,"has_value":true`...)
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) nodes(k string, v NodeRange) {
	w.key(k)
	w.b = append(w.b, `{"min":`...)
	w.b = strconv.AppendInt(w.b, int64(v.Min), 10)
	if v.Max != 0 {
		w.b = append(w.b, `,"max":`...)
		w.b = strconv.AppendInt(w.b, int64(v.Max), 10)
	}
	w.b = append(w.b, '}')
}

func (w *jsonWriter) time(k string, t time.Time) {
	b, err := t.MarshalJSON()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.key(k)
	w.b = append(w.b, b...)
}

func (w *jsonWriter) value(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.key(k)
	w.b = append(w.b, b...)
}

// AppendJSONStrings appends v as encoding/json writes a []string (null
// for nil).
func AppendJSONStrings(dst []byte, v []string) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, s)
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s quoted as encoding/json quotes it: HTML's
// <, > and & escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
