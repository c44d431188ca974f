// Package gputest makes go-nvml's mock machines (dgxa100, dgxh100) usable
// as whole machines in tests: it gives every device an idle GPU's answers
// for the calls the mocks leave unset (and would panic on), and offers the
// few things tests do to a GPU: put processes on it, queue an Xid, lose it.
// Tests outside internal/gpu use it without importing go-nvml themselves.
package gputest

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// IdleUsed is what NVML counts as used on an idle GPU: the driver's own
// reservation (about this much on an A100 or H100).
const IdleUsed = 512 << 20

// Machine is a mock NVML machine. Its methods may be called while an
// inventory samples it from another goroutine.
type Machine struct {
	Server *server.Server

	mu     sync.Mutex
	events []nvml.EventData // handed out, one per Wait, until empty
}

// DGXA100 is an eight-A100 machine, idle.
func DGXA100() *Machine { return New(dgxa100.New()) }

// New completes srv with an idle machine's answers: PCI bus ids from the
// mock's own PciBusID, 0% utilization, no processes, NVLink between every
// pair (DGX GPUs reach each other through NVSwitch), Xid events supported,
// none queued.
func New(srv *server.Server) *Machine {
	m := &Machine{Server: srv}
	set := &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
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
		m.complete(m.Dev(i))
	}
	return m
}

// Lib is the machine as the nvml.Interface an inventory reads.
func (m *Machine) Lib() nvml.Interface { return m.Server }

// complete gives a mock device an idle GPU's answers.
func (m *Machine) complete(d *server.Device) {
	m.mu.Lock()
	d.MemoryInfo.Used = IdleUsed
	d.MemoryInfo.Free = d.MemoryInfo.Total - IdleUsed
	m.mu.Unlock()
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		m.mu.Lock()
		defer m.mu.Unlock()
		return d.MemoryInfo, nvml.SUCCESS
	}
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return PCIInfo(d.PciBusID), nvml.SUCCESS }
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

// Dev is GPU i in the mock's own order.
func (m *Machine) Dev(i int) *server.Device { return m.Server.Devices[i].(*server.Device) }

// UUID is GPU i's UUID.
func (m *Machine) UUID(i int) string { return m.Dev(i).UUID }

// Heal makes GPU i answer again, idle, after a test broke it.
func (m *Machine) Heal(i int) {
	m.Dev(i).SetMockFuncs()
	m.complete(m.Dev(i))
}

// Run puts processes on GPU i, each with its memory, and makes NVML count
// that memory as used on top of the driver's reservation.
func (m *Machine) Run(i int, procs ...nvml.ProcessInfo) {
	d := m.Dev(i)
	used := uint64(IdleUsed)
	for _, p := range procs {
		used += p.UsedGpuMemory
	}
	m.mu.Lock()
	d.MemoryInfo.Used, d.MemoryInfo.Free = used, d.MemoryInfo.Total-used
	m.mu.Unlock()
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
}

// RunLive is Run for real host processes: NVML lists each only while it
// lives, and its memory comes back when it is gone, as the driver does.
func (m *Machine) RunLive(i int, procs ...nvml.ProcessInfo) {
	d := m.Dev(i)
	live := func() []nvml.ProcessInfo {
		var out []nvml.ProcessInfo
		for _, p := range procs {
			if procfs.Alive(int(p.Pid)) {
				out = append(out, p)
			}
		}
		return out
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return live(), nvml.SUCCESS }
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		used := uint64(IdleUsed)
		for _, p := range live() {
			used += p.UsedGpuMemory
		}
		return nvml.Memory{Total: d.MemoryInfo.Total, Used: used, Free: d.MemoryInfo.Total - used}, nvml.SUCCESS
	}
}

// Lose makes GPU i fall off the bus: every call on it fails with
// ERROR_GPU_IS_LOST, as after an Xid 79.
func (m *Machine) Lose(i int) {
	d := m.Dev(i)
	lost := nvml.ERROR_GPU_IS_LOST
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, lost }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, lost }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, lost }
}

// Xid queues an Xid event for GPU i.
func (m *Machine) Xid(i int, xid uint64) {
	m.QueueEvent(nvml.EventData{Device: m.Dev(i), EventType: nvml.EventTypeXidCriticalError, EventData: xid})
}

// QueueEvent queues an event as the driver would report it.
func (m *Machine) QueueEvent(e nvml.EventData) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

// Proc is a process on a GPU holding mem bytes.
func Proc(pid int, mem uint64) nvml.ProcessInfo {
	return nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: mem}
}

// PCIInfo is the PciInfo NVML gives for a bus id "0000:07:00.0".
func PCIInfo(busID string) nvml.PciInfo {
	var p nvml.PciInfo
	for i := 0; i < len(busID) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(busID[i])
	}
	fmt.Sscanf(busID, "%x:%x:%x", &p.Domain, &p.Bus, &p.Device)
	return p
}

// DriverMismatch makes nvmlInit fail as it does after a driver upgrade
// without a reboot (the kernel module and the library differ).
func (m *Machine) DriverMismatch() {
	m.Server.InitFunc = func() nvml.Return { return nvml.ERROR_LIB_RM_VERSION_MISMATCH }
}
