package gpu

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// FromDriver reads the machine's GPUs through the system's NVML library:
// FromNVML(nvml.New(), opts), for the daemon, which must not import go-nvml.
func FromDriver(opts Options) *Inventory { return FromNVML(nvml.New(), opts) }

// FromNVML reads the machine's GPUs through lib: nvml.New() in the daemon,
// a go-nvml mock machine in tests. It calls lib.Init and never fails:
//   - no NVML library, or no kernel driver: an Inventory with no GPUs
//     (ModeNone) that says so in its Comment — a normal state;
//   - a driver/library version mismatch (a driver upgraded without a
//     reboot) or another Init failure: ModeNVML with Snapshot.NodeDrain set,
//     and every Sample tries Init again;
//   - otherwise: ModeNVML.
func FromNVML(lib nvml.Interface, opts Options) *Inventory {
	switch ret := lib.Init(); ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return None("no NVIDIA driver: running without GPUs")
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return None("NVIDIA driver not loaded: running without GPUs")
	case nvml.SUCCESS:
		s := &nvmlSource{lib: lib, devs: map[string]*nvmlDev{}}
		s.start()
		return newInventory(s, opts)
	default:
		return newInventory(&nvmlSource{lib: lib, devs: map[string]*nvmlDev{}, initRet: ret}, opts)
	}
}

// nvmlSource reads GPUs through NVML. What never changes for a GPU (name,
// PCI bus id, NVLink peers, which calls it does not support) is read once
// and kept by UUID, so that a sample costs a handful of calls per GPU.
type nvmlSource struct {
	lib     nvml.Interface
	up      bool
	initRet nvml.Return // why Init failed, while !up
	driver  string
	events  nvml.EventSet // nil when Xid events cannot be watched
	devs    map[string]*nvmlDev
	// peersOf is the set of GPUs (sorted UUIDs) the NVLink peers were
	// computed for; they are computed again when it changes.
	peersOf  string
	warnings []string // from start and registration, reported once
}

type nvmlDev struct {
	h          nvml.Device
	model      string
	busID      string
	haveStatic bool
	registered bool
	noUtil     bool // GetUtilizationRates not supported
	noProcs    bool // GetComputeRunningProcesses not supported
	noProcUtil bool // GetProcessUtilization not supported
	lastSeen   uint64
	peers      []string
}

func (s *nvmlSource) mode() Mode { return ModeNVML }

func (s *nvmlSource) comment() string {
	if !s.up {
		return "GPUs: nvml: " + initDrain(s.initRet)
	}
	if s.driver == "" {
		return "GPUs: nvml"
	}
	return "GPUs: nvml, driver " + s.driver
}

// start runs once NVML is initialized.
func (s *nvmlSource) start() {
	s.up = true
	s.initRet = nvml.SUCCESS
	// After a restart of NVML, handles come again from the enumeration;
	// event registrations and peers are made anew.
	s.peersOf = ""
	for _, d := range s.devs {
		d.registered = false
	}
	if v, ret := s.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		s.driver = v
	}
	es, ret := s.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		s.warnings = append(s.warnings, "Xid events not watched: "+retText(ret))
		return
	}
	s.events = es
}

func (s *nvmlSource) close() {
	if s.events != nil {
		s.events.Free()
		s.events = nil
	}
	if s.up {
		s.lib.Shutdown()
		s.up = false
	}
}

// initDrain is the node drain reason for an NVML that will not start.
func initDrain(r nvml.Return) string {
	if r == nvml.ERROR_LIB_RM_VERSION_MISMATCH {
		return "driver mismatch, reboot needed"
	}
	return "nvml: " + retText(r)
}

func (s *nvmlSource) read(time.Time, []Job) reading {
	if !s.up {
		// Try again: after a reboot the daemon restarts anyway, but a
		// driver reloaded by hand should not need one.
		if r := s.lib.Init(); r != nvml.SUCCESS {
			s.initRet = r
			return s.failed(r)
		}
		s.start()
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIB_RM_VERSION_MISMATCH || ret == nvml.ERROR_UNINITIALIZED {
			s.close()
			s.initRet = ret
		}
		return s.failed(ret)
	}
	rd := reading{driver: s.driver, warnings: s.warnings}
	s.warnings = nil
	for i := range n {
		h, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			// Without a handle there is no UUID to blame: the GPU that
			// used to answer will show up as gone.
			rd.warnings = append(rd.warnings, fmt.Sprintf("nvml: GPU at NVML index %d: %s", i, retText(ret)))
			continue
		}
		uuid, ret := h.GetUUID()
		if ret != nvml.SUCCESS {
			rd.warnings = append(rd.warnings, fmt.Sprintf("nvml: UUID of GPU at NVML index %d: %s", i, retText(ret)))
			continue
		}
		d := s.devs[uuid]
		if d == nil {
			d = &nvmlDev{}
			s.devs[uuid] = d
		}
		d.h = h
		rd.devices = append(rd.devices, s.sample(i, uuid, d, &rd))
	}
	s.linkPeers(rd.devices)
	rd.xids, rd.warnings = s.poll(rd.warnings)
	rd.comment = nvmlComment(s.driver, rd.devices)
	return rd
}

func (s *nvmlSource) failed(r nvml.Return) reading {
	reason := initDrain(r)
	return reading{failed: true, nodeDrain: reason, comment: "GPUs: nvml: " + reason, driver: s.driver}
}

// sample reads one GPU. The first call that fails for a reason other than
// "not supported" ends the reading: the GPU is drained with that reason.
func (s *nvmlSource) sample(i int, uuid string, d *nvmlDev, rd *reading) deviceReading {
	dr := deviceReading{uuid: uuid, nvmlIndex: i, util: -1}
	fail := func(what string, r nvml.Return) deviceReading {
		dr.err = fmt.Sprintf("nvml %s: %s", what, retText(r))
		dr.lost = r == nvml.ERROR_GPU_IS_LOST
		return dr
	}
	if !d.haveStatic {
		name, ret := d.h.GetName()
		if ret != nvml.SUCCESS {
			return fail("name", ret)
		}
		pci, ret := d.h.GetPciInfo()
		if ret != nvml.SUCCESS {
			return fail("PCI info", ret)
		}
		d.model, d.busID, d.haveStatic = name, cString(pci.BusId[:]), true
	}
	dr.model, dr.busID = d.model, d.busID
	if !d.registered {
		d.registered = true
		if w := s.register(d); w != "" {
			rd.warnings = append(rd.warnings, fmt.Sprintf("GPU %s: %s", uuid, w))
		}
	}

	mem, ret := d.h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return fail("memory info", ret)
	}
	dr.total, dr.used, dr.memKnown = mem.Total, min(mem.Used, mem.Total), true

	if !d.noUtil {
		u, ret := d.h.GetUtilizationRates()
		switch {
		case ret == nvml.SUCCESS:
			dr.util = int(u.Gpu)
		case optional(ret):
			d.noUtil = true
		default:
			return fail("utilization", ret)
		}
	}

	if !d.noProcs {
		ps, ret := d.h.GetComputeRunningProcesses()
		switch {
		case ret == nvml.SUCCESS:
			dr.procsKnown = true
			dr.procs = make([]rawProc, 0, len(ps))
			for _, p := range ps {
				rp := rawProc{pid: int(p.Pid), mem: p.UsedGpuMemory, util: -1}
				if p.UsedGpuMemory == ^uint64(0) { // NVML_VALUE_NOT_AVAILABLE
					rp.mem, dr.procMemUnknown = 0, true
				}
				dr.procs = append(dr.procs, rp)
			}
		case optional(ret):
			d.noProcs = true
		default:
			return fail("processes", ret)
		}
	}

	if !d.noProcUtil && len(dr.procs) > 0 {
		samples, ret := d.h.GetProcessUtilization(d.lastSeen)
		switch {
		case ret == nvml.SUCCESS:
			d.lastSeen = procUtil(dr.procs, samples, d.lastSeen)
		case ret == nvml.ERROR_NOT_FOUND: // no sample since lastSeen
		case optional(ret):
			d.noProcUtil = true
		default:
			return fail("process utilization", ret)
		}
	}
	return dr
}

// procUtil gives each process its latest SM utilization sample and
// returns the newest timestamp seen, to ask only for newer ones next time.
func procUtil(procs []rawProc, samples []nvml.ProcessUtilizationSample, last uint64) uint64 {
	latest := map[int]nvml.ProcessUtilizationSample{}
	for _, s := range samples {
		if cur, ok := latest[int(s.Pid)]; !ok || s.TimeStamp >= cur.TimeStamp {
			latest[int(s.Pid)] = s
		}
		last = max(last, s.TimeStamp)
	}
	for i := range procs {
		if s, ok := latest[procs[i].pid]; ok {
			procs[i].util = int(s.SmUtil)
		}
	}
	return last
}

// register asks for the GPU's critical Xid events. A GPU that cannot
// report them (older or consumer cards) is still used: NVML calls that
// fail drain it all the same.
func (s *nvmlSource) register(d *nvmlDev) string {
	if s.events == nil {
		return ""
	}
	supported, ret := d.h.GetSupportedEventTypes()
	if ret != nvml.SUCCESS {
		return "Xid events not watched: " + retText(ret)
	}
	mask := uint64(nvml.EventTypeXidCriticalError) & supported
	if mask == 0 {
		return "Xid events not watched: not supported"
	}
	if ret := d.h.RegisterEvents(mask, s.events); ret != nvml.SUCCESS {
		return "Xid events not watched: " + retText(ret)
	}
	return ""
}

// poll takes the Xid events queued since the last sample without waiting
// (a zero timeout), so sampling needs no goroutine of its own.
func (s *nvmlSource) poll(warnings []string) ([]XidEvent, []string) {
	if s.events == nil {
		return nil, warnings
	}
	var xids []XidEvent
	for range 256 { // a storm of events waits for the next sample
		e, ret := s.events.Wait(0)
		if ret == nvml.ERROR_TIMEOUT {
			break
		}
		if ret != nvml.SUCCESS {
			warnings = append(warnings, "nvml: waiting for Xid events: "+retText(ret))
			break
		}
		if e.EventType != nvml.EventTypeXidCriticalError {
			continue
		}
		uuid := ""
		if e.Device != nil {
			uuid, ret = e.Device.GetUUID()
		}
		if uuid == "" || ret != nvml.SUCCESS {
			warnings = append(warnings, fmt.Sprintf("nvml: Xid %d on a GPU that cannot be named", e.EventData))
			continue
		}
		xids = append(xids, xidEvent(uuid, e.EventData))
	}
	return xids, warnings
}

// linkPeers finds which GPUs reach each other over NVLink, directly or
// through NVSwitch (NVML's P2P status for the NVLink capability covers
// both), when the set of GPUs changed since it last looked.
func (s *nvmlSource) linkPeers(devs []deviceReading) {
	var ok []string
	for _, d := range devs {
		if d.err == "" {
			ok = append(ok, d.uuid)
		}
	}
	slices.Sort(ok)
	if key := strings.Join(ok, ","); key != s.peersOf {
		s.peersOf = key
		for _, u := range ok {
			s.devs[u].peers = nil
		}
		for i, a := range ok {
			for _, b := range ok[i+1:] {
				st, ret := s.devs[a].h.GetP2PStatus(s.devs[b].h, nvml.P2P_CAPS_INDEX_NVLINK)
				if ret == nvml.SUCCESS && st == nvml.P2P_STATUS_OK {
					s.devs[a].peers = append(s.devs[a].peers, b)
					s.devs[b].peers = append(s.devs[b].peers, a)
				}
			}
		}
		for _, u := range ok {
			slices.Sort(s.devs[u].peers)
		}
	}
	for i := range devs {
		if d := s.devs[devs[i].uuid]; devs[i].err == "" {
			devs[i].peers = slices.Clone(d.peers)
		}
	}
}

// probe asks NVML whether the GPU answers again, for Resume.
func (s *nvmlSource) probe(uuid string) error {
	if !s.up {
		return fmt.Errorf("nvml: %s", retText(s.initRet))
	}
	h, ret := s.lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return fmt.Errorf("nvml handle: %s", retText(ret))
	}
	if _, ret := h.GetMemoryInfo(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml memory info: %s", retText(ret))
	}
	return nil
}

// nvmlComment says what NVML shows: "GPUs: nvml, driver 550.54.15
// (8 x NVIDIA A100-SXM4-80GB)".
func nvmlComment(driver string, devs []deviceReading) string {
	var models []string
	count := map[string]int{}
	for _, d := range devs {
		if count[d.model] == 0 {
			models = append(models, d.model)
		}
		count[d.model]++
	}
	if len(devs) == 0 {
		return "no NVIDIA GPUs found: running without GPUs"
	}
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = fmt.Sprintf("%d x %s", count[m], cmp.Or(m, "unknown model"))
	}
	head := "GPUs: nvml"
	if driver != "" {
		head += ", driver " + driver
	}
	return head + " (" + strings.Join(parts, ", ") + ")"
}

// cString converts a NUL-terminated C char array.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}
