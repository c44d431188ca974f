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
		{"an allowed host with a port", lines(`[Web]`, `Listen = "0.0.0.0:9341"`, `AllowedHosts = ["gpubox.lab.example", "gpubox:9341"]`),
			`slurm-lite.toml:3: Web.AllowedHosts "gpubox:9341" has a port (leave it out: every port of the name is allowed); write a name or an address as a browser's address bar shows it, such as "gpubox.lab.example" or "192.0.2.7"`},
		{"an allowed host that is a URL", lines(`[Web]`, `AllowedHosts = ["http://gpubox"]`),
			`slurm-lite.toml:2: Web.AllowedHosts "http://gpubox" is a URL (leave out the scheme); write a name or an address as a browser's address bar shows it, such as "gpubox.lab.example" or "192.0.2.7"`},
		{"an allowed host that is a pattern", lines(`[Web]`, `AllowedHosts = ["*"]`),
			`slurm-lite.toml:2: Web.AllowedHosts "*" is a pattern: name each host (a wildcard would let any site's page read the dashboard); write a name or an address as a browser's address bar shows it, such as "gpubox.lab.example" or "192.0.2.7"`},
		{"an empty allowed host", lines(`[Web]`, `AllowedHosts = [""]`),
			`slurm-lite.toml:2: Web.AllowedHosts "" is empty; write a name or an address as a browser's address bar shows it, such as "gpubox.lab.example" or "192.0.2.7"`},
		{"an allowed host with a path", lines(`[Web]`, `AllowedHosts = ["gpubox/dash"]`),
			`slurm-lite.toml:2: Web.AllowedHosts "gpubox/dash" is not a host name (leave out paths, users and spaces); write a name or an address as a browser's address bar shows it, such as "gpubox.lab.example" or "192.0.2.7"`},
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
	hosts := []string{"gpubox.lab.example", "GPUBOX", "gpubox.", "192.0.2.7", "2001:db8::7", "[2001:db8::7]", "my_box"}
	c, err := Parse("slurm-lite.toml", []byte(lines(`[Web]`, `Listen = "0.0.0.0:9341"`,
		`AllowedHosts = ["gpubox.lab.example", "GPUBOX", "gpubox.", "192.0.2.7", "2001:db8::7", "[2001:db8::7]", "my_box"]`)))
	if err != nil || len(c.Web.AllowedHosts) != len(hosts) {
		t.Errorf("AllowedHosts = %q: %v, %+v", hosts, err, c.Web)
	}
	if c := Default(); c.Web.Listen != "" || c.JobMappingDir != "" || c.Web.AllowedHosts != nil {
		t.Errorf("the listener or the job mapping is on by default: %+v, %q", c.Web, c.JobMappingDir)
	}
}
