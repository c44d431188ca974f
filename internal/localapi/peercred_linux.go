package localapi

import (
	"fmt"
	"net"
	"syscall"
)

// peerCred asks the kernel who is at the other end of c: the uid, gid and pid
// of the process that called connect(2), fixed at that moment. The standard
// library's syscall package has it, so the module needs no x/sys for it.
func peerCred(c net.Conn) (peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}, fmt.Errorf("connection from %v is not a Unix socket", c.RemoteAddr())
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}, fmt.Errorf("reading peer credentials: %w", err)
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return peer{}, fmt.Errorf("reading peer credentials: %w", err)
	}
	if credErr != nil {
		return peer{}, fmt.Errorf("reading peer credentials: %w", credErr)
	}
	return peer{uid: cred.Uid, gid: cred.Gid, pid: int(cred.Pid)}, nil
}
