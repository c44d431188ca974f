//go:build !linux

package localapi

import (
	"errors"
	"net"
)

// peerCred is Linux's SO_PEERCRED; elsewhere the server refuses every caller
// rather than guess who they are. The package builds everywhere so that the
// client side can be developed on any machine.
func peerCred(net.Conn) (peer, error) {
	return peer{}, errors.New("caller identity needs Linux (SO_PEERCRED)")
}
