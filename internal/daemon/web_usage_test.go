package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// TestWebUsageMonth: the dashboard's monthly usage (/api/usage and
// usage.html) counts what sreport counts, on a daemon whose clock stands
// still: two jobs start at 10:00 (2 GPUs and 1 GPU); at 12:30 the hours up
// to 12:00 are rolled up, so the month shows exactly 2 hours of each, by
// account and user, and the command that prints the same. Another month
// shows nothing; a month written wrongly is refused with the way to write
// it.
func TestWebUsageMonth(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.Local)
	clock := &fakeClock{t: t0}
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), clock, `ClusterName = "anchor"`)
	ja, _ := usageJobs(t, wd, clock)

	var u web.Usage
	if err := json.Unmarshal([]byte(wd.get("/api/usage?month=2026-11")), &u); err != nil {
		t.Fatal(err)
	}
	h := int64(3600)
	want := web.Usage{Cluster: "anchor", Month: "2026-11",
		Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local).Unix(), End: time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local).Unix(),
		RolledUp: t0.Add(2 * time.Hour).Unix(), GPUs: 8, CPUs: 8,
		Total: web.UsageFigures{GPU: 6 * h, CPU: 6 * h, Billing: 6 * h},
		Accounts: []web.AccountUsage{{Account: ja.Account, UsageFigures: web.UsageFigures{GPU: 6 * h, CPU: 6 * h, Billing: 6 * h},
			Users: []web.UserUsage{{User: ja.User, UsageFigures: web.UsageFigures{GPU: 6 * h, CPU: 6 * h, Billing: 6 * h}}}}},
		Sreport: "sreport -t hours cluster AccountUtilizationByUser start=2026-11-01 end=2026-12-01 -T gres/gpu,cpu,billing"}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("/api/usage?month=2026-11 (-want +got):\n%s", diff)
	}

	var other web.Usage
	if err := json.Unmarshal([]byte(wd.get("/api/usage?month=2026-10")), &other); err != nil {
		t.Fatal(err)
	}
	if other.Total != (web.UsageFigures{}) || len(other.Accounts) != 0 {
		t.Errorf("October shows usage: %+v", other)
	}

	usagePageInABrowser(t, wd, ja.Account, ja.User)

	resp, err := http.Get(wd.url + "api/usage?month=November")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `month="November" is not a month; write it as YYYY-MM`) {
		t.Errorf("a bad month: %d %s", resp.StatusCode, body)
	}
}

// TestWebUsageMonthPrivate: under PrivateData=usage the anonymous viewer
// gets the accounts' totals and no user's line.
func TestWebUsageMonthPrivate(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 11, 2, 10, 0, 0, 0, time.Local)}
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), clock, `PrivateData = ["usage"]`)
	ja, _ := usageJobs(t, wd, clock)
	var u web.Usage
	if err := json.Unmarshal([]byte(wd.get("/api/usage?month=2026-11")), &u); err != nil {
		t.Fatal(err)
	}
	h := int64(3600)
	want := []web.AccountUsage{{Account: ja.Account, UsageFigures: web.UsageFigures{GPU: 6 * h, CPU: 6 * h, Billing: 6 * h}, Users: []web.UserUsage{}}}
	if diff := cmp.Diff(want, u.Accounts); diff != "" || !u.Private {
		t.Errorf("under PrivateData=usage (private %v) (-want +got):\n%s", u.Private, diff)
	}
}

// usageJobs starts two jobs at the still clock's 10:00 (2 GPUs and 2 CPUs,
// 1 and 1) and moves the clock to 12:30: the hours up to 12:00 are rolled
// up, 2 of each job's.
func usageJobs(t *testing.T, wd *webDaemon, clock *fakeClock) (api.Job, api.Job) {
	t0 := clock.Now()
	a := wd.submit("exec sleep 600", "--gpus=2", "-c", "2")
	b := wd.submit("exec sleep 600", "--gpus=1", "-c", "1")
	ja, jb := wd.waitState(a, slurm.Running), wd.waitState(b, slurm.Running)
	if !ja.Start.Equal(t0) || !jb.Start.Equal(t0) {
		t.Fatalf("jobs started at %v and %v, want %v (the still clock)", ja.Start, jb.Start, t0)
	}
	clock.advance(2*time.Hour + 30*time.Minute)
	return ja, jb
}

// usagePageInABrowser opens usage.html for November in a headless
// Chromium (when there is one) and reads what a PI would: the hours of
// the account and its user, the share of the GPU-hours there were, and the
// sreport command for a spreadsheet.
func usagePageInABrowser(t *testing.T, wd *webDaemon, account, user string) {
	exe := browser()
	if exe == "" {
		t.Log("no Chromium here (Debian: apt-get install chromium): the usage page's browser check is skipped")
		return
	}
	ctx, closeBrowser := openInBrowser(t, exe, wd.url+"usage.html?month=2026-11", 1000, 700)
	defer closeBrowser()
	text := func(sel string) string {
		var got string
		expr := fmt.Sprintf(`(function(){ const e = document.querySelector(%q); return e ? e.textContent : "(no element)"; })()`, sel)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
			if err != nil {
				t.Fatal(err)
			}
			got = v
			if got != "loading…" && got != "" {
				break
			}
		}
		return got
	}
	// 8 GPUs × the 36 hours of November up to 12:00 on the 2nd.
	if got, want := text("#summary"), "6.0 GPU-hours used of 288.0 available so far (2.1%)"; got != want {
		t.Errorf("the page's summary says %q, want %q", got, want)
	}
	rows := text("#usage tbody")
	if want := account + "6.0100.0%6.06.0" + user + "6.0100.0%6.06.0all6.0100.0%6.06.0"; rows != want {
		t.Errorf("the page's rows read %q, want %q", rows, want)
	}
	if got := text("#sreport"); got != "sreport -t hours cluster AccountUtilizationByUser start=2026-11-01 end=2026-12-01 -T gres/gpu,cpu,billing" {
		t.Errorf("the page's sreport line: %q", got)
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		path := filepath.Join(artifacts(t), "usage.png")
		if os.WriteFile(path, png, 0o644) == nil {
			t.Logf("screenshot: %s", path)
		}
	}
}
