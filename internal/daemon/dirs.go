package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/safepath"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The daemon runs as root and writes, on users' behalf, in directories
// the configuration names. Each must be root's (or the daemon's user's)
// and writable by nobody else, as must every directory above it
// (safepath, doc.go): otherwise a user plants a symlink and root writes,
// chowns, reads or removes where they point. checkDirs is that rule at
// start and at every reload; what the daemon then does below them goes
// through safepath, following no symlink.

// checkDirs makes the configured directories the daemon owns where they
// are missing (config.DaemonDirs: StateSaveLocation, JobMappingDir,
// CheckpointDir's base) and checks them and every directory above them.
// The error names each directory at fault and the command that fixes it.
func checkDirs(cfg *config.Config) error {
	var errs []error
	for _, dir := range cfg.DaemonDirs() {
		d, err := safepath.MkdirAll(dir.Path, dir.Mode)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir.What, err))
			continue
		}
		d.Close()
	}
	return errors.Join(errs...)
}

// checkpointDir expands CheckpointDir for a job, as an --output pattern is
// expanded (%u, %j, %x, %A, %a). An array task keeps the id it got when it
// was split from its pending record for every later run, so %j is stable.
func checkpointDir(pattern string, j store.Job) string {
	if pattern == "" {
		return ""
	}
	v := slurmsyntax.PatternVars{JobID: j.ID, ArrayJobID: j.ID, ArrayTaskID: -1, JobName: j.Name, User: j.User}
	if j.ArrayJobID != 0 {
		v.ArrayJobID, v.ArrayTaskID = j.ArrayJobID, j.ArrayTaskID
	}
	return slurmsyntax.ExpandPattern(pattern, v)
}

// checkpointNames splits a job's checkpoint directory into its base (the
// daemon's: config.CheckpointBase) and the names below it, which the
// job's name (%x) may have put there: "." and ".." are refused, not
// resolved.
func checkpointNames(pattern, dir string) (base string, names []string, err error) {
	base = config.CheckpointBase(pattern)
	prefix := strings.TrimSuffix(base, "/") + "/"
	if !strings.HasPrefix(dir, prefix) {
		return "", nil, fmt.Errorf("checkpoint directory %s is not under %s", dir, base)
	}
	for _, n := range strings.Split(dir[len(prefix):], "/") {
		switch n {
		case "":
		case ".", "..":
			return "", nil, fmt.Errorf("checkpoint directory %s has a %q in it (from the job's name?); rename the job", dir, n)
		default:
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", nil, fmt.Errorf("checkpoint directory %s is its base %s", dir, base)
	}
	return base, names, nil
}

// checkpointOwner is whom every directory below CheckpointDir's base
// must belong to: the job's user under a root daemon; the daemon's own
// user where it runs as one (jobs then run as that user too).
func checkpointOwner(cred stepd.Credential) (uid, gid int) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid()
	}
	return int(cred.UID), int(cred.GID)
}

// prepareCheckpointDir makes a job's checkpoint directory. The base is
// checked as a configured directory (safepath.MkdirAll: root's or the
// daemon's, nobody else's to write, nor any directory above it). Below
// it, each directory is reached from its parent's descriptor without
// following a symlink, made 0700 where missing and given to the job's
// user through its descriptor, so that no other user can enter or
// replace it. One that is there already must be the job's user's: a
// directory of anyone else's (or a symlink) is refused, and the job fails
// to launch saying which and why; it is never chowned to the job's user.
func prepareCheckpointDir(pattern, dir string, cred stepd.Credential) error {
	if dir == "" {
		return nil
	}
	base, names, err := checkpointNames(pattern, dir)
	if err != nil {
		return err
	}
	root, err := safepath.MkdirAll(base, 0o755)
	if err != nil {
		return fmt.Errorf("checkpoint directory %s: CheckpointDir's base: %w", dir, err)
	}
	defer root.Close()
	uid, gid := checkpointOwner(cred)
	cur := root
	defer func() {
		if cur != root {
			cur.Close()
		}
	}()
	for _, name := range names {
		made, err := cur.Mkdir(name, 0o700)
		if err != nil {
			return fmt.Errorf("checkpoint directory %s: %w", dir, err)
		}
		next, err := cur.OpenDir(name)
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("checkpoint directory %s: %s is a symbolic link, which the daemon does not follow there: it could lead to another user's checkpoints; an administrator must remove it",
				dir, cur.Path()+"/"+name)
		} else if err != nil {
			return fmt.Errorf("checkpoint directory %s: %w", dir, err)
		}
		if cur != root {
			cur.Close()
		}
		cur = next
		owner, _, err := cur.Owner()
		if err != nil {
			return fmt.Errorf("checkpoint directory %s: %w", dir, err)
		}
		switch {
		case made && int(owner) != uid:
			if err := cur.Chown(uid, gid); err != nil {
				return fmt.Errorf("checkpoint directory %s: %w", dir, err)
			}
		case int(owner) != uid:
			return fmt.Errorf("checkpoint directory %s: %s belongs to %s, not to %s, whose job this is: it could read or replace the job's checkpoints; an administrator must remove it or give it to %s",
				dir, cur.Path(), ownerName(owner), ownerName(uint32(uid)), ownerName(uint32(uid)))
		}
	}
	return nil
}

func ownerName(uid uint32) string {
	if n := userdb.Name(uid); n != "" {
		return n
	}
	return fmt.Sprintf("uid %d", uid)
}

// removeCheckpointDir removes a finished job's checkpoint directory
// (sweepCheckpoints), reached from CheckpointDir's base without
// following a symlink, and only when it is its user's: a directory that
// someone else put where the job's would be is theirs, and left alone.
func removeCheckpointDir(pattern, dir string, j store.Job) (bool, error) {
	base, names, err := checkpointNames(pattern, dir)
	if err != nil {
		return false, err
	}
	root, err := safepath.OpenDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer root.Close()
	rel := strings.Join(names, "/")
	d, err := root.OpenDir(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	owner, _, err := d.Owner()
	d.Close()
	if err != nil {
		return false, err
	}
	want, _ := checkpointOwner(stepd.Credential{UID: j.UID, GID: j.GID})
	if int(owner) != want {
		return false, fmt.Errorf("checkpoint directory %s belongs to %s, not to the job's user: left alone", dir, ownerName(owner))
	}
	return true, root.RemoveAll(rel)
}
