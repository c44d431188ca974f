package notify

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Budget names an account's budget (an [[Account]]'s GrpTRESMins) in a
// BUDGET_80 or BUDGET_100 event: what is used of it, and who is told.
type Budget struct {
	Account string `json:"account"`
	// TRES is the budget's TRES (gres/gpu, cpu, billing); Used and Limit
	// are in its minutes.
	TRES  string `json:"tres"`
	Used  int64  `json:"used_minutes"`
	Limit int64  `json:"limit_minutes"`
	// Resets is when usage is next cleared; zero for never.
	Resets time.Time `json:"resets,omitzero"`
	// Users are the account's users: they get the mail.
	Users []string `json:"users"`
}

// Budget events: an account has used 80 % of a budget, or all of it.
const (
	Budget80  = "BUDGET_80"
	Budget100 = "BUDGET_100"
)

// BudgetSubject is a budget mail's subject.
func BudgetSubject(kind string, b *Budget) string {
	pct := "80%"
	if kind == Budget100 {
		pct = "all"
	}
	s := fmt.Sprintf("Slurm budget: account %s has used %s of its GrpTRESMins %s=%d (%d minutes)", b.Account, pct, b.TRES, b.Limit, b.Used)
	if !b.Resets.IsZero() {
		s += "; usage resets at " + b.Resets.Format("2006-01-02T15:04:05")
	}
	return s
}

// sendBudgetMail mails each of the account's users, `MailProg -s SUBJECT
// USER`, as a job's mail is sent (the daemon's own user, nothing on the
// standard input), with SLURM_CLUSTER_NAME set.
func (n *Notifier) sendBudgetMail(closing context.Context, ev Event) bool {
	b := ev.Budget
	subject := BudgetSubject(ev.Kind, b)
	log := n.logger(ev)
	ok := true
	for _, user := range b.Users {
		ctx, cancel := context.WithTimeout(closing, n.opts.MailTimeout)
		cmd := exec.CommandContext(ctx, n.opts.MailProg, "-s", subject, user)
		cmd.Env = []string{"SLURM_CLUSTER_NAME=" + n.opts.Cluster, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil && closing.Err() != nil {
			return false
		}
		if err != nil {
			log.Error("MailProg failed", "mail_prog", n.opts.MailProg, "to", user, "subject", subject,
				"err", err, "output", strings.TrimSpace(string(out)))
			ok = false
			continue
		}
		log.Info("mail sent", "to", user, "subject", subject)
	}
	return ok
}

// wantsBudget reports whether a hook with Users takes a budget event: one
// of the account's users is among them.
func (h Hook) wantsBudget(b *Budget) bool {
	return slices.ContainsFunc(b.Users, func(u string) bool { return slices.Contains(h.Users, u) })
}
