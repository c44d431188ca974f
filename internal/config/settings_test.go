package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeConf writes a configuration and the daemon's settings for it, as
// the daemon does (identity before the parse), and returns its path.
func writeConf(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm-lite.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := StatConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSettings(path, id, ViewOf(c)); err != nil {
		t.Fatal(err)
	}
	return path
}

const settingsConf = `SocketPath = "/tmp/x y/\"s\".sock"
MessageTimeout = 33
MaxArraySize = 77

[SchedulerParameters]
max_script_size = 12345
`

func TestSettingsFileGivesWhatTheFileSays(t *testing.T) {
	path := writeConf(t, settingsConf)
	got, err := readSettings(path)
	if err != nil {
		t.Fatalf("readSettings: %v", err)
	}
	want := Settings{SocketPath: `/tmp/x y/"s".sock`, MessageTimeout: 33 * time.Second, MaxScriptSize: 12345, MaxArraySize: 77}
	if got.Settings != want {
		t.Fatalf("settings file gave %+v, want %+v", got.Settings, want)
	}
	c, _ := Load(path)
	if SettingsOf(c) != want {
		t.Fatalf("the parse gave %+v, want %+v", SettingsOf(c), want)
	}
	if fi, err := os.Lstat(SettingsPath(path)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("settings file: %v, mode %v; want 0644 like the configuration", err, fi.Mode().Perm())
	}
}

func TestFindSettingsUsesTheFileOnlyWhileItIsTheConfiguration(t *testing.T) {
	path := writeConf(t, settingsConf)
	t.Setenv(EnvVar, path)
	// A settings file that disagrees with the configuration shows which
	// one FindSettings read.
	forge := func() {
		data, err := os.ReadFile(SettingsPath(path))
		if err != nil {
			t.Fatal(err)
		}
		out := []byte{}
		for _, line := range splitLines(string(data)) {
			if len(line) > 11 && line[:11] == "SocketPath " {
				line = `SocketPath "/from/the/settings"`
			}
			out = append(out, line+"\n"...)
		}
		if err := os.WriteFile(SettingsPath(path), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forge()
	s, got, err := FindSettings()
	if err != nil || got != path || s.SocketPath != "/from/the/settings" {
		t.Fatalf("FindSettings = %+v, %q, %v; want the settings file's", s, got, err)
	}

	// Edited after the daemon read it: the settings are stale, and the
	// file's own values (or its errors) are what the command gets.
	if err := os.WriteFile(path, []byte("MaxArraySize = 5\n"+settingsConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FindSettings(); err == nil {
		t.Fatal("FindSettings read stale settings instead of reporting the edited file's duplicate key")
	}
	if err := os.WriteFile(path, []byte(`SocketPath = "/edited"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _, err := FindSettings(); err != nil || s.SocketPath != "/edited" {
		t.Fatalf("FindSettings after an edit = %+v, %v; want the file's SocketPath /edited", s, err)
	}
}

func TestSettingsFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, path string)
	}{
		{"group-writable", func(t *testing.T, path string) { os.Chmod(SettingsPath(path), 0o664) }},
		{"a symbolic link", func(t *testing.T, path string) {
			dst := SettingsPath(path)
			moved := dst + ".real"
			if err := os.Rename(dst, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, dst); err != nil {
				t.Fatal(err)
			}
		}},
		{"another layout", func(t *testing.T, path string) {
			os.WriteFile(SettingsPath(path), []byte("slurm-lite settings 0\n"), 0o644)
		}},
		{"a line missing", func(t *testing.T, path string) {
			data, _ := os.ReadFile(SettingsPath(path))
			lines := splitLines(string(data))
			out := ""
			for _, l := range lines[:len(lines)-1] {
				out += l + "\n"
			}
			os.WriteFile(SettingsPath(path), []byte(out), 0o644)
		}},
		{"an unknown line", func(t *testing.T, path string) {
			data, _ := os.ReadFile(SettingsPath(path))
			os.WriteFile(SettingsPath(path), append(data, "Other 1\n"...), 0o644)
		}},
		{"the configuration replaced", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			tmp := path + ".new"
			os.WriteFile(tmp, data, 0o644)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConf(t, settingsConf)
			tc.do(t, path)
			if s, err := readSettings(path); err == nil {
				t.Fatalf("readSettings used %+v", s)
			}
		})
	}
}

// A configuration its reader cannot read gives no settings either: the
// settings file has the configuration's read permissions, and is not read
// where the configuration cannot be.
func TestSettingsFollowTheConfigurationsPermissions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "private.toml")
	if err := os.WriteFile(path, []byte(settingsConf), 0o600); err != nil {
		t.Fatal(err)
	}
	id, _ := StatConfig(path)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSettings(path, id, ViewOf(c)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(SettingsPath(path))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings of a 0600 configuration: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
