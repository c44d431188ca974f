package config

import (
	"fmt"
	"io/fs"
)

// DaemonDir is a directory the configuration names that the daemon makes
// and writes in, as root, on users' behalf. It must be root's (or the
// daemon's user's) and writable by nobody else, and so must every
// directory above it: the daemon refuses to start, or to reload, where it
// is not (internal/safepath), and `slurmd-lite config` says so.
type DaemonDir struct {
	// What names it in messages: the key and its value.
	What string
	// Path is the directory.
	Path string
	// Mode is what the daemon makes it with where it is missing.
	Mode fs.FileMode
}

// DaemonDirs are StateSaveLocation, JobMappingDir when set, and the base
// of CheckpointDir (CheckpointBase): below it the directories are the
// users', and each is checked as the daemon makes it.
func (c *Config) DaemonDirs() []DaemonDir {
	dirs := []DaemonDir{{What: "StateSaveLocation " + c.StateSaveLocation, Path: c.StateSaveLocation, Mode: 0o700}}
	if c.JobMappingDir != "" {
		dirs = append(dirs, DaemonDir{What: "JobMappingDir " + c.JobMappingDir, Path: c.JobMappingDir, Mode: 0o755})
	}
	if c.CheckpointDir != "" {
		base := CheckpointBase(c.CheckpointDir)
		dirs = append(dirs, DaemonDir{
			What: fmt.Sprintf("CheckpointDir %s (its directory before the first %% escape, %s)", c.CheckpointDir, base),
			Path: base, Mode: 0o755,
		})
	}
	return dirs
}
