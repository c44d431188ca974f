package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
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
