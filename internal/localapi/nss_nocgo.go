//go:build !cgo || osusergo || !linux

package localapi

// UsesNSS says whether SystemUsers asks NSS. This build has no cgo (or the
// osusergo tag), so os/user reads the files only: groups that come from LDAP
// or SSSD are missing, and jobs would run without them.
const UsesNSS = false

// UserDatabase names where SystemUsers looks users and groups up.
const UserDatabase = "/etc/passwd and /etc/group only (built without cgo: users and groups from LDAP or SSSD are not seen)"
