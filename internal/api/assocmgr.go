package api

// PathAssocMgr is scontrol show assoc_mgr: GET answers an AssocMgr. The
// query names what to send: "flags" (any of "assoc", "users", "qos"; all
// three when none), and "users", "accounts", "qos" (names, each repeated
// or comma-separated) to keep only those, as slurmctld's
// assoc_mgr_info_get_pack_msg does. The caller's view follows
// PrivateData (users, usage) in the daemon.
const PathAssocMgr = "/v1/assoc_mgr"

// NoLimit is an unset limit in an AssocMgr (Slurm's INFINITE).
const NoLimit int64 = -1

// AssocMgr is the association manager's state, as slurmctld sends it to
// scontrol: the TRES names (in TRES id order) that every TRES list below
// follows, and the records asked for and allowed.
type AssocMgr struct {
	TRES   []string        `json:"tres"`
	Users  []AssocMgrUser  `json:"users,omitempty"`
	Assocs []AssocMgrAssoc `json:"assocs,omitempty"`
	QOS    []AssocMgrQOS   `json:"qos,omitempty"`
}

// AssocMgrUser is one user record.
type AssocMgrUser struct {
	Name       string `json:"name"`
	UID        uint32 `json:"uid"`
	DefAccount string `json:"def_account"`
	AdminLevel string `json:"admin_level"`
}

// AssocMgrAssoc is one association: its shares, usage and limits. Every
// limit is NoLimit when unset; TRES lists follow AssocMgr.TRES. Usage in
// TRES-seconds, as slurmctld keeps it (scontrol divides by 60).
type AssocMgrAssoc struct {
	Cluster   string `json:"cluster"`
	Account   string `json:"account"`
	User      string `json:"user,omitempty"`
	UID       uint32 `json:"uid"`
	Partition string `json:"partition,omitempty"`
	Priority  uint32 `json:"priority"`
	ID        int    `json:"id"`

	SharesRaw   int     `json:"shares_raw"`
	SharesNorm  float64 `json:"shares_norm"`
	LevelShares int     `json:"level_shares"`
	FSFactor    float64 `json:"fs_factor"`
	UsageRaw    float64 `json:"usage_raw"`
	UsageNorm   float64 `json:"usage_norm"`
	UsageEfctv  float64 `json:"usage_efctv"`

	ParentAccount string `json:"parent_account,omitempty"`
	ParentID      int    `json:"parent_id"`
	Lft           int    `json:"lft"`
	IsDefault     bool   `json:"is_default"`

	GrpJobs       int64   `json:"grp_jobs"`
	GrpJobsAccrue int64   `json:"grp_jobs_accrue"`
	GrpSubmitJobs int64   `json:"grp_submit_jobs"`
	GrpWall       int64   `json:"grp_wall"`
	UsedJobs      int     `json:"used_jobs"`
	AccrueCount   int     `json:"accrue_count"`
	UsedSubmit    int     `json:"used_submit"`
	UsedWallSecs  float64 `json:"used_wall_secs"`

	GrpTRES          []int64  `json:"grp_tres"`
	GrpTRESUsed      []uint64 `json:"grp_tres_used"`
	GrpTRESMins      []int64  `json:"grp_tres_mins"`
	TRESUsageSecs    []uint64 `json:"tres_usage_secs"`
	GrpTRESRunMins   []int64  `json:"grp_tres_run_mins"`
	TRESRunSecs      []uint64 `json:"tres_run_secs"`
	MaxJobs          int64    `json:"max_jobs"`
	MaxJobsAccrue    int64    `json:"max_jobs_accrue"`
	MaxSubmitJobs    int64    `json:"max_submit_jobs"`
	MaxWallPJ        int64    `json:"max_wall_pj"`
	MaxTRESPJ        []int64  `json:"max_tres_pj"`
	MaxTRESPN        []int64  `json:"max_tres_pn"`
	MaxTRESMinsPJ    []int64  `json:"max_tres_mins_pj"`
	MinPrioThreshold int64    `json:"min_prio_thresh"`
}

// AssocMgrQOS is one QOS: its usage and limits, and what each account and
// user (by uid) that ran a job in it holds there.
type AssocMgrQOS struct {
	Name     string  `json:"name"`
	ID       int     `json:"id"`
	UsageRaw float64 `json:"usage_raw"`

	GrpJobs       int64   `json:"grp_jobs"`
	GrpJobsAccrue int64   `json:"grp_jobs_accrue"`
	GrpSubmitJobs int64   `json:"grp_submit_jobs"`
	GrpWall       int64   `json:"grp_wall"`
	UsedJobs      int     `json:"used_jobs"`
	AccrueCount   int     `json:"accrue_count"`
	UsedSubmit    int     `json:"used_submit"`
	UsedWallSecs  float64 `json:"used_wall_secs"`

	GrpTRES          []int64  `json:"grp_tres"`
	GrpTRESUsed      []uint64 `json:"grp_tres_used"`
	GrpTRESMins      []int64  `json:"grp_tres_mins"`
	TRESUsageSecs    []uint64 `json:"tres_usage_secs"`
	GrpTRESRunMins   []int64  `json:"grp_tres_run_mins"`
	TRESRunSecs      []uint64 `json:"tres_run_secs"`
	MaxWallPJ        int64    `json:"max_wall_pj"`
	MaxTRESPJ        []int64  `json:"max_tres_pj"`
	MaxTRESPN        []int64  `json:"max_tres_pn"`
	MaxTRESMinsPJ    []int64  `json:"max_tres_mins_pj"`
	MinPrioThreshold int64    `json:"min_prio_thresh"`
	MinTRESPJ        []int64  `json:"min_tres_pj"`
	PreemptMode      string   `json:"preempt_mode"`
	Priority         uint32   `json:"priority"`

	// Per-account and per-user limits (MaxJobsPA, ...; MaxJobsPU, ...)
	// and what each holds. Accounts and Users are nil when none has run a
	// job in the QOS ("No Accounts", "No Users").
	MaxJobsPA       int64              `json:"max_jobs_pa"`
	MaxJobsAccruePA int64              `json:"max_jobs_accrue_pa"`
	MaxSubmitPA     int64              `json:"max_submit_pa"`
	MaxTRESPA       []int64            `json:"max_tres_pa"`
	MaxJobsPU       int64              `json:"max_jobs_pu"`
	MaxJobsAccruePU int64              `json:"max_jobs_accrue_pu"`
	MaxSubmitPU     int64              `json:"max_submit_pu"`
	MaxTRESPU       []int64            `json:"max_tres_pu"`
	Accounts        []AssocMgrQOSUsage `json:"accounts,omitempty"`
	Users           []AssocMgrQOSUsage `json:"users,omitempty"`
}

// AssocMgrQOSUsage is what one account (Name) or one user (UID) holds in
// a QOS.
type AssocMgrQOSUsage struct {
	Name      string   `json:"name,omitempty"`
	UID       uint32   `json:"uid"`
	Jobs      int      `json:"jobs"`
	Accruing  int      `json:"accruing"`
	Submitted int      `json:"submitted"`
	TRES      []uint64 `json:"tres"`
}
