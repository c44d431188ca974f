package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Error is a refusal as it travels: the HTTP status, a message for people,
// and, when the refusal is one Slurm also makes, Slurm's error number.
// Handlers return it to choose the status; the client returns it for every
// answer that is not 2xx. On the wire it is {"error": "...", "code": N}.
// It is sockclient's, the commands' own client, so that both sides mean the
// same refusal.
type Error = sockclient.Error

// Errorf returns an Error with the given HTTP status and no Slurm code.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// asError turns any handler error into the Error that goes on the wire: an
// *Error keeps its status and code (500 if it forgot a status); anything else
// is the daemon's own failure, 500 with its text.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Status == 0 {
			return &Error{Status: http.StatusInternalServerError, Message: e.Message, Code: e.Code}
		}
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Message: err.Error()}
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
		b, _ = json.Marshal(&Error{Message: fmt.Sprintf("encoding the answer: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
