package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/slurm-lite/slurm-lite/internal/gpu/gputest"
)

const (
	mib      = uint64(1) << 20
	gib      = uint64(1) << 30
	idleUsed = gputest.IdleUsed
)

// machine is a go-nvml mock machine completed by gputest, with a fake
// /proc. A test overrides only the behaviour under test, through the
// helpers below or the mock's func fields directly.
type machine struct {
	*gputest.Machine
	srv   *server.Server
	procs fakeProcs
}

func newMachine(t interface{ Helper() }, srv *server.Server) *machine {
	t.Helper()
	return &machine{Machine: gputest.New(srv), srv: srv,
		procs: fakeProcs{users: map[int]string{}, jobs: map[int]string{}, alive: map[int]bool{}}}
}

func (m *machine) dev(i int) *server.Device             { return m.Dev(i) }
func (m *machine) uuid(i int) string                    { return m.UUID(i) }
func (m *machine) heal(i int)                           { m.Heal(i) }
func (m *machine) run(i int, procs ...nvml.ProcessInfo) { m.Run(i, procs...) }
func (m *machine) xid(i int, xid uint64)                { m.Xid(i, xid) }

// inventory reads the machine through FromNVML, with the fake /proc.
func (m *machine) inventory(opts Options) *Inventory {
	opts.Procs = m.procs
	return FromNVML(m.srv, opts)
}

func proc(pid int, mem uint64) nvml.ProcessInfo { return gputest.Proc(pid, mem) }

// fakeProcs is /proc as a test wants it.
type fakeProcs struct {
	users map[int]string
	jobs  map[int]string // SLURM_JOB_ID in the environment
	alive map[int]bool
}

var _ Procs = fakeProcs{}

func (f fakeProcs) User(pid int) (string, error) {
	if u, ok := f.users[pid]; ok {
		return u, nil
	}
	return "", fmt.Errorf("no process %d", pid)
}

func (f fakeProcs) JobID(pid int) (string, error) { return f.jobs[pid], nil }
func (f fakeProcs) Alive(pid int) bool            { return f.alive[pid] }
