package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// The dashboard says nothing untrue (issue 24): an array task's events
// name it as squeue does (N_1, not the id it runs under); a job without
// GPUs "started without GPUs", not "on GPUs []"; one yield is "1 yield";
// the fair-share rows name their account, so that root's own user and
// the user root of lab read apart, and an account's row shows its Level
// FS (what Fair Tree ranks it by) and says it has no fair share of its
// own, instead of a blank. The data first, then, where a Chromium is
// installed, the page as a person reads it.
func TestDashboardSaysWhatIsTrue(t *testing.T) {
	t.Parallel()
	// Fair share recomputed at every pass: the rows' Level FS follows the
	// usage at once, rather than at the next PriorityCalcPeriod.
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil, `
[Priority]
Recalc = "pass"

[[Account]]
Name  = "lab"
Users = ["root"]
`)
	arr := wd.submit("exec true", "--array=1-2", "--job-name=cpu-only")
	// Both tasks end; the last one runs under the array's own id, the
	// first under a new one.
	var ends []web.Event
	wd.waitFor(func() bool {
		ends = nil
		for _, e := range wd.dashboard().Events {
			if e.Action == "end" {
				ends = append(ends, e)
			}
		}
		return len(ends) == 2
	}, "both array tasks' ends among the events")
	names := map[string]bool{}
	for _, e := range ends {
		names[e.ID] = true
	}
	a := strconv.Itoa(int(arr))
	if !names[a+"_1"] || !names[a+"_2"] {
		t.Errorf("the array's end events name %v, want %s_1 and %s_2: %+v", names, a, a, ends)
	}

	// A yield, by the API as scontrol yield makes it.
	y := wd.submit("echo trap > y.out; trap 'exit 0' TERM; sleep 120 & wait", "--gpus=1", "--yieldable")
	wd.waitState(y, slurm.Running)
	wd.waitFor(func() bool { _, err := os.Stat(filepath.Join(wd.dir, "y.out")); return err == nil }, "the job's trap set")
	if err := wd.c.Do(context.Background(), "POST", api.PathYield, api.Yield{Job: strconv.Itoa(int(y))}, &api.Yielded{}); err != nil {
		t.Fatal(err)
	}
	wd.waitFor(func() bool { return wd.dashboard().Yields == 1 }, "the yield counted")

	// The yielded job runs again, under lab: lab's usage grows.
	var st web.State
	wd.waitFor(func() bool {
		st = wd.dashboard()
		for _, s := range st.Shares {
			if s.Account == "lab" && s.User == "" && s.RawUsage > 0 {
				return true
			}
		}
		return false
	}, "lab's usage counted")
	for _, e := range st.Events {
		if e.Action == "start" && e.JobID != y && !strings.HasPrefix(e.Detail, "started without GPUs after ") {
			t.Errorf("a CPU-only task's start: %+v", e)
		}
		if strings.Contains(e.Detail, "[]") {
			t.Errorf("an event says []: %+v", e)
		}
		if e.JobID == y && e.ID != strconv.Itoa(int(y)) {
			t.Errorf("a plain job's event names it %q, want %d", e.ID, y)
		}
	}
	shares := map[string]web.Share{}
	for _, s := range st.Shares {
		shares[s.Account+"/"+s.User] = s
	}
	lab := shares["lab/"]
	if rr, lr := shares["root/root"], shares["lab/root"]; rr.Depth != 1 || lr.Depth != 2 || lab.Depth != 1 {
		t.Errorf("the share rows: %+v", st.Shares)
	}
	// lab holds all the usage: its Level FS is its NormShares (0.5);
	// root/root has none (sshare's inf).
	if lab.LevelFS == nil || *lab.LevelFS != lab.NormShares || shares["root/root"].LevelFS != nil {
		t.Fatalf("Level FS: lab %v, root/root %v; want lab's NormShares %v and none", lab.LevelFS, shares["root/root"].LevelFS, lab.NormShares)
	}

	exe := browser()
	if exe == "" {
		t.Skip("no Chromium here (Debian: apt-get install chromium): the page itself is not read")
	}
	ctx, closeBrowser := openInBrowser(t, exe, wd.url, 1200, 900)
	defer closeBrowser()
	// text is the text of every element sel matches, one a line, once the
	// page has drawn (its status says "Updated").
	text := func(sel string) string {
		t.Helper()
		expr := fmt.Sprintf(`(function(){ if (!document.body.dataset.loaded) return "(not loaded)";
			return Array.from(document.querySelectorAll(%q)).map((e) => e.textContent).join("\n"); })()`, sel)
		var got string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
			if err != nil {
				t.Fatalf("evaluating %s: %v", expr, err)
			}
			if got = v; got != "(not loaded)" {
				break
			}
		}
		return got
	}
	if got := text("#status"); !strings.HasSuffix(got, " · 0 preemptions, 1 yield since the daemon started") {
		t.Errorf("the status says %q", got)
	}
	events := text("#events li")
	for _, want := range []string{"slurmd-lite end job " + a + "_1: COMPLETED", "slurmd-lite end job " + a + "_2: COMPLETED",
		"slurmd-lite start job " + a + "_1: started without GPUs after "} {
		if !strings.Contains(events, want) {
			t.Errorf("the events lack %q:\n%s", want, events)
		}
	}
	// The rows: account, user, shares, usage, Level FS, fair share.
	rows := text(`#shares tbody tr`)
	if n := strings.Count(rows, "\n") + 1; n != 3 {
		t.Errorf("%d fair-share rows, want root/root, lab, lab/root:\n%s", n, rows)
	}
	for sel, want := range map[string]string{
		`#shares tr[data-account="root"][data-user="root"] td.acct`:  "root",
		`#shares tr[data-account="lab"][data-user="root"] td.acct`:   "lab",
		`#shares tr[data-account="lab"][data-user=""] td.acct`:       "lab",
		`#shares tr[data-account="lab"][data-user=""] .fs`:           "none",
		`#shares tr[data-account="lab"][data-user=""] .levelfs`:      strconv.FormatFloat(*lab.LevelFS, 'f', 3, 64),
		`#shares tr[data-account="root"][data-user="root"] .levelfs`: "inf",
		`#shares tr[data-account="root"][data-user="root"] .fs`:      strconv.FormatFloat(shares["root/root"].FairShare, 'f', 3, 64),
	} {
		if got := text(sel); got != want {
			t.Errorf("the page's %s says %q, want %q", sel, got, want)
		}
	}
}
