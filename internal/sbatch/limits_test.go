package sbatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script over the limit is not read: a 100 MB file (sparse, so the test
// writes nothing) comes back unread, with its size.
func TestReadFileLimited(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.sh")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	body, size, err := readFileLimited(big, 4<<20)
	if err != nil || body != nil || size != 100<<20 {
		t.Fatalf("big: %d bytes read, size %d, err %v", len(body), size, err)
	}

	small := filepath.Join(dir, "small.sh")
	os.WriteFile(small, []byte("#!/bin/sh\ntrue\n"), 0o644)
	body, size, err = readFileLimited(small, 4<<20)
	if err != nil || string(body) != "#!/bin/sh\ntrue\n" || size != 15 {
		t.Fatalf("small: %q, size %d, err %v", body, size, err)
	}
	// Exactly at the limit is accepted.
	body, size, err = readFileLimited(small, 15)
	if err != nil || len(body) != 15 || size != 15 {
		t.Fatalf("at the limit: %d bytes, size %d, err %v", len(body), size, err)
	}
	if _, _, err := readFileLimited(dir, 4<<20); err == nil {
		t.Fatal("a directory was read")
	}
}

// Standard input is read to limit+1 bytes at most.
func TestReadLimited(t *testing.T) {
	body, err := readLimited(strings.NewReader(strings.Repeat("x", 1000)), 10)
	if err != nil || len(body) != 11 {
		t.Fatalf("%d bytes, err %v", len(body), err)
	}
}
