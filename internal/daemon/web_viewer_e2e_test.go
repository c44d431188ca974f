package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// asClientArg makes the test binary a client of one request
// (asClientMain): how the test acts as alice or bob, whom the daemon
// knows by the kernel's word (SO_PEERCRED), never by a claim.
const asClientArg = "as-client"

// asClientMain sends one request to the socket args[0] (method args[1],
// path args[2], the JSON body on stdin) and prints the answer's JSON; an
// error goes to stderr, with exit status 1.
func asClientMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: as-client SOCKET METHOD PATH < body.json")
		return 2
	}
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var in any
	if len(body) > 0 {
		in = json.RawMessage(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out json.RawMessage
	if err := sockclient.New(args[0]).Do(ctx, args[1], args[2], in, &out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, _ = os.Stdout.Write(out)
	return 0
}

// realUsers are the accounts alice and bob of this machine, and a copy
// of this test binary that they may run.
type realUsers struct {
	t   *testing.T
	exe string
	ids map[string]*user.User
}

// needRealUsers skips the test, saying why, where it cannot act as alice
// and bob: it must be root, and they must exist (.ci/run creates them).
func needRealUsers(t *testing.T) *realUsers {
	t.Helper()
	if testing.Short() {
		t.Skip("starts daemons and real jobs")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the jobs run as alice and bob, who act on them themselves")
	}
	u := &realUsers{t: t, ids: map[string]*user.User{}}
	for _, name := range []string{"alice", "bob"} {
		id, err := user.Lookup(name)
		if err != nil {
			t.Skipf("needs the user %s (.ci/run creates it): %v", name, err)
		}
		u.ids[name] = id
	}
	// go test's binary lies in a directory only root may enter.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	u.exe = filepath.Join(openTempDir(t), "daemon.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return u
}

// openTempDir is a temporary directory every user may enter. Its name is
// short, not the test's: a supervisor's control socket under it must fit
// a Unix socket's 107 bytes.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "webview")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (u *realUsers) uid(name string) (uint32, uint32) {
	uid, _ := strconv.ParseUint(u.ids[name].Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.ids[name].Gid, 10, 32)
	return uint32(uid), uint32(gid)
}

// home is a directory of dir owned by the user name, for their jobs.
func (u *realUsers) home(dir, name string) string {
	u.t.Helper()
	h := filepath.Join(dir, name)
	uid, gid := u.uid(name)
	if err := os.Mkdir(h, 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.Chown(h, int(uid), int(gid)); err != nil {
		u.t.Fatal(err)
	}
	return h
}

// do sends one request to the daemon at sock as the user name, from a
// process of theirs; out receives the answer.
func (u *realUsers) do(sock, name, method, path string, in, out any) {
	u.t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		u.t.Fatal(err)
	}
	uid, gid := u.uid(name)
	cmd := exec.Command(u.exe, asClientArg, sock, method, path)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stdin = bytes.NewReader(body)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		u.t.Fatalf("%s %s as %s: %v: %s", method, path, name, err, stderr.Bytes())
	}
	if out != nil {
		if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
			u.t.Fatalf("%s %s as %s answered %q: %v", method, path, name, stdout.Bytes(), err)
		}
	}
}

// declaredActions are the event actions the daemon declares (every
// constant of type eventAction in its source): what the walk must bring
// about, each of them.
func declaredActions(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range daemonSource(t) {
		for _, decl := range f.file.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "eventAction" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: an eventAction that is not a string literal", f.name)
					}
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, s)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no eventAction constants in the daemon's source")
	}
	slices.Sort(out)
	return out
}

type sourceFile struct {
	name string
	file *ast.File
}

// daemonSource is this package's code, without its tests.
func daemonSource(t *testing.T) []sourceFile {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []sourceFile
	fset := token.NewFileSet()
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sourceFile{n, f})
	}
	return out
}

// Every audit event is made by schedEvent, callerEvent or actorEvent
// from a declared eventAction: no store.Event is written by hand, and no
// action is a string of the moment. So the declared actions are every
// kind the daemon writes, and TestWebShowsTheAnonymousViewerNoSecrets,
// which brings each one about, covers them all.
func TestEventsAreMadeFromDeclaredActions(t *testing.T) {
	// The argument that is the action, by constructor.
	actionArg := map[string]int{"schedEvent": 1, "callerEvent": 2, "actorEvent": 3, "audit": 3}
	for _, f := range daemonSource(t) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Event" && f.name != "events.go" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "store" {
						t.Errorf("%s: a store.Event made by hand; make it with schedEvent, callerEvent or actorEvent (events.go)", f.name)
					}
				}
			case *ast.CallExpr:
				var name string
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if name == "eventAction" {
					t.Errorf("%s: an eventAction made of a string; declare it with the others in events.go", f.name)
				}
				if i, ok := actionArg[name]; ok && i < len(n.Args) {
					if _, lit := n.Args[i].(*ast.BasicLit); lit {
						t.Errorf("%s: %s with the action %s; declare it as an eventAction in events.go", f.name, name,
							n.Args[i].(*ast.BasicLit).Value)
					}
				}
			}
			return true
		})
	}
}

// The secrets of the walk: what alice's and bob's jobs are called, their
// comments, their files, and who they are. Under PrivateData "jobs" and
// "usage" the anonymous viewer sees none of them.
const (
	aliceName    = "alice-train-q7x"
	aliceRenamed = "renamed-r8w"
	aliceComment = "comment-c3v"
	aliceNewNote = "comment-d4u"
	aliceUrgent  = "urgent-u2t"
	aliceOut     = "outfile-o9s"
	bobName      = "bob-sweep-b5r"
	bobComment   = "bobnote-e6p"
	bobScavenger = "scavenge-s1n"
)

var walkSecrets = []string{"alice", "bob", aliceName, aliceRenamed, aliceComment, aliceNewNote, aliceUrgent, aliceOut,
	bobName, bobComment, bobScavenger, "ckpt/"}

// webWalk is one run of the walk: a daemon with the web listener, the
// jobs made, and what the dashboard showed.
type webWalk struct {
	t       *testing.T
	wd      *webDaemon
	private bool
	// secrets are what no route may show under PrivateData.
	secrets []string
	sock    string
	jobs    []uint32
	// shown are the actions the dashboard showed.
	shown map[string]bool
}

// submitFor submits a job for user (sbatch --uid, as root), from their
// directory cwd.
func (w *webWalk) submitFor(name, cwd, script string, opts ...string) uint32 {
	w.t.Helper()
	cl, err := jobscript.ParseCommandLine(append(opts, "--uid="+name, "job.sh"))
	if err != nil {
		w.t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n" + script + "\n"), Command: cl, Now: time.Now()})
	if err != nil {
		w.t.Fatal(err)
	}
	var out api.Submitted
	if err := w.wd.c.Do(context.Background(), "POST", api.PathJobs,
		api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: cwd}, &out); err != nil {
		w.t.Fatalf("submitting for %s: %v", name, err)
	}
	w.jobs = append(w.jobs, out.JobID)
	return out.JobID
}

// apiEvents are every event of the walk as root reads them (the trail
// of every job it made and the node's), oldest first.
func (w *webWalk) apiEvents() []api.Event {
	w.t.Helper()
	q := "node=1"
	for _, id := range w.jobs {
		q += fmt.Sprintf("&job=%d", id)
	}
	return w.wd.events(q)
}

// asWeb is an API event as the dashboard shows it.
func asWeb(e api.Event) web.Event {
	ev := web.Event{Time: e.Time.Unix(), Who: e.ActorName, Action: e.Action, JobID: e.JobID, Detail: e.Detail}
	switch {
	case e.JobID != 0:
		// (No array in the walk: a job is named by its id.)
		ev.ID = strconv.Itoa(int(e.JobID))
	case e.GPU == api.NodeDrainUUID:
	case e.GPUIndex >= 0:
		ev.GPU = strconv.Itoa(e.GPUIndex)
	default:
		ev.GPU = e.GPU
	}
	return ev
}

// look reads every route of the web listener after step, and checks it
// by the viewer rule: under PrivateData none of the secrets, no job and
// no job's event, the counts all the same; without it, every job with its
// name and user and the newest events as root reads them.
func (w *webWalk) look(step string) {
	w.t.Helper()
	// The dashboard shows the last pass's snapshot, the API the jobs as
	// they are: a job that starts between the two reads (the pass after
	// an end) is counted by one and not yet by the other. Read both again
	// until they agree, for a few seconds at most.
	var (
		bodies  map[string]string
		st      web.State
		jobs    []api.Job
		running int
	)
	for deadline := time.Now().Add(5 * time.Second); ; {
		bodies = map[string]string{}
		for _, p := range web.Paths() {
			bodies[p] = w.wd.get(p)
		}
		st = web.State{}
		if err := json.Unmarshal([]byte(bodies["/api/dashboard"]), &st); err != nil {
			w.t.Fatal(err)
		}
		jobs = nil
		if err := w.wd.c.Do(context.Background(), "GET", api.PathJobs, nil, &jobs); err != nil {
			w.t.Fatal(err)
		}
		running = 0
		for _, j := range jobs {
			if j.State == slurm.Running {
				running++
			}
		}
		agree := st.States["RUNNING"] == running
		shown := map[string]string{}
		for _, j := range st.Jobs {
			shown[j.ID] = j.Name
		}
		for _, j := range jobs {
			if name, ok := shown[strconv.Itoa(int(j.ID))]; !w.private && !j.State.Finished() && (!ok || name != j.Name) {
				agree = false
			}
			// /metrics names a running job's GPUs once a sample has it.
			if !w.private && j.State == slurm.Running && !strings.Contains(bodies["/metrics"], fmt.Sprintf(`job="%d",`, j.ID)) &&
				!strings.Contains(bodies["/metrics"], fmt.Sprintf(`,%d",`, j.ID)) {
				agree = false
			}
		}
		if agree || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w.private {
		for p, body := range bodies {
			low := strings.ToLower(body)
			for _, s := range w.secrets {
				if i := strings.Index(low, strings.ToLower(s)); i >= 0 {
					w.t.Errorf("after %s: GET %s shows %q to the anonymous viewer: ...%s...", step, p, s,
						body[max(i-200, 0):min(i+200, len(body))])
				}
			}
		}
		if len(st.Jobs) != 0 || st.States["RUNNING"] != running {
			w.t.Errorf("after %s: the dashboard lists jobs %+v, counts %v (%d running)", step, st.Jobs, st.States, running)
		}
		for _, g := range st.GPUs {
			if len(g.Jobs) != 0 {
				w.t.Errorf("after %s: GPU %d names its jobs %+v", step, g.Index, g.Jobs)
			}
		}
		for _, l := range strings.Split(bodies["/metrics"], "\n") {
			if strings.Contains(l, `job="`) && !strings.Contains(l, `job="",`) || strings.HasPrefix(l, "slurm_user_") ||
				strings.HasPrefix(l, "slurm_account_jobs") || strings.HasPrefix(l, "slurm_partition_jobs") {
				w.t.Errorf("after %s: /metrics shows a job: %s", step, l)
			}
		}
	} else {
		rows := map[string]web.Job{}
		for _, j := range st.Jobs {
			rows[j.ID] = j
		}
		for _, j := range jobs {
			if j.State.Finished() {
				continue
			}
			r, ok := rows[strconv.Itoa(int(j.ID))]
			if !ok || r.Name != j.Name || r.User != j.User || r.Account != j.Account {
				w.t.Errorf("after %s: job %d (%s of %s) on the dashboard: %+v (found: %v)", step, j.ID, j.Name, j.User, r, ok)
			}
			if j.State == slurm.Running && !strings.Contains(bodies["/metrics"], fmt.Sprintf(`job="%d",`, j.ID)) &&
				!strings.Contains(bodies["/metrics"], fmt.Sprintf(`,%d",`, j.ID)) {
				w.t.Errorf("after %s: no GPU of /metrics names running job %d", step, j.ID)
			}
		}
	}
	// The events: the newest 30 the viewer may see, as root reads them.
	// (Read again until they agree: the loop may record one between the
	// two reads.)
	var want, got []web.Event
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		want = nil
		for _, e := range w.apiEvents() {
			if !w.private || e.JobID == 0 {
				want = append(want, asWeb(e))
			}
		}
		want = want[max(len(want)-30, 0):]
		got = w.wd.dashboard().Events
		if len(want) == 0 && len(got) == 0 || cmp.Equal(want, got) {
			break
		}
		if time.Now().After(deadline) {
			w.t.Errorf("after %s: the dashboard's events are not the newest the viewer may see (-want +got):\n%s", step, cmp.Diff(want, got))
			break
		}
	}
	for _, e := range got {
		w.shown[e.Action] = true
	}
}

// Every route of the web listener, read as its anonymous viewer after
// each kind of event the daemon writes, follows the socket API's viewer
// rule. Real alice and bob (root's daemon) submit jobs with names,
// comments and files of their own; alice renames hers and yields it (a
// checkpoint path with her name), bob holds, releases and cancels his,
// a higher tier preempts his scavenger job, alice's job loses its
// supervisor (NODE_FAIL), a job ends, root drains and resumes a GPU,
// root creates, updates and deletes a reservation for alice.
// Under PrivateData "jobs" and "usage" no route shows any of their
// names, comments, files or users, nor any job or job event, while the
// counts count them; without PrivateData the dashboard shows every job
// with its name and user and the events as root reads them, not
// redacted. Each kind of event is brought about: the kinds are read
// from the daemon's source (declaredActions), so a new kind fails this
// test until it is.
// (Under "jobs" alone sshare's rows, and so the dashboard's, name every
// user: the user names are then no secret.)
func TestWebShowsTheAnonymousViewerNoSecrets(t *testing.T) {
	u := needRealUsers(t)
	for _, tc := range []struct {
		name    string
		private string
	}{
		{"jobs and usage", `["jobs", "usage"]`},
		{"jobs", `["jobs"]`},
		{"public", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { walkWeb(t, u, tc.private) })
	}
}

// walkWeb is one walk, under PrivateData = privateData ("": none).
func walkWeb(t *testing.T, u0 *realUsers, privateData string) {
	u := *u0
	u.t = t
	dir := openTempDir(t)
	extra := fmt.Sprintf("CheckpointDir = %q\n", filepath.Join(dir, "ckpt", "%u", "%j"))
	private := privateData != ""
	secrets := walkSecrets
	if private {
		extra += "PrivateData = " + privateData + "\n"
		if !strings.Contains(privateData, "usage") {
			secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "alice" || s == "bob" })
		}
	}
	extra += `
[[Partition]]
PartitionName = "gpu"
Default       = true
PriorityTier  = 1

[[Partition]]
PartitionName = "scavenger"
PriorityTier  = 0
PreemptMode   = "REQUEUE"
GraceTime     = 0
`
	machine := newWebMachine()
	wd := startWebDaemon(t, dir, machine, nil, extra)
	w := &webWalk{t: t, wd: wd, private: private, secrets: secrets, sock: filepath.Join(dir, "d.sock"), shown: map[string]bool{}}
	adir, bdir := u.home(dir, "alice"), u.home(dir, "bob")
	ctx := context.Background()
	ids := func(id uint32) []string { return []string{strconv.Itoa(int(id))} }
	fileIn := func(d, name string) {
		t.Helper()
		wd.waitFor(func() bool { _, err := os.Stat(filepath.Join(d, name)); return err == nil }, name)
	}

	// 1. alice's job starts: it saves its work on SIGTERM and exits.
	a := w.submitFor("alice", adir, "trap 'exit 0' TERM; touch started-${SLURM_RESTART_COUNT:-0}; sleep 300 & wait",
		"--gpus=1", "--requeue", "-J", aliceName, "--comment="+aliceComment, "-o", aliceOut+"-%j.txt")
	wd.waitState(a, slurm.Running)
	fileIn(adir, "started-0")
	w.look("alice's job started")

	// 2. bob's job waits for all eight GPUs; bob holds and releases it.
	b := w.submitFor("bob", bdir, "exec sleep 300", "--gpus=8", "-J", bobName, "--comment="+bobComment)
	u.do(w.sock, "bob", "POST", api.PathControl, api.Control{Action: api.ActionHold, Jobs: ids(b)}, nil)
	w.look("bob held his job")
	u.do(w.sock, "bob", "POST", api.PathControl, api.Control{Action: api.ActionRelease, Jobs: ids(b)}, nil)
	w.look("bob released his job")

	// 3. alice renames her job and changes its comment (the event's
	// detail: JobName=... Comment="...").
	u.do(w.sock, "alice", "POST", api.PathUpdate, api.Update{Jobs: ids(a), Name: ptr(aliceRenamed), Comment: ptr(aliceNewNote)}, nil)
	wd.waitFor(func() bool { return wd.job(a).Name == aliceRenamed }, "alice's job renamed")
	w.look("alice renamed her job")
	w.shows("update", a, fmt.Sprintf("JobName=%s Comment=%q", aliceRenamed, aliceNewNote))

	// 4. bob cancels his pending job.
	u.do(w.sock, "bob", "POST", api.PathCancel, api.Cancel{Jobs: ids(b)}, nil)
	wd.waitState(b, slurm.Cancelled)
	w.look("bob cancelled his job")

	// 5. alice yields hers: requeued, its checkpoint path (with her name)
	// in the yield's detail, started again.
	var y api.Yielded
	u.do(w.sock, "alice", "POST", api.PathYield, api.Yield{Job: strconv.Itoa(int(a))}, &y)
	wd.waitFor(func() bool { j := wd.job(a); return j.State == slurm.Running && j.Restarts == 1 }, "alice's yielded job running again")
	fileIn(adir, "started-1")
	w.look("alice yielded her job")
	w.shows("yield", a, "checkpoint in "+filepath.Join(dir, "ckpt", "alice", strconv.Itoa(int(a))))

	// 6. bob's scavenger job fills the other seven GPUs; alice's urgent
	// job, of the higher tier, preempts it.
	s := w.submitFor("bob", bdir, "exec sleep 300", "-p", "scavenger", "--requeue", "--gpus=7", "-J", bobScavenger)
	wd.waitState(s, slurm.Running)
	urgent := w.submitFor("alice", adir, "while [ ! -e go-urgent ]; do sleep 0.1; done", "--gpus=2", "-J", aliceUrgent)
	wd.waitState(urgent, slurm.Running)
	wd.waitFor(func() bool { j := wd.job(s); return j.State == slurm.Pending && j.Restarts == 1 }, "bob's scavenger job requeued")
	w.look("alice's urgent job preempted bob's")

	// 7. alice's job loses its supervisor (SIGKILL): NODE_FAIL, requeued,
	// started again.
	sup := supervisorOf(t, filepath.Join(dir, "state", "jobs", strconv.Itoa(int(a)), "run-1"))
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wd.waitFor(func() bool { j := wd.job(a); return j.State == slurm.Running && j.Restarts == 2 }, "alice's lost job running again")
	w.look("alice's job lost its supervisor")

	// 8. The urgent job ends by itself.
	if err := os.WriteFile(filepath.Join(adir, "go-urgent"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wd.waitState(urgent, slurm.Completed)
	w.look("alice's urgent job ended")

	// 9. root drains a GPU and resumes it.
	for _, state := range []string{api.NodeDrain, api.NodeResume} {
		nu := api.NodeUpdate{Node: "gpu01", GPUs: []string{"7"}, State: state}
		if state == api.NodeDrain {
			nu.Reason = "fan check"
		}
		if err := wd.c.Do(ctx, "POST", api.PathNodeUpdate, nu, nil); err != nil {
			t.Fatal(err)
		}
		w.look("root's " + state + " of GPU 7")
	}

	// 9b. root reserves two GPUs for alice, changes and deletes the
	// reservation: the audit trail says who, never for whom.
	for _, ch := range []api.ResvChange{
		{Action: api.ResvCreate, Words: []string{"ReservationName=lab", "StartTime=now+1hour", "Duration=60", "Users=alice", "TRES=gres/gpu=2", "Flags=IGNORE_JOBS"}},
		{Action: api.ResvUpdate, Name: "lab", Words: []string{"ReservationName=lab", "Duration=90"}},
		{Action: api.ResvDelete, Name: "lab"},
	} {
		if err := wd.c.Do(ctx, "POST", api.PathReservations, ch, nil); err != nil {
			t.Fatal(err)
		}
		w.look("root's " + ch.Action + " of a reservation")
	}

	// 10. An older copy of the database is put back (taken while the
	// daemon was stopped): alice's job that started since is put back
	// from its directory (adopt), bob's held job, acknowledged since and
	// never started, is reported lost.
	state := filepath.Join(dir, "state")
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w.wd.stop()
	copyFile(filepath.Join(state, "state.db"), filepath.Join(dir, "copy.db"))
	w.wd = startWebDaemon(t, dir, machine, nil, extra)
	later := w.submitFor("alice", adir, "while [ ! -e go-later ]; do sleep 0.1; done", "--gpus=1", "-J", aliceName)
	w.wd.waitState(later, slurm.Running)
	w.submitFor("bob", bdir, "true", "--hold", "-J", bobName, "--comment="+bobComment)
	w.wd.stop()
	copyFile(filepath.Join(dir, "copy.db"), filepath.Join(state, "state.db"))
	os.Remove(filepath.Join(state, "state.db-wal"))
	os.Remove(filepath.Join(state, "state.db-shm"))
	w.wd = startWebDaemon(t, dir, machine, nil, extra)
	w.wd.waitState(later, slurm.Running)
	w.look("an older copy of the database put back")
	if err := os.WriteFile(filepath.Join(adir, "go-later"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w.wd.waitState(later, slurm.Completed)
	w.look("alice's put-back job ended")

	// Every kind the daemon writes came about; without PrivateData the
	// dashboard showed each one.
	made := map[string]bool{}
	for _, e := range w.apiEvents() {
		made[e.Action] = true
	}
	for _, action := range declaredActions(t) {
		switch {
		case !made[action]:
			t.Errorf("the walk did not bring about a %q event (events.go declares it): add a step that does", action)
		case !private && !w.shown[action]:
			t.Errorf("without PrivateData the dashboard never showed a %q event", action)
		}
	}
}

// shows checks, without PrivateData, that the dashboard's newest event
// of action on job id says detail as it is: not redacted.
func (w *webWalk) shows(action string, id uint32, detail string) {
	w.t.Helper()
	if w.private {
		return
	}
	var last web.Event
	for _, e := range w.wd.dashboard().Events {
		if e.Action == action && e.JobID == id {
			last = e
		}
	}
	if !strings.Contains(last.Detail, detail) {
		w.t.Errorf("without PrivateData the dashboard's %s of job %d says %q, want it to say %q", action, id, last.Detail, detail)
	}
}

// supervisorOf is the pid of the supervisor of the run whose directory
// is runDir (its command line: ... stepd run RUNDIR/...).
func supervisorOf(t *testing.T, runDir string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if len(args) == 4 && args[1] == "stepd" && args[2] == "run" && strings.HasPrefix(args[3], runDir+"/") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	t.Fatalf("no supervisor of %s", runDir)
	return 0
}
