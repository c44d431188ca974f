package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// TestSubmitAppendJSONIsMarshal: Submit.AppendJSON writes what
// encoding/json writes (sbatch's body; jobscript's test covers Request).
func TestSubmitAppendJSONIsMarshal(t *testing.T) {
	umask := uint32(0o22)
	for _, s := range []Submit{
		{},
		{Request: jobscript.Request{JobName: "j<1>", Hold: true}, Env: []string{"A=1", "B=\"x\"\n", "C=\xff"}, Cwd: "/home/a&b"},
		{Env: []string{}, Umask: &umask, Rlimits: map[string]uint64{"nofile": 1024, "core": 0, "as": 1 << 63}, TestOnly: true},
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON = %s, %v\nencoding/json: %s", got, err, want)
		}
	}
	// Every field of Submit is one AppendJSON writes.
	written := map[string]bool{"Request": true, "Env": true, "Cwd": true, "Umask": true, "Rlimits": true, "TestOnly": true}
	rt := reflect.TypeOf(Submit{})
	for i := 0; i < rt.NumField(); i++ {
		if !written[rt.Field(i).Name] {
			t.Errorf("Submit.%s is not written by Submit.AppendJSON: add it there and here", rt.Field(i).Name)
		}
	}
}
