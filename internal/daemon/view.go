package daemon

import (
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// What a caller may see of other users' work: one rule, which every route
// that answers with jobs, their requests or their users' usage applies
// through a viewer (TestEveryRouteKeepsSecrets walks routes() as another
// user to hold them to it).
//
//   - A job's secrets, its environment, its batch script (a --wrap command
//     is one) and its --export values, are its owner's, root's and
//     operators' only, whatever the configuration. The daemon keeps the
//     environment and the script apart from the job (store.Script) and
//     serves them only to the job's owner and root, to run the job's steps
//     (createStep's Join, waitAlloc); what travels with the job (its
//     Request) loses its --export values, --wrap command and sbatch's
//     warnings in view.
//   - Everything else follows slurm.conf's PrivateData: by default, as in
//     Slurm, every job's metadata is everyone's to see; with "jobs" only
//     its owner, root and operators see the job at all (squeue, scontrol
//     show job, sacct, sprio, the node's GPUs, the job's audit trail);
//     with "usage" sshare shows a user only their own usage rows and
//     scontrol show assoc_mgr only their own associations; with "users"
//     scontrol show assoc_mgr shows only their own user record (and a
//     user with no association, under either, is shown nothing).
//   - Whoever reads the web listener ([Web]: the dashboard, its data,
//     /metrics) is the anonymous viewer: a viewer like any other, who is
//     no user, owns no job and is not an operator
//     (TestWebShowsTheAnonymousViewerNoSecrets walks every web route after
//     every kind of event to hold it to this).
type viewer struct {
	caller localapi.Identity
	// anonymous is the web's viewer: caller is no one (its zero UID is
	// not root's), who owns nothing.
	anonymous bool
	// admin is root or an operator, who see everything.
	admin        bool
	privateJobs  bool
	privateUsage bool
}

// viewer is caller's view under the configuration in force.
func (d *Daemon) viewer(caller localapi.Identity) viewer {
	return viewFor(d.config(), caller)
}

func viewFor(cfg *config.Config, caller localapi.Identity) viewer {
	return viewer{caller: caller, admin: caller.UID == 0 || cfg.IsOperator(caller.User),
		privateJobs: cfg.Private(config.PrivateJobs), privateUsage: cfg.Private(config.PrivateUsage)}
}

// anonymousViewer is the web listener's viewer under cfg: no one.
func anonymousViewer(cfg *config.Config) viewer {
	return viewer{anonymous: true, privateJobs: cfg.Private(config.PrivateJobs),
		privateUsage: cfg.Private(config.PrivateUsage)}
}

// is reports whether the caller is the user of uid.
func (v viewer) is(uid uint32) bool { return !v.anonymous && v.caller.UID == uid }

// isNamed reports whether the caller is the user named user.
func (v viewer) isNamed(user string) bool { return !v.anonymous && user == v.caller.User }

// ownsJob reports whether the caller may see the secrets of a job of uid.
func (v viewer) ownsJob(uid uint32) bool { return v.admin || v.is(uid) }

// seesJob reports whether the caller may see a job of uid at all.
func (v viewer) seesJob(uid uint32) bool { return !v.privateJobs || v.ownsJob(uid) }

// seesJobOf is seesJob for a job known by its user's name.
func (v viewer) seesJobOf(user string) bool {
	return !v.privateJobs || v.admin || v.isNamed(user)
}

// seesOthersJobs reports whether the caller may see other users' jobs:
// false under PrivateData=jobs for all but root and operators.
func (v viewer) seesOthersJobs() bool { return !v.privateJobs || v.admin }

// seesUsage reports whether the caller may see the usage of user ("" for
// an account's own row).
func (v viewer) seesUsage(user string) bool {
	return !v.privateUsage || v.admin || user == "" || v.isNamed(user)
}

// seesTrail reports whether the caller may see the audit trail of job
// (0: the node's and the GPUs', which are everyone's, as sinfo's
// reasons). A job's events may name the job, its comment, its user's
// paths: only whoever sees the job sees them. owner is the job's user;
// known is false when the job could not be read, and then only whoever
// sees every job sees its trail.
func (v viewer) seesTrail(job, owner uint32, known bool) bool {
	switch {
	case job == 0:
		return true
	case !known:
		return v.seesOthersJobs()
	}
	return v.seesJob(owner)
}

// job is j as the caller may see it: false when the caller may not see it
// at all, else j, without its secrets unless the caller owns it. j is
// not changed (it may be the store's cache's), only copied.
func (v viewer) job(j store.Job) (store.Job, bool) {
	if !v.seesJob(j.UID) {
		return store.Job{}, false
	}
	if !v.ownsJob(j.UID) {
		redact(&j)
	}
	return j, true
}

// redact takes a job's secrets out of its request, replacing what it
// changes rather than changing what it points to.
func redact(j *store.Job) {
	r := &j.Request
	r.Script, r.Wrap, r.Warnings = "", "", nil
	if r.Export != nil {
		exp := *r.Export
		exp.Spec, exp.Vars = "", nil
		r.Export = &exp
	}
}
