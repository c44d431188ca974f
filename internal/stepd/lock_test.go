package stepd

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// lockWithin tries for the state directory's lock every 20 ms: it takes
// it at the first try after its holder (a daemon's Supervised probe) lets
// go, and gives up at the first try after its patience. flock is a system
// call that never blocks here (LOCK_NB), so the tries run in a synctest
// bubble, whose clock moves only by the waits between them: each is seen
// at its exact moment.
func TestLockWithinTriesEvery20msForItsPatience(t *testing.T) {
	open := func(t *testing.T, path string) *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	t.Run("taken once the holder lets go", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			holder := open(t, path)
			if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(130*time.Millisecond, func() { syscall.Flock(int(holder.Fd()), syscall.LOCK_UN) })
			start := time.Now()
			if err := lockWithin(open(t, path), lockPatience); err != nil {
				t.Fatalf("lockWithin: %v", err)
			}
			if took := time.Since(start); took != 140*time.Millisecond {
				t.Errorf("took the lock after %v, want 140ms: the first try after its release at 130ms", took)
			}
		})
	})
	t.Run("given up after its patience", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			holder := open(t, path)
			if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := lockWithin(open(t, path), time.Second)
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				t.Fatalf("lockWithin of a held lock: %v, want EWOULDBLOCK", err)
			}
			if took := time.Since(start); took != 1020*time.Millisecond {
				t.Errorf("gave up after %v, want 1.02s: the first try past its second of patience", took)
			}
		})
	})
}
