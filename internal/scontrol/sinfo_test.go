package scontrol

import "testing"

func TestParseNodeStateWord(t *testing.T) {
	tests := []struct {
		in   string
		want nodeStateWord
	}{
		{"DRAIN", stateWordDrain},
		{"dra", stateWordDrain},
		{"dr", stateWordBad}, // three letters at least
		{"resume", stateWordResume},
		{"UNDRAIN", stateWordUndrain},
		{"down", stateWordDown},
		{"FAIL", stateWordDown},
		{"idle", stateWordOther},
		{"power_down_asap", stateWordOther},
		{"POWER_UP", stateWordOther},
		{"drainage", stateWordBad},
		{"BOGUS", stateWordBad},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseNodeStateWord(tt.in); got != tt.want {
				t.Errorf("parseNodeStateWord(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
