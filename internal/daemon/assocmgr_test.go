package daemon

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// assocMgrConf is scripts/record-assoc-mgr's cluster: record-quota's
// node, no decay, a daily reset, fair share recalculated every minute,
// billing by GPU, lab with a budget of 60 GPU-minutes; its users in the
// order the recording added them (bob and root, then alice with 2
// shares), so their associations have the recording's ids.
const assocMgrConf = `ClusterName        = "anchor"
GPUSampleInterval  = 1
DefMemPerCPU       = "1000M"
TRESBillingWeights = "CPU=0,Mem=0,GRES/gpu=1.0"
%s
[Node]
NodeName   = "gpu01"
CPUs       = 16
RealMemory = "64000M"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "80G"
Count  = 4

[Priority]
DecayHalfLife    = "0"
UsageResetPeriod = "DAILY"
CalcPeriod       = "1"
WeightFairshare  = 10000
WeightAge        = 1000
WeightPartition  = 1000
MaxAge           = "7-0"

[[Account]]
Name        = "lab"
GrpTRESMins = "gres/gpu=60"

[[User]]
Name    = "bob"
Account = "lab"

[[User]]
Name    = "root"
Account = "lab"

[[User]]
Name    = "alice"
Account = "lab"
Shares  = 2
`

// assocMgrGolden is a recording of scripts/record-assoc-mgr: its command
// line, stdout, stderr and exit code.
type assocMgrGolden struct {
	command, stdout, stderr string
	exit                    int
}

func readAssocMgrGolden(t *testing.T, name string) assocMgrGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "assoc_mgr_"+name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	cmd, rest, _ := strings.Cut(s, "\n--- stdout ---\n")
	out, rest, _ := strings.Cut(rest, "--- stderr ---\n")
	errs, rest, _ := strings.Cut(rest, "--- exit code: ")
	g := assocMgrGolden{command: strings.TrimPrefix(cmd, "$ "), stdout: out, stderr: errs}
	if _, err := fmt.Sscanf(rest, "%d", &g.exit); err != nil {
		t.Fatalf("assoc_mgr_%s: no exit code: %v", name, err)
	}
	return g
}

// recorded is output as the recording keeps it: its trailing newlines
// one (the recording script reads it with $(...), which drops them all,
// and prints it with one; Slurm ends "No QOS currently cached in Slurm."
// with a blank line).
func recorded(s string) string {
	if s = strings.TrimRight(s, "\n"); s != "" {
		s += "\n"
	}
	return s
}

// runScontrol runs scontrol in the test's process as root, against the
// daemon of the configuration conf.
func runScontrol(conf string, args []string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	env := map[string]string{"SLURM_LITE_CONF": conf}
	code = scontrol.Main(args, cmdio.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Now: time.Now, ReadFile: os.ReadFile})
	return out.String(), errb.String(), code
}

// scontrol show assoc_mgr through the live daemon prints what real Slurm
// 22.05 printed (testdata/golden/assoc_mgr_*, scripts/record-assoc-mgr),
// byte for byte, for the recording's workload on the daemon's fake
// clock: before any usage (with -o, the alias cache, and scontrol's
// answers to bad words and to names that match nothing); after alice's
// 1-GPU job ran 65 seconds, with each flags=, accounts= and users= the
// recording used and -o; alice's
// flags=assoc, asked as alice; and alice's whole view under
// PrivateData=users, then PrivateData=usage (each a reload, as scontrol
// reconfigure was in the recording). The job's run is the store's record
// of it and the usage its passes charged, as a daemon restarted a minute
// after it keeps them (a job's supervisor stamps its end on the machine's
// clock, not the fake one, so a job cannot end 65 fake seconds after its
// start). Real users: alice's uid must be the recording's (1001), bob's
// 1002.
func TestAssocMgrMatchesRealSlurm(t *testing.T) {
	u := needRealUsers(t)
	for name, want := range map[string]uint32{"alice": 1001, "bob": 1002} {
		if uid, _ := u.uid(name); uid != want {
			t.Skipf("%s's uid is %d here, the recording's was %d: scontrol prints it", name, uid, want)
		}
	}
	t0 := time.Date(2030, time.March, 4, 10, 0, 0, 0, time.Local)

	// check runs the golden's command line (as root) until it prints what
	// real Slurm did: a recalculation may still be on its way.
	check := func(conf, name string) {
		t.Helper()
		t.Setenv("SLURM_LITE_CONF", conf)
		g := readAssocMgrGolden(t, name)
		args := strings.Fields(strings.TrimPrefix(g.command, "scontrol "))
		var out, errs string
		var code int
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			out, errs, code = runScontrol(conf, args)
			out, errs = recorded(out), recorded(errs)
			if out == g.stdout && errs == g.stderr && code == g.exit || time.Now().After(deadline) {
				break
			}
		}
		if out != g.stdout || errs != g.stderr || code != g.exit {
			t.Errorf("%s: %s: exit %d (real Slurm's: %d); stdout (-real Slurm +ours):\n%s\nstderr (-real Slurm +ours):\n%s",
				name, g.command, code, g.exit, cmp.Diff(strings.Split(g.stdout, "\n"), strings.Split(out, "\n")),
				cmp.Diff(strings.Split(g.stderr, "\n"), strings.Split(errs, "\n")))
		}
	}

	// Before any usage.
	dir := openTempDir(t)
	_, stop, _ := clockDaemonIn(t, dir, fmt.Sprintf(assocMgrConf, ""), &fakeClock{t: t0}, nil)
	for _, name := range []string{"all", "oneliner", "cache_users", "novalue", "bad_entity", "bad_flag", "qos_unknown", "accounts_unknown"} {
		check(filepath.Join(dir, "conf.toml"), name)
	}
	stop()

	// After alice's job: 1 GPU, 1 CPU and DefMemPerCPU's 1000M for 65
	// seconds, ended a minute ago; sshare's usage of it, 65 GPU-seconds
	// billed.
	dir = openTempDir(t)
	conf, sock := filepath.Join(dir, "conf.toml"), filepath.Join(dir, "d.sock")
	adir := u.home(dir, "alice")
	cl, err := jobscript.ParseCommandLine([]string{"--gpus=1", "-t", "10", "-o", "/dev/null", "job.sh"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\nsleep 65\n"), Command: cl, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	req.UID = "alice"
	run := store.Job{ID: 1, ArrayTaskID: store.NoTask, Name: "job.sh", User: "alice", UID: 1001, GID: 1001,
		Account: "lab", Partition: "gpu", QOS: "normal", State: slurm.Completed, TimeLimit: 10 * time.Minute,
		Submit: t0, Eligible: t0, Start: t0, End: t0.Add(65 * time.Second), SubmitDir: adir, Request: *req,
		Alloc: store.Alloc{Node: "gpu01", CPUs: []int{0}, Mem: 1000 << 20,
			GPUs: []store.GPUAlloc{{UUID: "GPU-SIM-0000", Index: 0}}}}
	clock := &fakeClock{t: t0.Add(2 * time.Minute)}
	clockDaemonIn(t, dir, fmt.Sprintf(assocMgrConf, ""), clock, func(st *store.Store) {
		if _, err := st.Submit(context.Background(), []store.NewJob{{Job: run}}); err != nil {
			t.Fatal(err)
		}
		err := st.Update(context.Background(), func(tx *store.Tx) error {
			return tx.PutUsage(store.Usage{Account: "lab", User: "alice", Raw: 65, AsOf: run.End})
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	for _, name := range []string{"used", "flags_assoc", "flags_users", "flags_qos", "accounts_lab", "users_alice", "users_unknown", "oneliner_qos_used"} {
		check(conf, name)
	}

	// asAlice is the route's answer to alice (the kernel's word for who
	// asks), printed as scontrol prints it.
	asAlice := func(name, query string, asked format.AssocMgrAsked) {
		t.Helper()
		g := readAssocMgrGolden(t, name)
		var got string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var m api.AssocMgr
			u.do(sock, "alice", "GET", api.PathAssocMgr+query, nil, &m)
			got = format.AssocMgr(&m, asked, false)
			if got == g.stdout || time.Now().After(deadline) {
				break
			}
		}
		if got != g.stdout {
			t.Errorf("%s: alice's view (-real Slurm +ours):\n%s", name, cmp.Diff(strings.Split(g.stdout, "\n"), strings.Split(got, "\n")))
		}
	}
	asAlice("alice_flags_assoc", "?flags=assoc", format.AssocMgrAsked{Assoc: true})

	// PrivateData, as scontrol reconfigure would: a reload.
	for _, pd := range []string{"users", "usage"} {
		body := fmt.Sprintf(assocMgrConf, fmt.Sprintf("PrivateData        = [%q]\n", pd))
		body = fmt.Sprintf("SocketPath        = %q\nStateSaveLocation = %q\n", sock, filepath.Join(dir, "state")) + body
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		asAlice("private_"+pd+"_alice", "", format.AssocMgrAsked{Users: true, Assoc: true, QOS: true})
	}
}

// The association manager's viewer rules are the daemon's, as
// slurmctld's: under PrivateData=users a user gets only their own user
// record, under PrivateData=usage only their own associations (and no
// account's); root and operators get everything; a user with no
// association gets nothing but an error under either. Without
// PrivateData, everyone sees everything.
func TestAssocMgrViewerRules(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	carol := localapi.Identity{UID: 4343, User: "carol"}
	set := func(private ...string) {
		d.mu.Lock()
		cfg := *d.cfg
		cfg.PrivateData = private
		cfg.Accounts = []config.Account{{Name: "lab", Shares: 1}}
		cfg.Users = []config.User{{Name: "alice", Account: "lab", Shares: 1}, {Name: "bob", Account: "lab", Shares: 1}}
		d.cfg = &cfg
		d.publishLocked()
		d.mu.Unlock()
	}
	view := func(who localapi.Identity) (users, assocs string, err error) {
		m, err := d.assocMgr(context.Background(), &localapi.Request[struct{}]{Caller: who, Query: url.Values{}})
		var us, as []string
		for _, u := range m.Users {
			us = append(us, u.Name)
		}
		for _, a := range m.Assocs {
			as = append(as, a.Account+"/"+a.User)
		}
		return strings.Join(us, ","), strings.Join(as, ","), err
	}
	const everyone, all = "alice,bob,root", "root/,root/root,lab/,lab/alice,lab/bob"
	for _, c := range []struct {
		private       []string
		who           localapi.Identity
		users, assocs string
		refused       bool
	}{
		{nil, bobCaller, everyone, all, false},
		{nil, carol, everyone, all, false},
		{[]string{config.PrivateUsers}, bobCaller, "bob", all, false},
		{[]string{config.PrivateUsage}, bobCaller, everyone, "lab/bob", false},
		{[]string{config.PrivateUsage, config.PrivateUsers}, bobCaller, "bob", "lab/bob", false},
		{[]string{config.PrivateUsage, config.PrivateUsers}, opsCaller, everyone, all, false},
		{[]string{config.PrivateUsage, config.PrivateUsers}, rootCaller, everyone, all, false},
		{[]string{config.PrivateUsers}, carol, "", "", true},
		{[]string{config.PrivateUsage}, carol, "", "", true},
	} {
		set(c.private...)
		users, assocs, err := view(c.who)
		if c.refused {
			if err == nil || !strings.Contains(err.Error(), "carol has no association") {
				t.Errorf("PrivateData=%v: %s gets users %q, associations %q, error %v; want refused", c.private, c.who.User, users, assocs, err)
			}
			continue
		}
		if err != nil || users != c.users || assocs != c.assocs {
			t.Errorf("PrivateData=%v: %s gets users %q, associations %q (error %v); want %q, %q",
				c.private, c.who.User, users, assocs, err, c.users, c.assocs)
		}
	}
}

// With no accounts configured, every user shares the implicit account
// (named after the cluster), as sshare shows it: root's association is
// there, and a name in users= that is no user of this machine is no
// association (Slurm: "No users currently cached in Slurm.").
func TestAssocMgrImplicitAccount(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	ask := func(q url.Values) api.AssocMgr {
		t.Helper()
		m, err := d.assocMgr(context.Background(), &localapi.Request[struct{}]{Caller: rootCaller, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := ask(url.Values{})
	var assocs []string
	for _, a := range m.Assocs {
		assocs = append(assocs, fmt.Sprintf("%s/%s id=%d lft=%d", a.Account, a.User, a.ID, a.Lft))
	}
	// root and root/root first (made with the cluster), then the implicit
	// account "lab" with root's association in it.
	want := "root/ id=1 lft=1,root/root id=2 lft=6,lab/ id=3 lft=2,lab/root id=4 lft=3"
	if got := strings.Join(assocs, ","); got != want {
		t.Errorf("associations %s\nwant %s", got, want)
	}
	if len(m.Users) != 1 || m.Users[0].Name != "root" || m.Users[0].DefAccount != "lab" {
		t.Errorf("user records %+v, want root's alone, default account lab", m.Users)
	}
	m = ask(url.Values{"users": {"nosuchuser"}})
	if len(m.Users) != 0 {
		t.Errorf("users=nosuchuser: user records %+v, want none", m.Users)
	}
	for _, a := range m.Assocs {
		if a.User != "" {
			t.Errorf("users=nosuchuser: association %s/%s, want the accounts' alone", a.Account, a.User)
		}
	}
}
