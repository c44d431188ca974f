package sockclient_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/sockclient/gobanswer"
)

// slowDaemon is a healthy daemon doing something long by design (a
// yield): it answers pings at once, and /v1/slow only after the given
// number of pings have come since the request did, so that the request
// outlasts MessageTimeout (a ping comes every half of it) whatever the
// machine's speed. (The watch's exact timing is watch_test.go's.)
func slowDaemon(t *testing.T, pings int) string {
	t.Helper()
	pinged := make(chan struct{}, 64)
	return serveRoutes(t, localapi.Routes{
		{Method: "GET", Path: "/v1/ping", Handler: localapi.Func(func(ctx context.Context, r *localapi.Request[struct{}]) (map[string]string, error) {
			select {
			case pinged <- struct{}{}:
			default:
			}
			return map[string]string{"status": "ok"}, nil
		})},
		{Method: "GET", Path: "/v1/slow", Handler: localapi.Func(func(ctx context.Context, r *localapi.Request[struct{}]) (map[string]string, error) {
			for drained := false; !drained; { // a late ping of an earlier request
				select {
				case <-pinged:
				default:
					drained = true
				}
			}
			for range pings {
				select {
				case <-pinged:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return map[string]string{"status": "done"}, nil
		})},
	})
}

// mute is a daemon that takes connections and never answers: stopped
// (SIGSTOP) or wedged. The kernel's backlog accepts for it.
func mute(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sockclient")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return sock
}

func TestALongRequestOfAnAnsweringDaemonWaitsPastMessageTimeout(t *testing.T) {
	sock := slowDaemon(t, 3)
	c := sockclient.New(sock)
	c.SetMessageTimeout(600 * time.Millisecond)
	var out map[string]string
	if err := c.Do(context.Background(), "GET", "/v1/slow", nil, &out); err != nil {
		t.Fatalf("a request answered after 3 pings (1.5 times MessageTimeout): %v", err)
	}
	if out["status"] != "done" {
		t.Fatalf("answer %v", out)
	}

	out = nil
	if err := gobanswer.Do(context.Background(), c, "GET", "/v1/slow", nil, &out); err != nil || out["status"] != "done" {
		t.Fatalf("asked for in gob: %v %v", out, err)
	}
}

func TestAMuteDaemonIsNotAnsweringAfterMessageTimeout(t *testing.T) {
	sock := mute(t)
	for name, do := range map[string]func() error{
		"sockclient": func() error {
			c := sockclient.New(sock)
			c.SetMessageTimeout(200 * time.Millisecond)
			return c.Do(context.Background(), "GET", "/v1/jobs", nil, nil)
		},
		"sockclient, gob": func() error {
			c := sockclient.New(sock)
			c.SetMessageTimeout(200 * time.Millisecond)
			return gobanswer.Do(context.Background(), c, "GET", "/v1/jobs", nil, nil)
		},
	} {
		start := time.Now()
		err := do()
		took := time.Since(start)
		var na *sockclient.NotAnsweringError
		if !errors.As(err, &na) {
			t.Fatalf("%s: %v (%T), want a *NotAnsweringError", name, err, err)
		}
		// Half MessageTimeout for the request, the other half for the ping.
		if took < 190*time.Millisecond || took > 5*time.Second {
			t.Errorf("%s: gave up after %v, want about MessageTimeout, 200ms", name, took)
		}
		if na.PID != os.Getpid() {
			t.Errorf("%s: pid %d, want the listener's %d", name, na.PID, os.Getpid())
		}
		msg := err.Error()
		for _, want := range []string{"slurmd-lite (pid ", "is not answering", "200ms", "kill -CONT"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", name, msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is more than one line", name, msg)
		}
	}
}
