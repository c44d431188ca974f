package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
)

// Settings are the few settings sbatch reads from the configuration. The
// daemon leaves them, for the file it loaded, in a small file beside that
// file (SettingsPath), with what squeue, sacct and scancel read (View), so
// that a command does not parse the whole TOML file: for the example
// configuration the parse was half of sbatch's CPU time (docs/bench.md,
// "The fast paths").
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
const settingsMagic = "slurm-lite settings 2"

// SettingsPath is where the settings of the configuration file path are
// left: a hidden file beside it, so that only who can write the
// configuration's directory can write it.
func SettingsPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".settings")
}

// fileID is what identifies one version of a file's contents: a settings
// file is used only while the configuration's identity is the one it was
// written for, so an edit (or a replacement by rename) makes it stale.
// Written with strconv rather than fmt: every command computes it.
func fileID(st *syscall.Stat_t) string {
	b := make([]byte, 0, 96)
	b = strconv.AppendUint(b, st.Dev, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, st.Ino, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, ' ')
	b = appendStamp(b, st.Mtim)
	b = append(b, ' ')
	b = appendStamp(b, st.Ctim)
	return string(b)
}

// appendStamp appends t as seconds.nanoseconds, the nanoseconds in nine
// digits.
func appendStamp(b []byte, t syscall.Timespec) []byte {
	b = strconv.AppendInt(b, t.Sec, 10)
	b = append(b, '.')
	ns := strconv.AppendInt(nil, t.Nsec, 10)
	for range 9 - len(ns) {
		b = append(b, '0')
	}
	return append(b, ns...)
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

// WriteSettings leaves v, parsed from the configuration file whose identity
// was id before it was read, in SettingsPath(path): written to a temporary
// file and renamed into place, with the configuration's read permissions
// (a user who cannot read the configuration cannot read its settings), and
// never through a symbolic link. The caller has checked that the file is
// unchanged since id (StatConfig before and after the parse).
func WriteSettings(path string, id syscall.Stat_t, v *View) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nConfigFile %s\nSocketPath %s\nMessageTimeout %d\nMaxScriptSize %d\nMaxArraySize %d\n",
		settingsMagic, fileID(&id), strconv.Quote(v.SocketPath), int64(v.MessageTimeout), v.MaxScriptSize, v.MaxArraySize)
	fmt.Fprintf(&b, "ClusterName %s\nTRESBillingWeights %s\n", strconv.Quote(v.ClusterName), quoteWeights(v.TRESBillingWeights))
	for _, p := range v.Partitions {
		fmt.Fprintf(&b, "Partition %s %t %d %s\n", strconv.Quote(p.Name), p.Hidden, int64(p.DefaultLimit), quoteWeights(p.TRESBillingWeights))
	}
	for _, t := range v.SimulatedGPUTypes {
		fmt.Fprintf(&b, "SimulatedGPUType %s\n", strconv.Quote(t))
	}
	for _, a := range v.Accounts {
		b.WriteString("Account " + strconv.Quote(a.Name))
		for _, u := range a.Users {
			b.WriteString(" " + strconv.Quote(u))
		}
		b.WriteString("\n")
	}
	for _, u := range v.Users {
		fmt.Fprintf(&b, "User %s\n", strconv.Quote(u))
	}
	// The last line: a file without it was cut short.
	b.WriteString("End\n")
	if b.Len() > maxSettingsSize {
		return fmt.Errorf("writing the commands' settings: %d bytes, more than the %d a command reads", b.Len(), maxSettingsSize)
	}
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

// maxSettingsSize bounds the settings file a command reads (and so the
// daemon writes): a lab's accounts and users fit many times over.
const maxSettingsSize = 256 << 10

// quoteWeights writes weights as one quoted word: name=value pairs by
// name, the values in the fewest digits that read back exactly.
func quoteWeights(w TRESWeights) string {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendFloat(b, w[k], 'g', -1, 64)
	}
	return strconv.Quote(string(b))
}

// parseWeights reads quoteWeights' text, unquoted.
func parseWeights(s string) (TRESWeights, error) {
	w := TRESWeights{}
	for s != "" {
		var pair string
		pair, s, _ = strings.Cut(s, ",")
		k, val, ok := strings.Cut(pair, "=")
		f, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil {
			return nil, errStale
		}
		w[k] = f
	}
	return w, nil
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
func readSettings(path string) (*View, error) {
	var cst syscall.Stat_t
	if syscall.Stat(path, &cst) != nil || syscall.Access(path, 4 /* R_OK */) != nil {
		return nil, errStale
	}
	// Read without os.File: sbatch reads this file on every submission,
	// and os.Open would start the runtime's poller (cmdio.RawFile).
	f, err := cmdio.OpenRaw(SettingsPath(path), syscall.O_NOFOLLOW)
	if err != nil {
		return nil, errStale
	}
	defer f.Close()
	sst, err := f.Stat()
	if err != nil || sst.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		sst.Mode&0o022 != 0 || (sst.Uid != 0 && sst.Uid != cst.Uid) || sst.Size > maxSettingsSize {
		return nil, errStale
	}
	// One byte more than the file's size: a file that grew since is read
	// no further, and fails to parse (its End line is not last).
	buf := make([]byte, sst.Size+1)
	n, _ := io.ReadFull(f, buf)
	return parseSettings(buf[:n], fileID(&cst))
}

// parseSettings reads WriteSettings' layout, for a configuration whose
// identity is now id.
func parseSettings(data []byte, id string) (*View, error) {
	text := string(data)
	v := &View{}
	const singles = 7 // ConfigFile ... TRESBillingWeights, once each
	seen, end := 0, false
	for line := 0; text != ""; line++ {
		var l string
		var ok bool
		if l, text, ok = strings.Cut(text, "\n"); !ok || end {
			return nil, errStale // the last line is End, with its newline
		}
		if line == 0 {
			if l != settingsMagic {
				return nil, errStale
			}
			continue
		}
		key, val, _ := strings.Cut(l, " ")
		var err error
		switch key {
		case "ConfigFile":
			if val != id {
				return nil, errStale
			}
			seen++
		case "SocketPath":
			v.SocketPath, err = strconv.Unquote(val)
			seen++
		case "MessageTimeout":
			var ns int64
			ns, err = strconv.ParseInt(val, 10, 64)
			v.MessageTimeout = time.Duration(ns)
			seen++
		case "MaxScriptSize":
			v.MaxScriptSize, err = strconv.Atoi(val)
			seen++
		case "MaxArraySize":
			v.MaxArraySize, err = strconv.Atoi(val)
			seen++
		case "ClusterName":
			v.ClusterName, err = strconv.Unquote(val)
			seen++
		case "TRESBillingWeights":
			v.TRESBillingWeights, err = unquoteWeights(val)
			seen++
		case "Partition":
			err = v.parsePartition(val)
		case "SimulatedGPUType":
			var t string
			t, err = strconv.Unquote(val)
			v.SimulatedGPUTypes = append(v.SimulatedGPUTypes, t)
		case "Account":
			var words []string
			words, err = unquoteAll(val)
			if err == nil && len(words) > 0 {
				v.Accounts = append(v.Accounts, AccountView{Name: words[0], Users: words[1:]})
			} else if err == nil {
				err = errStale
			}
		case "User":
			var u string
			u, err = strconv.Unquote(val)
			v.Users = append(v.Users, u)
		case "End":
			end = val == ""
			if !end {
				return nil, errStale
			}
		default:
			return nil, errStale
		}
		if err != nil {
			return nil, errStale
		}
	}
	if seen != singles || !end {
		return nil, errStale
	}
	return v, nil
}

// parsePartition reads a Partition line's value: name, hidden, the
// default limit in nanoseconds, weights.
func (v *View) parsePartition(val string) error {
	name, rest, err := unquoteFirst(val)
	if err != nil {
		return err
	}
	fields := strings.SplitN(rest, " ", 3)
	if len(fields) != 3 {
		return errStale
	}
	p := PartitionView{Name: name}
	if p.Hidden, err = strconv.ParseBool(fields[0]); err != nil {
		return err
	}
	ns, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return err
	}
	p.DefaultLimit = time.Duration(ns)
	if p.TRESBillingWeights, err = unquoteWeights(fields[2]); err != nil {
		return err
	}
	v.Partitions = append(v.Partitions, p)
	return nil
}

// unquoteWeights reads quoteWeights' word.
func unquoteWeights(q string) (TRESWeights, error) {
	s, err := strconv.Unquote(q)
	if err != nil {
		return nil, err
	}
	return parseWeights(s)
}

// unquoteFirst reads the quoted word that s starts with, and returns what
// follows its separating space.
func unquoteFirst(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	word, err := strconv.Unquote(q)
	if err != nil {
		return "", "", err
	}
	rest := s[len(q):]
	if rest != "" {
		if rest[0] != ' ' {
			return "", "", errStale
		}
		rest = rest[1:]
	}
	return word, rest, nil
}

// unquoteAll reads space-separated quoted words.
func unquoteAll(s string) ([]string, error) {
	var out []string
	for s != "" {
		w, rest, err := unquoteFirst(s)
		if err != nil {
			return nil, err
		}
		out, s = append(out, w), rest
	}
	return out, nil
}

// FindSettings is Find for a command that needs only Settings: from the
// daemon's settings file where it is the located configuration's (see
// readSettings), else from the configuration itself, so that what it
// returns, errors included, is what Find would give.
func FindSettings() (Settings, string, error) {
	v, path, err := FindView()
	if err != nil {
		return Settings{}, path, err
	}
	return v.Settings, path, nil
}

// FindView is FindSettings for a command that needs the View.
func FindView() (*View, string, error) {
	path, err := Locate("", os.Getenv, fileExists)
	if err != nil {
		return nil, "", err
	}
	if path != "" {
		if v, err := readSettings(path); err == nil {
			return v, path, nil
		}
	}
	c, err := Load(path)
	if err != nil {
		return nil, path, err
	}
	return ViewOf(c), path, nil
}
