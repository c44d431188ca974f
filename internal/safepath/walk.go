package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// maxLinks is how many symlinks one walk follows, as the kernel's limit.
const maxLinks = 40

// UntrustedError says which directory (or symlink) on a path another user
// could replace, and how to fix it.
type UntrustedError struct {
	// Path is the directory or symlink at fault.
	Path string
	// UID and Mode are its owner and permission bits.
	UID  uint32
	Mode uint32
	// Leaf is whether Path is the directory asked for, not one above it.
	Leaf bool
	// Link is whether Path is a symlink.
	Link bool
	// EUID is the user the daemon runs as, which may own the path too.
	EUID int
}

func (e *UntrustedError) Error() string {
	who := "root"
	if e.EUID != 0 {
		who = "root or " + userName(uint32(e.EUID))
	}
	kind := "directory"
	if e.Link {
		kind = "symbolic link"
	}
	if e.UID != 0 && int(e.UID) != e.EUID {
		return fmt.Sprintf("%s %s belongs to %s, not to %s: its owner could replace what the daemon reads and writes there; %s",
			kind, e.Path, userName(e.UID), who, e.fix())
	}
	return fmt.Sprintf("directory %s is writable by other users (mode %04o): they could replace what the daemon reads and writes there; %s",
		e.Path, e.Mode&0o7777, e.fix())
}

// fix is the command that makes Path trusted, as the daemon's user can
// run it.
func (e *UntrustedError) fix() string {
	p := shellQuote(e.Path)
	switch {
	case e.Link && e.EUID == 0:
		return "replace it with a link of root's (ln -sfn TARGET " + p + " as root), or name the target itself"
	case e.Link:
		return "name the link's target itself"
	case e.EUID == 0 && e.Leaf:
		return "fix: chown root:root " + p + " && chmod 755 " + p
	case e.EUID == 0:
		return "fix: chown root:root " + p + " && chmod go-w " + p + ", or choose a directory elsewhere"
	case int(e.UID) == e.EUID:
		return "fix: chmod go-w " + p
	}
	return "choose a directory of your own, writable by you alone"
}

func userName(uid uint32) string {
	if n := userdb.Name(uid); n != "" {
		return fmt.Sprintf("%s (uid %d)", n, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// shellQuote quotes p for a shell where it needs quoting.
func shellQuote(p string) string {
	if strings.IndexFunc(p, func(r rune) bool {
		return !(r == '/' || r == '-' || r == '_' || r == '.' || r == '+' || r == ':' || r == '@' || r == '%' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// OpenDir opens the directory at the absolute path, walking it from "/"
// and checking every directory on the way (doc.go, rule 1). The Dir is
// the directory that was checked, whatever happens to its path later.
func OpenDir(path string) (*Dir, error) {
	return walker{euid: os.Geteuid()}.open(path)
}

// MkdirAll is OpenDir that first makes the directories missing from the
// path, each with mode perm exactly (whatever the umask), owned by the
// daemon; each is then checked as a found one is, so that one that
// another user made first in a sticky directory is refused.
func MkdirAll(path string, perm fs.FileMode) (*Dir, error) {
	return walker{euid: os.Geteuid(), create: true, perm: uint32(perm.Perm())}.open(path)
}

// Check checks the part of the absolute path that exists, as OpenDir
// does, and is nil when what is missing is all that stops OpenDir: for a
// command that checks a configuration without making its directories.
func Check(path string) error {
	d, err := walker{euid: os.Geteuid(), partial: true}.open(path)
	if d != nil {
		d.Close()
	}
	return err
}

type walker struct {
	euid   int
	create bool
	perm   uint32
	// partial stops at the first missing component without an error.
	partial bool
}

// dirent is a directory the walk holds open: its O_PATH descriptor and
// the path it was reached by.
type dirent struct {
	fd   int
	path string
}

// open walks path (rule 1 of doc.go). Components are opened O_PATH, which
// needs only search permission; the last one is checked as the directory
// asked for.
func (w walker) open(path string) (d *Dir, err error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s is not an absolute path", path)
	}
	rootfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	stack := []dirent{{fd: rootfd, path: "/"}}
	defer func() {
		for _, e := range stack {
			unix.Close(e.fd)
		}
	}()
	if err := w.check(rootfd, "/", false); err != nil {
		return nil, err
	}
	todo := components(path)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		cur := stack[len(stack)-1]
		if name == ".." {
			if len(stack) > 1 {
				unix.Close(cur.fd)
				stack = stack[:len(stack)-1]
			}
			continue
		}
		p := filepath.Join(cur.path, name)
		var st unix.Stat_t
		err := unix.Fstatat(cur.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		made := false
		if errors.Is(err, unix.ENOENT) && w.partial {
			return nil, nil
		}
		if errors.Is(err, unix.ENOENT) && w.create {
			if err := unix.Mkdirat(cur.fd, name, w.perm); err != nil && !errors.Is(err, unix.EEXIST) {
				return nil, &fs.PathError{Op: "mkdir", Path: p, Err: err}
			} else if err == nil {
				made = true
			}
			err = unix.Fstatat(cur.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			// The directory holding the link is trusted (checked when it
			// was opened); the link itself must be root's or ours, as
			// fs.protected_symlinks asks of links in sticky directories.
			if links++; links > maxLinks {
				return nil, &fs.PathError{Op: "open", Path: path, Err: unix.ELOOP}
			}
			if !w.trusted(st.Uid) {
				return nil, &UntrustedError{Path: p, UID: st.Uid, Mode: st.Mode, Link: true, EUID: w.euid}
			}
			target, err := readlinkat(cur.fd, name)
			if err != nil {
				return nil, &fs.PathError{Op: "readlink", Path: p, Err: err}
			}
			if filepath.IsAbs(target) {
				for _, e := range stack[1:] {
					unix.Close(e.fd)
				}
				stack = stack[:1]
			}
			todo = append(components(target), todo...)
			continue
		}
		fd, err := unix.Openat(cur.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		stack = append(stack, dirent{fd: fd, path: p})
		if made {
			// Mkdirat's mode passed through the umask.
			if err := chmodFd(fd, w.perm); err != nil {
				return nil, &fs.PathError{Op: "chmod", Path: p, Err: err}
			}
		}
		if err := w.check(fd, p, len(todo) == 0); err != nil {
			return nil, err
		}
	}
	top := stack[len(stack)-1]
	if err := w.check(top.fd, top.path, true); err != nil {
		return nil, err
	}
	stack = stack[:len(stack)-1]
	return &Dir{fd: top.fd, path: filepath.Clean(path)}, nil
}

// components splits a path into its names, dropping empty ones and ".".
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func (w walker) trusted(uid uint32) bool { return uid == 0 || int(uid) == w.euid }

// check is rule 1 for one directory held open: root's or the daemon's,
// writable by nobody else (a parent may be sticky instead).
func (w walker) check(fd int, path string, leaf bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &fs.PathError{Op: "open", Path: path, Err: unix.ENOTDIR}
	}
	if !w.trusted(st.Uid) {
		return &UntrustedError{Path: path, UID: st.Uid, Mode: st.Mode, Leaf: leaf, EUID: w.euid}
	}
	if st.Mode&0o022 != 0 && (leaf || st.Mode&unix.S_ISVTX == 0) {
		return &UntrustedError{Path: path, UID: st.Uid, Mode: st.Mode, Leaf: leaf, EUID: w.euid}
	}
	return nil
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// chmodFd sets the mode of the directory behind an O_PATH descriptor,
// which fchmod does not take: through a descriptor of its own, opened
// without following anything.
func chmodFd(fd int, mode uint32) error {
	rd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(rd)
	return unix.Fchmod(rd, mode)
}
