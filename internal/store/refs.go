package store

import (
	"context"
	"fmt"
	"time"
)

// JobRefs is Jobs without the copies, for a reader that holds the jobs a
// while but changes none of them: when the cache answers, the cached rows
// themselves, which are never changed once cached (a write replaces the
// row), so they stay as they were read however long the caller keeps
// them. A scheduling pass read 1,000 queued jobs a few dozen times a
// second, and copying them (1.5 kB each) and collecting the copies was a
// fifth of the daemon's CPU. The caller must not change a job it gets.
func (s *Store) JobRefs(ctx context.Context, f Filter) ([]*Job, error) {
	var refs []*Job
	if s.cachedEach(f, func(n int) { refs = make([]*Job, 0, n) }, func(j *Job) { refs = append(refs, j) }) {
		return refs, nil
	}
	jobs, err := queryJobs(ctx, s.r, "jobs", f)
	if err != nil {
		return nil, err
	}
	refs = make([]*Job, len(jobs))
	for i := range jobs {
		refs[i] = &jobs[i]
	}
	return refs, nil
}

// StepsCPU is the user and system CPU that the steps of run `run` of job
// id recorded, its batch step aside: what a job's end adds to its batch
// step's own. One sum over the steps' key, where reading the job's
// accounting records again (the job, its runs and every step) cost a
// tenth of what the daemon spends on a trivial job's end.
func (s *Store) StepsCPU(ctx context.Context, id uint32, run int) (user, sys time.Duration, err error) {
	var u, y int64
	err = s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(user_cpu), 0), COALESCE(SUM(system_cpu), 0)
		FROM steps WHERE job_id = ? AND run = ? AND step_id != 'batch'`, id, run).Scan(&u, &y)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the CPU of job %d's steps: %w", id, err)
	}
	return time.Duration(u), time.Duration(y), nil
}

// JobRef is Job from the cache where it holds the row (every job not
// ended, and those ended within its window), else from SQL: a job's end
// read its row from SQL twice before recording it. Like JobRefs, the
// caller must not change the job.
func (s *Store) JobRef(ctx context.Context, id uint32) (*Job, error) {
	s.mu.RLock()
	c := s.cache
	s.mu.RUnlock()
	if c != nil {
		c.mu.RLock()
		j, ok := c.rows[id]
		ok = ok && c.loaded
		c.mu.RUnlock()
		if ok {
			return j, nil
		}
	}
	j, _, err := jobByID(ctx, s.r, id)
	if err != nil {
		return nil, err
	}
	return &j, nil
}
