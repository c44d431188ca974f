// Package durable writes files so that a crash leaves either the old
// contents or the new, whole: a temporary file beside the target, fsync,
// rename over it, fsync of the directory. The job supervisor's status
// files, the daemon's run directories and the store's files all write
// this way; it was written three times before (issue 28).
package durable

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace writes data to path through a temporary file in path's
// directory (".NAME.tmp-*", mode perm) renamed over it. With sync, the
// file's data and then the directory are flushed first and after, so that
// the new contents survive a crash of the machine; without it, a reader
// still never sees a half-written file. The temporary file is removed
// whatever fails.
func Replace(path string, data []byte, perm fs.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !sync {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir flushes dir's entries, so that a file created, renamed or
// removed in it stays so after a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
