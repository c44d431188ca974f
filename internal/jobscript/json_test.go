package jobscript

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// jsonSample is a string that exercises every escape encoding/json makes.
const jsonSample = "a<b>&c\"d\\e\nf\tg\bh\fi\x01j\u2028k\u2029lé\xffm/"

// fillJSON sets v, and everything under it, to values that are not zero.
func fillJSON(t *testing.T, v reflect.Value) {
	t.Helper()
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(jsonSample)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(90 * time.Minute))
		if v.Type().Bits() < 64 {
			v.SetInt(-7)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(4000000000)
		if v.Type().Bits() < 32 {
			v.SetUint(9)
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillJSON(t, p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fillJSON(t, s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillJSON(t, k)
		fillJSON(t, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillJSON(t, v.Field(i))
			}
		}
	default:
		t.Fatalf("fillJSON: a %s (%s): teach the test and AppendJSON this kind", v.Type(), v.Kind())
	}
}

func sameAsMarshal(t *testing.T, what string, r *Request) {
	t.Helper()
	want, werr := json.Marshal(r)
	got, gerr := r.AppendJSON([]byte("prefix"))
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: AppendJSON error %v, encoding/json's %v", what, gerr, werr)
	}
	if werr != nil {
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%s:\nAppendJSON:    %s\nencoding/json: prefix%s", what, got, want)
	}
}

// TestAppendJSONIsMarshal: AppendJSON writes what encoding/json writes,
// for the zero request, for each field alone, and for all of them; a field
// added to Request and not to AppendJSON fails here.
func TestAppendJSONIsMarshal(t *testing.T) {
	sameAsMarshal(t, "the zero request", &Request{})
	rt := reflect.TypeOf(Request{})
	for i := 0; i < rt.NumField(); i++ {
		var r Request
		fillJSON(t, reflect.ValueOf(&r).Elem().Field(i))
		sameAsMarshal(t, rt.Field(i).Name+" alone", &r)
	}
	var all Request
	fillJSON(t, reflect.ValueOf(&all).Elem())
	sameAsMarshal(t, "every field", &all)

	// Values with a form of their own.
	unlimited := Request{TimeLimit: Limit(slurmsyntax.Infinite), Nodes: NodeRange{Min: 1, Max: 3},
		GPUs: []Gres{{Name: "gpu", Count: 2}}, Other: []Setting{{Name: "x"}}, Args: []string{}}
	sameAsMarshal(t, "UNLIMITED, a node range, a GRES without a type", &unlimited)
	sameAsMarshal(t, "a time encoding/json refuses", &Request{Begin: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
}
