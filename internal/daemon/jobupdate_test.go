package daemon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

func ptr[T any](v T) *T { return &v }

// updateConfig has a default partition without limits and "short" with a
// MaxTime of an hour.
func updateConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte(`
[[Partition]]
PartitionName = "gpu"
Default       = true

[[Partition]]
PartitionName = "short"
MaxTime       = "1:00:00"

[[Partition]]
PartitionName = "closed"
State         = "INACTIVE"
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// alicesJob is a job of alice's (uid 1001) in partition gpu, 30 minutes,
// in state st.
func alicesJob(st slurm.JobState) store.Job {
	return store.Job{ID: 7, ArrayTaskID: store.NoTask, User: "alice", UID: 1001, Partition: "gpu",
		State: st, TimeLimit: 30 * time.Minute, Name: "train",
		Request: jobscript.Request{NTasks: 1, GPUs: []jobscript.Gres{{Name: "gpu", Count: 1}}}}
}

var (
	alice = updater{uid: 1001}
	bob   = updater{uid: 1002}
	root  = updater{uid: 0, operator: true}
)

func TestChange(t *testing.T) {
	cfg := updateConfig(t)
	tests := []struct {
		name     string
		job      store.Job
		update   api.Update
		who      updater
		prio     uint32
		want     func(*store.Job) // the change expected; nil: none
		wantCode slurm.Errno
	}{
		{
			name:   "the owner lowers a running job's time limit",
			job:    alicesJob(slurm.Running),
			update: api.Update{TimeLimit: ptr(10 * time.Minute)},
			who:    alice,
			want:   func(j *store.Job) { j.TimeLimit = 10 * time.Minute },
		},
		{
			name:     "the owner may not raise a running job's time limit",
			job:      alicesJob(slurm.Running),
			update:   api.Update{TimeLimit: ptr(time.Hour)},
			who:      alice,
			wantCode: slurm.ErrAccessDenied,
		},
		{
			name:   "the owner raises a pending job's limit within the partition's MaxTime (no MaxTime: any)",
			job:    alicesJob(slurm.Pending),
			update: api.Update{TimeLimit: ptr(slurmsyntax.Infinite)},
			who:    alice,
			want:   func(j *store.Job) { j.TimeLimit = slurmsyntax.Infinite },
		},
		{
			name: "the owner may not raise a pending job's limit past the partition's MaxTime",
			job: func() store.Job {
				j := alicesJob(slurm.Pending)
				j.Partition = "short"
				return j
			}(),
			update:   api.Update{TimeLimit: ptr(2 * time.Hour)},
			who:      alice,
			wantCode: slurm.ErrAccessDenied,
		},
		{
			name: "root raises a pending job's limit past the partition's MaxTime",
			job: func() store.Job {
				j := alicesJob(slurm.Pending)
				j.Partition = "short"
				return j
			}(),
			update: api.Update{TimeLimit: ptr(2 * time.Hour)},
			who:    root,
			want:   func(j *store.Job) { j.TimeLimit = 2 * time.Hour },
		},
		{
			name:   "root raises a running job's limit (its supervisor takes the new one)",
			job:    alicesJob(slurm.Running),
			update: api.Update{TimeLimit: ptr(time.Hour)},
			who:    root,
			want:   func(j *store.Job) { j.TimeLimit = time.Hour },
		},
		{
			name: "the default limit counts as the job's limit: lowering from UNLIMITED is allowed",
			job: func() store.Job {
				j := alicesJob(slurm.Running)
				j.TimeLimit = 0
				return j
			}(),
			update: api.Update{TimeLimit: ptr(time.Hour)},
			who:    alice,
			want:   func(j *store.Job) { j.TimeLimit = time.Hour },
		},
		{
			name:     "a time limit of zero is refused",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{TimeLimit: ptr(time.Duration(0))},
			who:      root,
			wantCode: slurm.ErrInvalidTimeLimit,
		},
		{
			name: "a limit under the job's --time-min is refused",
			job: func() store.Job {
				j := alicesJob(slurm.Pending)
				j.Request.TimeMin = jobscript.Limit(20 * time.Minute)
				return j
			}(),
			update:   api.Update{TimeLimit: ptr(10 * time.Minute)},
			who:      alice,
			wantCode: slurm.ErrInvalidTimeMinLimit,
		},
		{
			name:     "a finished job changes no more, before anything else is checked",
			job:      alicesJob(slurm.Completed),
			update:   api.Update{Comment: ptr("x")},
			who:      bob,
			wantCode: slurm.ErrJobFinished,
		},
		{
			name:     "another user's job: Invalid user id",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{TimeLimit: ptr(10 * time.Minute)},
			who:      bob,
			wantCode: slurm.ErrUserIDMissing,
		},
		{
			name:   "a pending job moves to another partition",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Partition: ptr("short")},
			who:    alice,
			want:   func(j *store.Job) { j.Partition = "short" },
		},
		{
			name:     "a running job stays in its partition",
			job:      alicesJob(slurm.Running),
			update:   api.Update{Partition: ptr("short")},
			who:      root,
			wantCode: slurm.ErrJobNotPending,
		},
		{
			name:   "its own partition again is no change, running or not",
			job:    alicesJob(slurm.Running),
			update: api.Update{Partition: ptr("gpu")},
			who:    alice,
		},
		{
			name:     "an unknown partition",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Partition: ptr("nosuch")},
			who:      alice,
			wantCode: slurm.ErrInvalidPartitionName,
		},
		{
			name:     "an inactive partition",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Partition: ptr("closed")},
			who:      alice,
			wantCode: slurm.ErrPartitionNotAvail,
		},
		{
			name:   "Gres= replaces every GPU request with GPUs per node",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Gres: ptr("gpu:a100:2")},
			who:    alice,
			want: func(j *store.Job) {
				j.Request.GPUs, j.Request.Gres = nil, []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 2}}
			},
		},
		{
			name:   "NumGPUs (GPUs=gpu:N) replaces them with GPUs per job",
			job:    alicesJob(slurm.Pending),
			update: api.Update{GPUs: ptr("gpu:3")},
			who:    alice,
			want:   func(j *store.Job) { j.Request.GPUs = []jobscript.Gres{{Name: "gpu", Count: 3}} },
		},
		{
			name:   "Gres= with nothing drops them",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Gres: ptr("")},
			who:    alice,
			want: func(j *store.Job) {
				j.Request.GPUs, j.Request.Gres, j.Request.GresNone = nil, nil, true
			},
		},
		{
			name:     "a running job keeps its GPUs",
			job:      alicesJob(slurm.Running),
			update:   api.Update{Gres: ptr("gpu:2")},
			who:      root,
			wantCode: slurm.ErrJobNotPending,
		},
		{
			name:     "a GRES this machine has not",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Gres: ptr("tpu:1")},
			who:      alice,
			wantCode: slurm.ErrInvalidGRES,
		},
		{
			name:   "root sets a priority, which resets nice",
			job:    func() store.Job { j := alicesJob(slurm.Pending); j.Nice = 10; return j }(),
			update: api.Update{Priority: ptr(uint32(5000))},
			who:    root,
			want:   func(j *store.Job) { j.Priority, j.Nice = 5000, 0 },
		},
		{
			name:     "the owner may not raise the priority",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Priority: ptr(uint32(5000))},
			who:      alice,
			prio:     1000,
			wantCode: slurm.ErrAccessDenied,
		},
		{
			name:     "the owner lowering it is told that it does not last",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Priority: ptr(uint32(10))},
			who:      alice,
			prio:     1000,
			wantCode: slurm.ErrPrioResetFail,
		},
		{
			name:   "the owner holds with priority 0",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Priority: ptr(uint32(0))},
			who:    alice,
			want:   func(j *store.Job) { j.Hold, j.Reason = store.HoldUser, slurm.ReasonJobHeldUser },
		},
		{
			name:   "root's priority 0 is an admin hold",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Priority: ptr(uint32(0))},
			who:    root,
			want:   func(j *store.Job) { j.Hold, j.Reason = store.HoldAdmin, slurm.ReasonJobHeldAdmin },
		},
		{
			name:     "a held job's priority waits for its release",
			job:      func() store.Job { j := alicesJob(slurm.Pending); j.Hold = store.HoldUser; return j }(),
			update:   api.Update{Priority: ptr(uint32(5000))},
			who:      root,
			wantCode: slurm.ErrJobHeld,
		},
		{
			name:   "the owner sets a positive nice",
			job:    alicesJob(slurm.Pending),
			update: api.Update{Nice: ptr(50)},
			who:    alice,
			want:   func(j *store.Job) { j.Nice = 50 },
		},
		{
			name:     "only an operator sets a negative one",
			job:      alicesJob(slurm.Pending),
			update:   api.Update{Nice: ptr(-5)},
			who:      alice,
			wantCode: slurm.ErrAccessDenied,
		},
		{
			name:   "nice is ignored beside a fixed priority",
			job:    func() store.Job { j := alicesJob(slurm.Pending); j.Priority = 9; return j }(),
			update: api.Update{Nice: ptr(50)},
			who:    alice,
		},
		{
			name:   "name, comment and requeue change on a running job",
			job:    alicesJob(slurm.Running),
			update: api.Update{Name: ptr("eval"), Comment: ptr("see #12"), Requeue: ptr(true)},
			who:    alice,
			want: func(j *store.Job) {
				j.Name, j.Request.Comment, j.Requeue = "eval", "see #12", true
			},
		},
		{
			name:     "a refused update changes nothing, even what came before the refusal",
			job:      alicesJob(slurm.Running),
			update:   api.Update{Comment: ptr("x"), TimeLimit: ptr(time.Hour)},
			who:      alice,
			wantCode: slurm.ErrAccessDenied,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := deepCopy(t, tt.job)
			got, code := change(tt.job, readChanges(tt.update), tt.who, cfg, tt.prio)
			if diff := cmp.Diff(orig, tt.job); diff != "" {
				t.Errorf("the input job was modified (-before +after):\n%s", diff)
			}
			if code != tt.wantCode {
				t.Fatalf("code %d (%s), want %d (%s)", code, code, tt.wantCode, tt.wantCode)
			}
			if code != 0 {
				return
			}
			want := deepCopy(t, tt.job)
			if tt.want != nil {
				tt.want(&want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
		})
	}
}

// deepCopy copies a job through JSON, slices and all.
func deepCopy(t *testing.T, j store.Job) store.Job {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var out store.Job
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseGres(t *testing.T) {
	tests := []struct {
		in      string
		want    []jobscript.Gres
		wantErr bool
	}{
		{in: "gpu", want: []jobscript.Gres{{Name: "gpu", Count: 1}}},
		{in: "gpu:2", want: []jobscript.Gres{{Name: "gpu", Count: 2}}},
		{in: "gpu:a100", want: []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 1}}},
		{in: "gres:gpu:a100:2,shard:4", want: []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 2}, {Name: "shard", Count: 4}}},
		{in: "gres/gpu:0", want: nil},
		{in: "", want: nil},
		{in: "tpu:1", wantErr: true},
		{in: "gpu:a100:x", wantErr: true},
		{in: "gpu:a:b:c", wantErr: true},
		// jobscript's grammar, as sbatch's --gres: Slurm's count suffixes,
		// and no empty type.
		{in: "gpu:1k", want: []jobscript.Gres{{Name: "gpu", Count: 1024}}},
		{in: "gpu:", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseGres(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseGres(%q): error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("parseGres(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestGroupTasks(t *testing.T) {
	got := groupTasks(31, map[int]outcome{
		0: refused(slurm.ErrJobNotPending), 1: {}, 2: {}, 3: {}, 5: refused(slurm.ErrJobNotPending), 9: refused(slurm.ErrInvalidJobID),
	})
	want := []api.Result{
		{Job: "31_0,5", Code: slurm.ErrJobNotPending, Error: "Job is no longer pending execution"},
		{Job: "31_1-3"},
		{Job: "31_9", Code: slurm.ErrInvalidJobID, Error: "Invalid job id specified"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}
