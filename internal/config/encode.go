package config

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// WriteTOML writes c as a configuration file: every key of the schema, with
// the value in force, defaults included, in the schema's order (top-level
// keys, then each [Table], then each [[Array]]). It walks the same struct
// tags as the decoder, so a key added to Config is written without a
// change here, and what it writes reads back as c (TestWriteTOMLRoundTrip).
// `slurmd-lite config` prints it: the settings in force, not only those a
// file gave.
func (c *Config) WriteTOML(w io.Writer) error {
	var b strings.Builder
	writeTable(&b, "", reflect.ValueOf(c).Elem())
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes a table's plain keys, then its sub-tables and arrays
// of tables under dotted names.
func writeTable(b *strings.Builder, dotted string, v reflect.Value) {
	fs := fieldsOf(v.Type())
	for _, f := range fs {
		fv := v.Field(f.index)
		if isTable(fv.Type()) || isTableArray(fv.Type()) {
			continue
		}
		if pr, ok := v.Interface().(Priority); ok && f.key == "WeightTRES" && pr.WeightTRESText != "" {
			// As written, as slurm.conf keeps it (sprio -w prints it).
			fmt.Fprintf(b, "%s = %s\n", f.key, tomlQuote(pr.WeightTRESText))
			continue
		}
		fmt.Fprintf(b, "%s = %s\n", f.key, encodeValue(fv, f.conf))
	}
	for _, f := range fs {
		fv := v.Field(f.index)
		name := f.key
		if dotted != "" {
			name = dotted + "." + f.key
		}
		switch {
		case isTable(fv.Type()):
			fmt.Fprintf(b, "\n[%s]\n", name)
			writeTable(b, name, fv)
		case isTableArray(fv.Type()):
			for i := range fv.Len() {
				fmt.Fprintf(b, "\n[[%s]]\n", name)
				writeTable(b, name, fv.Index(i))
			}
		}
	}
}

func isTable(t reflect.Type) bool { return t.Kind() == reflect.Struct }
func isTableArray(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
}

// encodeValue writes one value as the decoder reads it back.
func encodeValue(v reflect.Value, conf string) string {
	switch v.Type() {
	case durationType:
		return encodeDuration(time.Duration(v.Int()), conf)
	case bytesType:
		return tomlQuote(exactSize(slurmsyntax.Bytes(v.Int())))
	case tresType, tresWeightsType:
		return tomlQuote(v.Interface().(fmt.Stringer).String())
	}
	switch v.Kind() {
	case reflect.String:
		return tomlQuote(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = encodeValue(v.Index(i), "")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = tomlQuote(k) + " = " + encodeValue(v.MapIndex(reflect.ValueOf(k)), "")
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	panic(fmt.Sprintf("config: no TOML form for %s", v.Type()))
}

// encodeDuration writes a duration in its conf tag's unit: whole seconds
// or minutes, or a Slurm time string as squeue prints it.
func encodeDuration(d time.Duration, conf string) string {
	switch conf {
	case "seconds":
		return strconv.FormatInt(int64(d/time.Second), 10)
	case "minutes":
		return strconv.FormatInt(int64(d/time.Minute), 10)
	}
	if d == 0 {
		return `"0"`
	}
	if s := slurmsyntax.FormatDuration(d); s != "INVALID" { // squeue's: over a year is INVALID
		return tomlQuote(s) // "2-00:00:00", "1:00:00", "UNLIMITED"
	}
	s := int64(d / time.Second)
	return tomlQuote(fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s/3600%24, s/60%60, s%60))
}

// exactSize writes a size in the largest unit that holds it whole.
func exactSize(b slurmsyntax.Bytes) string {
	switch {
	case b == 0:
		return "0"
	case b%slurmsyntax.TiB == 0:
		return strconv.FormatInt(int64(b/slurmsyntax.TiB), 10) + "T"
	case b%slurmsyntax.GiB == 0:
		return strconv.FormatInt(int64(b/slurmsyntax.GiB), 10) + "G"
	case b%slurmsyntax.MiB == 0:
		return strconv.FormatInt(int64(b/slurmsyntax.MiB), 10) + "M"
	}
	return strconv.FormatInt(int64(b/slurmsyntax.KiB), 10) + "K"
}

// tomlQuote writes s as a TOML basic string: Go's strconv.Quote writes
// \x escapes, which TOML has not.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
