package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Dir is a directory held open by descriptor: one that OpenDir or
// MkdirAll checked, or one opened beneath such a directory. What it does
// below itself follows no symlink (doc.go, rule 2).
type Dir struct {
	fd   int // O_PATH
	path string
}

// Path is the path the directory was opened by (for messages: the
// directory itself is the descriptor).
func (d *Dir) Path() string { return d.path }

// Close closes the descriptor.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Owner is the directory's owner and group.
func (d *Dir) Owner() (uid, gid uint32, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return 0, 0, &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return st.Uid, st.Gid, nil
}

// Chown gives the directory itself to uid and gid (fchown on the
// descriptor: nothing is looked up by name).
func (d *Dir) Chown(uid, gid int) error {
	if err := unix.Fchownat(d.fd, "", uid, gid, unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "chown", Path: d.path, Err: err}
	}
	return nil
}

// Chmod sets the directory's own mode.
func (d *Dir) Chmod(mode fs.FileMode) error {
	if err := chmodFd(d.fd, uint32(mode.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return nil
}

// noOpenat2 is set once openat2 has answered ENOSYS (a kernel before 5.6,
// or a seccomp filter that refuses it), or EPERM where the walk then
// succeeds: the walk takes its place.
var noOpenat2 atomic.Bool

// checkRel refuses what cannot name something beneath: an absolute path,
// an empty one, or one that climbs with "..".
func checkRel(rel string) error {
	if rel == "" || filepath.IsAbs(rel) {
		return fmt.Errorf("%q is not a path beneath a directory", rel)
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return fmt.Errorf("%q climbs out of its directory", rel)
		}
	}
	return nil
}

// openBeneath opens rel below d with flags, following no symlink on the
// way or at the end (ELOOP when there is one): openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, else one component at a time.
func (d *Dir) openBeneath(rel string, flags int, mode uint32) (int, error) {
	if err := checkRel(rel); err != nil {
		return -1, err
	}
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if flags&unix.O_CREAT == 0 {
		mode = 0 // openat2 refuses a mode it would not use
	}
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(d.fd, rel, &unix.OpenHow{
			Flags:   uint64(flags),
			Mode:    uint64(mode),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		case errors.Is(err, unix.EPERM):
			// Older container runtimes' seccomp profiles answer EPERM to
			// a system call they do not know; an open that EPERM is
			// really for fails the walk the same way.
			fd, werr := d.walkBeneath(rel, flags, mode)
			if werr == nil {
				noOpenat2.Store(true)
			}
			return fd, d.linkOnTheWay(rel, werr)
		default:
			return fd, d.linkOnTheWay(rel, err)
		}
	}
	fd, err := d.walkBeneath(rel, flags, mode)
	return fd, d.linkOnTheWay(rel, err)
}

// linkOnTheWay turns the ENOTDIR of an O_DIRECTORY open that met a
// symlink into ELOOP, which says what was refused.
func (d *Dir) linkOnTheWay(rel string, err error) error {
	if !errors.Is(err, unix.ENOTDIR) {
		return err
	}
	cur := d.fd
	defer func() {
		if cur != d.fd {
			unix.Close(cur)
		}
	}()
	for _, name := range components(rel) {
		var st unix.Stat_t
		if unix.Fstatat(cur, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return unix.ELOOP
		case unix.S_IFDIR:
		default:
			return err
		}
		fd, oerr := unix.Openat(cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if oerr != nil {
			return err
		}
		if cur != d.fd {
			unix.Close(cur)
		}
		cur = fd
	}
	return err
}

// walkBeneath is openBeneath without openat2: each directory on the way
// is opened O_NOFOLLOW and fstat'd (an O_PATH open of a symlink succeeds
// and yields the link, which the fstat then sees).
func (d *Dir) walkBeneath(rel string, flags int, mode uint32) (int, error) {
	names := components(rel)
	if len(names) == 0 {
		return unix.Openat(d.fd, ".", flags, mode)
	}
	cur := d.fd
	closeCur := func() {
		if cur != d.fd {
			unix.Close(cur)
		}
	}
	defer closeCur()
	for _, name := range names[:len(names)-1] {
		fd, err := unix.Openat(cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if err := isType(fd, unix.S_IFDIR); err != nil {
			unix.Close(fd)
			return -1, err
		}
		closeCur()
		cur = fd
	}
	fd, err := unix.Openat(cur, names[len(names)-1], flags, mode)
	if err != nil {
		return -1, err
	}
	if flags&unix.O_PATH != 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, unix.ELOOP
		}
	}
	return fd, nil
}

// isType is nil when fd is of type typ (S_IFDIR, ...); a symlink is ELOOP.
func isType(fd int, typ uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case typ:
		return nil
	case unix.S_IFLNK:
		return unix.ELOOP
	}
	return unix.ENOTDIR
}

// OpenDir opens the directory rel beneath d, following no symlink.
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	p := filepath.Join(d.path, rel)
	fd, err := d.openBeneath(rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	if err := isType(fd, unix.S_IFDIR); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return &Dir{fd: fd, path: p}, nil
}

// OpenFile opens the file rel beneath d as os.OpenFile would, following
// no symlink (O_NOFOLLOW is implied); perm is masked by the umask.
func (d *Dir) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	p := filepath.Join(d.path, rel)
	fd, err := d.openBeneath(rel, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// Mkdir makes the directory name in d with mode perm exactly (a single
// name: mkdirat does not follow a symlink there, it fails with EEXIST);
// made is false when it was there already, which Mkdir does not check.
func (d *Dir) Mkdir(name string, perm fs.FileMode) (made bool, err error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	p := filepath.Join(d.path, name)
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); errors.Is(err, unix.EEXIST) {
		return false, nil
	} else if err != nil {
		return false, &fs.PathError{Op: "mkdir", Path: p, Err: err}
	}
	sub, err := d.OpenDir(name)
	if err != nil {
		return true, err
	}
	defer sub.Close()
	return true, sub.Chmod(perm)
}

// checkName refuses what is not one name in a directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return fmt.Errorf("%q is not a name in a directory", name)
	}
	return nil
}

// Remove removes the file, symlink or empty directory name in d (the
// link itself, never what it points to).
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := unix.Unlinkat(d.fd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if err2 := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); !errors.Is(err2, unix.ENOTDIR) {
			err = err2
		}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// RemoveAll removes rel beneath d and everything below it, following no
// symlink: a link is removed, not entered. A missing rel is not an error.
func (d *Dir) RemoveAll(rel string) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	parent := d
	if dir := filepath.Dir(rel); dir != "." {
		var err error
		if parent, err = d.OpenDir(dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		defer parent.Close()
	}
	return removeAllAt(parent.fd, filepath.Base(rel), filepath.Join(d.path, rel))
}

// removeAllAt removes name in the directory dirfd, recursively, through
// descriptors alone.
func removeAllAt(dirfd int, name, path string) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var errs []error
	for {
		entries, rerr := f.ReadDir(256)
		for _, e := range entries {
			if err := removeAllAt(int(f.Fd()), e.Name(), filepath.Join(path, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
		if rerr != nil || len(entries) == 0 {
			break
		}
	}
	f.Close()
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, &fs.PathError{Op: "remove", Path: path, Err: err})
	}
	return errors.Join(errs...)
}

// Rename renames oldname to newname in d (single names: renameat follows
// no symlink; a symlink at newname is replaced, not followed).
func (d *Dir) Rename(oldname, newname string) error {
	if err := checkName(oldname); err != nil {
		return err
	}
	if err := checkName(newname); err != nil {
		return err
	}
	if err := unix.Renameat(d.fd, oldname, d.fd, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, oldname), New: filepath.Join(d.path, newname), Err: err}
	}
	return nil
}

// ReadDir lists d.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.ReadDir(-1)
}

// WriteFile replaces name in d with data, mode perm exactly, by a rename
// from a temporary name (a reader sees the old file or the new one).
// Whatever is at the temporary name first (a symlink planted there) is
// removed, not followed, and the file is created O_EXCL: if something
// takes the name again in between, the write fails instead of going
// through it.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	tmp := "." + name + ".tmp"
	if err := d.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		d.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		d.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		d.Remove(tmp)
		return err
	}
	if err := d.Rename(tmp, name); err != nil {
		d.Remove(tmp)
		return err
	}
	return nil
}
