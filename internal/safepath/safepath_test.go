package safepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// otherUID is a user that is neither root nor the test's: a directory of
// theirs is one someone else could replace.
const otherUID = 54321

// needRoot skips a test that must give files to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func untrusted(t *testing.T, err error, path string) *UntrustedError {
	t.Helper()
	var ue *UntrustedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an UntrustedError for %s", err, path)
	}
	if ue.Path != path {
		t.Errorf("the error names %s, want %s: %v", ue.Path, path, err)
	}
	return ue
}

// The test's own temporary directory is trusted: /tmp is sticky and
// root's, the directory below it the test's own, 0700.
func TestOpenDirTrustsAPrivateDirectoryUnderTmp(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatalf("OpenDir(%s): %v", dir, err)
	}
	defer d.Close()
	if d.Path() != dir {
		t.Errorf("Path() = %s, want %s", d.Path(), dir)
	}
}

func TestOpenDirRefusesWhatOthersCanReplace(t *testing.T) {
	base := t.TempDir()
	t.Run("the directory writable by others", func(t *testing.T) {
		p := mkdir(t, filepath.Join(base, "open"), 0o777)
		_, err := OpenDir(p)
		ue := untrusted(t, err, p)
		if !strings.Contains(err.Error(), "writable by other users (mode 0777)") {
			t.Errorf("error: %v", err)
		}
		if os.Geteuid() == 0 && !strings.Contains(err.Error(), "fix: chown root:root "+p+" && chmod 755 "+p) {
			t.Errorf("the error does not say the fix: %v", err)
		}
		if !ue.Leaf {
			t.Errorf("Leaf = false for the directory asked for")
		}
	})
	t.Run("the directory sticky and writable by all, as /tmp", func(t *testing.T) {
		p := mkdir(t, filepath.Join(base, "tmplike"), os.ModeSticky|0o777)
		_, err := OpenDir(p)
		untrusted(t, err, p)
	})
	t.Run("the directory group-writable", func(t *testing.T) {
		p := mkdir(t, filepath.Join(base, "group"), 0o775)
		_, err := OpenDir(p)
		untrusted(t, err, p)
	})
	t.Run("a parent writable by others", func(t *testing.T) {
		parent := mkdir(t, filepath.Join(base, "shared"), 0o777)
		p := mkdir(t, filepath.Join(parent, "map"), 0o755)
		_, err := OpenDir(p)
		ue := untrusted(t, err, parent)
		if ue.Leaf {
			t.Errorf("Leaf = true for a parent")
		}
	})
	t.Run("a sticky parent: the directory below is safe from others", func(t *testing.T) {
		parent := mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777)
		p := mkdir(t, filepath.Join(parent, "map"), 0o755)
		d, err := OpenDir(p)
		if err != nil {
			t.Fatalf("OpenDir(%s): %v", p, err)
		}
		d.Close()
	})
	t.Run("a directory of another user's", func(t *testing.T) {
		needRoot(t)
		p := mkdir(t, filepath.Join(base, "theirs"), 0o755)
		if err := os.Chown(p, otherUID, otherUID); err != nil {
			t.Fatal(err)
		}
		_, err := OpenDir(filepath.Join(p))
		untrusted(t, err, p)
		if !strings.Contains(err.Error(), "belongs to uid 54321, not to root") {
			t.Errorf("error: %v", err)
		}
		// Below it, too: its owner could swap what is below.
		below := mkdir(t, filepath.Join(p, "below"), 0o755)
		_, err = OpenDir(below)
		untrusted(t, err, p)
	})
	t.Run("a file", func(t *testing.T) {
		p := filepath.Join(base, "file")
		os.WriteFile(p, nil, 0o644)
		if _, err := OpenDir(p); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("OpenDir of a file: %v, want ENOTDIR", err)
		}
	})
}

// Symlinks on a configured path are followed only where they are root's
// or the daemon's own: an admin's link is fine, another user's is not.
func TestOpenDirFollowsOnlyTrustedLinks(t *testing.T) {
	base := t.TempDir()
	real := mkdir(t, filepath.Join(base, "real", "map"), 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(filepath.Join(link, "map"))
	if err != nil {
		t.Fatalf("through our own link: %v", err)
	}
	d.Close()
	// ".." after a link climbs from where the link led, as the kernel does.
	up := filepath.Join(base, "up")
	if err := os.Symlink(filepath.Join(base, "real", "map", ".."), up); err != nil {
		t.Fatal(err)
	}
	if d, err := OpenDir(filepath.Join(up, "map")); err != nil {
		t.Errorf("through a link with ..: %v", err)
	} else {
		d.Close()
	}
	if os.Geteuid() != 0 {
		return
	}
	theirs := filepath.Join(base, "theirs")
	if err := os.Symlink(real, theirs); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(theirs, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	_, err = OpenDir(theirs)
	ue := untrusted(t, err, theirs)
	if !ue.Link || !strings.Contains(err.Error(), "symbolic link "+theirs+" belongs to uid 54321") {
		t.Errorf("error: %v", err)
	}
}

func TestMkdirAllMakesWhatIsMissingWithItsMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	base := t.TempDir()
	p := filepath.Join(base, "a", "b", "map")
	d, err := MkdirAll(p, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, q := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), p} {
		fi, err := os.Stat(q)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v %v, want mode 0755 whatever the umask", q, fi.Mode(), err)
		}
	}
	// A missing directory under one that others may write is made, and
	// then the one above refuses it.
	open := mkdir(t, filepath.Join(base, "open"), 0o777)
	_, err = MkdirAll(filepath.Join(open, "map"), 0o755)
	untrusted(t, err, open)
}

func TestCheckAcceptsAMissingTailOnly(t *testing.T) {
	base := t.TempDir()
	if err := Check(filepath.Join(base, "not", "yet")); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "not")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check made something: %v", err)
	}
	open := mkdir(t, filepath.Join(base, "open"), 0o777)
	untrusted(t, Check(filepath.Join(open, "not", "yet")), open)
}

// Every test of what happens below a Dir runs twice: with openat2, and
// with the component-by-component walk of kernels without it.
func beneath(t *testing.T, test func(t *testing.T)) {
	t.Run("openat2", test)
	t.Run("walk", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		test(t)
	})
}

func TestBeneathFollowsNoSymlink(t *testing.T) {
	beneath(t, func(t *testing.T) {
		base := t.TempDir()
		secret := filepath.Join(base, "secret")
		mkdir(t, secret, 0o700)
		os.WriteFile(filepath.Join(secret, "key"), []byte("root's\n"), 0o600)
		top := mkdir(t, filepath.Join(base, "top"), 0o755)
		mkdir(t, filepath.Join(top, "sub"), 0o755)
		os.Symlink(secret, filepath.Join(top, "parentlink"))
		os.Symlink(filepath.Join(secret, "key"), filepath.Join(top, "sub", "filelink"))
		d, err := OpenDir(top)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		for _, rel := range []string{"parentlink/key", "sub/filelink", "parentlink"} {
			if f, err := d.OpenFile(rel, os.O_RDONLY, 0); !errors.Is(err, syscall.ELOOP) {
				if f != nil {
					f.Close()
				}
				t.Errorf("OpenFile(%s): %v, want ELOOP", rel, err)
			}
		}
		if _, err := d.OpenDir("parentlink"); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("OpenDir(parentlink): %v, want ELOOP", err)
		}
		if _, err := d.OpenFile("../secret/key", os.O_RDONLY, 0); err == nil {
			t.Error("OpenFile(../secret/key) climbed out")
		}
		f, err := d.OpenFile("sub/made", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatalf("a plain file beneath: %v", err)
		}
		f.Close()
		sub, err := d.OpenDir("sub")
		if err != nil {
			t.Fatalf("a plain directory beneath: %v", err)
		}
		sub.Close()
	})
}

// A symlink planted at the temporary name is removed, not written
// through; the file it pointed to is untouched.
func TestWriteFileDoesNotFollowAPlantedTemporary(t *testing.T) {
	beneath(t, func(t *testing.T) {
		base := t.TempDir()
		victim := filepath.Join(base, "victim")
		os.WriteFile(victim, []byte("root's own\n"), 0o600)
		dir := mkdir(t, filepath.Join(base, "map"), 0o755)
		os.Symlink(victim, filepath.Join(dir, ".0.tmp"))
		d, err := OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.WriteFile("0", []byte("12\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "root's own\n" {
			t.Errorf("the link's target now holds %q", b)
		}
		if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o600 {
			t.Errorf("the link's target's mode is now %v", fi.Mode())
		}
		fi, err := os.Lstat(filepath.Join(dir, "0"))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
			t.Errorf("the written file: %v %v", fi, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".0.tmp")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the temporary name is left: %v", err)
		}
		// A link at the final name is replaced, not written through.
		os.Symlink(victim, filepath.Join(dir, "1"))
		if err := d.WriteFile("1", []byte("13\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "root's own\n" {
			t.Errorf("the link's target now holds %q", b)
		}
	})
}

// A Dir is the directory that was checked: swapped for a symlink later,
// the writes still go to it, not through the link.
func TestADirIsTheDirectoryThatWasChecked(t *testing.T) {
	base := t.TempDir()
	dir := mkdir(t, filepath.Join(base, "map"), 0o755)
	elsewhere := mkdir(t, filepath.Join(base, "elsewhere"), 0o755)
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(dir, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(elsewhere, dir)
	if err := d.WriteFile("0", []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "0")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the write went through the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "moved", "0")); err != nil {
		t.Errorf("the write did not reach the checked directory: %v", err)
	}
}

func TestRemoveAllRemovesLinksNotTheirTargets(t *testing.T) {
	beneath(t, func(t *testing.T) {
		base := t.TempDir()
		keep := mkdir(t, filepath.Join(base, "keep"), 0o755)
		os.WriteFile(filepath.Join(keep, "precious"), []byte("x"), 0o644)
		top := mkdir(t, filepath.Join(base, "top"), 0o755)
		job := mkdir(t, filepath.Join(top, "u", "42", "deep"), 0o755)
		os.WriteFile(filepath.Join(job, "ckpt"), []byte("w"), 0o644)
		os.Symlink(keep, filepath.Join(top, "u", "42", "link"))
		os.Symlink(keep, filepath.Join(top, "u", "43"))
		d, err := OpenDir(top)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.RemoveAll("u/42"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(top, "u", "42")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("u/42 is still there: %v", err)
		}
		// Through a link on the way: refused, nothing removed.
		if err := d.RemoveAll("u/43/precious"); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("RemoveAll through a link: %v, want ELOOP", err)
		}
		if _, err := os.Stat(filepath.Join(keep, "precious")); err != nil {
			t.Errorf("a link's target was removed: %v", err)
		}
		if err := d.RemoveAll("u/missing"); err != nil {
			t.Errorf("a missing directory: %v", err)
		}
	})
}

func TestMkdirChownRemoveRename(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	base := t.TempDir()
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	made, err := d.Mkdir("u", 0o711)
	if err != nil || !made {
		t.Fatalf("Mkdir: %v %v", made, err)
	}
	if fi, _ := os.Stat(filepath.Join(base, "u")); fi.Mode().Perm() != 0o711 {
		t.Errorf("mode %v, want 0711", fi.Mode())
	}
	if made, err := d.Mkdir("u", 0o700); err != nil || made {
		t.Errorf("Mkdir again: %v %v, want not made", made, err)
	}
	os.Symlink("/", filepath.Join(base, "l"))
	if made, err := d.Mkdir("l", 0o700); err != nil || made {
		t.Errorf("Mkdir over a link: %v %v, want not made (and the caller's open refuses it)", made, err)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := d.Mkdir(bad, 0o700); err == nil {
			t.Errorf("Mkdir(%q) succeeded", bad)
		}
	}
	if os.Geteuid() == 0 {
		u, err := d.OpenDir("u")
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Chown(otherUID, otherUID); err != nil {
			t.Fatal(err)
		}
		if uid, gid, err := u.Owner(); err != nil || uid != otherUID || gid != otherUID {
			t.Errorf("Owner() = %d %d %v", uid, gid, err)
		}
		u.Close()
	}
	if err := d.Rename("u", "v"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("l"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("v"); err != nil {
		t.Fatal(err)
	}
	entries, err := d.ReadDir()
	if err != nil || len(entries) != 0 {
		t.Errorf("ReadDir after removing all: %v %v", entries, err)
	}
}

func TestTheFixIsTheDaemonUsersToRun(t *testing.T) {
	tests := []struct {
		name string
		e    UntrustedError
		want string
	}{
		{"root, the directory itself", UntrustedError{Path: "/srv/map", UID: 1001, Mode: 0o40755, Leaf: true},
			"fix: chown root:root /srv/map && chmod 755 /srv/map"},
		{"root, a parent", UntrustedError{Path: "/srv", UID: 0, Mode: 0o40777},
			"directory /srv is writable by other users (mode 0777): they could replace what the daemon reads and writes there; fix: chown root:root /srv && chmod go-w /srv, or choose a directory elsewhere"},
		{"a personal daemon's own directory", UntrustedError{Path: "/home/me/map", UID: 54320, Mode: 0o40775, Leaf: true, EUID: 54320},
			"fix: chmod go-w /home/me/map"},
		{"a personal daemon, someone else's", UntrustedError{Path: "/home/you", UID: 54321, Mode: 0o40755, EUID: 54320},
			"not to root or uid 54320: its owner could replace what the daemon reads and writes there; choose a directory of your own"},
		{"a path that needs quoting", UntrustedError{Path: "/srv/my map", UID: 0, Mode: 0o40777, Leaf: true},
			"chmod 755 '/srv/my map'"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q does not contain %q", tt.name, got, tt.want)
		}
	}
}
