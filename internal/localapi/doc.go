// Package localapi is the daemon's side of how slurm-lite's commands talk to
// slurmd-lite: HTTP and JSON over a Unix socket, the caller named by the
// kernel. The commands' side is internal/sockclient, the one client.
//
// The daemon side:
//
//	ln, err := localapi.Listen(cfg.SocketPath, localapi.AccessFor(os.Geteuid()))
//	srv := &localapi.Server{Routes: localapi.Routes{
//		{Method: "POST", Path: "/v1/jobs", Handler: localapi.Func(submit)},
//		{Method: "DELETE", Path: "/v1/jobs/{id}", Handler: localapi.Func(cancel)},
//	}}
//	go srv.Serve(ln)
//	...
//	srv.Shutdown(ctx)
//
// and the client side (internal/sockclient):
//
//	c := sockclient.New(cfg.SocketPath)
//	err := c.Do(ctx, "POST", "/v1/jobs", req, &resp) // *api.Error, or how to start the daemon
//
// A request passes these steps, and a handler runs only after all of them:
//
//  1. accept: the kernel's peer credentials (SO_PEERCRED) are read; nothing
//     the client sends says who it is;
//  2. access: a daemon that runs as an ordinary user serves that user alone
//     (socket 0600, and the uid checked on every connection); one that runs
//     as root serves everyone (socket 0666);
//  3. identity: the uid's name and groups come from the user database, once
//     per connection, and ride on the request's context (Caller);
//  4. route: the handler table, compiled into a net/http ServeMux with
//     one "METHOD /v1/path/{name}" pattern per route, gives 404 for an
//     unknown path and 405 for a wrong method;
//  5. limits: the headers (64 KiB, 10 s) and the body (16 MiB, 30 s) are read
//     in full, or refused with 431, 413 or 408; and the body must find room
//     in the memory that bodies in flight may hold (64 MiB for one user,
//     128 MiB in all, a quarter of it kept for bodies up to 1 MiB), taken by
//     its Content-Length before it is read and given back when its handler
//     returns, or it is refused at once with 429 (the user's bound) or 503
//     (the daemon's), never queued; requests without a body take none;
//  6. decode: Func decodes the body strictly and validates it (400);
//  7. the handler runs, and its answer or *api.Error goes back as JSON.
//
// Every refusal is {"error": "...", "code": N}: the message says what to do,
// and N is Slurm's errno when Slurm refuses the same thing, so that commands
// print Slurm's words and exit as Slurm's do.
//
// # Users and groups through NSS
//
// Jobs run with their submitter's groups, and on lab machines those often
// come from LDAP or SSSD. os/user asks NSS (getgrouplist) only when built
// with cgo; without it, it reads /etc/passwd and /etc/group alone. The
// module builds with cgo (internal/gpu needs it for NVML anyway, and go env
// CGO_ENABLED is 1 where a C compiler is present); UsesNSS says which
// happened, and the daemon logs UserDatabase when it starts. Note that Go
// turns cgo off by itself when no C compiler is found, so a daemon built on
// a machine without gcc sees only the files.
//
// # Glossary
//
//   - peer credentials: the uid, gid and pid that the kernel recorded for
//     the process that connected (SO_PEERCRED). They cannot be forged by the
//     client; the pid is 0 when the caller is in another pid namespace.
//   - shared and private daemon: Access. Shared runs as root and serves all
//     local users; private runs as one user and serves only them, because
//     every job it starts runs as that user.
//   - stale socket: a socket file left by a daemon that died. Nobody answers
//     when it is dialled, so Listen replaces it; a socket that answers
//     belongs to a live daemon, and Listen refuses to start.
//   - daemon lock: SocketPath+".lock", held with flock for the daemon's
//     life, so that two daemons starting together cannot both take the
//     socket.
//   - handler table: Routes, one entry per method and versioned path
//     (/v1/...). A later, incompatible API gets /v2/ paths beside /v1/ ones,
//     so an older command keeps working against a newer daemon.
//   - Slurm code: Error.Code, an errno from Slurm's slurm/slurm_errno.h
//     (ESLURM_ACCESS_DENIED is 2002), or 0.
package localapi
