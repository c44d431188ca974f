// Package notify tells people about what happened to jobs and GPUs: the
// mail Slurm sends for --mail-type (MailProg run as slurmctld runs it, with
// Slurm's subject lines and environment), and slurm-lite's webhooks
// ([[Notify]] in the configuration: a JSON body POSTed to a URL, retried
// with backoff).
//
// The daemon hands each event to a Notifier (Send), which never blocks:
// events wait in a bounded queue per destination (the mail program, each
// webhook), drained by one goroutine each, so a slow mail program or a dead
// web server delays only its own deliveries, and a full queue drops the
// event with a log line rather than hold up the scheduling loop. Nothing
// outlives Close either: a stopping daemon closes at once, abandoning the
// delivery under way and dropping the queue, and logs how many were lost,
// so that a web server that never answers cannot hold the stop.
//
// Glossary:
//   - kind: the event's word, Slurm's --mail-type words (BEGIN, END, FAIL,
//     REQUEUE, TIME_LIMIT_90, ...) and slurm-lite's own (YIELD, PREEMPT,
//     CANCEL, HOLD, RELEASE, DRAIN, RESUME, GPU_MEM_LOW, BUDGET_80,
//     BUDGET_100).
//   - subject: the mail's subject line, byte for byte slurmctld's
//     (src/slurmctld/agent.c, mail_job_info).
package notify
