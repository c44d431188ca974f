package procfs

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// roleEnv makes the test binary run hasChildrenCheck alone.
const roleEnv = "PROCFS_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "haschildren" {
		os.Exit(hasChildrenCheck())
	}
	os.Exit(m.Run())
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Stat
	}{
		{"a plain command", "1234 (sleep) S 1 1234 1234 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615",
			Stat{State: 'S', PPID: 1, PGRP: 1234, StartTime: 987654}},
		{"a command with spaces and parentheses", "77 (a) b (c) Z 76 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0 0",
			Stat{State: 'Z', PPID: 76, PGRP: 77, StartTime: 42}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2 3"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

// FuzzParseStat: a command name can hold anything; the parser must
// not panic, and what it accepts has the fields after the last ')'.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1 1234 1234 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100"))
	f.Add([]byte("77 (a) b (c) Z 76 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0 0"))
	f.Add([]byte("1 ()) R"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStat(b)
		if err != nil {
			return
		}
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if start, _ := strconv.ParseUint(f[19], 10, 64); f[0][0] != st.State || start != st.StartTime {
			t.Errorf("ParseStat(%q) = %+v", b, st)
		}
	})
}

func TestDescendantsFromChildrenListsMatchTheScan(t *testing.T) {
	if !haveChildrenLists() {
		t.Skip("this kernel has no /proc/PID/task/TID/children")
	}
	// A shell with two children, one of which has a child of its own,
	// and a double fork whose grandchild is orphaned to init: not ours.
	cmd := exec.Command("sh", "-c", "sleep 30 & sh -c 'sleep 30 & wait' & (sleep 3 &) ; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, p := range Descendants(os.Getpid()) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		cmd.Wait()
	}()
	self := os.Getpid()
	sorted := func(p []int) []int { slices.Sort(p); return p }
	// The tree settles in steps (the subshell of the double fork lives a
	// moment; the inner sh forks its sleep when it gets the CPU): compare
	// the two ways once two scans around the children lists' answer agree
	// on the four processes that stay.
	var want, got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		before := sorted(descendantsByScan(self))
		lists := sorted(Descendants(self))
		after := sorted(descendantsByScan(self))
		want, got = after, lists
		if len(before) == 4 && slices.Equal(before, after) {
			break
		}
	}
	if len(want) != 4 {
		t.Fatalf("the scan found %d descendants (%v), want 4: sh, sleep, sh, sleep", len(want), want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descendants (-scan +children lists):\n%s", diff)
	}
}

func TestHasChildrenSeesALiveChildAndNotAReapedOne(t *testing.T) {
	// HasChildren asks about the whole process, and the test binary may
	// still hold an earlier test's child (a supervisor being reaped, under
	// load): ask in a fresh copy of the binary, whose only children are the
	// check's own.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=haschildren")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the check's process: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "false true false"; got != want {
		t.Errorf("HasChildren before, during and after a child: got %q, want %q", got, want)
	}
}

// hasChildrenCheck prints HasChildren before, during and after a child of
// its own; TestMain runs it in a fresh process.
func hasChildrenCheck() int {
	before := HasChildren()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	during := HasChildren()
	cmd.Process.Kill()
	cmd.Wait()
	after := HasChildren()
	fmt.Println(before, during, after)
	return 0
}
