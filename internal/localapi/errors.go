package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// Errorf returns an Error with the given HTTP status and no Slurm code.
func Errorf(status int, format string, args ...any) *api.Error {
	return &api.Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// asError turns any handler error into the Error that goes on the wire: an
// *api.Error keeps its status and code (500 if it forgot a status); anything else
// is the daemon's own failure, 500 with its text.
func asError(err error) *api.Error {
	var e *api.Error
	if errors.As(err, &e) {
		if e.Status == 0 {
			return &api.Error{Status: http.StatusInternalServerError, Message: e.Message, Code: e.Code}
		}
		return e
	}
	return &api.Error{Status: http.StatusInternalServerError, Message: err.Error()}
}

func writeError(w http.ResponseWriter, err error) {
	e := asError(err)
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a handler's own type can fail to marshal (a channel, a NaN):
		// a bug in the daemon, said as such rather than a half-written body.
		status = http.StatusInternalServerError
		b, _ = json.Marshal(&api.Error{Message: fmt.Sprintf("encoding the answer: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
