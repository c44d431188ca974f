package daemon

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

const secret = "s3cret"

var bobCaller = localapi.Identity{UID: 4244, User: "bob"}

// secretJobs stores two jobs of alice's that carry secret: one submitted
// with --export=ALL,APIKEY=s3cret, a script and an environment holding it
// and a warning quoting it, one with --wrap holding it; and a finished run
// of the first in accounting.
func secretJobs(t *testing.T, d *Daemon) []uint32 {
	t.Helper()
	req := func() jobscript.Request {
		return jobscript.Request{JobName: "train", NTasks: 1, Nodes: jobscript.NodeRange{Min: 1},
			ScriptPath: "/home/alice/train.sh", Args: []string{"--epochs", "3"},
			Export: &jobscript.Export{Spec: "ALL,APIKEY=" + secret, All: true,
				Vars: []jobscript.ExportVar{{Name: "APIKEY", Value: secret, HasValue: true}}},
			Warnings: []string{"error: ignoring #SBATCH --comment=" + secret}}
	}
	a := store.Job{User: "alice", UID: aliceCaller.UID, GID: aliceCaller.UID, Account: "root", Partition: "gpu",
		QOS: "normal", Name: "train", State: slurm.Pending, Requeue: true, SubmitDir: "/home/alice", Request: req()}
	b := a
	b.Name, b.Request = "wrap", req()
	b.Request.Export, b.Request.Warnings = nil, nil
	b.Request.ScriptPath, b.Request.Args = "", nil
	b.Request.Wrap, b.Request.HasWrap = "curl -H 'Authorization: "+secret+"' https://example.com", true
	ids, err := d.st.Submit(context.Background(), []store.NewJob{
		{Job: a, Script: "#!/bin/sh\nexport TOKEN=" + secret + "\npython train.py\n", Env: []string{"APIKEY=" + secret, "HOME=/home/alice"}},
		{Job: b, Script: "#!/bin/sh\n" + b.Request.Wrap + "\n", Env: []string{"APIKEY=" + secret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first job ran once and was requeued: its earlier run is in
	// accounting too (sacct -D).
	err = d.st.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Requeue(ids[0], time.Now())
		return err
	})
	if err != nil {
		t.Logf("requeue (accounting keeps one run only): %v", err)
	}
	return ids
}

// routeRequest is the request the walk sends to a route: a query for a GET
// naming the jobs, a body for a POST aimed at them.
func routeRequest(t *testing.T, r localapi.Route, ids []uint32) (*http.Request, bool) {
	q := url.Values{}
	for _, id := range ids {
		q.Add("id", fmt.Sprint(id))
	}
	q.Set("job", fmt.Sprint(ids[0]))
	q.Set("dups", "1")
	jobs := []string{fmt.Sprint(ids[0]), fmt.Sprint(ids[1])}
	sub := api.Submit{Cwd: "/home/bob", Env: []string{"HOME=/home/bob"},
		Request: jobscript.Request{JobName: "mine", NTasks: 1, Nodes: jobscript.NodeRange{Min: 1}, Script: "#!/bin/sh\ntrue\n"}}
	bodies := map[string]any{
		"POST " + api.PathJobs:       sub,
		"POST " + api.PathCancel:     api.Cancel{Jobs: jobs},
		"POST " + api.PathControl:    api.Control{Action: api.ActionHold, Jobs: jobs},
		"POST " + api.PathUpdate:     api.Update{Jobs: jobs, Comment: ptr("mine now")},
		"POST " + api.PathNodeUpdate: api.NodeUpdate{Node: "gpu01", State: api.NodeDrain, Reason: "mine"},
		"POST " + api.PathYield:      api.Yield{Job: jobs[0], NoWait: true},
		"POST " + api.PathSteps:      api.StepRequest{JobID: ids[0], GPUs: -1, Name: "x", Join: true},
		"POST " + api.PathStepsEnd:   api.StepEnd{JobID: ids[0], State: slurm.Completed},
		"POST " + api.PathAlloc:      api.AllocRequest{Submit: sub, Command: []string{"bash"}},
		"POST " + api.PathAllocEnd:   api.AllocEnd{JobID: ids[0]},
		"POST " + api.PathToken:      api.TokenRequest{Username: "root"},
		"POST " + api.PathReservations: api.ResvChange{Action: api.ResvCreate,
			Words: []string{"ReservationName=mine", "StartTime=now+1hour", "Duration=60", "Users=bob", "TRES=gres/gpu=1"}},
	}
	var body []byte
	switch r.Method {
	case "GET":
	case "POST":
		b, ok := bodies[r.Method+" "+r.Path]
		if !ok {
			return nil, false
		}
		body, _ = json.Marshal(b)
	default:
		return nil, false
	}
	return httptest.NewRequest(r.Method, r.Path+"?"+q.Encode(), bytes.NewReader(body)), true
}

// call sends req to the route's handler as who, as the server would (the
// caller from SO_PEERCRED in the context), and answers the raw bytes.
func call(t *testing.T, r localapi.Route, req *http.Request, who localapi.Identity, gobbed bool) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(localapi.WithCaller(context.Background(), who), 20*time.Second)
	defer cancel()
	req = req.WithContext(ctx)
	if gobbed {
		req.Header.Set("Accept", localapi.GobType)
	}
	w := httptest.NewRecorder()
	r.Handler.ServeHTTP(w, req)
	return w.Body.Bytes()
}

// Every route of the daemon, asked as bob about alice's jobs (GET) or
// aimed at them (POST), in JSON and in gob, with and without
// PrivateData=jobs, answers without alice's secrets: the walk takes the
// routes from routes(), so a new route cannot escape it (a POST it has no
// body for fails the test). Alice, root and an operator do see them where
// a job's request travels (squeue's and scontrol's jobs, sacct).
func TestEveryRouteKeepsSecrets(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	ids := secretJobs(t, d)
	for _, private := range [][]string{nil, {config.PrivateJobs, config.PrivateUsage}} {
		d.mu.Lock()
		cfg := *d.cfg
		cfg.PrivateData = private
		d.cfg = &cfg
		d.publishLocked()
		d.mu.Unlock()
		for _, r := range d.routes() {
			for _, gobbed := range []bool{false, true} {
				req, ok := routeRequest(t, r, ids)
				if !ok {
					t.Errorf("%s %s: this test sends it nothing; give it a request in routeRequest", r.Method, r.Path)
					continue
				}
				if got := call(t, r, req, bobCaller, gobbed); bytes.Contains(got, []byte(secret)) {
					t.Errorf("PrivateData=%v gob=%v: bob's %s %s answers with alice's secret:\n%s",
						private, gobbed, r.Method, r.Path, got)
				}
			}
		}
		// Where the request travels, its owner, root and operators see it.
		for _, r := range d.routes() {
			if r.Method != "GET" || r.Path != api.PathJobs && r.Path != api.PathAccounting {
				continue
			}
			for _, who := range []localapi.Identity{aliceCaller, rootCaller, opsCaller} {
				for _, gobbed := range []bool{false, true} {
					req, _ := routeRequest(t, r, ids)
					got := call(t, r, req, who, gobbed)
					if n := bytes.Count(got, []byte(secret)); n < 3 {
						t.Errorf("PrivateData=%v gob=%v: %s's %s %s shows alice's --export and --wrap %d times, want 3 or more:\n%s",
							private, gobbed, who.User, r.Method, r.Path, n, got)
					}
				}
			}
		}
	}
}

// What bob sees of alice's jobs: all of them but their secrets by default
// (Slurm's PrivateData default), none under PrivateData=jobs; and sshare's
// rows of other users only without PrivateData=usage.
func TestPrivateData(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	ids := secretJobs(t, d)
	ctx := context.Background()
	q := url.Values{"id": {fmt.Sprint(ids[0]), fmt.Sprint(ids[1])}}
	set := func(private ...string) {
		d.mu.Lock()
		cfg := *d.cfg
		cfg.PrivateData = private
		d.cfg = &cfg
		d.publishLocked()
		d.mu.Unlock()
	}
	count := func(who localapi.Identity) (jobs, squeue, sacct, sprio int) {
		t.Helper()
		js, err := d.jobs(ctx, &localapi.Request[struct{}]{Caller: who, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.UID != aliceCaller.UID {
				t.Errorf("%s's job list has %d of uid %d", who.User, j.ID, j.UID)
			}
			if who.UID == bobCaller.UID && (j.Request.Export != nil && (j.Request.Export.Spec != "" || j.Request.Export.Vars != nil) ||
				j.Request.Wrap != "" || j.Request.Warnings != nil) {
				t.Errorf("bob sees job %d's secrets: %+v", j.ID, j.Request)
			}
			if who.UID == bobCaller.UID && j.Command != "/home/alice/train.sh --epochs 3" && j.Command != "(null)" {
				t.Errorf("bob sees job %d's command as %q: as in Slurm, everyone sees it", j.ID, j.Command)
			}
		}
		sq, err := d.squeueJobs(ctx, &localapi.Request[struct{}]{Caller: who, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := d.accounting(ctx, &localapi.Request[struct{}]{Caller: who, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := d.priorities(ctx, &localapi.Request[struct{}]{Caller: who})
		if err != nil {
			t.Fatal(err)
		}
		return len(js), sq.Len(), len(recs), len(pr)
	}
	for _, c := range []struct {
		private []string
		who     localapi.Identity
		sees    bool
	}{
		{nil, bobCaller, true},
		{[]string{config.PrivateJobs}, bobCaller, false},
		{[]string{config.PrivateJobs}, aliceCaller, true},
		{[]string{config.PrivateJobs}, opsCaller, true},
		{[]string{config.PrivateJobs}, rootCaller, true},
	} {
		set(c.private...)
		j, s, a, p := count(c.who)
		if c.sees && (j != 2 || s != 2 || a < 2 || p != 2) || !c.sees && (j != 0 || s != 0 || a != 0 || p != 0) {
			t.Errorf("PrivateData=%v: %s sees %d jobs, %d in squeue, %d in sacct, %d in sprio of alice's 2; want all: %v",
				c.private, c.who.User, j, s, a, p, c.sees)
		}
	}

	// sshare: alice has usage rows (she has jobs); bob sees them unless
	// PrivateData=usage.
	aliceRows := func(who localapi.Identity) int {
		rows, err := d.shares(ctx, &localapi.Request[struct{}]{Caller: who})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rows {
			if r.User == "alice" {
				n++
			}
		}
		return n
	}
	set()
	if aliceRows(rootCaller) == 0 {
		t.Skip("no fair-share row for alice here (no association): sshare's PrivateData=usage not checked")
	}
	if aliceRows(bobCaller) == 0 {
		t.Errorf("without PrivateData, bob does not see alice's sshare rows")
	}
	set(config.PrivateUsage)
	if n := aliceRows(bobCaller); n != 0 {
		t.Errorf("PrivateData=usage: bob sees %d sshare rows of alice's", n)
	}
	if aliceRows(aliceCaller) == 0 || aliceRows(opsCaller) == 0 {
		t.Errorf("PrivateData=usage: alice or an operator does not see alice's sshare rows")
	}
}

// The viewer copies: the job it was given (perhaps the store's cache's)
// keeps its secrets.
func TestViewDoesNotChangeTheJob(t *testing.T) {
	exp := &jobscript.Export{Spec: "APIKEY=" + secret, Vars: []jobscript.ExportVar{{Name: "APIKEY", Value: secret, HasValue: true}}}
	j := store.Job{UID: aliceCaller.UID, Request: jobscript.Request{Export: exp, Wrap: secret}}
	v := viewFor(config.Default(), bobCaller)
	got, ok := v.job(j)
	if !ok || got.Request.Export.Spec != "" || got.Request.Wrap != "" {
		t.Fatalf("bob's view: %v %+v", ok, got.Request)
	}
	if exp.Spec != "APIKEY="+secret || exp.Vars[0].Value != secret || j.Request.Wrap != secret {
		t.Errorf("the view changed the job it was given: %+v", j.Request)
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(got); err != nil || strings.Contains(b.String(), secret) {
		t.Errorf("bob's view in gob: %v, holds the secret: %v", err, strings.Contains(b.String(), secret))
	}
}
