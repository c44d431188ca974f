package daemon

import (
	"testing"
	"time"
)

func TestIdleTracker(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	min := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	type obs struct {
		at   time.Time
		util float64
		want idleVerdict
	}
	tests := []struct {
		name      string
		timeout   time.Duration
		yieldable bool
		samples   []obs
	}{
		{
			name: "off by default: never idle", timeout: 0,
			samples: []obs{{min(0), 0, idleNo}, {min(600), 0, idleNo}},
		},
		{
			name: "idle past the timeout is noted once", timeout: 30 * time.Minute,
			samples: []obs{{min(0), 0, idleNo}, {min(29), 0, idleNo}, {min(30), 0, idleWarn}, {min(40), 0, idleNo}},
		},
		{
			name: "any use restarts the clock", timeout: 30 * time.Minute,
			samples: []obs{{min(0), 0, idleNo}, {min(20), 5, idleNo}, {min(21), 0, idleNo}, {min(50), 0, idleNo}, {min(51), 0, idleWarn}},
		},
		{
			name: "unknown utilization (simulated GPUs) is never idle", timeout: time.Minute,
			samples: []obs{{min(0), -1, idleNo}, {min(60), -1, idleNo}},
		},
		{
			name: "a yieldable job is yielded", timeout: 10 * time.Minute, yieldable: true,
			samples: []obs{{min(0), 0, idleNo}, {min(10), 0, idleYield}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := idleTracker{since: map[uint32]time.Time{}, warned: map[uint32]bool{}}
			for i, o := range tt.samples {
				if got := tr.observe(7, o.util, o.at, tt.timeout, tt.yieldable); got != o.want {
					t.Fatalf("sample %d (util %v at %v): got %v, want %v", i, o.util, o.at.Sub(t0), got, o.want)
				}
			}
		})
	}
}
