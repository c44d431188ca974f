package config

import "testing"

func TestCheckpointBaseIsThePartBeforeTheFirstEscape(t *testing.T) {
	for pattern, want := range map[string]string{
		"/var/lib/slurm-lite/ckpt/%u/%j": "/var/lib/slurm-lite/ckpt",
		"/ckpt/job%j":                    "/ckpt",
		"/ckpt/%x/%j":                    "/ckpt",
		"/ckpt/100%%/%u/%j":              "/ckpt/100%",
		"/ckpt//a/%A_%4a/%j":             "/ckpt/a",
		"/%j":                            "/",
		"/x%j":                           "/",
	} {
		if got := CheckpointBase(pattern); got != want {
			t.Errorf("CheckpointBase(%q) = %q, want %q", pattern, got, want)
		}
	}
}
