package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

const (
	mib = uint64(1) << 20
	gib = uint64(1) << 30
	// idleUsed is what NVML counts as used on an idle GPU: the driver's
	// own reservation (about this much on an A100 or H100).
	idleUsed = 512 * mib
)

// machine is a go-nvml mock machine (dgxa100.New(), dgxh100.New(), ...)
// completed with an idle machine's answers for the calls that the mock
// leaves unset and would panic on: PCI bus ids from the mock's own
// PciBusID, 0% utilization, no processes, NVLink between every pair (DGX
// GPUs reach each other through NVSwitch), Xid events supported, none
// queued. A test then overrides only the behaviour under test, through the
// helpers below or the mock's func fields directly.
type machine struct {
	srv    *server.Server
	events []nvml.EventData // handed out, one per Wait, until empty
	procs  fakeProcs
}

func newMachine(t interface{ Helper() }, srv *server.Server) *machine {
	t.Helper()
	m := &machine{srv: srv, procs: fakeProcs{users: map[int]string{}, jobs: map[int]string{}, alive: map[int]bool{}}}
	set := &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
			if len(m.events) == 0 {
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
			e := m.events[0]
			m.events = m.events[1:]
			return e, nvml.SUCCESS
		},
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return set, nvml.SUCCESS }
	for i := range srv.Devices {
		m.complete(m.dev(i))
	}
	return m
}

// complete gives a mock device an idle GPU's answers.
func (m *machine) complete(d *server.Device) {
	d.MemoryInfo.Used = idleUsed
	d.MemoryInfo.Free = d.MemoryInfo.Total - idleUsed
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pciInfo(d.PciBusID), nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return nil, nvml.ERROR_NOT_FOUND
	}
	d.GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
		return nvml.P2P_STATUS_OK, nvml.SUCCESS
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		return nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError, nvml.SUCCESS
	}
	d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
}

// heal makes GPU i answer again, idle, after a test broke it.
func (m *machine) heal(i int) {
	m.dev(i).SetMockFuncs()
	m.complete(m.dev(i))
}

func (m *machine) dev(i int) *server.Device { return m.srv.Devices[i].(*server.Device) }

func (m *machine) uuid(i int) string { return m.dev(i).UUID }

// run puts processes on GPU i, each with its memory, and makes NVML count
// that memory as used on top of the driver's reservation.
func (m *machine) run(i int, procs ...nvml.ProcessInfo) {
	d := m.dev(i)
	used := idleUsed
	for _, p := range procs {
		used += p.UsedGpuMemory
	}
	d.MemoryInfo.Used, d.MemoryInfo.Free = used, d.MemoryInfo.Total-used
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
}

// xid queues an Xid event for GPU i.
func (m *machine) xid(i int, xid uint64) {
	m.events = append(m.events, nvml.EventData{Device: m.dev(i), EventType: nvml.EventTypeXidCriticalError, EventData: xid})
}

// inventory reads the machine through FromNVML, with the fake /proc.
func (m *machine) inventory(opts Options) *Inventory {
	opts.Procs = m.procs
	return FromNVML(m.srv, opts)
}

func proc(pid int, mem uint64) nvml.ProcessInfo {
	return nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: mem}
}

func pciInfo(busID string) nvml.PciInfo {
	var p nvml.PciInfo
	for i := 0; i < len(busID) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(busID[i])
	}
	fmt.Sscanf(busID, "%x:%x:%x", &p.Domain, &p.Bus, &p.Device)
	return p
}

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
