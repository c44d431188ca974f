package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceWritesWholeAndLeavesNoTemporary(t *testing.T) {
	for _, sync := range []bool{true, false} {
		dir := t.TempDir()
		path := filepath.Join(dir, "status.json")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Replace(path, []byte("new contents"), 0o600, sync); err != nil {
			t.Fatalf("sync=%v: %v", sync, err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != "new contents" {
			t.Errorf("sync=%v: %s holds %q (%v)", sync, path, got, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("sync=%v: mode %v (%v), want 0600", sync, fi.Mode().Perm(), err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("sync=%v: %d entries left in the directory, want only the file", sync, len(entries))
		}
	}
}

func TestReplaceThatFailsKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "target")
	// A directory of that name cannot be renamed over: the write fails,
	// says which file, and leaves no temporary behind.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Replace(path, []byte("x"), 0o600, true)
	if err == nil || !strings.Contains(err.Error(), "writing "+path) {
		t.Fatalf("Replace over a directory: %v, want an error naming %s", err, path)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want only the directory", len(entries))
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("SyncDir of a missing directory did not fail")
	}
}
