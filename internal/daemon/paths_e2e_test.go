package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// The daemon runs as root and writes, reads and removes files in
// directories that users could steer (issue 23, "Trust", item 3). These
// tests are the attacks of the issue, by the real users alice and bob,
// on a real daemon running as root.

// localUser is a user of this machine for an attack; the test skips
// where there is none (CI creates alice and bob) or where it cannot act
// as another user.
type localUser struct {
	name     string
	uid, gid int
}

func needUser(t *testing.T, name string) localUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the daemon must run as root and jobs as their users")
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("needs the user %s (.ci/run creates it)", name)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return localUser{name: name, uid: uid, gid: gid}
}

// sharedDir is a directory of root's that every user may enter (mode
// 0755): t.TempDir's are root's alone, where jobs of other users cannot
// reach.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slurm-lite-paths-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// usersDir is a directory of u's (mode 0755) in dir.
func usersDir(t *testing.T, dir string, u localUser) string {
	t.Helper()
	p := filepath.Join(dir, u.name)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, u.uid, u.gid); err != nil {
		t.Fatal(err)
	}
	return p
}

// chownAll gives paths (not following links) to u: what u made there.
func chownAll(t *testing.T, u localUser, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, u.uid, u.gid); err != nil {
			t.Fatal(err)
		}
	}
}

// rootOnlyFile is a file only root may read, with words the daemon reacts to
// (CUDA's out-of-memory error), in a directory only root may enter.
func rootOnlyFile(t *testing.T, dir string) (secretDir, file string) {
	t.Helper()
	secretDir = filepath.Join(dir, "rootonly")
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(secretDir, "err.txt")
	if err := os.WriteFile(file, []byte("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return secretDir, file
}

func ownerOf(t *testing.T, p string) (uid uint32, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid, fi.Mode()
}

// runRefused runs a daemon on conf and returns the error it stops with:
// it must stop at once, before it listens.
func runRefused(t *testing.T, conf string) error {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var log syncBuffer
	err = Run(ctx, Options{ConfigPath: conf, Exe: exe, Log: &log})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the daemon started (%v); log:\n%s", err, log.String())
	}
	return err
}

// A configured directory that alice can write, or that lies under one,
// stops the daemon at its start with the directory, the reason and the
// fix; what she planted there is not touched.
func TestTheDaemonRefusesDirectoriesAUserCanSteer(t *testing.T) {
	alice := needUser(t, "alice")
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	dir := sharedDir(t)
	adir := usersDir(t, dir, alice)
	_, victim := rootOnlyFile(t, dir)
	// alice's JobMappingDir, with her link at the name the daemon writes
	// GPU 0's file from.
	amap := filepath.Join(adir, "map")
	os.Mkdir(amap, 0o755)
	os.Symlink(victim, filepath.Join(amap, ".0.tmp"))
	chownAll(t, alice, amap, filepath.Join(amap, ".0.tmp"))
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	base := func(extra string) string {
		conf := filepath.Join(t.TempDir(), "conf.toml")
		if !strings.Contains(extra, "StateSaveLocation") {
			extra += fmt.Sprintf("\nStateSaveLocation = %q", filepath.Join(filepath.Dir(conf), "state"))
		}
		body := fmt.Sprintf("SocketPath = %q\n%s\n[Node]\nGPUs = \"none\"\n", filepath.Join(filepath.Dir(conf), "d.sock"), extra)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return conf
	}
	tests := []struct {
		name  string
		extra string
		want  []string
	}{
		{"JobMappingDir in alice's directory, with her link planted",
			fmt.Sprintf("JobMappingDir = %q", amap),
			[]string{"JobMappingDir " + amap + ": directory " + adir + " belongs to alice (uid " + strconv.Itoa(alice.uid) + "), not to root",
				"fix: chown root:root " + adir + " && chmod go-w " + adir}},
		{"CheckpointDir under alice's directory",
			fmt.Sprintf("CheckpointDir = %q", adir+"/ckpt/%u/%j"),
			[]string{"CheckpointDir " + adir + "/ckpt/%u/%j (its directory before the first % escape, " + adir + "/ckpt): directory " + adir + " belongs to alice"}},
		{"JobMappingDir that everyone may write",
			fmt.Sprintf("JobMappingDir = %q", open),
			[]string{"JobMappingDir " + open + ": directory " + open + " is writable by other users (mode 0777)",
				"fix: chown root:root " + open + " && chmod 755 " + open}},
		{"StateSaveLocation under a directory everyone may write",
			fmt.Sprintf("StateSaveLocation = %q", filepath.Join(open, "state")),
			[]string{"StateSaveLocation " + open + "/state: directory " + open + " is writable by other users"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runRefused(t, base(tt.extra))
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the daemon's error:\n%v\nwant it to say:\n%s", err, w)
				}
			}
		})
	}
	if b, err := os.ReadFile(victim); err != nil || !strings.HasPrefix(string(b), "RuntimeError") {
		t.Errorf("the file alice's link points to: %q %v", b, err)
	}
	if _, mode := ownerOf(t, victim); mode.Perm() != 0o600 {
		t.Errorf("the file alice's link points to is now %v", mode)
	}
	if _, err := os.Stat(filepath.Join(open, "state")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused daemon made its state directory: %v", err)
	}
}

// In a JobMappingDir of root's, links at the names the daemon writes
// from are removed, not written through; a directory swapped for alice's
// link after the start is not written, and the daemon says why.
func TestTheJobMappingFollowsNoLink(t *testing.T) {
	t.Parallel()
	alice := needUser(t, "alice")
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("root's own\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	amap := filepath.Join(dir, "map")
	os.Mkdir(amap, 0o755)
	for i := range 8 {
		os.Symlink(victim, filepath.Join(amap, fmt.Sprintf(".%d.tmp", i)))
	}
	wd := startWebDaemon(t, dir, newWebMachine(), nil)
	id := wd.submit("exec sleep 120", "--gpus=1")
	j := wd.waitState(id, slurm.Running)
	gpu := strconv.Itoa(wd.devOf(j.Alloc.GPUs[0].UUID))
	wd.waitFor(func() bool {
		b, err := os.ReadFile(filepath.Join(amap, gpu))
		return err == nil && string(b) == strconv.Itoa(int(id))+"\n"
	}, "GPU "+gpu+"'s mapping file")
	if fi, err := os.Lstat(filepath.Join(amap, gpu)); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("GPU %s's mapping file: %v %v", gpu, fi, err)
	}
	if _, err := os.Lstat(filepath.Join(amap, "."+gpu+".tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link at ."+gpu+".tmp is still there: %v", err)
	}
	checkVictim := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(victim); err != nil || string(b) != "root's own\n" {
			t.Errorf("%s: the link's target holds %q (%v)", what, b, err)
		}
		if _, mode := ownerOf(t, victim); mode.Perm() != 0o600 {
			t.Errorf("%s: the link's target is now %v", what, mode)
		}
	}
	checkVictim("after the first mapping")

	// The directory swapped for alice's link to a directory of root's,
	// whose files have the names of GPUs.
	private := filepath.Join(dir, "private")
	os.Mkdir(private, 0o700)
	for i := range 8 {
		os.WriteFile(filepath.Join(private, strconv.Itoa(i)), []byte("root's\n"), 0o600)
	}
	if err := os.Rename(amap, filepath.Join(dir, "map.old")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(private, amap)
	chownAll(t, alice, amap)
	if err := wd.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.Itoa(int(id))}}, nil); err != nil {
		t.Fatal(err)
	}
	wd.waitState(id, slurm.Cancelled)
	wd.waitFor(func() bool {
		return strings.Contains(wd.logs.String(), "JobMappingDir: the job mapping is not kept") &&
			strings.Contains(wd.logs.String(), "symbolic link "+amap+" belongs to alice")
	}, "the daemon's word that it does not write through alice's link")
	for i := range 8 {
		if b, err := os.ReadFile(filepath.Join(private, strconv.Itoa(i))); err != nil || string(b) != "root's\n" {
			t.Errorf("root's file %d behind alice's link: %q %v", i, b, err)
		}
	}
}

// pathsDaemon is a daemon whose checkpoints are in a directory every
// user may enter, with users' directories for their jobs.
type pathsDaemon struct {
	*webDaemon
	shared string
}

func startPathsDaemon(t *testing.T) *pathsDaemon {
	t.Helper()
	shared := sharedDir(t)
	wd := startWebDaemon(t, t.TempDir(), newWebMachine(), nil, fmt.Sprintf("CheckpointDir = %q", shared+"/ckpt/%u/%j"))
	return &pathsDaemon{webDaemon: wd, shared: shared}
}

// submitAs submits a job of u's, run in dir (u's), its output in
// dir/out-ID.txt and its error in errFile (dir/err-ID.txt when "").
func (pd *pathsDaemon) submitAs(u localUser, dir, errFile, script string) uint32 {
	pd.t.Helper()
	if errFile == "" {
		errFile = "err-%j.txt"
	}
	return pd.submit(script, "--uid="+u.name, "-D", dir, "-o", "out-%j.txt", "-e", errFile)
}

func hasNote(j api.Job, text string) bool {
	for _, n := range j.Notes {
		if strings.Contains(n, text) {
			return true
		}
	}
	return false
}

// Below CheckpointDir's base, the users' directories are theirs alone
// (0700) and are never reached through a link; a directory there of
// anyone else's stops the job's launch, saying which, and stays theirs.
// A reload that would put checkpoints under alice's directory is refused.
func TestCheckpointDirectoriesAreTheUsersAlone(t *testing.T) {
	t.Parallel()
	alice := needUser(t, "alice")
	bob := needUser(t, "bob")
	pd := startPathsDaemon(t)
	users := sharedDir(t)
	adir, bdir := usersDir(t, users, alice), usersDir(t, users, bob)
	ckpt := filepath.Join(pd.shared, "ckpt")
	// alice's checkpoint, a pickle that runs her code where it is loaded.
	planted := filepath.Join(adir, "planted")
	os.Mkdir(planted, 0o755)
	os.WriteFile(filepath.Join(planted, "model.pkl"), []byte("alice's code\n"), 0o644)
	chownAll(t, alice, planted, filepath.Join(planted, "model.pkl"))
	const resume = `cat "$SLITE_CHECKPOINT_DIR/model.pkl" 2>/dev/null; echo "ckpt $SLITE_CHECKPOINT_DIR"`

	checkPlanted := func(what string) {
		t.Helper()
		if uid, _ := ownerOf(t, planted); int(uid) != alice.uid {
			t.Errorf("%s: alice's directory now belongs to uid %d", what, uid)
		}
		if b, _ := os.ReadFile(filepath.Join(planted, "model.pkl")); string(b) != "alice's code\n" {
			t.Errorf("%s: alice's file holds %q", what, b)
		}
	}
	refused := func(what string, wants ...string) {
		t.Helper()
		id := pd.submitAs(bob, bdir, "", resume)
		j := pd.waitState(id, slurm.Failed)
		for _, want := range wants {
			if j.Reason != slurm.ReasonJobLaunchFailure || !hasNote(j, want) {
				t.Errorf("%s: bob's job %d ended %s (%s), notes %q; want JobLaunchFailure and a note saying %q", what, id, j.State, j.Reason, j.Notes, want)
			}
		}
		if b, err := os.ReadFile(filepath.Join(bdir, fmt.Sprintf("out-%d.txt", id))); err == nil {
			t.Errorf("%s: bob's job ran: %q", what, b)
		}
		checkPlanted(what)
	}

	// 1. A link where bob's directory would be, to alice's checkpoint:
	// not followed, even though root made it.
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(planted, filepath.Join(ckpt, "bob"))
	refused("a link in bob's place", "launch failed: checkpoint directory "+ckpt+"/bob/",
		ckpt+"/bob is a symbolic link, which the daemon does not follow there")
	os.Remove(filepath.Join(ckpt, "bob"))

	// 2. A directory of alice's in bob's place: refused, and not given
	// to bob.
	os.Mkdir(filepath.Join(ckpt, "bob"), 0o777)
	os.Chmod(filepath.Join(ckpt, "bob"), 0o777)
	chownAll(t, alice, filepath.Join(ckpt, "bob"))
	refused("alice's directory in bob's place", ckpt+"/bob belongs to alice, not to bob, whose job this is")
	if uid, _ := ownerOf(t, filepath.Join(ckpt, "bob")); int(uid) != alice.uid {
		t.Errorf("the directory in bob's place was given to uid %d", uid)
	}
	os.Remove(filepath.Join(ckpt, "bob"))

	// 3. Made by the daemon: bob's, 0700, the job's too.
	id := pd.submitAs(bob, bdir, "", resume)
	pd.waitState(id, slurm.Completed)
	want := filepath.Join(ckpt, "bob", strconv.Itoa(int(id)))
	if b, _ := os.ReadFile(filepath.Join(bdir, fmt.Sprintf("out-%d.txt", id))); string(b) != "ckpt "+want+"\n" {
		t.Errorf("bob's job printed %q, want its checkpoint directory %s", b, want)
	}
	for _, p := range []string{filepath.Join(ckpt, "bob"), want} {
		if uid, mode := ownerOf(t, p); int(uid) != bob.uid || mode.Perm() != 0o700 || !mode.IsDir() {
			t.Errorf("%s: uid %d, %v; want bob's (uid %d) directory, 0700", p, uid, mode, bob.uid)
		}
	}

	// 4. A reload that would move the checkpoints under alice's
	// directory is refused; the next job's are where they were.
	conf := filepath.Join(pd.dir, "conf.toml")
	body, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(body), pd.shared+"/ckpt/%u/%j", adir+"/ckpt/%u/%j", 1)
	if moved == string(body) {
		t.Fatalf("no CheckpointDir line in %s:\n%s", conf, body)
	}
	if err := os.WriteFile(conf, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	pd.waitFor(func() bool {
		return strings.Contains(pd.logs.String(), "reload refused, keeping the configuration in force") &&
			strings.Contains(pd.logs.String(), "directory "+adir+" belongs to alice")
	}, "the reload refused")
	id = pd.submitAs(bob, bdir, "", resume)
	pd.waitState(id, slurm.Completed)
	want = filepath.Join(ckpt, "bob", strconv.Itoa(int(id)))
	if b, _ := os.ReadFile(filepath.Join(bdir, fmt.Sprintf("out-%d.txt", id))); string(b) != "ckpt "+want+"\n" {
		t.Errorf("after the refused reload, bob's job printed %q, want %s", b, want)
	}
	if _, err := os.Lstat(filepath.Join(adir, "ckpt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused reload made a directory in alice's: %v", err)
	}
}

// The note that a job died of CUDA running out of memory comes from the
// job's error file, read as the job's user: alice, who swaps a parent
// directory of her error file for a link to a directory only root may
// read, learns nothing of the file there.
func TestTheOOMNoteReadsAsTheJobsUser(t *testing.T) {
	t.Parallel()
	alice := needUser(t, "alice")
	pd := startPathsDaemon(t)
	users := sharedDir(t)
	adir := usersDir(t, users, alice)
	secretDir, _ := rootOnlyFile(t, users)
	const oomNote = "CUDA out of memory (the job's stderr says so)"

	// Her own out-of-memory error: noted (read as alice, it is hers).
	id := pd.submitAs(alice, adir, "", `echo "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB" >&2; exit 1`)
	if j := pd.waitState(id, slurm.Failed); !hasNote(j, oomNote) {
		t.Errorf("alice's own CUDA OOM is not noted: %q", j.Notes)
	}

	// Her error file in d/; the job swaps d for a link to root's
	// directory, whose err.txt has the words, and fails.
	if err := os.Mkdir(filepath.Join(adir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	chownAll(t, alice, filepath.Join(adir, "d"))
	id = pd.submitAs(alice, adir, "d/err.txt", fmt.Sprintf(`mv d d.old && ln -s %s d && exit 1`, secretDir))
	j := pd.waitState(id, slurm.Failed)
	if fi, err := os.Lstat(filepath.Join(adir, "d")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the job did not swap its directory: %v %v", fi, err)
	}
	if hasNote(j, oomNote) {
		t.Errorf("the daemon read root's file through alice's link: notes %q", j.Notes)
	}
}

// The sweep of old checkpoints removes a job's directory from the base
// down, entering no link, and only when it is the job's user's.
func TestTheCheckpointSweepFollowsNoLink(t *testing.T) {
	bob := needUser(t, "bob")
	alice := needUser(t, "alice")
	shared := sharedDir(t)
	pattern := shared + "/ckpt/%u/%j"
	keep := filepath.Join(shared, "keep")
	os.Mkdir(keep, 0o700)
	os.WriteFile(filepath.Join(keep, "precious"), []byte("root's\n"), 0o600)
	job := func(id uint32, u localUser) (store.Job, string) {
		j := store.Job{ID: id, User: u.name, UID: uint32(u.uid), GID: uint32(u.gid), ArrayTaskID: -1}
		dir := checkpointDir(pattern, j)
		if err := prepareCheckpointDir(pattern, dir, stepd.Credential{Name: u.name, UID: uint32(u.uid), GID: uint32(u.gid)}); err != nil {
			t.Fatal(err)
		}
		return j, dir
	}
	// bob's job left a link to root's directory in its checkpoint.
	j1, d1 := job(1, bob)
	os.Symlink(keep, filepath.Join(d1, "link"))
	if removed, err := removeCheckpointDir(pattern, d1, j1); err != nil || !removed {
		t.Errorf("bob's old checkpoint: removed %v, %v", removed, err)
	}
	if _, err := os.Lstat(d1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob's old checkpoint is still there: %v", err)
	}
	// bob swapped his job's directory for a link to root's.
	j2, d2 := job(2, bob)
	os.Remove(d2)
	os.Symlink(keep, d2)
	if removed, err := removeCheckpointDir(pattern, d2, j2); removed || err == nil {
		t.Errorf("a link in place of the job's directory: removed %v, %v", removed, err)
	}
	// A directory of alice's where bob's job's would be.
	j3, _ := job(3, bob)
	d3 := checkpointDir(pattern, j3)
	os.Chown(d3, alice.uid, alice.gid)
	if removed, err := removeCheckpointDir(pattern, d3, j3); removed || err == nil {
		t.Errorf("alice's directory in place of bob's job's: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(d3); err != nil {
		t.Errorf("alice's directory was removed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(keep, "precious")); err != nil || string(b) != "root's\n" {
		t.Errorf("root's file behind the links: %q %v", b, err)
	}
}
