package slurmrest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Tokens are Slurm's auth/jwt tokens: HS256 JSON web tokens whose claims
// are exp, iat and sun (the user name), signed with the key in the
// jwt_key file (AuthAltParameters), as auth_p_token_generate makes them.

// DefaultLifespan is scontrol token's lifespan when none is given (1800 s,
// as slurmctld's _slurm_rpc_auth_token).
const DefaultLifespan = 1800 * time.Second

// KeyFile is the default key's name in the state directory, as Slurm's
// auth/jwt looks for it in StateSaveLocation.
const KeyFile = "jwt_hs256.key"

var b64 = base64.RawURLEncoding

// header is what auth/jwt (libjwt) writes: {"alg":"HS256","typ":"JWT"}.
var header = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// claims are the token's: Slurm's keys in libjwt's (sorted) order.
type claims struct {
	Exp int64  `json:"exp"`
	Iat int64  `json:"iat"`
	Sun string `json:"sun"`
	// Username is the claim Slurm reads when sun is absent.
	Username string `json:"username,omitempty"`
}

// Mint is a token for user, valid for lifespan from now, signed with key.
func Mint(key []byte, user string, lifespan time.Duration, now time.Time) string {
	c, _ := json.Marshal(claims{Exp: now.Add(lifespan).Unix(), Iat: now.Unix(), Sun: user})
	signed := header + "." + b64.EncodeToString(c)
	return signed + "." + b64.EncodeToString(sign(key, signed))
}

func sign(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Errors of Verify, as auth/jwt's log names them.
var (
	ErrForged  = errors.New("token signature does not verify (forged, or signed with another key)")
	ErrExpired = errors.New("token expired")
	ErrBadForm = errors.New("not a JSON web token")
)

// Verify checks token's HS256 signature with key and its expiry against
// now, and returns the user it names (sun, else username).
func Verify(key []byte, token string, now time.Time) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", ErrBadForm
	}
	var h struct {
		Alg string `json:"alg"`
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &h) != nil {
		return "", ErrBadForm
	}
	if !strings.EqualFold(h.Alg, "HS256") {
		// Slurm verifies RS256 only with a jwks file, which slurm-lite
		// does not take: such a token cannot be verified here.
		return "", fmt.Errorf("no support for alg=%s: %w", h.Alg, ErrForged)
	}
	sig, err := b64.DecodeString(strings.TrimRight(parts[2], "="))
	if err != nil {
		return "", ErrBadForm
	}
	if !hmac.Equal(sig, sign(key, parts[0]+"."+parts[1])) {
		return "", ErrForged
	}
	var c claims
	cb, err := b64.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil || json.Unmarshal(cb, &c) != nil {
		return "", ErrBadForm
	}
	if c.Exp < now.Unix() {
		return "", ErrExpired
	}
	user := c.Sun
	if user == "" {
		user = c.Username
	}
	if user == "" {
		return "", fmt.Errorf("token names no user (no sun claim): %w", ErrBadForm)
	}
	return user, nil
}

// LoadKey reads the key file; when create is set and it does not exist,
// it is made first: 32 random bytes, mode 0600 (the default key in the
// state directory, made at the daemon's first start). A key file that
// others may read or write is refused: anyone who reads it can mint a
// token for root.
func LoadKey(path string, create bool) ([]byte, error) {
	if create {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			key := make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return nil, fmt.Errorf("making the JWT key %s: %w", path, err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("making the JWT key %s: %w", path, err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, fmt.Errorf("making the JWT key %s: %w", path, err)
			}
			_, err = f.Write(key)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("writing the JWT key %s: %w", path, err)
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("AuthAltParameters jwt_key %s: %w; make one with: dd if=/dev/random of=%s bs=32 count=1 && chmod 600 %s", path, err, path, path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("AuthAltParameters jwt_key %s has mode %04o: whoever reads it can mint a token for any user; run: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the JWT key %s: %w", path, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("AuthAltParameters jwt_key %s is empty; write 32 random bytes to it: dd if=/dev/random of=%s bs=32 count=1", path, path)
	}
	return key, nil
}
