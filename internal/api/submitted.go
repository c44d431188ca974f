package api

import (
	"bytes"
	"math"
)

// DecodeAnswer reads the answer to a plain submission, {"job_id":N} as
// encoding/json writes it, without encoding/json's reflection: building
// its decoder for Submitted's fields (a time.Time among them) was a
// twentieth of sbatch's time (docs/bench.md, "The fast paths"). Any other
// shape (notes, a --test-only estimate, a number encoding/json would
// refuse) gives false, and the caller decodes it with encoding/json
// (sockclient.AnswerDecoder), so the result is encoding/json's either way
// (TestSubmittedDecodeAnswerIsUnmarshal).
func (s *Submitted) DecodeAnswer(body []byte) bool {
	const head = `{"job_id":`
	b := bytes.TrimRight(body, " \t\r\n")
	if !bytes.HasPrefix(b, []byte(head)) || !bytes.HasSuffix(b, []byte("}")) {
		return false
	}
	digits := b[len(head) : len(b)-1]
	if len(digits) == 0 || len(digits) > 10 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxUint32 {
		return false
	}
	s.JobID = uint32(n)
	return true
}
