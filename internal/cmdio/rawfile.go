package cmdio

import (
	"io"
	"os"
	"syscall"
)

// RawFile is a file read with the system calls alone. Why not os.File: the
// first os.Open of a process sets up the runtime's network poller (an
// epoll instance, an eventfd, and a try at registering the file, which
// fails for a regular file): six system calls that a command living a
// millisecond pays for nothing.
// sbatch reads its settings file and its script this way, and talks to the
// daemon on a socket it reads the same way (internal/sockclient), so that
// a submission never starts the poller.
type RawFile struct{ fd int }

// OpenRaw opens path for reading with flags added to O_RDONLY|O_CLOEXEC
// (syscall.O_NOFOLLOW, say). Errors are *os.PathError, as os.Open's.
func OpenRaw(path string, flags int) (RawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|flags, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return RawFile{fd: -1}, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return RawFile{fd: fd}, nil
	}
}

// Stat is fstat(2) of the open file.
func (f RawFile) Stat() (syscall.Stat_t, error) {
	var st syscall.Stat_t
	err := syscall.Fstat(f.fd, &st)
	return st, err
}

// Read is read(2), retried on EINTR; the end of the file is io.EOF.
func (f RawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close closes the file.
func (f RawFile) Close() error { return syscall.Close(f.fd) }
