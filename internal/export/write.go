package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/durable"
)

// writeFiles writes files into dir (made if missing) and returns their
// paths. Each goes to a temporary file beside its target first; only when
// every one is written and synced are they renamed into place, and the
// directory synced, so a failure leaves no half-written configuration (and
// no temporary file) behind. (durable.Replace writes one file so; this is a
// set of files that go in together.)
// Existing targets are an error unless force.
func writeFiles(dir string, files []File, force bool) ([]string, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("output directory %q is a file: choose a directory with --dir", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making output directory: %w", err)
	}
	var exist []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		st, err := os.Lstat(p)
		switch {
		case err == nil && st.IsDir():
			// A rename onto it would fail after others were renamed.
			return nil, fmt.Errorf("%q is a directory: move it away or choose another --dir", p)
		case err == nil:
			exist = append(exist, f.Name)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("checking output file: %w", err)
		}
	}
	if !force {
		if len(exist) > 0 {
			return nil, fmt.Errorf("%s already in %q: move them away, choose another --dir, or pass --force to replace them",
				strings.Join(exist, ", "), dir)
		}
	}
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}
	for _, f := range files {
		t, err := writeTemp(dir, f)
		if t != "" {
			temps = append(temps, t)
		}
		if err != nil {
			cleanup()
			return nil, err
		}
	}
	var paths []string
	for i, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := os.Rename(temps[i], p); err != nil {
			cleanup()
			return paths, fmt.Errorf("writing %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	// The renames, like the files' data, survive a crash of the machine.
	if err := durable.SyncDir(dir); err != nil {
		return paths, err
	}
	return paths, nil
}

// writeTemp writes f to a new temporary file in dir and returns its path
// (also on error, for the caller to remove).
func writeTemp(dir string, f File) (string, error) {
	t, err := os.CreateTemp(dir, "."+f.Name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", f.Name, err)
	}
	_, err = t.Write(f.Data)
	if err == nil {
		err = t.Chmod(f.Mode)
	}
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return t.Name(), fmt.Errorf("writing %s: %w", filepath.Join(dir, f.Name), err)
	}
	return t.Name(), nil
}
