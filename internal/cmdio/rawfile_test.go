package cmdio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRawFileReadsAFileToItsEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.sh")
	body := "#!/bin/sh\n" + strings.Repeat("#SBATCH --comment=x\n", 1000)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRaw(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size != int64(len(body)) || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		t.Fatalf("stat: %+v, %v", st, err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != body {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(body))
	}
	if n, err := f.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("read past the end: %d, %v; want 0, io.EOF", n, err)
	}
}

// Errors are os.Open's kind, so that callers test them the same way; and
// O_NOFOLLOW refuses a link, as the settings file's reader asks.
func TestRawFileErrorsAreOsErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenRaw(filepath.Join(dir, "missing"), 0)
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v (%T), want an *os.PathError for fs.ErrNotExist", err, err)
	}
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenRaw(link, syscall.O_NOFOLLOW); err == nil {
		f.Close()
		t.Error("a link opened with O_NOFOLLOW")
	}
}
