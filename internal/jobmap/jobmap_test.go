package jobmap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// files is the directory as dcgm-exporter reads it: name -> content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func same(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSyncFollowsTheJobs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "map")
	w := New(dir)
	steps := []struct {
		name string
		jobs map[int][]string
		want map[string]string
	}{
		{"nothing runs: an empty directory", nil, map[string]string{}},
		{"a job on GPU 0, two sharing GPU 3 (in id order)", map[int][]string{0: {"12"}, 3: {"10", "9"}},
			map[string]string{"0": "12\n", "3": "9\n10\n"}},
		{"a job on two GPUs; GPU 0's ended", map[int][]string{3: {"9", "10"}, 1: {"14"}, 2: {"14"}, 0: nil},
			map[string]string{"1": "14\n", "2": "14\n", "3": "9\n10\n"}},
		{"all ended", map[int][]string{}, map[string]string{}},
	}
	for _, s := range steps {
		if err := w.Sync(s.jobs); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := files(t, dir); !same(got, s.want) {
			t.Errorf("%s: the directory holds %v, want %v", s.name, got, s.want)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the directory's mode: %v %v, want 0755 (dcgm-exporter may run as another user)", fi.Mode(), err)
	}
}

// A new daemon's first Sync does not trust what an earlier one left: a job
// that ended while no daemon ran loses its file; names that are not GPU
// indexes stay.
func TestFirstSyncRewritesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"0": "5\n", "1": "6\n", "2": "7\n", "README": "ours\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := New(dir).Sync(map[int][]string{1: {"6"}, 2: {"8"}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"1": "6\n", "2": "8\n", "README": "ours\n"}
	if got := files(t, dir); !same(got, want) {
		t.Errorf("after a restart's first sync: %v, want %v", got, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "2")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("GPU 2's file mode: %v %v, want 0644", fi.Mode(), err)
	}
}

func TestSyncReportsAnUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	err := New(filepath.Join(dir, "map")).Sync(map[int][]string{0: {"1"}})
	if err == nil {
		t.Fatal("Sync into a read-only directory succeeded")
	}
}

func TestCompareIDs(t *testing.T) {
	ids := []string{"10", "9", "100", "11"}
	slices.SortFunc(ids, compareIDs)
	if !slices.Equal(ids, []string{"9", "10", "11", "100"}) {
		t.Errorf("sorted ids: %v", ids)
	}
}

// A symlink planted at the name the writer renames from is removed, not
// written through: the file it points to keeps its content and mode.
func TestSyncDoesNotFollowAPlantedTemporary(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "shadow")
	if err := os.WriteFile(victim, []byte("root:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "map")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, ".0.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := New(dir).Sync(map[int][]string{0: {"7"}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "root:secret\n" {
		t.Errorf("the planted link's target now holds %q", b)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o600 {
		t.Errorf("the planted link's target is now %v", fi.Mode())
	}
	if got, want := files(t, dir), map[string]string{"0": "7\n"}; !same(got, want) {
		t.Errorf("the directory holds %v, want %v", got, want)
	}
}

// A directory others may write is refused before anything is written;
// so is one swapped, after the writer started, for a symlink that is not
// root's.
func TestAnUnsafeDirectoryIsRefused(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	err := New(filepath.Join(open, "map")).Sync(map[int][]string{0: {"1"}})
	if err == nil || !strings.Contains(err.Error(), "JobMappingDir "+open+"/map: directory "+open+" is writable by other users (mode 0777)") {
		t.Errorf("Sync under a directory all may write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(open, "map")); err == nil {
		t.Errorf("Sync made the directory anyway")
	}
	if os.Geteuid() != 0 {
		return
	}
	// Root's own, then swapped for another user's link to a directory of
	// root's.
	dir := filepath.Join(base, "map")
	w := New(dir)
	if err := w.Sync(map[int][]string{0: {"1"}}); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	os.Mkdir(private, 0o700)
	os.WriteFile(filepath.Join(private, "0"), []byte("root's\n"), 0o600)
	os.Rename(dir, filepath.Join(base, "old"))
	os.Symlink(private, dir)
	os.Lchown(dir, 54321, 54321)
	err = w.Sync(map[int][]string{})
	if err == nil || !strings.Contains(err.Error(), "symbolic link "+dir+" belongs to uid 54321") {
		t.Errorf("Sync through another user's link: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(private, "0")); err != nil || string(b) != "root's\n" {
		t.Errorf("root's file behind the link: %q %v", b, err)
	}
}
