package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv makes the test binary a submitter to be killed (see
// TestMain) instead of running tests.
const crashChildEnv = "STORE_TEST_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild submits jobs from four goroutines until it is killed, printing
// each id on its own line once Submit has returned it, as sbatch would
// print "Submitted batch job N".
func crashChild(dir string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	nj := NewJob{
		Job:    Job{User: "alice", UID: 1001, GID: 1001, Account: "lab", Partition: "gpu", Name: "crash"},
		Script: "#!/bin/sh\nsleep 1\n",
		Env:    []string{"TOKEN=x"},
	}
	var mu sync.Mutex // one write(2) per line
	for range 4 {
		go func() {
			for {
				ids, err := s.Submit(ctx, []NewJob{nj, nj})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "%d\n%d\n", ids[0], ids[1])
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestKilledSubmitterLosesNothing kills a submitting process at random
// points and checks, after each kill, that every id it printed is stored.
// A kill -9 loses the process, not the kernel's page cache: this tests the
// commit protocol (WAL, transactions, answering after COMMIT), while
// synchronous=FULL is what carries the same promise through a power cut.
func TestKilledSubmitterLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	printed := map[uint32]bool{}
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		// Kill after a different number of commits each round.
		killAfter := 100 + 150*round
		seen := 0
		deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
		for lines.Scan() {
			id, err := strconv.ParseUint(lines.Text(), 10, 32)
			if err != nil {
				t.Fatalf("child printed %q", lines.Text())
			}
			if printed[uint32(id)] {
				t.Errorf("id %d was given twice", id)
			}
			printed[uint32(id)] = true
			if seen++; seen == killAfter {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		deadline.Stop()
		cmd.Wait()
		if seen < killAfter {
			t.Fatalf("round %d: the child printed %d ids before it ended, want at least %d", round, seen, killAfter)
		}

		s, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: opening after the kill: %v", round, err)
		}
		jobs, err := s.Jobs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		stored := map[uint32]bool{}
		for _, j := range jobs {
			stored[j.ID] = true
		}
		var lost []uint32
		for id := range printed {
			if !stored[id] {
				lost = append(lost, id)
			}
		}
		if len(lost) > 0 {
			slices.Sort(lost)
			t.Errorf("round %d: %d printed ids are not stored: %v", round, len(lost), lost[:min(10, len(lost))])
		}
		maxID := slices.Max(slices.Collect(func(yield func(uint32) bool) {
			for _, j := range jobs {
				if !yield(j.ID) {
					return
				}
			}
		}))
		next, err := s.NextJobID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next <= maxID {
			t.Errorf("round %d: next job id %d, but %d is stored", round, next, maxID)
		}
		t.Logf("round %d: %d ids printed in all, %d jobs stored, next id %d", round, len(printed), len(jobs), next)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
