package cmdio

import (
	"io"
	"syscall"
	"unsafe"
)

// isTerminal: w is a file whose descriptor answers TCGETS, as isatty(3)
// asks; the commands link no terminal package for one ioctl.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
