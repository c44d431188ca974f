package localapi

import (
	"context"
	"fmt"
	"os/user"
	"strconv"
)

// Identity is who is calling. UID, GID and PID come from the kernel
// (SO_PEERCRED, as they were when the client connected), never from anything
// the client sends; User and Groups come from the system's user and group
// databases for that uid.
type Identity struct {
	UID uint32 `json:"uid"`
	// GID is the calling process's effective group, which is the user's
	// primary group unless the caller ran newgrp or sg.
	GID uint32 `json:"gid"`
	// PID is the calling process, 0 when it lives in another pid namespace
	// (a container) where the kernel cannot name it for us.
	PID int `json:"pid"`
	// User is the uid's login name.
	User string `json:"user"`
	// Groups are every group the user belongs to, GID included, as
	// getgrouplist(User, GID) lists them: the groups a job of this caller runs
	// with.
	Groups []uint32 `json:"groups"`
}

type callerKey struct{}

// WithCaller returns ctx carrying id, as the server attaches it to every
// request. Tests of handlers use it to call them without a socket.
func WithCaller(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, callerKey{}, id)
}

// Caller returns the identity of whoever made the request that ctx belongs
// to. The bool is false for a context that did not come through the server,
// because a zero Identity would say "root".
func Caller(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(callerKey{}).(Identity)
	return id, ok
}

// Users is the system's user and group database, as the server needs it. The
// server asks it once per connection; tests give a fake.
type Users interface {
	// LookupUID returns uid's login name.
	LookupUID(uid uint32) (string, error)
	// GroupIDs returns every group user is a member of, with gid as the
	// primary group: getgrouplist(3).
	GroupIDs(user string, gid uint32) ([]uint32, error)
}

// SystemUsers is the machine's user database through os/user. Built with cgo
// (UsesNSS), that is getpwuid_r and getgrouplist through NSS, so users and
// groups from LDAP or SSSD are seen; built without, os/user reads only
// /etc/passwd and /etc/group.
type SystemUsers struct{}

var _ Users = SystemUsers{}

// LookupUID implements Users.
func (SystemUsers) LookupUID(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// GroupIDs implements Users.
func (SystemUsers) GroupIDs(name string, gid uint32) ([]uint32, error) {
	// User.GroupIds needs only the name and the primary gid: with cgo it is
	// getgrouplist(Username, Gid).
	u := &user.User{Username: name, Gid: strconv.FormatUint(uint64(gid), 10)}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, err
	}
	groups := make([]uint32, 0, len(ids))
	for _, s := range ids {
		g, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("group id %q of user %q is not a number", s, name)
		}
		groups = append(groups, uint32(g))
	}
	return groups, nil
}

// peer is what the kernel says about the process at the other end of a
// connection.
type peer struct {
	uid, gid uint32
	pid      int
}
