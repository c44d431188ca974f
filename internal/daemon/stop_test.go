package daemon

import (
	"context"
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
	opts := Options{ConfigPath: conf, Exe: exe}
	nd := &nvmlDaemon{t: t, dir: dir, logs: &syncBuffer{}}
	stop1 := nd.run(opts, false)
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
		t.Fatalf("the webhook got nothing\n%s", nd.logs.String())
	}
	control(api.ActionHold)
	control(api.ActionRelease)

	stopped1 := make(chan struct{})
	go func() { stop1(); close(stopped1) }()
	nd.logs.await(t, "msg=stopped")
	// At once: a second daemon on the same state starts.
	nd2 := &nvmlDaemon{t: t, dir: dir, logs: &syncBuffer{}}
	nd2.run(opts, false)()
	<-stopped1
	log1 := nd.logs.String()
	dropped := `level=WARN msg="notifications not sent: the daemon stopped before they could be delivered" dropped=3`
	if i, j := strings.Index(log1, dropped), strings.Index(log1, "msg=stopped"); i < 0 || j < i {
		t.Errorf("the first daemon's log lacks %q before \"stopped\":\n%s", dropped, log1)
	}
}
