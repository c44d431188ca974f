package gpu

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"
)

func TestStartWithoutUsableNVML(t *testing.T) {
	tests := []struct {
		name          string
		init          nvml.Return
		wantMode      Mode
		wantComment   string
		wantNodeDrain string
	}{
		{
			name: "no NVML library is a normal state: no GPUs, and it says so",
			init: nvml.ERROR_LIBRARY_NOT_FOUND, wantMode: ModeNone,
			wantComment: "no NVIDIA driver: running without GPUs",
		},
		{
			name: "a library without its kernel driver: no GPUs either",
			init: nvml.ERROR_DRIVER_NOT_LOADED, wantMode: ModeNone,
			wantComment: "NVIDIA driver not loaded: running without GPUs",
		},
		{
			name: "a driver upgraded without a reboot is not 'no GPUs': the node is drained",
			init: nvml.ERROR_LIB_RM_VERSION_MISMATCH, wantMode: ModeNVML,
			wantComment:   "GPUs: nvml: driver mismatch, reboot needed",
			wantNodeDrain: "driver mismatch, reboot needed",
		},
		{
			name: "any other Init failure drains the node with NVML's words",
			init: nvml.ERROR_UNKNOWN, wantMode: ModeNVML,
			wantComment:   "GPUs: nvml: nvml: unknown error",
			wantNodeDrain: "nvml: unknown error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			m.srv.InitFunc = func() nvml.Return { return tt.init }

			inv := m.inventory(Options{})
			comment := inv.Comment()
			snap := inv.Sample(t0, nil)

			type view struct {
				Mode               Mode
				Comment, NodeDrain string
				GPUs               int
				Gres               string
			}
			want := view{tt.wantMode, tt.wantComment, tt.wantNodeDrain, 0, ""}
			got := view{snap.Mode, snap.Comment, snap.NodeDrain, len(snap.GPUs), Gres(snap.GPUs)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
			if comment != tt.wantComment || inv.Mode() != tt.wantMode {
				t.Errorf("before sampling: Comment() = %q, Mode() = %q; want %q, %q", comment, inv.Mode(), tt.wantComment, tt.wantMode)
			}
		})
	}
}

// After a mismatch, each sample tries Init again: a driver reloaded by hand
// brings the GPUs back without restarting the daemon.
func TestDriverMismatchClearsWhenNVMLStarts(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	ret := nvml.ERROR_LIB_RM_VERSION_MISMATCH
	m.srv.InitFunc = func() nvml.Return { return ret }
	inv := m.inventory(Options{})
	if s := inv.Sample(t0, nil); s.NodeDrain != "driver mismatch, reboot needed" {
		t.Fatalf("NodeDrain = %q, want the mismatch", s.NodeDrain)
	}
	ret = nvml.SUCCESS
	s := inv.Sample(t0.Add(5*time.Second), nil)
	if s.NodeDrain != "" || len(s.GPUs) != 8 || s.Driver != "550.54.15" {
		t.Errorf("after Init succeeds: NodeDrain %q, %d GPUs, driver %q; want none, 8, 550.54.15", s.NodeDrain, len(s.GPUs), s.Driver)
	}
}

// A whole-NVML failure in the middle of the run (the GPU count cannot be
// read) drains the node, but is no reason to call every GPU lost and kill
// every job.
func TestNVMLFailingForEveryGPUDrainsTheNodeNotTheJobs(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	inv.Sample(t0, nil)
	m.srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	job := Job{ID: "42", GPUs: []string{m.uuid(0)}}

	s := inv.Sample(t0.Add(5*time.Second), []Job{job})

	if s.NodeDrain != "nvml: unknown error" || len(s.Lost) != 0 {
		t.Errorf("NodeDrain %q, Lost %v; want the NVML error and nothing lost", s.NodeDrain, s.Lost)
	}
	if len(s.GPUs) != 8 || s.GPUs[0].UUID != m.uuid(0) || s.GPUs[0].State != Drained {
		t.Errorf("want the 8 known GPUs shown drained, got %d, first %+v", len(s.GPUs), s.GPUs[0])
	}
}

func TestGPULostInTheMiddleOfASample(t *testing.T) {
	tests := []struct {
		name       string
		fail       func(d *server.Device)
		wantState  State
		wantReason string
	}{
		{
			name: "its memory cannot be read: lost, its job ends as NODE_FAIL",
			fail: func(d *server.Device) {
				d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
			},
			wantState: Lost, wantReason: "nvml memory info: GPU is lost",
		},
		{
			name: "its memory was read but its process list is lost: lost all the same",
			fail: func(d *server.Device) {
				d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
			},
			wantState: Lost, wantReason: "nvml processes: GPU is lost",
		},
		{
			name: "another error is a drain, not a loss: its job keeps running",
			fail: func(d *server.Device) {
				d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_UNKNOWN }
			},
			wantState: Drained, wantReason: "nvml utilization: unknown error",
		},
		{
			name: "a GPU that needs a reset is drained",
			fail: func(d *server.Device) {
				d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_RESET_REQUIRED }
			},
			wantState: Drained, wantReason: "nvml memory info: GPU requires reset",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			inv := m.inventory(Options{})
			inv.Sample(t0, nil)
			m.run(3, proc(100, 10*gib))
			m.run(4, proc(200, 3*gib))
			jobs := []Job{
				{ID: "42", PIDs: []int{100}, GPUs: []string{m.uuid(3)}},
				{ID: "43", PIDs: []int{200}, GPUs: []string{m.uuid(4)}},
			}
			tt.fail(m.dev(3))

			s := inv.Sample(t0.Add(5*time.Second), jobs)

			var wantLost []LostGPU
			if tt.wantState == Lost {
				wantLost = []LostGPU{{UUID: m.uuid(3), Index: 3, Reason: tt.wantReason, Jobs: []string{"42"}}}
			}
			if diff := cmp.Diff(wantLost, s.Lost); diff != "" {
				t.Errorf("Lost (-want +got):\n%s", diff)
			}
			g := s.GPUs[3]
			if g.UUID != m.uuid(3) || g.State != tt.wantState || g.Reason != tt.wantReason || g.Offered() {
				t.Errorf("GPU 3 = %s %s %q offered=%v; want %s %q, not offered", g.UUID, g.State, g.Reason, g.Offered(), tt.wantState, tt.wantReason)
			}
			// The rest of the sample goes on: the next GPU was read.
			if n := s.GPUs[4]; n.State != Up || n.MemoryUsed != idleUsed+3*gib || s.Jobs["43"].Peak() != 3*gib {
				t.Errorf("GPU 4 = %s used %d, job 43 peak %d; want up, %d, %d", n.State, n.MemoryUsed, s.Jobs["43"].Peak(), idleUsed+3*gib, 3*gib)
			}

			// It answers again: still drained, with the same reason, until
			// an operator resumes it.
			m.heal(3)
			s = inv.Sample(t0.Add(10*time.Second), nil)
			if g := s.GPUs[3]; g.State != Drained || g.Reason != tt.wantReason || len(s.Lost) != 0 {
				t.Errorf("after it answers: GPU 3 %s %q, Lost %v; want drained %q, none lost", g.State, g.Reason, s.Lost, tt.wantReason)
			}
			if err := inv.Resume("3"); err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if g := inv.Sample(t0.Add(15*time.Second), nil).GPUs[3]; g.State != Up {
				t.Errorf("after Resume: GPU 3 %s %q, want up", g.State, g.Reason)
			}
		})
	}
}

// A card that falls off the bus disappears from NVML's enumeration: the
// indices after it shift, the UUIDs do not, and its jobs are reported.
func TestGPUFallingOffTheBus(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	inv.Sample(t0, nil)
	uuids := make([]string, 8)
	for i := range uuids {
		uuids[i] = m.uuid(i)
	}
	m.srv.Devices = slices.Delete(m.srv.Devices, 2, 3)
	jobs := []Job{
		{ID: "42", GPUs: []string{uuids[2], uuids[3]}},
		{ID: "43", GPUs: []string{uuids[5]}},
		{ID: "41", GPUs: []string{uuids[2]}, Ended: t0},
	}

	s := inv.Sample(t0.Add(5*time.Second), jobs)

	const gone = "GPU is gone from NVML (fell off the bus?)"
	if diff := cmp.Diff([]LostGPU{{UUID: uuids[2], Index: 2, Reason: gone, Jobs: []string{"42"}}}, s.Lost); diff != "" {
		t.Errorf("Lost (-want +got):\n%s", diff)
	}
	index := map[string]int{}
	for _, g := range s.GPUs {
		index[g.UUID] = g.Index
	}
	want := map[string]int{uuids[0]: 0, uuids[1]: 1, uuids[2]: -1, uuids[3]: 2, uuids[4]: 3, uuids[5]: 4, uuids[6]: 5, uuids[7]: 6}
	if diff := cmp.Diff(want, index); diff != "" {
		t.Errorf("indices by UUID (-want +got):\n%s", diff)
	}
	if g, _ := s.Find(uuids[2]); g.State != Lost || g.Reason != gone || g.Model != "Mock NVIDIA A100-SXM4-40GB" {
		t.Errorf("the gone GPU shows %s %q %q; want lost, %q, its model", g.State, g.Reason, g.Model, gone)
	}
	if diff := cmp.Diff(Release{Drained: []string{uuids[2]}}, s.Releases["41"], equateEmpty); diff != "" {
		t.Errorf("release of a job whose GPU is gone (-want +got):\n%s", diff)
	}
	if got := Gres(s.GPUs); got != "gpu:mock_nvidia_a100-sxm4-40gb:8" {
		t.Errorf("Gres = %q: a lost GPU still counts (Slurm drains, it does not shrink the node)", got)
	}
	if err := inv.Resume(uuids[2]); err == nil {
		t.Errorf("Resume of a GPU NVML cannot find succeeded")
	}
}

func TestXidEvents(t *testing.T) {
	tests := []struct {
		xid        uint64
		wantState  State
		wantReason string
		wantText   string
		wantApp    bool
	}{
		{xid: 79, wantState: Lost, wantReason: "Xid 79: GPU has fallen off the bus", wantText: "Xid 79: GPU has fallen off the bus"},
		{xid: 48, wantState: Drained, wantReason: "Xid 48: double-bit ECC error", wantText: "Xid 48: double-bit ECC error"},
		{xid: 95, wantState: Drained, wantReason: "Xid 95: uncontained ECC error", wantText: "Xid 95: uncontained ECC error"},
		{xid: 1234, wantState: Drained, wantReason: "Xid 1234", wantText: "Xid 1234"},
		{xid: 13, wantState: Up, wantText: "Xid 13: graphics engine exception", wantApp: true},
		{xid: 31, wantState: Up, wantText: "Xid 31: GPU memory page fault", wantApp: true},
		{xid: 43, wantState: Up, wantText: "Xid 43: GPU stopped processing", wantApp: true},
		{xid: 45, wantState: Up, wantText: "Xid 45: preemptive cleanup", wantApp: true},
		{xid: 68, wantState: Up, wantText: "Xid 68: video processor exception", wantApp: true},
		{xid: 109, wantState: Up, wantText: "Xid 109: context switch timeout", wantApp: true},
	}
	for _, tt := range tests {
		name := "critical Xid " + tt.wantText + " drains the GPU"
		if tt.wantApp {
			name = "application Xid " + tt.wantText + " drains nothing"
		}
		t.Run(name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			inv := m.inventory(Options{})
			inv.Sample(t0, nil)
			m.xid(5, tt.xid)

			s := inv.Sample(t0.Add(5*time.Second), []Job{{ID: "42", GPUs: []string{m.uuid(5)}}})

			want := []XidEvent{{UUID: m.uuid(5), Xid: tt.xid, Application: tt.wantApp, Text: tt.wantText}}
			if diff := cmp.Diff(want, s.Xids); diff != "" {
				t.Errorf("Xids (-want +got):\n%s", diff)
			}
			if g := s.GPUs[5]; g.State != tt.wantState || g.Reason != tt.wantReason {
				t.Errorf("GPU 5 %s %q, want %s %q", g.State, g.Reason, tt.wantState, tt.wantReason)
			}
			if (tt.wantState == Lost) != (len(s.Lost) == 1) {
				t.Errorf("Lost = %v", s.Lost)
			}
			for i, g := range s.GPUs {
				if i != 5 && g.State != Up {
					t.Errorf("GPU %d is %s: an Xid on GPU 5 touched it", i, g.State)
				}
			}
			if x := inv.Sample(t0.Add(10*time.Second), nil).Xids; len(x) != 0 {
				t.Errorf("the event was reported twice: %v", x)
			}
		})
	}
}

// A GPU that falls off the bus reports Xid 79 and, in the same sample,
// fails its calls with "GPU is lost" (as the real driver does; the NVML
// stub's end-to-end test found it): the Xid is the cause, and the reason
// shown while it is lost, not the failed call.
func TestXid79WithTheGPULostKeepsTheXidAsTheReason(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	inv.Sample(t0, nil)
	m.xid(5, 79)
	m.dev(5).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	job := []Job{{ID: "42", GPUs: []string{m.uuid(5)}}}
	const why = "Xid 79: GPU has fallen off the bus"
	for i, at := range []time.Duration{5 * time.Second, 10 * time.Second} {
		s := inv.Sample(t0.Add(at), job)
		if g := s.GPUs[5]; g.State != Lost || g.Reason != why {
			t.Errorf("sample %d: GPU 5 %s %q, want lost %q", i+1, g.State, g.Reason, why)
		}
		if diff := cmp.Diff([]LostGPU{{UUID: m.uuid(5), Index: 5, Reason: why, Jobs: []string{"42"}}}, s.Lost); diff != "" {
			t.Errorf("sample %d: Lost (-want +got):\n%s", i+1, diff)
		}
	}
	// It answers again: drained with the Xid, until resumed.
	m.heal(5)
	if g := inv.Sample(t0.Add(15*time.Second), nil).GPUs[5]; g.State != Drained || g.Reason != why {
		t.Errorf("after it answers: GPU 5 %s %q, want drained %q", g.State, g.Reason, why)
	}
	if err := inv.Resume("5"); err != nil {
		t.Fatal(err)
	}
	if g := inv.Sample(t0.Add(20*time.Second), nil).GPUs[5]; g.State != Up {
		t.Errorf("after Resume: GPU 5 %s %q, want up", g.State, g.Reason)
	}
}

// A GPU that cannot report Xid events (consumer cards) or utilization is
// still used: "not supported" is no health problem.
func TestUnsupportedCallsAreNoHealthProblem(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	d := m.dev(1)
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	d.GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	inv := m.inventory(Options{})

	s := inv.Sample(t0, nil)

	g := s.GPUs[1]
	if g.State != Up || g.Utilization != -1 {
		t.Errorf("GPU 1 %s, utilization %d; want up, -1 (unknown)", g.State, g.Utilization)
	}
	wantWarn := []string{"GPU " + m.uuid(1) + ": Xid events not watched: not supported"}
	if diff := cmp.Diff(wantWarn, s.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
	if s2 := inv.Sample(t0.Add(time.Second), nil); len(s2.Warnings) != 0 {
		t.Errorf("the warning came again: %v", s2.Warnings)
	}
}

func TestDrainAndResume(t *testing.T) {
	tests := []struct {
		name      string
		do        func(m *machine, inv *Inventory) error
		wantErr   string
		wantState State
		wantWhy   string
	}{
		{
			name:      "an operator drains GPU 2 by index, with a reason",
			do:        func(m *machine, inv *Inventory) error { return inv.Drain("2", "fan noise") },
			wantState: Drained, wantWhy: "fan noise",
		},
		{
			name:      "by UUID",
			do:        func(m *machine, inv *Inventory) error { return inv.Drain(m.uuid(2), "fan noise") },
			wantState: Drained, wantWhy: "fan noise",
		},
		{
			name:      "a drain needs a reason, as in scontrol",
			do:        func(m *machine, inv *Inventory) error { return inv.Drain("2", " ") },
			wantErr:   `drain GPU "2": a reason is required`,
			wantState: Up,
		},
		{
			name:      "an unknown GPU",
			do:        func(m *machine, inv *Inventory) error { return inv.Drain("9", "x") },
			wantErr:   `drain GPU: no GPU "9" on this node (give an index, a UUID or a PCI bus id)`,
			wantState: Up,
		},
		{
			name: "drained then resumed: offered again",
			do: func(m *machine, inv *Inventory) error {
				if err := inv.Drain("2", "fan noise"); err != nil {
					return err
				}
				return inv.Resume("2")
			},
			wantState: Up,
		},
		{
			name: "a GPU whose NVML calls still fail is not resumed",
			do: func(m *machine, inv *Inventory) error {
				m.dev(2).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_UNKNOWN }
				inv.Sample(t0.Add(time.Second), nil)
				return inv.Resume("2")
			},
			wantErr:   `resume GPU "2": it still fails (nvml memory info: unknown error), so it stays drained`,
			wantState: Drained, wantWhy: "nvml memory info: unknown error",
		},
		{
			name: "an operator's reason replaces the health reason",
			do: func(m *machine, inv *Inventory) error {
				m.xid(2, 48)
				inv.Sample(t0.Add(time.Second), nil)
				return inv.Drain("2", "RMA ticket 77")
			},
			wantState: Drained, wantWhy: "RMA ticket 77",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			inv := m.inventory(Options{})
			inv.Sample(t0, nil)

			err := tt.do(m, inv)

			if got := errText(err); got != tt.wantErr {
				t.Errorf("error = %q, want %q", got, tt.wantErr)
			}
			g := inv.Sample(t0.Add(time.Minute), nil).GPUs[2]
			if g.State != tt.wantState || g.Reason != tt.wantWhy {
				t.Errorf("GPU 2 %s %q, want %s %q", g.State, g.Reason, tt.wantState, tt.wantWhy)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// NVML that stops answering as a whole (uninitialized under our feet) is
// started again at the next sample, with its Xid registrations made anew.
func TestNVMLStartedAgainAfterItStopped(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	inv.Sample(t0, nil)
	count := m.srv.DeviceGetCountFunc
	m.srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNINITIALIZED }

	s := inv.Sample(t0.Add(5*time.Second), nil)
	if s.NodeDrain != "nvml: NVML not initialized" || len(s.Lost) != 0 {
		t.Errorf("NodeDrain %q, Lost %v", s.NodeDrain, s.Lost)
	}

	m.srv.DeviceGetCountFunc = count
	m.xid(4, 48)
	s = inv.Sample(t0.Add(10*time.Second), nil)
	if s.NodeDrain != "" || len(s.GPUs) != 8 || s.GPUs[4].State != Drained {
		t.Errorf("after NVML came back: NodeDrain %q, %d GPUs, GPU 4 %s", s.NodeDrain, len(s.GPUs), s.GPUs[4].State)
	}
	if n := len(m.srv.InitCalls()); n != 2 {
		t.Errorf("Init called %d times, want 2", n)
	}
	if n := len(m.dev(0).RegisterEventsCalls()); n != 2 {
		t.Errorf("GPU 0 registered for events %d times, want 2 (once per NVML start)", n)
	}
}

func TestCloseShutsNVMLDown(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	freed := 0
	m.srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mockEventSet{free: func() { freed++ }}, nvml.SUCCESS
	}
	inv := m.inventory(Options{})
	inv.Sample(t0, nil)
	inv.Close()
	if n := len(m.srv.ShutdownCalls()); n != 1 || freed != 1 {
		t.Errorf("Shutdown called %d times, event set freed %d times; want 1, 1", n, freed)
	}
}

func TestEventProblemsAreWarnings(t *testing.T) {
	tests := []struct {
		name  string
		setup func(m *machine)
		want  []string
	}{
		{
			name: "no event set at all: a warning once, GPUs still used",
			setup: func(m *machine) {
				m.srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
			},
			want: []string{"Xid events not watched: not supported"},
		},
		{
			name: "waiting for events fails",
			setup: func(m *machine) {
				m.srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
					return &mockEventSet{wait: func() (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_UNKNOWN }}, nvml.SUCCESS
				}
			},
			want: []string{"nvml: waiting for Xid events: unknown error"},
		},
		{
			name: "an Xid on a GPU that cannot be named drains nothing",
			setup: func(m *machine) {
				m.QueueEvent(nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 79})
			},
			want: []string{"nvml: Xid 79 on a GPU that cannot be named"},
		},
		{
			name: "registration refused by one GPU",
			setup: func(m *machine) {
				m.dev(6).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_UNKNOWN }
			},
			want: []string{"GPU " + "%6" + ": Xid events not watched: unknown error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			tt.setup(m)

			s := m.inventory(Options{}).Sample(t0, nil)

			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "%6", m.uuid(6)))
			}
			if diff := cmp.Diff(want, s.Warnings); diff != "" {
				t.Errorf("Warnings (-want +got):\n%s", diff)
			}
			for _, g := range s.GPUs {
				if g.State != Up {
					t.Errorf("GPU %d is %s %q", g.Index, g.State, g.Reason)
				}
			}
		})
	}
}

// mockEventSet is an event set whose Wait and Free a test chooses.
type mockEventSet struct {
	mock.EventSet
	wait func() (nvml.EventData, nvml.Return)
	free func()
}

func (e *mockEventSet) Wait(uint32) (nvml.EventData, nvml.Return) {
	if e.wait == nil {
		return nvml.EventData{}, nvml.ERROR_TIMEOUT
	}
	return e.wait()
}

func (e *mockEventSet) Free() nvml.Return {
	if e.free != nil {
		e.free()
	}
	return nvml.SUCCESS
}
