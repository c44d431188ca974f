package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Settings are the few settings sbatch reads from the configuration. The
// daemon leaves them, for the file it loaded, in a small file beside that
// file (SettingsPath), so that a submission does not parse the whole TOML
// file: for the example configuration the parse was half of sbatch's CPU
// time (docs/bench.md, "The fast paths").
type Settings struct {
	SocketPath     string
	MessageTimeout time.Duration
	// MaxScriptSize is the limit in force (SchedulerParameters.MaxScript).
	MaxScriptSize int
	MaxArraySize  int
}

// SettingsOf is what c gives a command that needs only Settings.
func SettingsOf(c *Config) Settings {
	return Settings{
		SocketPath:     c.SocketPath,
		MessageTimeout: c.MessageTimeout,
		MaxScriptSize:  c.SchedulerParameters.MaxScript(),
		MaxArraySize:   c.MaxArraySize,
	}
}

// settingsMagic opens the settings file; a new layout gets a new number,
// and a file of another is ignored (the full parse is always right).
const settingsMagic = "slurm-lite settings 1"

// SettingsPath is where the settings of the configuration file path are
// left: a hidden file beside it, so that only who can write the
// configuration's directory can write it.
func SettingsPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".settings")
}

// fileID is what identifies one version of a file's contents: a settings
// file is used only while the configuration's identity is the one it was
// written for, so an edit (or a replacement by rename) makes it stale.
func fileID(st *syscall.Stat_t) string {
	return fmt.Sprintf("%d %d %d %d.%09d %d.%09d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// StatConfig returns the identity of the configuration file at path as
// WriteSettings wants it.
func StatConfig(path string) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	err := syscall.Stat(path, &st)
	return st, err
}

// SameConfig says whether two StatConfig answers are the same version of
// the file (its access time aside, which reading it may change).
func SameConfig(a, b syscall.Stat_t) bool { return fileID(&a) == fileID(&b) }

// WriteSettings leaves s, parsed from the configuration file whose identity
// was id before it was read, in SettingsPath(path): written to a temporary
// file and renamed into place, with the configuration's read permissions
// (a user who cannot read the configuration cannot read its settings), and
// never through a symbolic link. The caller has checked that the file is
// unchanged since id (StatConfig before and after the parse).
func WriteSettings(path string, id syscall.Stat_t, s Settings) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nConfigFile %s\nSocketPath %s\nMessageTimeout %d\nMaxScriptSize %d\nMaxArraySize %d\n",
		settingsMagic, fileID(&id), strconv.Quote(s.SocketPath), int64(s.MessageTimeout), s.MaxScriptSize, s.MaxArraySize)
	dst := SettingsPath(path)
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	mode := os.FileMode(id.Mode) & 0o644
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("writing the commands' settings: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		// The umask must not widen nor narrow what the configuration allows.
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the commands' settings: %w", err)
	}
	return nil
}

// errStale says the settings file is not to be used; the caller parses the
// configuration instead.
var errStale = errors.New("no usable settings file")

// readSettings reads the settings that the daemon left for the
// configuration file at path, if they are still the file's: the settings
// file must be a regular file (not followed through a link) owned by root
// or by the configuration's owner, writable by no one else, and written for
// the configuration's present identity; and the caller must be able to
// read the configuration itself. Anything else is errStale.
func readSettings(path string) (Settings, error) {
	var cst syscall.Stat_t
	if syscall.Stat(path, &cst) != nil || syscall.Access(path, 4 /* R_OK */) != nil {
		return Settings{}, errStale
	}
	f, err := os.OpenFile(SettingsPath(path), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Settings{}, errStale
	}
	defer f.Close()
	var sst syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &sst) != nil || sst.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		sst.Mode&0o022 != 0 || (sst.Uid != 0 && sst.Uid != cst.Uid) || sst.Size > 64<<10 {
		return Settings{}, errStale
	}
	var buf [4096]byte
	n, _ := f.Read(buf[:])
	return parseSettings(buf[:n], fileID(&cst))
}

// parseSettings reads WriteSettings' layout, for a configuration whose
// identity is now id.
func parseSettings(data []byte, id string) (Settings, error) {
	var s Settings
	sc := bufio.NewScanner(bytes.NewReader(data))
	seen := 0
	for line := 0; sc.Scan(); line++ {
		text := sc.Text()
		if line == 0 {
			if text != settingsMagic {
				return s, errStale
			}
			continue
		}
		key, val, _ := strings.Cut(text, " ")
		var err error
		switch key {
		case "ConfigFile":
			if val != id {
				return s, errStale
			}
		case "SocketPath":
			s.SocketPath, err = strconv.Unquote(val)
		case "MessageTimeout":
			var ns int64
			ns, err = strconv.ParseInt(val, 10, 64)
			s.MessageTimeout = time.Duration(ns)
		case "MaxScriptSize":
			s.MaxScriptSize, err = strconv.Atoi(val)
		case "MaxArraySize":
			s.MaxArraySize, err = strconv.Atoi(val)
		default:
			return s, errStale
		}
		if err != nil {
			return s, errStale
		}
		seen++
	}
	if seen != 5 {
		return s, errStale
	}
	return s, nil
}

// FindSettings is Find for a command that needs only Settings: from the
// daemon's settings file where it is the located configuration's (see
// readSettings), else from the configuration itself, so that what it
// returns, errors included, is what Find would give.
func FindSettings() (Settings, string, error) {
	path, err := Locate("", os.Getenv, fileExists)
	if err != nil {
		return Settings{}, "", err
	}
	if path != "" {
		if s, err := readSettings(path); err == nil {
			return s, path, nil
		}
	}
	c, err := Load(path)
	if err != nil {
		return Settings{}, path, err
	}
	return SettingsOf(c), path, nil
}
