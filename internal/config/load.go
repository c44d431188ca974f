package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// EnvVar names the configuration file for the daemon and for every
// command (and is set in every job). Real Slurm's $SLURM_CONF is never
// read: it names a slurm.conf.
const EnvVar = "SLURM_LITE_CONF"

// DefaultPath is where the file is looked for when neither -f nor EnvVar
// names one.
const DefaultPath = "/etc/slurm-lite/slurm-lite.toml"

// Locate finds the configuration file: flagPath (slurmd-lite -f FILE), else
// $SLURM_LITE_CONF, else DefaultPath if it exists. It returns "" when there
// is no file, meaning the built-in defaults. A file named by -f or the
// environment must exist.
func Locate(flagPath string, getenv func(string) string, exists func(string) bool) (string, error) {
	if flagPath != "" {
		if !exists(flagPath) {
			return "", fmt.Errorf("configuration file %q (from -f) does not exist; create it or leave out -f to use %s or the built-in defaults", flagPath, DefaultPath)
		}
		return flagPath, nil
	}
	if env := getenv(EnvVar); env != "" {
		if !exists(env) {
			return "", fmt.Errorf("configuration file %q (from $%s) does not exist; create it or unset %s", env, EnvVar, EnvVar)
		}
		return env, nil
	}
	if exists(DefaultPath) {
		return DefaultPath, nil
	}
	return "", nil
}

// Load reads and parses the file at path; "" gives Default().
func Load(path string) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	return Parse(path, data)
}

// Find locates and loads the configuration as the daemon and the commands
// do, returning it with the path it came from ("" for the defaults).
func Find(flagPath string) (*Config, string, error) {
	path, err := Locate(flagPath, os.Getenv, fileExists)
	if err != nil {
		return nil, "", err
	}
	c, err := Load(path)
	return c, path, err
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Parse parses a configuration file's contents over the defaults. name is
// used in error messages. The error, if any, is an Errors listing every
// problem with its line.
func Parse(name string, data []byte) (*Config, error) {
	c, p := parse(name, data)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return c, nil
}

// parse is Parse, also returning the parser: what the file gave, and where.
func parse(name string, data []byte) (*Config, *parser) {
	p := &parser{file: name, given: map[string]bool{}}
	var raw map[string]any
	if _, err := toml.Decode(withoutCommentLines(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.errs = Errors{{File: name, Line: pe.Position.Line, Msg: "TOML syntax: " + pe.Message}}
		} else {
			p.errs = Errors{{File: name, Msg: err.Error()}}
		}
		return nil, p
	}
	p.lines = indexLines(string(data))
	c := Default()
	p.table(nil, where{}, raw, reflect.ValueOf(c).Elem())
	if c.QOSByName(DefaultQOS) == nil {
		// Slurm always has "normal"; a file's [[QOS]] list adds to it.
		q := QOS{Name: DefaultQOS}
		q.setDefaults()
		c.QOS = append(c.QOS, q)
	}
	p.check(c)
	if len(p.errs) > 0 {
		sortErrors(p.errs)
		return nil, p
	}
	p.resolve(c)
	return c, p
}

// withoutCommentLines is data with each line that is only a comment made
// empty, for the TOML parser: it lexes every comment into a token of its
// own, and the example configuration is four fifths comments, so this
// halves the parse that every command makes (docs/bench.md, "The fast
// paths"). Line numbers stay as they are, for the parser's errors. What
// the parser would refuse in a comment (a control character, invalid
// UTF-8) is left for it to refuse, and a file with a multi-line string,
// where a line starting with # may be the string's, is left whole.
func withoutCommentLines(data []byte) string {
	if bytes.Contains(data, []byte(`"""`)) || bytes.Contains(data, []byte("'''")) {
		return string(data)
	}
	out := make([]byte, 0, len(data))
	for rest := data; len(rest) > 0; {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		rest = after
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' && plainComment(t) {
			line = nil
		}
		out = append(out, line...)
		if found {
			out = append(out, '\n')
		}
	}
	return string(out)
}

// plainComment says a comment has nothing the TOML parser refuses in one.
func plainComment(c []byte) bool {
	for _, b := range c {
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return utf8.Valid(c)
}

// Host is what the daemon learns about the machine it runs on.
type Host struct {
	// Name is the short host name (up to the first dot), as Slurm's
	// NodeName usually is.
	Name   string
	CPUs   int
	Memory slurmsyntax.Bytes
}

// DetectHost reads the host name, the CPU count and the memory size
// (MemTotal of /proc/meminfo). It returns what it found along with the
// first error.
func DetectHost() (Host, error) {
	h := Host{CPUs: runtime.NumCPU()}
	name, err := os.Hostname()
	h.Name, _, _ = strings.Cut(name, ".")
	if err != nil {
		return h, fmt.Errorf("detecting host name: %w", err)
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return h, fmt.Errorf("detecting memory: %w", err)
	}
	h.Memory, err = parseMeminfo(data)
	if err != nil {
		return h, fmt.Errorf("detecting memory: /proc/meminfo: %w", err)
	}
	return h, nil
}

// parseMeminfo returns MemTotal from /proc/meminfo ("MemTotal: 263842100 kB").
func parseMeminfo(data []byte) (slurmsyntax.Bytes, error) {
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected MemTotal line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0, fmt.Errorf("unexpected MemTotal line %q", line)
		}
		return slurmsyntax.Bytes(kb) * slurmsyntax.KiB, nil
	}
	return 0, errors.New("no MemTotal line")
}

// ApplyHost fills the node's NodeName, CPUs and RealMemory from the host
// where the file left them out.
func (c *Config) ApplyHost(h Host) {
	if c.Node.NodeName == "" {
		c.Node.NodeName = h.Name
	}
	if c.Node.CPUs == 0 {
		c.Node.CPUs = h.CPUs
	}
	if c.Node.RealMemory == 0 {
		c.Node.RealMemory = h.Memory
	}
}

// NoDaemonAdvice is what a command adds when no daemon answers at the
// socket of the configuration it found (path, as Find returns it; env is
// $SLURM_LITE_CONF): what it tried, then the fix for a user and, apart,
// for an administrator. A user who forgot SLURM_LITE_CONF must not be told
// to start a daemon of the box's defaults, which only root can.
func NoDaemonAdvice(path, env string) string {
	var tried, user, admin string
	switch {
	case env != "" && path == env:
		tried = fmt.Sprintf("tried: $%s=%s, whose SocketPath that is", EnvVar, path)
		user = fmt.Sprintf("a user: if the file is your own daemon's, start it with: slurmd-lite; for the lab's daemon, unset %s (or set it to the lab's file)", EnvVar)
		admin = fmt.Sprintf("an administrator: start the daemon of that file as root: slurmd-lite -f %s", path)
	case path != "":
		tried = fmt.Sprintf("tried: $%s (not set), then %s, whose SocketPath that is", EnvVar, path)
		user = fmt.Sprintf("a user: ask the administrator to start the lab's daemon; to run one of your own, write a file with a SocketPath and StateSaveLocation of yours and export %s=FILE (README, \"The first hour\")", EnvVar)
		admin = "an administrator: start it as root: systemctl start slurmd-lite (or: slurmd-lite -D)"
	default:
		tried = fmt.Sprintf("tried: $%s (not set), then %s (does not exist), so the built-in SocketPath", EnvVar, DefaultPath)
		user = fmt.Sprintf("a user: export %s=FILE, the lab's configuration file (ask the administrator), or a file of your own to run your own daemon (README, \"The first hour\")", EnvVar)
		admin = fmt.Sprintf("an administrator: install the configuration as %s, then start the daemon as root: systemctl start slurmd-lite (or: slurmd-lite -D)", DefaultPath)
	}
	return "  " + tried + "\n  " + user + "\n  " + admin
}
