package format

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Slurm's --json output (serializer/json over json-c, pretty-printed):
// keys in the order the plugin sets them, two spaces of indent, "/"
// escaped as "\/", an empty list printed as "[", newline, "]" at the key's
// indent, floats with at least one decimal ("2.0"), and no newline after
// the closing brace.

// jsonObject is an object whose keys keep their order.
type jsonObject []jsonKV

type jsonKV struct {
	key string
	val any // string, int, int64, uint64, float64, bool, nil, []any, jsonObject
}

// slurmJSON prints v as Slurm's commands print --json.
func slurmJSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v, 0)
	return b.String()
}

func writeJSON(b *strings.Builder, v any, level int) {
	indent := func(n int) { b.WriteString(strings.Repeat("  ", n)) }
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeJSONString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		b.WriteString(s)
	case []any:
		b.WriteString("[\n")
		for i, item := range x {
			indent(level + 1)
			writeJSON(b, item, level+1)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(level)
		b.WriteByte(']')
	case jsonObject:
		b.WriteString("{\n")
		for i, kv := range x {
			indent(level + 1)
			writeJSONString(b, kv.key)
			b.WriteString(": ")
			writeJSON(b, kv.val, level+1)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(level)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("slurmJSON: %T", v))
	}
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// jsonMeta is the "meta" object of openapi/v0.0.38.
func jsonMeta() jsonObject {
	return jsonObject{
		{"plugin", jsonObject{{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
		{"Slurm", jsonObject{
			{"version", jsonObject{{"major", 22}, {"micro", 8}, {"minor", 5}}},
			{"release", "22.05.8"},
		}},
	}
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// SinfoJSON is sinfo --json: the openapi/v0.0.38 node dump, which prints
// every node whatever the other options say.
func SinfoJSON(v *NodeView) string {
	state := strings.ToLower(v.baseString())
	flags := []any{}
	if v.Drained {
		flags = append(flags, "DRAIN")
	}
	parts := []any{}
	for _, p := range v.Partitions {
		parts = append(parts, p)
	}
	var reasonBy any
	if v.ReasonUID >= 0 {
		reasonBy = v.ReasonUser
	}
	var tresUsed any
	if s := v.AllocTRES(); s != "" {
		tresUsed = s
	}
	gresUsed := v.GresUsed()
	if gresUsed == Null {
		gresUsed = ""
	}
	load := int64(v.Host.Load)
	free := v.Host.FreeMem
	node := jsonObject{
		{"architecture", v.Host.Arch},
		{"burstbuffer_network_address", ""},
		{"boards", 1},
		{"boot_time", unix(v.Host.Boot)},
		{"comment", v.Comment},
		{"cores", v.CPUs},
		{"cpu_binding", 0},
		{"cpu_load", load},
		{"extra", ""},
		{"free_memory", free},
		{"cpus", v.CPUs},
		{"last_busy", unix(v.LastBusy)},
		{"features", ""},
		{"active_features", ""},
		{"gres", v.Gres},
		{"gres_drained", v.GresDrain()},
		{"gres_used", gresUsed},
		{"mcs_label", ""},
		{"name", v.Name},
		{"next_state_after_reboot", "invalid"},
		{"address", NodeAddr},
		{"hostname", v.Host.Name},
		{"state", state},
		{"state_flags", flags},
		{"next_state_after_reboot_flags", []any{}},
		{"operating_system", v.Host.OS},
		{"owner", nil},
		{"partitions", parts},
		{"port", 6818},
		{"real_memory", v.MemoryMB},
		{"reason", v.Reason},
		{"reason_changed_at", unix(v.ReasonTime)},
		{"reason_set_by_user", reasonBy},
		{"slurmd_start_time", unix(v.Boot)},
		{"sockets", 1},
		{"threads", 1},
		{"temporary_disk", 0},
		{"weight", 1},
		{"tres", v.CfgTRES()},
		{"slurmd_version", NodeVersion},
		{"alloc_memory", v.AllocMem},
		{"alloc_cpus", v.AllocCPU},
		{"idle_cpus", v.CPUs - v.AllocCPU},
		{"tres_used", tresUsed},
		{"tres_weighted", v.allocWeighted()},
	}
	return slurmJSON(jsonObject{
		{"meta", jsonMeta()},
		{"errors", []any{}},
		{"nodes", []any{node}},
	})
}
