package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { e2eCmds["pty"] = cmdPty }

// pty CMD [ARGS...]: runs one of the script's commands with its stdin,
// stdout and stderr on a pseudo-terminal, as in a person's shell, and puts
// what the terminal showed in stdout (the terminal's \r\n as \n), for
// the progress lines commands print on a terminal only.
func cmdPty(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: pty CMD [ARGS...]")
	}
	path := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[0]); isExecutable(p) {
			path = p
			break
		}
	}
	if path == "" {
		ts.Fatalf("pty: %s not found in $PATH", args[0])
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "SLURM_LITE_CONF=" + ts.Getenv("SLURM_LITE_CONF"),
		"HOME=" + ts.Getenv("HOME"), "TERM=dumb"}
	text, err := runOnPty(cmd)
	fmt.Fprint(ts.Stdout(), text)
	ts.Logf("[pty %s] %v\n%s", strings.Join(args, " "), err, text)
	var ee *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &ee):
		ts.Fatalf("pty: %v", err)
	case err != nil && !neg:
		ts.Fatalf("pty %s: %v", strings.Join(args, " "), err)
	case err == nil && neg:
		ts.Fatalf("pty %s: unexpected success", strings.Join(args, " "))
	}
}

// runOnPty runs cmd with its stdin, stdout and stderr on a new
// pseudo-terminal, in a session of its own with the terminal as its
// controlling one (as a login shell's child), and returns what the
// terminal showed, its \r\n as \n, and how cmd ended.
func runOnPty(cmd *exec.Cmd) (string, error) {
	master, slave, err := openPty()
	if err != nil {
		return "", err
	}
	defer master.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		slave.Close()
		return "", err
	}
	slave.Close() // the child holds it; reads end (EIO) once it is gone
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := master.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), cmd.Wait()
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// openPty opens a new pseudo-terminal pair as posix_openpt, unlockpt and
// ptsname do: /dev/ptmx, TIOCSPTLCK to unlock, TIOCGPTN for its number.
func openPty() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, fmt.Errorf("unlocking the pseudo-terminal: %w", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		return nil, nil, fmt.Errorf("asking the pseudo-terminal's number: %w", e)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("opening the pseudo-terminal: %w", err)
	}
	return master, slave, nil
}
