//go:build cgo && !osusergo && linux

package localapi

// UsesNSS says whether SystemUsers asks NSS (getpwuid_r, getgrouplist), so
// that users and groups from LDAP or SSSD count. It is true when the daemon is
// built with cgo (CGO_ENABLED=1, a C compiler present, no osusergo tag); the
// daemon logs UserDatabase at start so that a build without it shows.
const UsesNSS = true

// UserDatabase names where SystemUsers looks users and groups up.
const UserDatabase = "NSS (getpwuid_r, getgrouplist)"
