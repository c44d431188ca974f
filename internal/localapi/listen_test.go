package localapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSocketAndDirectoryModes(t *testing.T) {
	// A umask that would shut everyone out: Listen must still make a shared
	// socket's directory reachable.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	tests := []struct {
		name       string
		access     Access
		socketMode fs.FileMode
		dirMode    fs.FileMode
	}{
		{name: "shared", access: Access{Shared: true}, socketMode: 0o666, dirMode: 0o755},
		{name: "private", access: Access{Owner: uint32(os.Geteuid())}, socketMode: 0o600, dirMode: 0o700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "run", "sl", "slurmd.sock")
			ln, err := Listen(sock, tt.access)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			type modes struct{ Socket, Dir fs.FileMode }
			want := modes{Socket: fs.ModeSocket | tt.socketMode, Dir: fs.ModeDir | tt.dirMode}
			var got modes
			if fi, err := os.Stat(sock); err == nil {
				got.Socket = fi.Mode()
			}
			if fi, err := os.Stat(filepath.Dir(sock)); err == nil {
				got.Dir = fi.Mode()
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("modes (-want +got):\n%s", diff)
			}
		})
	}
}

// leaveStaleSocket makes what a daemon killed with SIGKILL leaves: a socket
// file that nobody listens on.
func leaveStaleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := net.Dial("unix", path); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialling the stale socket: %v, want connection refused", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "slurmd.sock")
	leaveStaleSocket(t, sock)
	s := startServerAt(t, sock)
	var got echoOut
	if err := s.client(t).Do(t.Context(), "POST", "/v1/echo", echoIn{Name: "after"}, &got); err != nil {
		t.Fatalf("a request to the daemon that replaced a stale socket: %v", err)
	}
}

func TestLiveSocketIsRefused(t *testing.T) {
	// A daemon that holds no lock (an older one, or one whose lock file was
	// deleted) still answers on its socket.
	sock := filepath.Join(t.TempDir(), "slurmd.sock")
	live, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	_, err = Listen(sock, AccessFor(os.Geteuid()))
	want := fmt.Sprintf("another slurmd-lite is already running (pid %d, listening on %s); stop it first, or give this one another SocketPath", os.Getpid(), sock)
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Listen beside a live socket (-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("errors.Is(%v, ErrAlreadyRunning) is false", err)
	}
	// The live daemon's socket is untouched.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("the live socket after a refused Listen: %v", err)
	}
	c.Close()
}

func TestSecondDaemonIsRefusedByTheLock(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "slurmd.sock")
	first, err := Listen(sock, AccessFor(os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Listen(sock, AccessFor(os.Geteuid()))
	want := fmt.Sprintf("another slurmd-lite is already running (pid %d holds %s.lock); stop it first, or give this one another SocketPath", os.Getpid(), sock)
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("a second Listen (-want +got):\n%s", diff)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after Close: %v, want it removed", err)
	}
	again, err := Listen(sock, AccessFor(os.Geteuid()))
	if err != nil {
		t.Fatalf("Listen after the first daemon closed: %v", err)
	}
	again.Close()
}

func TestWhatIsNotASocketIsLeftAlone(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "slurmd.sock")
	if err := os.WriteFile(sock, []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(sock, AccessFor(os.Geteuid()))
	want := sock + " exists and is not a socket; remove it, or set SocketPath elsewhere"
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Listen (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(sock); err != nil || string(b) != "notes" {
		t.Errorf("the file after Listen: %q, %v; want it untouched", b, err)
	}
	// The refused Listen let go of the lock.
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(sock, AccessFor(os.Geteuid()))
	if err != nil {
		t.Fatalf("Listen once the file is gone: %v", err)
	}
	ln.Close()
}

func TestUnsafeDirectoriesAreRefused(t *testing.T) {
	tests := []struct {
		name   string
		mode   fs.FileMode
		owner  int // -1: ours
		access Access
		want   string // %s is the directory
	}{{
		name: "a directory anyone may write in", mode: 0o777, owner: -1, access: AccessFor(os.Geteuid()),
		want: "socket directory %s is writable by other users (mode 0777): they could replace the socket; make it 0755, or set SocketPath in a directory of yours",
	}, {
		name: "a directory its group may write in", mode: 0o775, owner: -1, access: AccessFor(os.Geteuid()),
		want: "socket directory %s is writable by other users (mode 0775): they could replace the socket; make it 0755, or set SocketPath in a directory of yours",
	}, {
		name: "a sticky directory anyone may write in, like /tmp", mode: 0o777 | fs.ModeSticky, owner: -1, access: AccessFor(os.Geteuid()),
	}, {
		name: "a shared socket in a directory others cannot enter", mode: 0o700, owner: -1, access: Access{Shared: true},
		want: "socket directory %s has mode 0700: other users cannot reach a socket in it; make it 0755",
	}, {
		name: "a private socket in a directory others cannot enter", mode: 0o700, owner: -1, access: Access{Owner: uint32(os.Geteuid())},
	}, {
		name: "a directory of another user", mode: 0o755, owner: 65534, access: AccessFor(os.Geteuid()),
		want: "socket directory %s belongs to uid 65534, neither root nor this daemon's user: its owner could replace the socket; set SocketPath in a directory of yours",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			if tt.owner >= 0 {
				if os.Geteuid() != 0 {
					t.Skip("giving a directory to another user needs root")
				}
				if err := os.Chown(dir, tt.owner, tt.owner); err != nil {
					t.Fatal(err)
				}
			}
			ln, err := Listen(filepath.Join(dir, "slurmd.sock"), tt.access)
			if err == nil {
				ln.Close()
			}
			want := "<nil>"
			if tt.want != "" {
				want = fmt.Sprintf(tt.want, dir)
			}
			if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
				t.Errorf("Listen (-want +got):\n%s", diff)
			}
		})
	}
}

func TestASocketDirectoryThatIsAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(filepath.Join(dir, "slurmd.sock"), AccessFor(os.Geteuid()))
	if want := "socket directory " + dir + " is not a directory"; fmt.Sprint(err) != want {
		t.Errorf("Listen: %v, want %s", err, want)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	sock := "/" + strings.Repeat("d", 100) + "/slurmd.sock"
	want := fmt.Sprintf("socket path %s is 113 bytes long, more than the 107 a Unix socket may have; set a shorter SocketPath", sock)
	_, err := Listen(sock, AccessFor(os.Geteuid()))
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Listen (-want +got):\n%s", diff)
	}
	_, err = Dial(sock)
	if diff := cmp.Diff("cannot reach slurmd-lite at "+sock+": "+want, fmt.Sprint(err)); diff != "" {
		t.Errorf("Dial (-want +got):\n%s", diff)
	}
}
