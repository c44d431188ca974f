package gpu

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSimulatedGPUs(t *testing.T) {
	procs := fakeProcs{alive: map[int]bool{}}
	inv, err := Simulated([]SimGPU{{Type: "a100", Memory: 80 * gib, Count: 4}, {Type: "t4", Memory: 16 * gib, Count: 1}}, Options{Procs: procs})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Mode() != ModeSimulated || inv.Comment() != "GPUs: simulated (4 x a100 80G, 1 x t4 16G)" {
		t.Errorf("Mode, Comment = %q, %q", inv.Mode(), inv.Comment())
	}
	// Job 42 asked for 20G on each of GPUs 0 and 1; job 43 shares GPU 0
	// with 30G; job 44 (carol's) has GPU 2 whole, and no process the
	// caller knows: its stand-in has PID 0 and the job's user.
	jobs := []Job{
		{ID: "42", PIDs: []int{100}, GPUs: []string{"GPU-SIM-0000", "GPU-SIM-0001"}, MemPerGPU: 20 * gib},
		{ID: "43", PIDs: []int{200}, GPUs: []string{"GPU-SIM-0000"}, MemPerGPU: 30 * gib},
		{ID: "44", User: "carol", GPUs: []string{"GPU-SIM-0002"}},
	}

	s := inv.Sample(t0, jobs)

	sim := func(i int, typ string, total, used uint64, procs ...Process) GPU {
		return GPU{
			Index: i, NVMLIndex: i, UUID: "GPU-SIM-000" + string(rune('0'+i)), Model: "simulated " + typ,
			AutoType: typ, Type: typ, MemoryTotal: total, MemoryUsed: used, MemoryFree: total - used,
			Utilization: -1, Processes: procs, State: Up, Simulated: true,
		}
	}
	want := []GPU{
		sim(0, "a100", 80*gib, 50*gib,
			Process{PID: 100, Memory: 20 * gib, Utilization: -1, JobID: "42"},
			Process{PID: 200, Memory: 30 * gib, Utilization: -1, JobID: "43"}),
		sim(1, "a100", 80*gib, 20*gib, Process{PID: 100, Memory: 20 * gib, Utilization: -1, JobID: "42"}),
		sim(2, "a100", 80*gib, 80*gib, Process{PID: 0, User: "carol", Memory: 80 * gib, Utilization: -1, JobID: "44"}),
		sim(3, "a100", 80*gib, 0),
		sim(4, "t4", 16*gib, 0),
	}
	if diff := cmp.Diff(want, s.GPUs); diff != "" {
		t.Errorf("GPUs (-want +got):\n%s", diff)
	}
	if got := Gres(s.GPUs); got != "gpu:a100:4,gpu:t4:1" {
		t.Errorf("Gres = %q", got)
	}
	if got := s.Jobs["42"].Total(); got != 40*gib {
		t.Errorf("job 42 holds %d, want 40G", got)
	}
	if len(s.Violations) != 0 {
		t.Errorf("violations in a simulation: %v", s.Violations)
	}

	// Job 42 ends while its process lives on: its GPUs are not back.
	procs.alive[100] = true
	jobs[0].Ended = t0
	s = inv.Sample(t0.Add(5*time.Second), jobs)
	wantRel := Release{Survivors: []int{100}, Pending: []string{"GPU-SIM-0000", "GPU-SIM-0001"}}
	if diff := cmp.Diff(wantRel, s.Releases["42"], equateEmpty); diff != "" {
		t.Errorf("release while the process lives (-want +got):\n%s", diff)
	}
	// It dies: released.
	procs.alive[100] = false
	s = inv.Sample(t0.Add(10*time.Second), jobs)
	if diff := cmp.Diff(Release{Released: true}, s.Releases["42"], equateEmpty); diff != "" {
		t.Errorf("release after the process died (-want +got):\n%s", diff)
	}
	if g := s.GPUs[1]; g.MemoryUsed != 0 || g.State != Up {
		t.Errorf("GPU 1 after release: used %d, %s", g.MemoryUsed, g.State)
	}

	// Drains on command.
	if err := inv.Drain("3", "demo"); err != nil {
		t.Fatal(err)
	}
	if g := inv.Sample(t0.Add(15*time.Second), nil).GPUs[3]; g.State != Drained || g.Reason != "demo" {
		t.Errorf("after Drain: %s %q", g.State, g.Reason)
	}
	if err := inv.Resume("GPU-SIM-0003"); err != nil {
		t.Fatal(err)
	}
	if g := inv.Sample(t0.Add(20*time.Second), nil).GPUs[3]; g.State != Up {
		t.Errorf("after Resume: %s %q", g.State, g.Reason)
	}
}

func TestSimulatedRefusesNonsense(t *testing.T) {
	tests := []struct {
		name    string
		gpus    []SimGPU
		wantErr string
	}{
		{"nothing described", nil, "simulated GPUs: none described"},
		{"no type", []SimGPU{{Memory: gib, Count: 1}}, `simulated GPUs: type "": want a Slurm type name such as a100`},
		{"a type that would break the Gres string", []SimGPU{{Type: "a100:2", Memory: gib, Count: 1}}, `simulated GPUs: type "a100:2": want a Slurm type name such as a100`},
		{"no memory", []SimGPU{{Type: "a100", Count: 1}}, `simulated GPUs of type "a100": memory must be more than 0`},
		{"no count", []SimGPU{{Type: "a100", Memory: gib}}, `simulated GPUs of type "a100": count must be at least 1, not 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Simulated(tt.gpus, Options{})
			if got := errText(err); got != tt.wantErr {
				t.Errorf("error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestNone(t *testing.T) {
	inv := None("")
	s := inv.Sample(t0, []Job{{ID: "1"}})
	if s.Mode != ModeNone || s.Comment != "GPUs: none" || len(s.GPUs) != 0 || Gres(s.GPUs) != "" {
		t.Errorf("None: %+v", s)
	}
	if err := inv.Drain("0", "x"); err == nil {
		t.Errorf("Drain on a node without GPUs succeeded")
	}
}

func TestRunSamplesAtEachTick(t *testing.T) {
	inv, err := Simulated([]SimGPU{{Type: "a100", Memory: 80 * gib, Count: 2}}, Options{Procs: fakeProcs{}})
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time)
	var got []time.Time
	asked := 0
	done := make(chan error)
	go func() {
		done <- inv.Run(context.Background(), ticks,
			func() []Job { asked++; return nil },
			func(s Snapshot) { got = append(got, s.Time) })
	}()
	ticks <- t0
	ticks <- t0.Add(5 * time.Second)
	close(ticks)
	if err := <-done; err != nil {
		t.Fatalf("Run after the ticks stopped: %v", err)
	}
	if diff := cmp.Diff([]time.Time{t0, t0.Add(5 * time.Second)}, got); diff != "" || asked != 2 {
		t.Errorf("snapshots (-want +got):\n%s; jobs asked %d times", diff, asked)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := inv.Run(ctx, make(chan time.Time), nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v", err)
	}
}
