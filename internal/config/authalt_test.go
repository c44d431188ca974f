package config

import "testing"

// AuthAltTypes and AuthAltParameters: auth/jwt alone, jwt_key alone, an
// absolute path, and a web listener to serve the API on.
func TestAuthAltSettings(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"another plugin", lines(`AuthAltTypes = ["auth/munge"]`, `[Web]`, `Listen = "127.0.0.1:6820"`),
			`slurm-lite.toml:1: AuthAltTypes "auth/munge" is not supported: slurm-lite has only "auth/jwt"; remove it`},
		{"no listener", lines(`AuthAltTypes = ["auth/jwt"]`),
			`slurm-lite.toml:1: AuthAltTypes = ["auth/jwt"] serves slurmrestd's API on the web listener, which is off; set [Web] Listen = "127.0.0.1:6820" (and put TLS in front of it to leave the machine)`},
		{"a jwks file", lines(`AuthAltTypes = ["auth/jwt"]`, `AuthAltParameters = "jwks=/etc/slurm/jwks.json"`, `[Web]`, `Listen = "127.0.0.1:6820"`),
			`slurm-lite.toml:2: AuthAltParameters "jwks=/etc/slurm/jwks.json" is not supported: slurm-lite takes only "jwt_key=PATH" (no jwks); write e.g. "jwt_key=/var/spool/slurm-lite/jwt_hs256.key"`},
		{"a relative key", lines(`AuthAltTypes = ["auth/jwt"]`, `AuthAltParameters = "jwt_key=jwt.key"`, `[Web]`, `Listen = "127.0.0.1:6820"`),
			`slurm-lite.toml:2: AuthAltParameters jwt_key "jwt.key" is not an absolute path; write a path that starts with /`},
		{"a key without auth/jwt", lines(`AuthAltParameters = "jwt_key=/etc/jwt.key"`),
			`slurm-lite.toml:1: AuthAltParameters is set but AuthAltTypes does not list "auth/jwt", so no token would be read; add AuthAltTypes = ["auth/jwt"] or remove it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("slurm-lite.toml", []byte(tc.file))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	c, err := Parse("slurm-lite.toml", []byte(lines(`AuthAltTypes = ["auth/jwt"]`, `StateSaveLocation = "/var/spool/x"`, `[Web]`, `Listen = "127.0.0.1:6820"`)))
	if err != nil {
		t.Fatal(err)
	}
	if p, def := c.JWTKey(); !c.JWT() || p != "/var/spool/x/jwt_hs256.key" || !def {
		t.Errorf("JWTKey() = %q %v, want the state directory's jwt_hs256.key", p, def)
	}
}
