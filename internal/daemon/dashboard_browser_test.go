package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// browser is a Chromium on this machine, "" if none.
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// openInBrowser opens url in a headless Chromium (exe) with a viewport
// of width by height, and returns the browser's context, good for 90 s,
// and what closes it.
func openInBrowser(t *testing.T, exe, url string, width, height int64) (context.Context, func()) {
	t.Helper()
	ctx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU)...)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	closeBrowser := func() { cancelTime(); cancelBrowser(); cancelAlloc() }
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(url)); err != nil {
		closeBrowser()
		t.Fatalf("opening %s in %s: %v", url, exe, err)
	}
	return ctx, closeBrowser
}

// artifacts is where the browser test leaves its screenshots:
// $SLITE_ARTIFACTS, else slurm-lite-artifacts under the system's
// temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("SLITE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "slurm-lite-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// durText is the page's dur(): a duration as people read it.
func durText(d time.Duration) string {
	s := int64(max(d.Round(time.Second)/time.Second, 0))
	days, h, m, sec := s/86400, s%86400/3600, s%3600/60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

func gibText(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// TestDashboardInABrowser opens the dashboard in a real headless
// Chromium over a real daemon on a mock DGX A100 and reads what a person
// would: every GPU with its job, user, memory, utilization, how long and
// time left; the queue with the reason in words and the backfill plan's
// start; fair share; the drain in the audit trail. Then a job ends and
// the page follows without a reload; on a phone's screen nothing spills
// sideways. The daemon's clock stands still (moved by hand), so every
// duration on the page is exact. Screenshots: see the log.
func TestDashboardInABrowser(t *testing.T) {
	t.Parallel()
	exe := browser()
	if exe == "" {
		t.Skip("no Chromium here (Debian: apt-get install chromium): the dashboard's browser test is skipped")
	}
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), clock)
	a := wd.submit("echo hunter2-in-a-script; exec sleep 120", "--gpus=1", "-t", "60", "--job-name=train-a")
	b := wd.submit("exec sleep 120", "--gpu-mem=20G", "-t", "20", "--job-name=eval-b")
	ja, jb := wd.waitState(a, slurm.Running), wd.waitState(b, slurm.Running)
	node := wd.node()
	byUUID := map[string]api.GPU{}
	idle := -1
	for _, g := range node.GPUs {
		byUUID[g.UUID] = g
		if g.UUID != ja.Alloc.GPUs[0].UUID && g.UUID != jb.Alloc.GPUs[0].UUID && idle < 0 {
			idle = g.Index
		}
	}
	ga, gb := byUUID[ja.Alloc.GPUs[0].UUID], byUUID[jb.Alloc.GPUs[0].UUID]
	drained := os.Geteuid() == 0 // draining is root's
	if drained {
		if err := wd.c.Do(context.Background(), "POST", api.PathNodeUpdate, api.NodeUpdate{Node: "gpu01",
			GPUs: []string{strconv.Itoa(idle)}, State: api.NodeDrain, Reason: "fan noise"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := wd.submit("exec sleep 120", "--gpus=7", "-t", "30", "--job-name=sweep-c")
	wd.waitFor(func() bool { return wd.job(c).Reason == slurm.ReasonResources }, "job c waiting for resources")
	// (Less than MinJobAge: an ended job's real end time stays in the window.)
	clock.advance(3*time.Minute + 7*time.Second)
	// A pass on the new time: the plan's start for c and the reasons.
	var jc api.Job
	wd.waitFor(func() bool {
		jc = wd.job(c)
		st := wd.dashboard()
		return st.Time == clock.Now().Unix() && !jc.ExpectedStart.IsZero()
	}, "a pass at the moved clock")
	started := ja.Start

	ctx, closeBrowser := openInBrowser(t, exe, wd.url, 1200, 900)
	defer closeBrowser()
	js := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return v
	}
	// waitText waits until the text of the element sel is want.
	waitText := func(sel, want string) {
		t.Helper()
		expr := fmt.Sprintf(`(function(){ const e = document.querySelector(%q); return e ? e.textContent : "(no element)"; })()`, sel)
		got := ""
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got = js(expr); got == want {
				return
			}
		}
		t.Errorf("the page's %s says %q, want %q", sel, got, want)
	}
	card := func(g api.GPU) string { return fmt.Sprintf(`#gpus article[data-gpu="%d"]`, g.Index) }
	job := func(id uint32) string { return fmt.Sprintf(`[data-job="%d"]`, id) }
	since := clock.Now().Sub(started)

	waitText("#title", "lab · gpu01")
	waitText("#summary", "MIXED · 2 of 8 GPUs in use · 2 of 8 CPUs · 2 running, 1 pending")
	waitText(card(ga)+" "+job(a)+" .job-id", fmt.Sprintf("%d (train-a)", a))
	waitText(card(ga)+" "+job(a)+" .job-user", "root · lab")
	waitText(card(ga)+" "+job(a)+" .job-running", durText(since))
	waitText(card(ga)+" "+job(a)+" .job-left", durText(time.Hour-since))
	waitText(card(ga)+" .util", strconv.Itoa(utilOf(wd.devOf(ga.UUID)))+"%")
	waitText(card(ga)+" .mem-reserved", gibText(ga.MemoryTotal))
	waitText(card(gb)+" "+job(b)+" .job-left", durText(20*time.Minute-since))
	waitText(card(gb)+" .mem-reserved", gibText(20<<30))
	waitText(card(gb)+" .mem-used", gibText(gb.MemoryUsed)+" of "+gibText(gb.MemoryTotal))
	if drained {
		waitText(fmt.Sprintf(`#gpus article[data-gpu="%d"] h3 span:last-child`, idle), "drained")
		waitText(`#events li[data-action="drain"]`, js(`document.querySelector('#events li[data-action="drain"] time').textContent`)+
			fmt.Sprintf("root drain GPU %d: fan noise", idle))
	}
	waitText("#queue-count", "(1)")
	waitText("#queue "+job(c)+" td:first-child", fmt.Sprintf("%d sweep-c", c))
	waitText("#queue "+job(c)+" .why", web.Why(string(jc.Reason), jc.ReasonDetail))
	waitText("#queue "+job(c)+" .start", "in "+durText(jc.ExpectedStart.Sub(clock.Now())))
	st := wd.dashboard()
	for _, s := range st.Shares {
		if s.User == "root" { // root/root and the implicit account's root
			waitText(fmt.Sprintf(`#shares tr[data-account=%q][data-user="root"] .fs`, s.Account), strconv.FormatFloat(s.FairShare, 'f', 3, 64))
		}
	}
	if js(`String(document.documentElement.outerHTML.includes("hunter2"))`) != "false" {
		t.Errorf("the page shows a job's script")
	}

	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(artifacts(t), name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	shot("dashboard.png")

	// Live: job b ends; the page follows without reloading (the mark
	// set on this window survives).
	js(`(window.stillHere = "yes")`)
	if err := wd.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.Itoa(int(b))}}, nil); err != nil {
		t.Fatal(err)
	}
	wd.waitState(b, slurm.Cancelled)
	waitText("#summary", "MIXED · 1 of 8 GPUs in use · 1 of 8 CPUs · 1 running, 1 pending")
	waitText(card(gb)+" h3 span:last-child", "idle")
	if got := js(`String(window.stillHere)`); got != "yes" {
		t.Errorf("the page reloaded to update (window mark %q)", got)
	}

	// A phone: 390 CSS pixels wide; the tables scroll inside their
	// boxes, the page itself never sideways.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	// The page lays out again once the viewport is applied: poll for it.
	width := func() string {
		return js(`String(document.documentElement.scrollWidth) + " " + String(window.innerWidth)`)
	}
	for deadline := time.Now().Add(10 * time.Second); width() != "390 390" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	if got := width(); got != "390 390" {
		t.Errorf("on a phone the page is %s (scroll width, window width) pixels wide; want 390 390", got)
	}
	shot("dashboard-phone.png")

	// The daemon stops: the page says it is no longer updating, and
	// keeps what it last showed.
	for _, id := range []uint32{a, c} {
		if err := wd.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.Itoa(int(id))}}, nil); err != nil {
			t.Fatal(err)
		}
		wd.waitState(id, slurm.Cancelled)
	}
	wd.stop()
	waitText("#status", "Not updating: Failed to fetch")
	if got := js(`document.getElementById("status").className`); got != "stale" {
		t.Errorf("the stale status's class is %q, want stale", got)
	}
	waitText("#title", "lab · gpu01")
}
