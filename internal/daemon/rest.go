package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmrest"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// loadJWTKey reads AuthAltParameters' jwt_key when AuthAltTypes lists
// auth/jwt, making the default one (jwt_hs256.key in the state directory,
// 0600) at the first start.
func (d *Daemon) loadJWTKey(cfg *config.Config) error {
	if !cfg.JWT() {
		return nil
	}
	path, isDefault := cfg.JWTKey()
	key, err := slurmrest.LoadKey(path, isDefault)
	if err != nil {
		return err
	}
	d.jwtKey = key
	d.log.Info("auth/jwt on: scontrol token mints tokens; slurmrestd's API is on the web listener", "jwt_key", path)
	return nil
}

// token is scontrol token: a token for the caller, or for Username when
// root asks (Slurm's _slurm_rpc_auth_token lets only SlurmUser and root
// mint for others).
func (d *Daemon) token(ctx context.Context, req *localapi.Request[api.TokenRequest]) (api.Token, error) {
	if d.jwtKey == nil {
		return api.Token{}, &api.Error{Status: http.StatusBadRequest, Code: slurm.ErrAccessDenied,
			Message: `auth/jwt is not configured; the administrator sets AuthAltTypes = ["auth/jwt"] in slurm-lite.toml`}
	}
	name := req.Caller.User
	if u := req.Body.Username; u != "" && u != name {
		if req.Caller.UID != 0 {
			d.log.Info("token refused", "user", name, "for", u, "why", "only root may mint a token for another user")
			return api.Token{}, refusal(slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error())
		}
		// As slurmctld, root may mint for any name: the token is checked
		// against the user database when it is used.
		name = u
	}
	life := time.Duration(req.Body.Lifespan) * time.Second
	if life <= 0 {
		life = slurmrest.DefaultLifespan
	}
	d.log.Info("created token", "user", name, "lifespan", int64(life/time.Second), "by", req.Caller.User)
	return api.Token{Token: slurmrest.Mint(d.jwtKey, name, life, d.now())}, nil
}

// restBackend is the daemon as slurmrest needs it.
type restBackend struct{ d *Daemon }

func (b restBackend) Key() []byte    { return b.d.jwtKey }
func (b restBackend) Now() time.Time { return b.d.now() }

// Identity is what the socket API learns of a caller of user's uid: the
// same user database (NSS when built with cgo), the same groups.
func (b restBackend) Identity(name string) (localapi.Identity, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return localapi.Identity{}, fmt.Errorf("user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return localapi.Identity{}, fmt.Errorf("user %q has no numeric uid and gid", name)
	}
	if os.Geteuid() != 0 && uint32(uid) != uint32(os.Geteuid()) {
		// A private daemon serves its own user alone, on the web as on
		// the socket.
		return localapi.Identity{}, fmt.Errorf("this slurmd-lite serves only uid %d", os.Geteuid())
	}
	groups, err := localapi.SystemUsers{}.GroupIDs(u.Username, uint32(gid))
	if err != nil {
		return localapi.Identity{}, err
	}
	return localapi.Identity{UID: uint32(uid), GID: uint32(gid), User: u.Username, Groups: groups}, nil
}

// restStartWait is how long a REST request waits for a starting daemon.
const restStartWait = 30 * time.Second

func (b restBackend) Call(ctx context.Context, id localapi.Identity, method, path string, in, out any) error {
	srv := b.d.restSrv.Load()
	if srv == nil {
		// The web listener opens before the socket's routes exist (the
		// dashboard shows the start): a request that comes meanwhile
		// waits for them, as a command waits for the socket, rather
		// than fail while the daemon reattaches its jobs.
		t := time.NewTimer(restStartWait)
		defer t.Stop()
		select {
		case <-b.d.restReady:
			srv = b.d.restSrv.Load()
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return localapi.Errorf(http.StatusServiceUnavailable, "slurmd-lite is starting; try again")
		}
	}
	return srv.Call(ctx, id, method, path, in, out)
}

func (b restBackend) Env() *format.Env {
	cfg := b.d.config()
	return &format.Env{Now: b.d.now(), View: config.ViewOf(cfg), Node: &cfg.Node, GroupName: userdb.GroupName}
}

func (b restBackend) UserName(uid uint32) string { return userdb.Name(uid) }

func (b restBackend) Hostname() string {
	h, _ := os.Hostname()
	h, _, _ = strings.Cut(h, ".")
	return h
}
