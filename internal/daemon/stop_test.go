package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// A stopped daemon gives its state back before it says "stopped", however
// its notifications fare (issue 23 item 6): with a webhook that never
// answers, the delivery under way is abandoned and the queued ones dropped,
// the log says how many, and a daemon started on the same state the moment
// "stopped" is logged starts. (It used to wait up to 5 s for the webhook
// after "stopped", holding the state's lock: a restart then failed with
// "state directory ... is in use".)
func TestAStoppedDaemonLetsARestartInAtOnceDespiteAHangingWebhook(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two daemons")
	}
	arrived := make(chan struct{}, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // whole, so that the server notices the client leave
		arrived <- struct{}{}
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	sock := filepath.Join(dir, "d.sock")
	conf := filepath.Join(dir, "conf.toml")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q

[Node]
NodeName   = "gpu01"
CPUs       = 2
RealMemory = "2G"
GPUs       = "none"

[[Notify]]
URL    = %q
Events = ["ALL"]
`, sock, filepath.Join(dir, "state"), hook.URL)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(logs *syncBuffer) (stop func() error, done chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		done = make(chan error, 1)
		go func() { done <- Run(ctx, Options{ConfigPath: conf, Exe: exe, Log: logs}) }()
		return func() error { cancel(); return <-done }, done
	}
	reach := func(done chan error, logs *syncBuffer) *sockclient.Client {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c := sockclient.New(sock); c.Reach(context.Background()) == nil {
				return c
			}
			select {
			case err := <-done:
				t.Fatalf("the daemon stopped before it listened: %v\n%s", err, logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for the daemon's socket\n%s", logs.String())
			}
		}
	}

	logs1 := &syncBuffer{}
	stop1, done1 := start(logs1)
	nd := &nvmlDaemon{t: t, dir: dir, c: reach(done1, logs1), logs: logs1}
	// A job that stays pending (held, then waiting for its begin time), so
	// that the only events are the test's: a release, a hold, a release.
	id := strconv.Itoa(int(nd.submit("true", "--hold", "--begin=now+1hour")))
	control := func(action string) {
		t.Helper()
		var res api.Results
		if err := nd.c.Do(context.Background(), "POST", api.PathControl, api.Control{Action: action, Jobs: []string{id}}, &res); err != nil {
			t.Fatalf("%s %s: %v", action, id, err)
		}
	}
	control(api.ActionRelease)
	select {
	case <-arrived: // the release's delivery is under way, and will hang
	case <-time.After(20 * time.Second):
		t.Fatalf("the webhook got nothing\n%s", logs1.String())
	}
	control(api.ActionHold)
	control(api.ActionRelease)

	stopErr := make(chan error, 1)
	go func() { stopErr <- stop1() }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs1.String(), "msg=stopped"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not say it stopped\n%s", logs1.String())
		}
	}
	// At once: a second daemon on the same state starts.
	logs2 := &syncBuffer{}
	stop2, done2 := start(logs2)
	reach(done2, logs2)
	if err := stop2(); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the second daemon: %v", err)
	}
	if err := <-stopErr; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the first daemon: %v", err)
	}
	log1 := logs1.String()
	dropped := `level=WARN msg="notifications not sent: the daemon stopped before they could be delivered" dropped=3`
	if i, j := strings.Index(log1, dropped), strings.Index(log1, "msg=stopped"); i < 0 || j < i {
		t.Errorf("the first daemon's log lacks %q before \"stopped\":\n%s", dropped, log1)
	}
}
