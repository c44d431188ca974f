package slurmrest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A token as slurmctld 22.05 minted it for root, lifespan 3600, at
// 1796622029 (recorded with scripts/record-rest's cluster): its header and
// claims, byte for byte (the signature is the recorded cluster's key's).
const slurmHeader, slurmClaims = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJleHAiOjE3OTY2MjU2MjksImlhdCI6MTc5NjYyMjAyOSwic3VuIjoicm9vdCJ9"

func TestMintIsSlurms(t *testing.T) {
	tok := Mint([]byte("k"), "root", time.Hour, time.Unix(1796622029, 0))
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != slurmHeader || parts[1] != slurmClaims {
		t.Errorf("Mint = %s\nwant %s.%s.SIG", tok, slurmHeader, slurmClaims)
	}
}

func TestVerify(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1796622029, 0)
	good := Mint(key, "alice", time.Minute, now)
	b64 := base64.RawURLEncoding.EncodeToString
	h, c, _ := strings.Cut(good, ".")
	c, _, _ = strings.Cut(c, ".")
	tests := []struct {
		name, token string
		at          time.Time
		user        string
		err         error
	}{
		{"a good token", good, now, "alice", nil},
		{"at its last second", good, now.Add(time.Minute), "alice", nil},
		{"expired", good, now.Add(time.Minute + time.Second), "", ErrExpired},
		{"signed with another key", Mint([]byte("other"), "alice", time.Minute, now), now, "", ErrForged},
		{"claims changed", h + "." + b64([]byte(`{"exp":1796622089,"iat":1796622029,"sun":"root"}`)) + "." + strings.Split(good, ".")[2], now, "", ErrForged},
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + c + ".", now, "", ErrForged},
		{"not a JWT", "abc", now, "", ErrBadForm},
		{"username, not sun", func() string {
			s := h + "." + b64([]byte(`{"exp":1796622089,"iat":1796622029,"username":"bob"}`))
			return s + "." + b64(sign(key, s))
		}(), now, "bob", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user, err := Verify(key, tt.token, tt.at)
			if user != tt.user || !errors.Is(err, tt.err) {
				t.Errorf("Verify = %q, %v; want %q, %v", user, err, tt.user, tt.err)
			}
		})
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state", KeyFile)
	if _, err := LoadKey(p, false); err == nil || !strings.Contains(err.Error(), "make one with: dd if=/dev/random of="+p) {
		t.Errorf("a missing configured key: %v", err)
	}
	k, err := LoadKey(p, true)
	if err != nil || len(k) != 32 {
		t.Fatalf("the default key made: %d bytes, %v", len(k), err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("made with mode %04o", fi.Mode().Perm())
	}
	again, err := LoadKey(p, true)
	if err != nil || string(again) != string(k) {
		t.Errorf("a second start made a new key: %v", err)
	}
	os.Chmod(p, 0o640)
	if _, err := LoadKey(p, true); err == nil || !strings.Contains(err.Error(), "has mode 0640") {
		t.Errorf("a key the group may read: %v", err)
	}
}

func TestJobArgs(t *testing.T) {
	env, args, err := jobArgs(map[string]json.RawMessage{
		"name": []byte(`"eval"`), "gres": []byte(`"gpu:1"`), "time_limit": []byte(`30`), "hold": []byte(`true`),
		"requeue": []byte(`false`), "environment": []byte(`{"PATH":"/bin"}`),
	})
	want := "--gres=gpu:1 --hold --job-name=eval --no-requeue --time=30"
	if err != nil || strings.Join(args, " ") != want || env["PATH"] != "/bin" {
		t.Errorf("jobArgs = %v %v %v; want %s", env, args, err, want)
	}
	if _, _, err := jobArgs(map[string]json.RawMessage{"prefer": []byte(`"x"`)}); err == nil || !strings.Contains(err.Error(), `job property "prefer" is not supported by slurm-lite; remove it`) {
		t.Errorf("an unknown property: %v", err)
	}
	for _, tt := range []struct {
		in   string
		want int
	}{{"KILL", 9}, {"SIGTERM", 15}, {"usr1", 10}, {"2", 2}, {"NOPE", 0}, {"0", 0}, {"99", 0}} {
		if got := signalNumber(tt.in); got != tt.want {
			t.Errorf("signalNumber(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
