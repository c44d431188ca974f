package localapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Access says who may use the daemon, and so how its socket is made.
type Access struct {
	// Shared: any local user may connect (socket mode 0666). The daemon runs
	// as root, runs each job as its submitter, and decides per request what
	// the caller may do.
	Shared bool
	// Owner, when not Shared, is the only uid served (socket mode 0600, and
	// the uid of every connection checked): the daemon runs as that user and
	// every job runs as them, so a request from anyone else would be running
	// code as them. The zero Access serves root only.
	Owner uint32
}

// AccessFor is the access of a daemon whose effective uid is euid: shared
// when it is root, the owner's alone otherwise.
func AccessFor(euid int) Access {
	if euid == 0 {
		return Access{Shared: true}
	}
	return Access{Owner: uint32(euid)}
}

func (a Access) allows(uid uint32) bool { return a.Shared || uid == a.Owner }

func (a Access) socketMode() fs.FileMode {
	if a.Shared {
		return 0o666
	}
	return 0o600
}

// dirMode is the mode of a socket directory that Listen creates: everyone
// must pass through it to a shared socket; nobody else needs to see a
// private one.
func (a Access) dirMode() fs.FileMode {
	if a.Shared {
		return 0o755
	}
	return 0o700
}

// ErrAlreadyRunning is what Listen returns, wrapped with the details, when
// another daemon holds the socket.
var ErrAlreadyRunning = errors.New("another slurmd-lite is already running")

// Listener is the daemon's listening socket. It holds an exclusive lock on
// the file SocketPath+".lock" for as long as it is open, so that two daemons
// starting at once cannot both take the socket; Close removes the socket and
// releases the lock.
type Listener struct {
	ln     *net.UnixListener
	path   string
	access Access
	lock   *os.File

	closeOnce sync.Once
	closeErr  error
}

var _ net.Listener = (*Listener)(nil)

// Listen takes the socket at path for a daemon serving access:
//
//  1. the parent directory is created if missing (0755 shared, 0700
//     private), and refused if someone else could replace the socket in it;
//  2. path+".lock" is locked, or another daemon is running;
//  3. a socket already at path is dialled: if someone answers, another daemon
//     is running and Listen refuses; if nobody does, it is stale (left by a
//     daemon that died) and is replaced; anything that is not a socket is
//     left alone and refused;
//  4. the socket is made with access's mode.
//
// The lock closes the race that dialling alone leaves open:
//
//  1. daemons A and B start together; both dial the stale socket, both are
//     refused;
//  2. A removes it and listens on a new one;
//  3. B removes A's socket and listens on its own;
//  4. clients now reach only B, while A still runs and schedules the same
//     GPUs.
//
// With the lock, B stops at step 2 of Listen.
func Listen(path string, access Access) (*Listener, error) {
	path = filepath.Clean(path)
	if err := checkSocketPath(path); err != nil {
		return nil, err
	}
	if err := prepareDir(filepath.Dir(path), access); err != nil {
		return nil, err
	}
	lock, err := lockFor(path)
	if err != nil {
		return nil, err
	}
	ln, err := listenReplacingStale(path, access)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &Listener{ln: ln, path: path, access: access, lock: lock}, nil
}

// maxSocketPath is the longest path a Unix socket may have on Linux:
// sun_path holds 108 bytes, the last one NUL.
const maxSocketPath = 107

// checkSocketPath refuses a path that bind and connect would refuse with
// only "invalid argument".
func checkSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes long, more than the %d a Unix socket may have; set a shorter SocketPath", path, len(path), maxSocketPath)
	}
	return nil
}

// prepareDir makes sure dir exists and that nobody but root and this daemon's
// user can put a socket of their own at our path: a client talking to an
// impostor would hand it job scripts to run.
func prepareDir(dir string, access Access) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, access.dirMode()); err != nil {
			return fmt.Errorf("creating the socket directory: %w", err)
		}
		// MkdirAll's mode passes through the umask; a shared socket in a
		// directory that the umask made 0700 would be out of everyone's
		// reach.
		if err := os.Chmod(dir, access.dirMode()); err != nil {
			return fmt.Errorf("creating the socket directory: %w", err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	mode := fi.Mode()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("socket directory %s belongs to uid %d, neither root nor this daemon's user: its owner could replace the socket; set SocketPath in a directory of yours", dir, st.Uid)
	}
	if mode.Perm()&0o022 != 0 && mode&fs.ModeSticky == 0 {
		return fmt.Errorf("socket directory %s is writable by other users (mode %04o): they could replace the socket; make it 0755, or set SocketPath in a directory of yours", dir, mode.Perm())
	}
	if access.Shared && mode.Perm()&0o001 == 0 {
		return fmt.Errorf("socket directory %s has mode %04o: other users cannot reach a socket in it; make it 0755", dir, mode.Perm())
	}
	return nil
}

// lockFor takes the daemon's lock beside the socket and writes our pid in it
// for the error a second daemon gives. The lock file is never removed:
// removing it would let a third daemon lock a new file while a second still
// waits on the old one. It is opened close-on-exec (os.OpenFile's default),
// so job supervisors that outlive the daemon do not keep it locked.
func lockFor(socket string) (*os.File, error) {
	name := socket + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("taking the daemon lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s holds %s); stop it first, or give this one another SocketPath", ErrAlreadyRunning, lockHolder(name), name)
		}
		return nil, fmt.Errorf("taking the daemon lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// lockHolder names the process that holds the lock file name, as it wrote
// itself there.
func lockHolder(name string) string {
	b, err := os.ReadFile(name)
	if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
		return "pid " + strconv.Itoa(pid)
	}
	return "another process"
}

// staleDialTimeout bounds the dial that tells a live socket from a stale one.
// A live daemon accepts within microseconds (the kernel completes connect on
// its backlog); a second is generous.
const staleDialTimeout = time.Second

func listenReplacingStale(path string, access Access) (*net.UnixListener, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("socket: %w", err)
	case fi.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("%s exists and is not a socket; remove it, or set SocketPath elsewhere", path)
	default:
		c, err := net.DialTimeout("unix", path, staleDialTimeout)
		if err == nil {
			who := "listening"
			if p, err := peerCred(c); err == nil && p.pid != 0 {
				who = fmt.Sprintf("pid %d, listening", p.pid)
			}
			c.Close()
			return nil, fmt.Errorf("%w (%s on %s); stop it first, or give this one another SocketPath", ErrAlreadyRunning, who, path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("checking the socket left at %s: %w", path, err)
		}
		// Nobody listens: a daemon died without removing its socket.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing the stale socket: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	// Between bind and this chmod the socket has the umask's mode; a private
	// daemon's uid check refuses anyone who connects in that moment.
	if err := os.Chmod(path, access.socketMode()); err != nil {
		ln.Close()
		return nil, fmt.Errorf("setting the socket's mode: %w", err)
	}
	return ln, nil
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) { return l.ln.Accept() }

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Access is who the socket serves.
func (l *Listener) Access() Access { return l.access }

// Close removes the socket and then releases the lock, in that order, so the
// next daemon never finds our socket behind a free lock.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.ln.Close()
		if err := l.lock.Close(); l.closeErr == nil {
			l.closeErr = err
		}
	})
	return l.closeErr
}
