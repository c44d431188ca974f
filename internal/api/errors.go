package api

import "github.com/slurm-lite/slurm-lite/internal/slurm"

// Error is a refusal as it travels: the HTTP status, a message for people,
// and, when the refusal is one Slurm also makes, Slurm's error number.
// The daemon's handlers (internal/localapi) return it to choose the status;
// the commands' client (internal/sockclient) returns it for every answer
// that is not 2xx. It lives here, with the rest of the wire's types, so
// that both sides mean the same refusal. On the wire it is
// {"error": "...", "code": N}, and "hint" when there is one.
type Error struct {
	// Status is the HTTP status code. It travels as the response's status,
	// not in the body.
	Status int `json:"-"`
	// Message says what is wrong and, where it can, how to fix it.
	Message string `json:"error"`
	// Code is Slurm's errno for this refusal, or 0 when Slurm has none.
	Code slurm.Errno `json:"code"`
	// Hint is slurm-lite's explanation of a refusal whose Message is
	// Slurm's own words: the numbers and the fix, which the commands print
	// on a line of their own after Slurm's.
	Hint string `json:"hint,omitempty"`
}

func (e *Error) Error() string { return e.Message }
