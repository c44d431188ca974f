package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fileState is what "left untouched" compares: contents, mode and
// modification time of the database, and which of its companions exist.
type fileState struct {
	data    []byte
	mode    os.FileMode
	mtime   time.Time
	friends string
}

func snapshot(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var friends []string
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			friends = append(friends, suffix)
		}
	}
	return fileState{data, fi.Mode(), fi.ModTime(), strings.Join(friends, " ")}
}

// sameFile reports how path changed since before, or "".
func sameFile(t *testing.T, path string, before fileState) string {
	after := snapshot(t, path)
	switch {
	case !bytes.Equal(before.data, after.data):
		return "its contents changed"
	case before.mode != after.mode:
		return "its mode changed from " + before.mode.String() + " to " + after.mode.String()
	case !before.mtime.Equal(after.mtime):
		return "its modification time changed"
	case before.friends != after.friends:
		return "its companion files went from [" + before.friends + "] to [" + after.friends + "]"
	}
	return ""
}

// makeDB creates a state directory holding a closed store with one job.
func makeDB(t *testing.T) (dir, path string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(ctx, []NewJob{newJob(t, trainScript)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, FileName)
}

// rawExec runs SQL on a database file as another program would.
func rawExec(t *testing.T, path, query string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedStateIsRefusedAndLeftAlone(t *testing.T) {
	garbage := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(r.IntN(256))
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{
			name:   "garbage bytes",
			damage: func(t *testing.T, path string) { os.WriteFile(path, garbage, 0o600) },
			want:   "it does not start with SQLite's header",
		},
		{
			name:   "a file cut short inside the header",
			damage: func(t *testing.T, path string) { os.WriteFile(path, []byte("SQLite"), 0o600) },
			want:   "it does not start with SQLite's header",
		},
		{
			name: "SQLite's header over damaged pages",
			damage: func(t *testing.T, path string) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// Keep page 1 (header and schema), ruin the rest.
				copy(data[4096:], garbage)
				os.WriteFile(path, data, 0o600)
			},
			want: "cannot be used",
		},
		{
			name: "another program's SQLite database",
			damage: func(t *testing.T, path string) {
				os.Remove(path)
				rawExec(t, path, "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
				os.Chmod(path, 0o600)
			},
			want: "it is a SQLite database, but not slurm-lite's",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := makeDB(t)
			tc.damage(t, path)
			before := snapshot(t, path)
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a damaged state database")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v does not wrap ErrCorrupt", err)
			}
			for _, part := range []string{path, tc.want, "left it as it is", "mv " + path + " " + path + ".broken"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
			if how := sameFile(t, path, before); how != "" {
				t.Errorf("Open changed the damaged file: %s", how)
			}
			// Refused again, not reset, the next time.
			if s, err := Open(dir); err == nil {
				s.Close()
				t.Error("a second Open accepted the damaged file")
			}
		})
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir, path := makeDB(t)
	rawExec(t, path, "PRAGMA user_version = 99")
	before := snapshot(t, path)
	s, err := Open(dir)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a schema from the future")
	}
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("error %v does not wrap ErrNewerSchema", err)
	}
	for _, part := range []string{path, "schema version 99", fmt.Sprintf("knows versions up to %d", SchemaVersion), "no downgrade"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if how := sameFile(t, path, before); how != "" {
		t.Errorf("Open changed the newer file: %s", how)
	}
}

func TestStateIsPrivateToTheDaemon(t *testing.T) {
	s, dir := openT(t)
	if _, err := s.Submit(ctx, []NewJob{newJob(t, trainScript)}); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{}
	for _, name := range []string{".", FileName, FileName + "-wal", FileName + "-shm", lockName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		modes[name] = fi.Mode().Perm()
	}
	want := map[string]os.FileMode{".": 0o700, FileName: 0o600, FileName + "-wal": 0o600, FileName + "-shm": 0o600, lockName: 0o600}
	for name, m := range want {
		if modes[name] != m {
			t.Errorf("%s has mode %v, want %v", name, modes[name], m)
		}
	}
	backup := filepath.Join(t.TempDir(), "copy.db")
	if err := s.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup: %v, mode %v; want mode 0600", err, fi.Mode().Perm())
	}
}

func TestOpenMakesAnExistingFilePrivate(t *testing.T) {
	dir, path := makeDB(t)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after Open is %v, want 0600", fi.Mode().Perm())
	}
}

func TestStateOwnedByAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file away")
	}
	dir, path := makeDB(t)
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database owned by uid 65534")
	}
	if !strings.Contains(err.Error(), "belongs to uid 65534") || !strings.Contains(err.Error(), "chown 0 "+path) {
		t.Errorf("error %q does not name the owner and the fix", err)
	}
}

func TestAnEmptyFileIsANewDatabase(t *testing.T) {
	// What a crash right after creating the file leaves.
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id := submitOne(t, s, newJob(t, trainScript)); id != 1 {
		t.Errorf("first id %d, want 1", id)
	}
}

func TestUnreadableStateIsReported(t *testing.T) {
	dir, path := makeDB(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file was
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open with a directory for a database: %v", err)
	}
}

func TestTheLockIsReleasedOnClose(t *testing.T) {
	dir, _ := makeDB(t)
	f, err := os.Open(filepath.Join(dir, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the state lock is still held after Close: %v", err)
	}
}
