package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
)

// sendMail runs MailProg as slurmctld's _mail_proc does: `MailProg -s
// SUBJECT USER`, as the daemon's own user, with Slurm's environment and
// nothing on its standard input.
func (n *Notifier) sendMail(closing context.Context, ev Event) bool {
	if ev.Budget != nil {
		return n.sendBudgetMail(closing, ev)
	}
	j := ev.Job
	ctx, cancel := context.WithTimeout(closing, n.opts.MailTimeout)
	defer cancel()
	subject := Subject(j, ev.Kind, ev.Time)
	if ev.Array != nil {
		subject = ArraySubject(j, ev.Kind, *ev.Array)
	}
	user := MailUser(j)
	cmd := exec.CommandContext(ctx, n.opts.MailProg, "-s", subject, user)
	cmd.Env = MailEnv(j, ev.Kind, n.opts.Cluster, n.opts.GroupName(j.GID), ev.Time)
	// Killed at the timeout or at Close, it is not waited for past this
	// for a child that keeps its output open (a mailer that forks).
	cmd.WaitDelay = time.Second
	if a := ev.Array; a != nil && (ev.Kind == End || ev.Kind == Fail) {
		cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "SLURM_JOB_EXIT_CODE_MAX=") })
		cmd.Env = append(cmd.Env, fmt.Sprintf("SLURM_JOB_EXIT_CODE_MIN=%d", a.MinStatus>>8),
			fmt.Sprintf("SLURM_JOB_EXIT_CODE_MAX=%d", a.MaxStatus>>8))
	}
	out, err := cmd.CombinedOutput()
	log := n.logger(ev)
	if err != nil && closing.Err() != nil {
		return false // Close stopped it: counted there
	}
	if err != nil {
		log.Error("MailProg failed", "mail_prog", n.opts.MailProg, "to", user, "subject", subject,
			"err", err, "output", strings.TrimSpace(string(out)))
		return false
	}
	log.Info("mail sent", "to", user, "subject", subject)
	return true
}

// Body is what a webhook receives, as JSON.
type Body struct {
	Event   string    `json:"event"`
	Time    time.Time `json:"time"`
	Cluster string    `json:"cluster"`
	Job     *BodyJob  `json:"job,omitempty"`
	GPU     *GPU      `json:"gpu,omitempty"`
	Node    string    `json:"node,omitempty"`
	Actor   string    `json:"actor,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Budget  *Budget   `json:"budget,omitempty"`
	// Subject is the mail subject Slurm would send for the event, for a
	// job's Slurm events (and the budget mail's, for a budget's).
	Subject string `json:"subject,omitempty"`
}

// BodyJob is the job in a Body.
type BodyJob struct {
	ID          uint32     `json:"job_id"`
	ArrayJobID  uint32     `json:"array_job_id,omitempty"`
	ArrayTaskID *int       `json:"array_task_id,omitempty"`
	Name        string     `json:"name"`
	User        string     `json:"user"`
	Account     string     `json:"account"`
	Partition   string     `json:"partition"`
	State       string     `json:"state"`
	Reason      string     `json:"state_reason,omitempty"`
	ExitCode    string     `json:"exit_code"`
	GPUs        []int      `json:"gpus"`
	Restarts    int        `json:"restart_count"`
	Submit      time.Time  `json:"submit_time"`
	Start       *time.Time `json:"start_time,omitempty"`
	End         *time.Time `json:"end_time,omitempty"`
	PeakGPUMem  int64      `json:"peak_gpu_memory_bytes,omitempty"`
}

// NewBody is the webhook body of ev.
func NewBody(ev Event, cluster string) Body {
	b := Body{Event: ev.Kind, Time: ev.Time, Cluster: cluster, GPU: ev.GPU, Node: ev.Node, Actor: ev.Actor, Reason: ev.Reason,
		Budget: ev.Budget}
	if ev.Budget != nil {
		b.Subject = BudgetSubject(ev.Kind, ev.Budget)
	}
	if j := ev.Job; j != nil {
		bj := &BodyJob{ID: j.ID, ArrayJobID: j.ArrayJobID, Name: j.Name, User: j.User, Account: j.Account,
			Partition: j.Partition, State: string(j.State), Reason: string(j.Reason), ExitCode: j.ExitCode.String(),
			GPUs: []int{}, Restarts: j.Restarts, Submit: j.Submit, Start: timeOrNil(j.Start), End: timeOrNil(j.End),
			PeakGPUMem: j.PeakGPUMem}
		if j.ArrayTaskID != jobrec.NoTask {
			t := j.ArrayTaskID
			bj.ArrayTaskID = &t
		}
		for _, g := range j.Alloc.GPUs {
			bj.GPUs = append(bj.GPUs, g.Index)
		}
		b.Job = bj
		if _, ok := mailWords[ev.Kind]; ok {
			b.Subject = Subject(j, ev.Kind, ev.Time)
		}
	}
	return b
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// post delivers ev to h: tried Attempts times, waiting Backoff, then
// twice that, and so on, between tries; each try bounded by Timeout. A
// 2xx answer is delivered; anything else is tried again. It says whether
// the event was delivered.
func (n *Notifier) post(ctx context.Context, h Hook, ev Event) bool {
	body, err := json.Marshal(NewBody(ev, n.opts.Cluster))
	if err != nil {
		n.logger(ev).Error("webhook body", "err", err)
		return false
	}
	log := n.logger(ev)
	wait := n.opts.Backoff
	for try := 1; ; try++ {
		err := n.postOnce(ctx, h.URL, body)
		if err == nil {
			if try > 1 {
				log.Info("webhook delivered", "event", ev.Kind, "url", h.URL, "attempt", try)
			}
			return true
		}
		if ctx.Err() != nil {
			return false // Close stopped it: counted there, not a failure of the hook
		}
		if try >= n.opts.Attempts {
			log.Error("webhook failed, giving up", "event", ev.Kind, "url", h.URL, "attempts", try, "err", err)
			return false
		}
		log.Warn("webhook failed, trying again", "event", ev.Kind, "url", h.URL, "attempt", try, "in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (n *Notifier) postOnce(ctx context.Context, url string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "slurm-lite")
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}
