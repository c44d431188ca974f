// Package jobmap keeps NVIDIA dcgm-exporter's HPC job mapping directory
// (its --hpc-job-mapping-dir, DCGM_HPC_JOB_MAPPING_DIR): one file per GPU
// in use, named by the GPU's NVML index ("0", "1", ...), holding the ids
// of the jobs on it, one a line. dcgm-exporter reads the directory at each
// scrape and labels every metric of that GPU with hpc_job="ID" (one
// series per job on a shared GPU). A GPU with no job has no file.
//
// Under Slurm a prolog writes these files and an epilog removes them; a
// crash between the two leaves them wrong. Here the daemon states the
// whole mapping after every scheduling pass, and the first Sync after a
// start rewrites the directory from nothing, so that it is right after a
// restart too (jobs that ended while the daemon was down lose their
// files).
package jobmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Writer keeps one directory. It is not safe for concurrent use: one
// goroutine syncs.
type Writer struct {
	dir string
	// written is what each file holds now, by NVML index; nil until the
	// first Sync has rewritten the directory.
	written map[int]string
}

// New is a writer for dir (created on the first Sync).
func New(dir string) *Writer { return &Writer{dir: dir} }

// Sync makes the directory say jobs: for each NVML index, the ids of the
// jobs on that GPU. Only files that change are written, each by a rename
// (a reader never sees half a file); files of GPUs without jobs are
// removed. Names that are not GPU indexes are left alone (dcgm-exporter
// ignores them).
func (w *Writer) Sync(jobs map[int][]string) error {
	want := map[int]string{}
	for idx, ids := range jobs {
		if len(ids) == 0 {
			continue
		}
		ids = slices.Clone(ids)
		slices.SortFunc(ids, compareIDs)
		ids = slices.Compact(ids)
		want[idx] = strings.Join(ids, "\n") + "\n"
	}
	if w.written == nil {
		if err := w.reset(); err != nil {
			return err
		}
	}
	var errs []error
	for idx, content := range want {
		if w.written[idx] == content {
			continue
		}
		if err := w.write(idx, content); err != nil {
			errs = append(errs, err)
			continue
		}
		w.written[idx] = content
	}
	for idx := range w.written {
		if _, ok := want[idx]; ok {
			continue
		}
		err := os.Remove(w.path(idx))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("job mapping: removing %s: %w", w.path(idx), err))
			continue
		}
		delete(w.written, idx)
	}
	return errors.Join(errs...)
}

// reset creates the directory and removes every GPU file in it: what an
// earlier daemon wrote may no longer be true.
func (w *Writer) reset() error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("job mapping: creating JobMappingDir %s: %w", w.dir, err)
	}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("job mapping: reading JobMappingDir %s: %w", w.dir, err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.IsDir() {
			continue
		}
		if err := os.Remove(filepath.Join(w.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("job mapping: removing %s: %w", filepath.Join(w.dir, e.Name()), err)
		}
	}
	w.written = map[int]string{}
	return nil
}

func (w *Writer) path(idx int) string { return filepath.Join(w.dir, strconv.Itoa(idx)) }

// write replaces GPU idx's file by a rename from a name dcgm-exporter
// skips (not a number).
func (w *Writer) write(idx int, content string) error {
	tmp := filepath.Join(w.dir, "."+strconv.Itoa(idx)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("job mapping: writing %s: %w", tmp, err)
	}
	// WriteFile's mode is masked by the umask: readers are other users.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("job mapping: %w", err)
	}
	if err := os.Rename(tmp, w.path(idx)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("job mapping: %w", err)
	}
	return nil
}

// compareIDs orders job ids as numbers (9 before 10).
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
