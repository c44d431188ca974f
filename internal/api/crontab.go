package api

// The crontab paths: scrontab's requests.
const (
	// PathCrontab is GET: a user's crontab (scrontab -l, -e), query
	// user=NAME for another's (root, operators); POST: install one
	// (scrontab FILE, -e).
	PathCrontab = "/v1/crontab"
	// PathCrontabRemove is POST: remove a user's crontab (scrontab -r).
	PathCrontabRemove = "/v1/crontab/remove"
)

// Crontab is a crontab to install: its text as written, and the jobs
// scrontab made of its entries, in order. User is -u's ("": the caller's
// own; only root may name another).
type Crontab struct {
	User    string         `json:"user,omitempty"`
	Text    string         `json:"text"`
	Entries []CrontabEntry `json:"entries"`
}

// CrontabEntry is one entry's job, as sbatch would submit it, with the
// lines it came from (counted from 1): its first #SCRON line, or the
// schedule line itself, to the schedule line.
type CrontabEntry struct {
	Submit    Submit `json:"submit"`
	Spec      string `json:"spec"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
}

// CrontabRemove asks to remove User's crontab ("": the caller's).
type CrontabRemove struct {
	User string `json:"user,omitempty"`
}

// CrontabInstalled answers an installation: the entries' job ids, in
// order; or, when the controller refused an entry's job (nothing of the
// crontab is then installed), the lines of that entry ("3-5") and the
// refusal, which scrontab prints in Slurm's words.
type CrontabInstalled struct {
	JobIDs      []uint32 `json:"job_ids,omitempty"`
	FailedLines string   `json:"failed_lines,omitempty"`
	Code        int      `json:"code,omitempty"`
	Error       string   `json:"error,omitempty"`
	Hint        string   `json:"hint,omitempty"`
}

// CrontabText answers GET: the crontab as installed (None when the user
// has none), and the lines of entries whose job was cancelled since
// (scancel), which scrontab shows commented out with "#DISABLED: ".
type CrontabText struct {
	User     string `json:"user"`
	None     bool   `json:"none,omitempty"`
	Text     string `json:"text"`
	Disabled []int  `json:"disabled,omitempty"`
}
