// Package slurmrest is slurmrestd's API of Slurm 22.05 (OpenAPI v0.0.38
// and dbv0.0.38) on the daemon's web listener, with Slurm's auth/jwt
// tokens (scontrol token). It is on only when AuthAltTypes lists
// "auth/jwt".
//
// A request passes these steps:
//
//  1. authenticate: X-SLURM-USER-NAME and X-SLURM-USER-TOKEN must both be
//     there, else 401 "Authentication failure" (text/plain), as slurmrestd;
//  2. verify: the token's HS256 signature with the jwt_key, its exp, and
//     its user (sun) against X-SLURM-USER-NAME: root's token may act as
//     any user, as Slurm lets SlurmUser's; any other mismatch, a forged or
//     an expired token is refused with the error object slurmrestd gives
//     when slurmctld refuses the token (500 for the slurm/ routes, 200
//     with error 1007 for slurmdb/), which the route names;
//  3. the user's identity (uid, gid, groups) from the user database, as
//     the socket API's for a caller of that uid;
//  4. the route turns the request into the socket API's own request
//     (internal/api) and calls it in process (localapi.Server.Call) as that
//     identity: the same handlers, viewer rules and submission checks as
//     squeue, sbatch, scancel and sacct over the socket;
//  5. the answer is printed in slurmrestd's JSON by internal/format, the
//     same code as squeue --json and sacct --json.
//
// Glossary:
//   - jwt_key: AuthAltParameters' key file, 0600, the HMAC key of HS256.
//   - sun: the token's claim naming its user ("slurm user name").
package slurmrest
