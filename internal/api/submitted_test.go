package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSubmittedDecodeAnswerIsUnmarshal: where DecodeAnswer takes an answer
// it reads what encoding/json reads; the daemon's own answers (written by
// encoding/json) of the plain shape are all taken.
func TestSubmittedDecodeAnswerIsUnmarshal(t *testing.T) {
	bodies := []string{
		`{"job_id":1}`, `{"job_id":7}` + "\n", `{"job_id":4294967295}`, `{"job_id":0}`,
		`{"job_id":4294967296}`, `{"job_id":01}`, `{"job_id":-1}`, `{"job_id":1.0}`, `{"job_id":}`,
		`{"job_id":"1"}`, `{"job_id":1,"notes":["a"]}`, ` {"job_id":1}`, `{"job_id": 1}`, `{"job_id":1}x`,
		`{"job_id":12345678901}`, `{}`, ``, `{"job_id":1`,
	}
	for _, id := range []uint32{1, 99, 4294967295} {
		b, _ := json.Marshal(Submitted{JobID: id})
		bodies = append(bodies, string(b)+"\n")
		b, _ = json.Marshal(Submitted{JobID: id, Notes: []string{"n"}, Start: time.Unix(5, 0), Node: "x", CPUs: 2})
		bodies = append(bodies, string(b))
	}
	for _, body := range bodies {
		got := Submitted{Node: "kept"}
		if !got.DecodeAnswer([]byte(body)) {
			continue
		}
		want := Submitted{Node: "kept"}
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Errorf("DecodeAnswer took %q, which encoding/json refuses: %v", body, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DecodeAnswer(%q) (-json +got):\n%s", body, diff)
		}
	}
	for _, id := range []uint32{0, 1, 123, 4294967295} {
		b, _ := json.Marshal(Submitted{JobID: id})
		var s Submitted
		if !s.DecodeAnswer(append(b, '\n')) || s.JobID != id {
			t.Errorf("DecodeAnswer(%s) = %v, job %d; want job %d taken", b, false, s.JobID, id)
		}
	}
}
