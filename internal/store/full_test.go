package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallDisk mounts a tmpfs of size on a fresh directory: a disk that can
// be filled for real. It skips where that needs root or mount is refused.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s; detaching it lazily", dir, err, out)
			if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
				t.Errorf("umount -l %s: %v: %s", dir, err, out)
			}
		}
	})
	return dir
}

// fill writes a ballast file until the disk under dir refuses more.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for { // the last blocks
		if _, err := f.Write(buf[:512]); err != nil {
			break
		}
	}
	return path
}

// A full state disk refuses a submission with ErrFull and words that say
// so, records nothing of it, and records again once there is room.
func TestAFullDiskRefusesSubmissionsAndRecordsNothing(t *testing.T) {
	dir := filepath.Join(smallDisk(t, "4m"), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := submitOne(t, s, newJob(t, trainScript))
	ballast := fill(t, filepath.Dir(dir))
	var refused error
	for range 50 { // the WAL may hold a few more pages first
		if _, refused = s.Submit(ctx, []NewJob{newJob(t, trainScript)}); refused != nil {
			break
		}
	}
	if !errors.Is(refused, ErrFull) {
		t.Fatalf("submitting on a full disk: %v, want ErrFull", refused)
	}
	for _, want := range []string{"the state disk is full", "nothing of it was recorded", "df -h"} {
		if !strings.Contains(refused.Error(), want) {
			t.Errorf("%q lacks %q", refused.Error(), want)
		}
	}
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatalf("reading on a full disk: %v", err)
	}
	n := len(jobs)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	next := submitOne(t, s, newJob(t, trainScript))
	if next <= first {
		t.Fatalf("after the disk had room again: job %d, after %d", next, first)
	}
	jobs, _ = s.Jobs(ctx, Filter{})
	if len(jobs) != n+1 {
		t.Fatalf("%d jobs after one more submission, had %d", len(jobs), n)
	}
}
