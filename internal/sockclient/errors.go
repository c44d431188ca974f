package sockclient

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// UnreachableError says that the daemon cannot be reached, why, and what to
// do. Err is the system's reason: errors.Is(err, fs.ErrNotExist),
// syscall.ECONNREFUSED or syscall.EACCES tell the cases apart.
type UnreachableError struct {
	Socket string
	Err    error
	// Owner names whoever owns the socket, for permission denied.
	Owner string
	// Advice, when set, replaces "start it with: slurmd-lite" for a daemon
	// that is not running: lines saying where the socket came from and the
	// fix for a user and for an administrator (Client.SetAdvice).
	Advice string
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func (e *UnreachableError) Error() string {
	switch {
	case errors.Is(e.Err, syscall.ENOENT) && e.Advice != "":
		return fmt.Sprintf("slurmd-lite is not running (no socket at %s)\n%s", e.Socket, e.Advice)
	case errors.Is(e.Err, syscall.ENOENT):
		return fmt.Sprintf("slurmd-lite is not running (no socket at %s); start it with: slurmd-lite", e.Socket)
	case errors.Is(e.Err, syscall.ECONNREFUSED) && e.Advice != "":
		return fmt.Sprintf("slurmd-lite is not running (nobody listens on %s, left by a daemon that stopped)\n%s", e.Socket, e.Advice)
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return fmt.Sprintf("slurmd-lite is not running (nobody listens on %s, left by a daemon that stopped); start it with: slurmd-lite", e.Socket)
	case errors.Is(e.Err, syscall.EACCES):
		owner := e.Owner
		if owner == "" {
			owner = "another user"
		}
		return fmt.Sprintf("permission denied on %s: the socket belongs to the slurmd-lite of %s, which serves only that user; to run your own, set SocketPath to a path of yours and start it with: slurmd-lite", e.Socket, owner)
	default:
		return fmt.Sprintf("cannot reach slurmd-lite at %s: %v", e.Socket, e.Err)
	}
}

// NotRunning is the error every client gives when no socket is at socket:
// "slurmd-lite is not running (no socket at ...); start it with: slurmd-lite".
func NotRunning(socket string) error {
	return &UnreachableError{Socket: socket, Err: syscall.ENOENT}
}

// Unreachable explains a failed connect. Permission denied on a socket
// means that it belongs to a daemon that serves only its owner (a shared one
// is 0666), so the error names the owner: by userName (a client that links
// NSS passes its lookup), else from /etc/passwd (this package does not link
// NSS; see the package comment), else by uid.
func Unreachable(socket string, err error, userName func(uid uint32) string) *UnreachableError {
	e := &UnreachableError{Socket: socket, Err: err}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		e.Err = errno
	}
	if errors.Is(errno, syscall.EACCES) {
		e.Owner = ownerOf(socket, userName)
	}
	return e
}

func unreachable(socket string, err error) *UnreachableError { return Unreachable(socket, err, nil) }

// ownerOf names the owner of the socket, or of its directory when that
// already denies us.
func ownerOf(socket string, userName func(uint32) string) string {
	fi, err := os.Stat(socket)
	if err != nil {
		if fi, err = os.Stat(filepath.Dir(socket)); err != nil {
			return ""
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	name := ""
	if userName != nil {
		name = userName(st.Uid)
	}
	if name == "" {
		name = passwdName("/etc/passwd", st.Uid)
	}
	if name != "" {
		return fmt.Sprintf("user %q", name)
	}
	return fmt.Sprintf("uid %d", st.Uid)
}

// passwdName finds uid's name in a passwd(5) file.
func passwdName(file string, uid uint32) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	want := strconv.FormatUint(uint64(uid), 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), ":", 4)
		if len(fields) == 4 && fields[2] == want {
			return fields[0]
		}
	}
	return ""
}
