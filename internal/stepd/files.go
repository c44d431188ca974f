package stepd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/slurm-lite/slurm-lite/internal/durable"
)

// writeFileAtomic replaces path with data so that a reader sees the old
// file or the new one, never a part, even across a crash: a temporary file
// in the same directory, fsync, rename, fsync of the directory. The file is
// 0600: state files are for the daemon alone.
func writeFileAtomic(path string, data []byte) error {
	return replaceFile(path, data, true)
}

// writeFileVolatile replaces path with data so that a reader sees the old
// file or the new one, never a part, as long as the machine stays up: the
// same rename as writeFileAtomic, without its two fsyncs. It is for the
// files that mean nothing after a reboot: the spec (read by a supervisor
// started on this boot; a restarted daemon never reads it) and the
// supervisor's Identity (its boot id no longer matches after a reboot, so
// Alive is false whatever the file says). A crash may leave either absent,
// old or empty; readers treat an unreadable one as absent, which is what
// they find after a reboot anyway. Only status.json must survive one.
func writeFileVolatile(path string, data []byte) error {
	return replaceFile(path, data, false)
}

func replaceFile(path string, data []byte, sync bool) error {
	return durable.Replace(path, data, 0o600, sync)
}

// dropsPrivileges reports whether work for the job's user must be done
// with the user's credentials: when the supervisor is root and the job is
// not root's. A supervisor that is not root runs everything as itself.
func dropsPrivileges(c Credential) bool {
	return os.Geteuid() == 0 && c.UID != 0
}

// asUser runs fn with the job user's uid, gid and groups, so that files
// fn creates are the user's and its permission checks are the user's. The
// supervisor itself stays root: fn runs on an OS thread of its own whose
// credentials alone change (raw setgroups/setresgid/setresuid affect one
// thread; Go's syscall.Setuid would change every thread). The thread is
// never unlocked, so the runtime ends it when fn returns, and no later
// goroutine runs with those credentials. Threads the runtime starts while
// this one is locked are made by a template thread, not cloned from it.
func asUser(c Credential, fn func() error) error {
	if !dropsPrivileges(c) {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setThreadCredential(c); err != nil {
			done <- fmt.Errorf("switching to user %q (uid %d): %w", c.Name, c.UID, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// AsUser is asUser for the daemon, which reads a file of the job's as
// its user (the CUDA out-of-memory note): it runs fn with the job user's
// credentials on a thread of its own, where the daemon is root and the
// job is not root's.
func AsUser(c Credential, fn func() error) error { return asUser(c, fn) }

func setThreadCredential(c Credential) error {
	groups := c.Groups
	if len(groups) == 0 {
		groups = []uint32{c.GID}
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)),
		uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(c.GID), uintptr(c.GID), uintptr(c.GID)); e != 0 {
		return fmt.Errorf("setresgid: %w", e)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(c.UID), uintptr(c.UID), uintptr(c.UID)); e != 0 {
		return fmt.Errorf("setresuid: %w", e)
	}
	return nil
}

// stdFiles are the batch step's standard input, output and error. Err is
// Out when both name the same file, so that writes interleave in order.
type stdFiles struct {
	In, Out, Err *os.File
}

func (f *stdFiles) Close() {
	for _, x := range []*os.File{f.In, f.Out, f.Err} {
		if x != nil {
			x.Close()
		}
	}
}

// openStd opens the job's files as its user, as slurmstepd does: missing
// parent directories of the output and error files are made (mode
// 0777&^umask: Slurm would fail the job instead; see doc.go), the files
// are created 0666&^umask, opened for appending and truncated unless
// appending. Appending also keeps one run's lines in order with the
// supervisor's own "slurmstepd-..." lines.
func openStd(c Credential, p Paths, appendMode bool, umask uint32) (*stdFiles, error) {
	var f stdFiles
	err := asUser(c, func() error {
		flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if !appendMode {
			flags |= os.O_TRUNC
		}
		open := func(path string) (*os.File, error) {
			if err := mkdirAllMode(filepath.Dir(path), os.FileMode(0o777&^umask)); err != nil {
				return nil, err
			}
			return openFileMode(path, flags, os.FileMode(0o666&^umask))
		}
		var err error
		if f.Out, err = open(p.Output); err != nil {
			return err
		}
		f.Err = f.Out
		if p.Error != p.Output {
			if f.Err, err = open(p.Error); err != nil {
				return err
			}
		}
		f.In, err = os.Open(p.Input)
		return err
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &f, nil
}

// openFileMode is os.OpenFile with mode set exactly on a new file,
// whatever the process umask.
func openFileMode(path string, flags int, mode os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flags|os.O_EXCL, mode)
	if err == nil {
		return f, f.Chmod(mode)
	}
	if !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	return os.OpenFile(path, flags&^os.O_CREATE, 0)
}

// mkdirAllMode is os.MkdirAll that gives every directory it makes mode
// exactly.
func mkdirAllMode(dir string, mode os.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllMode(parent, mode); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, mode); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, mode)
}

// spoolName is the script's name in the spool directory, as slurmd's.
const spoolName = "slurm_script"

// makeSpool copies the stored script into a new directory the job's user
// owns (mode 0700, the script 0500), as slurmd's job spool directory: the
// daemon's copy sits in a private state directory the user cannot reach.
// It returns the directory and the script's path in it.
func makeSpool(s *Spec) (dir, script string, err error) {
	body := []byte(s.ScriptText)
	if s.ScriptText == "" {
		if body, err = os.ReadFile(s.Script); err != nil {
			return "", "", fmt.Errorf("reading the job script: %w", err)
		}
	}
	parent := s.SpoolDir
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err = os.MkdirTemp(parent, fmt.Sprintf("slurm-lite-job%d-", s.JobID))
	if err != nil {
		return "", "", fmt.Errorf("making the job's spool directory: %w", err)
	}
	script = filepath.Join(dir, spoolName)
	err = func() error {
		f, err := os.OpenFile(script, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o500)
		if err != nil {
			return err
		}
		if _, err := f.Write(body); err != nil {
			f.Close()
			return err
		}
		if err := f.Chmod(0o500); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if dropsPrivileges(s.User) {
			// The script first, then the directory: until the directory
			// is the user's, nobody else can touch what is inside.
			if err := os.Chown(script, int(s.User.UID), int(s.User.GID)); err != nil {
				return err
			}
			return os.Chown(dir, int(s.User.UID), int(s.User.GID))
		}
		return nil
	}()
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("copying the job script to %s: %w", dir, err)
	}
	return dir, script, nil
}
