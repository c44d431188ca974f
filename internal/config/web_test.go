package config

import "testing"

func TestWebSettings(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"an address without a port", lines(`[Web]`, `Listen = "127.0.0.1"`),
			`slurm-lite.toml:2: Web.Listen "127.0.0.1" has no port; write HOST:PORT, such as "127.0.0.1:9341"`},
		{"a port out of range", lines(`[Web]`, `Listen = "127.0.0.1:70000"`),
			`slurm-lite.toml:2: Web.Listen "127.0.0.1:70000" has no port number from 0 to 65535; write HOST:PORT, such as "127.0.0.1:9341"`},
		{"a port that is a name", lines(`[Web]`, `Listen = "localhost:http"`),
			`slurm-lite.toml:2: Web.Listen "localhost:http" has no port number from 0 to 65535; write HOST:PORT, such as "127.0.0.1:9341"`},
		{"an IPv6 address without brackets", lines(`[Web]`, `Listen = "::1:9341"`),
			`slurm-lite.toml:2: Web.Listen "::1:9341" has a host that is neither a name nor an address (an IPv6 address goes in brackets: "[::1]:9341"); write HOST:PORT, such as "127.0.0.1:9341"`},
		{"a URL", lines(`[Web]`, `Listen = "http://127.0.0.1:9341"`),
			`slurm-lite.toml:2: Web.Listen "http://127.0.0.1:9341" is a URL (leave out the scheme); write HOST:PORT, such as "127.0.0.1:9341"`},
		{"a relative JobMappingDir", lines(`JobMappingDir = "run/map"`),
			`slurm-lite.toml:1: JobMappingDir "run/map" is not an absolute path; write a path that starts with /, such as "/run/dcgm-job-map"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("slurm-lite.toml", []byte(tc.file))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	for _, ok := range []string{"127.0.0.1:9341", ":9341", "[::1]:9341", "localhost:0", "gpu01.lab:8080"} {
		c, err := Parse("slurm-lite.toml", []byte(lines(`JobMappingDir = "/run/dcgm-job-map"`, `[Web]`, `Listen = "`+ok+`"`)))
		if err != nil || c.Web.Listen != ok || c.JobMappingDir != "/run/dcgm-job-map" {
			t.Errorf("Listen = %q: %v", ok, err)
		}
	}
	if c := Default(); c.Web.Listen != "" || c.JobMappingDir != "" {
		t.Errorf("the listener or the job mapping is on by default: %+v, %q", c.Web, c.JobMappingDir)
	}
}
