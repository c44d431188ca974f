// Package safepath is how the daemon, running as root, reaches files in
// directories other users could steer: it never follows a symbolic link
// that someone else could have put in its way.
//
// The danger is the classic one of a root daemon writing into a path: a
// user who can create or rename an entry anywhere on the path plants a
// symlink (".0.tmp -> /etc/shadow", "ckpt -> /home/alice/ckpt"), and root
// writes, chmods, chowns, reads or removes through it. Checking the path
// first and then using it is a race; checking only the last component
// (O_NOFOLLOW) leaves every parent open.
//
// Two rules close it:
//
//  1. Trusted directories. A directory the configuration names (and every
//     directory above it) must belong to root or to the daemon's own user
//     and must not be writable by group or others, as sshd's StrictModes
//     demands of a home directory. A parent that others may write is
//     accepted only when it has the sticky bit and belongs to root or the
//     daemon's user (/tmp): the kernel then lets nobody else remove or
//     rename the entries below it that are not theirs, so the trusted
//     directory below cannot be swapped. The configured directory itself
//     must not be writable by others at all, sticky or not. Symlinks on the
//     path are followed only where they are root's or the daemon's, in a
//     directory already found trusted (an admin's /var/run -> /run).
//     OpenDir and MkdirAll walk the path one component at a time from "/",
//     with openat(O_NOFOLLOW) and fstat on the descriptor they hold, so
//     what is checked is what is used.
//
//  2. Beneath, no symlinks. Below a trusted directory (a Dir), every file is
//     reached with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) from the
//     directory's descriptor, or, where the kernel has no openat2 (before
//     5.6), one component at a time with O_NOFOLLOW and an fstat of each.
//     A symlink anywhere below (ELOOP) is an error, never a detour. Single
//     names (Mkdir, Remove, Rename, WriteFile) use the *at calls, which do
//     not follow a symlink in the last component.
//
// What the package does not do: decide whom a file below a trusted
// directory should belong to. Callers check the owner of what they open
// (Dir.Owner), as the daemon does for per-user checkpoint directories.
package safepath
