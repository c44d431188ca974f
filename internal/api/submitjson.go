package api

import (
	"slices"
	"strconv"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// AppendJSON appends s as encoding/json writes it, byte for byte
// (TestSubmitAppendJSONIsMarshal), without its reflection: sockclient
// sends a body that has this method through it (jobscript.Request's
// AppendJSON says why). A field added to Submit must be added here.
func (s Submit) AppendJSON(dst []byte) ([]byte, error) {
	b := append(dst, `{"request":`...)
	b, err := s.Request.AppendJSON(b)
	if err != nil {
		return dst, err
	}
	b = append(b, `,"env":`...)
	b = jobscript.AppendJSONStrings(b, s.Env)
	b = append(b, `,"cwd":`...)
	b = jobscript.AppendJSONString(b, s.Cwd)
	if s.Umask != nil {
		b = append(b, `,"umask":`...)
		b = strconv.AppendUint(b, uint64(*s.Umask), 10)
	}
	if len(s.Rlimits) > 0 {
		// encoding/json writes a map's members in the order of their keys.
		keys := make([]string, 0, len(s.Rlimits))
		for k := range s.Rlimits {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `,"rlimits":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jobscript.AppendJSONString(b, k)
			b = append(b, ':')
			b = strconv.AppendUint(b, s.Rlimits[k], 10)
		}
		b = append(b, '}')
	}
	if s.TestOnly {
		b = append(b, `,"test_only":true`...)
	}
	return append(b, '}'), nil
}
