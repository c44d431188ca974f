package daemon

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// The TIME_LIMIT mails come once each, when 50%, 80% and 90% of the limit
// have passed and at the limit, with the run time so far; limitMails says
// when the next one is due.
func TestLimitMails(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "mail")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"$2\" >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(Options{}, config.Default())
	n := notify.Start(notify.Options{MailProg: prog})
	d.notifier.Store(n)
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	j := store.Job{ID: 7, ArrayTaskID: -1, Name: "train", User: "alice", State: slurm.Running, Start: start}
	j.Request.MailType = []string{"TIME_LIMIT_50", "TIME_LIMIT_90", "TIME_LIMIT"}
	limit := 100 * time.Minute
	for _, step := range []struct {
		at   time.Duration
		next time.Duration // 0: none due
	}{
		{10 * time.Minute, 50 * time.Minute},
		{50 * time.Minute, 90 * time.Minute},
		{51 * time.Minute, 90 * time.Minute}, // 50% already sent
		{95 * time.Minute, 100 * time.Minute},
		{100 * time.Minute, 0},
	} {
		next := d.limitMails(start.Add(step.at), j, limit)
		var want time.Time
		if step.next != 0 {
			want = start.Add(step.next)
		}
		if !next.Equal(want) {
			t.Errorf("at %s: next %v, want %v", step.at, next, want)
		}
	}
	n.Close(10 * time.Second)
	got, _ := os.ReadFile(log)
	want := "Slurm Job_id=7 Name=train Reached 50% of time limit, Run time 00:50:00\n" +
		"Slurm Job_id=7 Name=train Reached 90% of time limit, Run time 01:35:00\n" +
		"Slurm Job_id=7 Name=train Reached time limit, Run time 01:40:00\n"
	if string(got) != want {
		t.Errorf("mails:\n%s\nwant:\n%s", got, want)
	}
}

// A job's trail follows the job viewer rules: under PrivateData=jobs only
// its owner, root and operators see it; the node's events are everyone's.
func TestEventsFollowPrivateData(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	ids := secretJobs(t, d)
	ctx := context.Background()
	if err := d.st.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.AppendEvent(d.callerEvent(aliceCaller, ids[0], "hold", "JobHeldUser"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := update(d, rootCaller, api.NodeUpdate{Node: "gpu01", State: api.NodeDrain, Reason: "cables"}); err != nil {
		t.Fatal(err)
	}
	ask := func(who localapi.Identity, q url.Values) []string {
		t.Helper()
		evs, err := d.events(ctx, &localapi.Request[struct{}]{Caller: who, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, fmt.Sprintf("%d %s %s %s", e.JobID, e.Action, e.ActorName, e.Detail))
		}
		return out
	}
	job := url.Values{"job": {fmt.Sprint(ids[0])}}
	hold := []string{fmt.Sprintf("%d hold alice JobHeldUser", ids[0])}
	for _, tc := range []struct {
		private []string
		who     localapi.Identity
		want    []string
	}{
		{nil, bobCaller, hold},
		{[]string{config.PrivateJobs}, bobCaller, nil},
		{[]string{config.PrivateJobs}, aliceCaller, hold},
		{[]string{config.PrivateJobs}, opsCaller, hold},
	} {
		d.mu.Lock()
		cfg := *d.cfg
		cfg.PrivateData = tc.private
		d.cfg = &cfg
		d.publishLocked()
		d.mu.Unlock()
		if diff := cmp.Diff(tc.want, ask(tc.who, job)); diff != "" {
			t.Errorf("PrivateData=%v, %s asks for job %d's trail (-want +got):\n%s", tc.private, tc.who.User, ids[0], diff)
		}
		if diff := cmp.Diff([]string{"0 drain root cables"}, ask(tc.who, url.Values{"node": {"1"}})); diff != "" {
			t.Errorf("PrivateData=%v, %s asks for the node's events (-want +got):\n%s", tc.private, tc.who.User, diff)
		}
	}
	if _, err := d.events(ctx, &localapi.Request[struct{}]{Caller: bobCaller, Query: url.Values{"job": {"x"}}}); err == nil ||
		err.Error() != `job "x" is not a job id; give a number such as 12` {
		t.Errorf("a bad job id: %v", err)
	}
}
