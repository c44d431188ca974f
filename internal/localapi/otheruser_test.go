package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// childSocketEnv, when set, makes the test binary a client: it asks the
// daemon at that socket who it is, prints the outcome and exits. The tests
// below start it as another user.
const childSocketEnv = "LOCALAPI_TEST_CHILD_SOCKET"

func TestMain(m *testing.M) {
	if sock := os.Getenv(childSocketEnv); sock != "" {
		os.Exit(childClient(sock))
	}
	os.Exit(m.Run())
}

// childOutcome is what the child client saw.
type childOutcome struct {
	Identity *Identity   `json:",omitempty"`
	Error    string      `json:",omitempty"`
	Status   int         `json:",omitempty"`
	Code     slurm.Errno `json:",omitempty"`
	Errno    string      `json:",omitempty"`
}

func childClient(sock string) int {
	var out childOutcome
	var id Identity
	err := sockclient.New(sock).Do(context.Background(), "GET", "/v1/whoami", nil, &id)
	var e *api.Error
	var errno syscall.Errno
	switch {
	case err == nil:
		out.Identity = &id
	case errors.As(err, &e):
		out.Error, out.Status, out.Code = e.Message, e.Status, e.Code
	default:
		out.Error = err.Error()
		if errors.As(err, &errno) {
			out.Errno = errno.Error()
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

// asNobody runs the test binary as a client under the user nobody, and
// returns what it saw and its pid.
func asNobody(t *testing.T, sock string) (childOutcome, int) {
	t.Helper()
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody to connect as: %v", err)
	}
	uid, _ := strconv.ParseUint(nobody.Uid, 10, 32)
	gid, _ := strconv.ParseUint(nobody.Gid, 10, 32)

	// go test builds the binary in a directory only we may enter; nobody
	// runs a copy.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(openDir(t), "localapi.test")
	if err := copyFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{childSocketEnv + "=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, stderr.Bytes())
	}
	var out childOutcome
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("child printed %q: %v\n%s", stdout.Bytes(), err, stderr.Bytes())
	}
	return out, cmd.Process.Pid
}

// openDir is a temporary directory that every user may enter.
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("starting a client as another user (nobody) needs root; run the tests as root to check what other users see")
	}
}

func TestOtherUsers(t *testing.T) {
	needRoot(t)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	nobodyUID, _ := strconv.Atoi(nobody.Uid)
	nobodyGID, _ := strconv.Atoi(nobody.Gid)

	t.Run("a private daemon's socket turns others away at connect", func(t *testing.T) {
		s := startServerAt(t, filepath.Join(openDir(t), "slurmd.sock"), withAccess(Access{Owner: 0}))
		got, _ := asNobody(t, s.sock)
		want := childOutcome{
			Error: fmt.Sprintf(`permission denied on %s: the socket belongs to the slurmd-lite of user "root", which serves only that user; to run your own, set SocketPath to a path of yours and start it with: slurmd-lite`, s.sock),
			Errno: "permission denied",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("nobody's request (-want +got):\n%s", diff)
		}
	})

	t.Run("a private daemon refuses others whatever the socket's mode", func(t *testing.T) {
		s := startServerAt(t, filepath.Join(openDir(t), "slurmd.sock"), withAccess(Access{Owner: 0}))
		// Someone opens the socket by hand; the uid check still holds.
		if err := os.Chmod(s.sock, 0o666); err != nil {
			t.Fatal(err)
		}
		got, _ := asNobody(t, s.sock)
		want := childOutcome{
			Error:  fmt.Sprintf("this slurmd-lite runs as root (uid 0) and serves only that user; uid %d may not use it", nobodyUID),
			Status: 403,
			Code:   slurm.ErrAccessDenied,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("nobody's request (-want +got):\n%s", diff)
		}
		if n := s.api.calls.Load(); n != 0 {
			t.Errorf("%d handler calls, want 0", n)
		}
	})

	t.Run("a shared daemon knows who is calling", func(t *testing.T) {
		s := startServerAt(t, filepath.Join(openDir(t), "slurmd.sock"), withAccess(Access{Shared: true}), withUsers(SystemUsers{}))
		got, pid := asNobody(t, s.sock)
		groups, err := SystemUsers{}.GroupIDs("nobody", uint32(nobodyGID))
		if err != nil {
			t.Fatal(err)
		}
		want := childOutcome{Identity: &Identity{
			UID: uint32(nobodyUID), GID: uint32(nobodyGID), PID: pid, User: "nobody", Groups: groups,
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("nobody's identity (-want +got):\n%s", diff)
		}
	})
}
