package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

func TestLocate(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		files   []string
		want    string
		wantErr string
	}{
		{
			name:  "-f wins over the environment and the default path",
			flag:  "/srv/a.toml",
			env:   map[string]string{"SLURM_LITE_CONF": "/srv/b.toml"},
			files: []string{"/srv/a.toml", "/srv/b.toml", DefaultPath},
			want:  "/srv/a.toml",
		},
		{
			name:  "$SLURM_LITE_CONF wins over the default path",
			env:   map[string]string{"SLURM_LITE_CONF": "/srv/b.toml"},
			files: []string{"/srv/b.toml", DefaultPath},
			want:  "/srv/b.toml",
		},
		{
			name:  "the default path when it exists",
			files: []string{DefaultPath},
			want:  DefaultPath,
		},
		{
			name: "no file at all means the built-in defaults",
			want: "",
		},
		{
			name:  "real Slurm's $SLURM_CONF is never read",
			env:   map[string]string{"SLURM_CONF": "/etc/slurm/slurm.conf"},
			files: []string{"/etc/slurm/slurm.conf"},
			want:  "",
		},
		{
			name:    "a file named by -f must exist",
			flag:    "/srv/missing.toml",
			files:   []string{DefaultPath},
			wantErr: `configuration file "/srv/missing.toml" (from -f) does not exist; create it or leave out -f to use /etc/slurm-lite/slurm-lite.toml or the built-in defaults`,
		},
		{
			name:    "a file named by the environment must exist",
			env:     map[string]string{"SLURM_LITE_CONF": "/srv/missing.toml"},
			files:   []string{DefaultPath},
			wantErr: `configuration file "/srv/missing.toml" (from $SLURM_LITE_CONF) does not exist; create it or unset SLURM_LITE_CONF`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(p string) bool {
				for _, f := range tt.files {
					if f == p {
						return true
					}
				}
				return false
			}
			getenv := func(k string) string { return tt.env[k] }
			got, err := Locate(tt.flag, getenv, exists)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(good, []byte("ClusterName = \"box\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("ClusterName = \"box\"\nKillWait = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr string
	}{
		{"no path is the defaults", "", "lab", ""},
		{"a file is parsed", good, "box", ""},
		{"errors name the file as given", bad, "", bad + `:2: KillWait must be a whole number of seconds, not the string "x"`},
		{"an unreadable file", filepath.Join(dir, "none.toml"), "", "reading configuration: open " + filepath.Join(dir, "none.toml") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.path)
			got, gotErr := "", ""
			if err != nil {
				gotErr = err.Error()
			} else {
				got = c.ClusterName
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ClusterName (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    slurmsyntax.Bytes
		wantErr string
	}{
		{"a real meminfo", "MemTotal:       263842100 kB\nMemFree:        1000 kB\n", 263842100 * slurmsyntax.KiB, ""},
		{"MemTotal not first", "Foo: 1 kB\nMemTotal: 2048 kB\n", 2 * slurmsyntax.MiB, ""},
		{"no MemTotal", "MemFree: 1 kB\n", 0, "no MemTotal line"},
		{"a unit other than kB", "MemTotal: 5 MB\n", 0, `unexpected MemTotal line "MemTotal: 5 MB"`},
		{"not a number", "MemTotal: x kB\n", 0, `unexpected MemTotal line "MemTotal: x kB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMeminfo([]byte(tt.in))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("MemTotal = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDetectHostFindsThisMachine(t *testing.T) {
	h, err := DetectHost()
	if err != nil {
		t.Skipf("cannot detect this host: %v", err)
	}
	if h.Name == "" || h.CPUs < 1 || h.Memory < slurmsyntax.MiB {
		t.Errorf("DetectHost() = %+v, want a name, CPUs and memory", h)
	}
	for _, r := range h.Name {
		if r == '.' {
			t.Errorf("DetectHost().Name = %q, want the short host name", h.Name)
		}
	}
}
