package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// maxBatch bounds how many requests share one transaction, so that one
// commit's latency stays bounded under a flood of submissions.
const maxBatch = 256

// request is one Submit or Update waiting for the writer.
type request struct {
	// state moves from queued to taken (by the writer) or abandoned (by
	// a caller whose context ended first), once.
	state atomic.Int32
	jobs  []NewJob           // Submit
	fn    func(tx *Tx) error // Update
	done  chan result        // buffered: the writer never waits for the caller
	// group, when set, makes this request a carrier for UpdateEach's
	// requests, which the writer takes all into the same batch; the
	// carrier itself is never run or answered.
	group []*request
}

// members are the requests r stands for in a batch.
func (r *request) members() []*request {
	if r.group != nil {
		return r.group
	}
	return []*request{r}
}

const (
	queued int32 = iota
	taken
	abandoned
)

type result struct {
	ids []uint32
	err error
	// panicked carries a panic out of an Update's function, to be raised
	// again in the caller's goroutine.
	panicked any
}

// Submit creates jobs and returns their ids, in order, once they are
// committed to disk: an id returned is never lost, not even to a crash or a
// power cut an instant later. An array submission is one job (one id); its
// tasks get their ids as they start (Tx.SplitTask).
//
// Concurrent calls are committed together (group commit): while one
// transaction is being synced, the submissions that arrive queue up and go
// into the next one, so a flood of sbatch calls costs one sync per batch,
// not one per job. A lone submission waits for no one.
//
// If ctx ends before the writer takes the request, Submit returns ctx's
// error and nothing is committed; once taken, Submit waits for the commit,
// which takes one transaction's time. So an error always means the jobs do
// not exist, and ids always mean they do.
func (s *Store) Submit(ctx context.Context, jobs []NewJob) ([]uint32, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	res, err := s.do(ctx, &request{jobs: jobs})
	if err != nil {
		return nil, err
	}
	return res.ids, nil
}

// Update runs fn in a write transaction and commits what it did, or nothing
// when fn returns an error (which Update returns). It shares the writer and
// its batching with Submit: fn runs in a savepoint of a transaction that may
// hold other requests, and Update returns after the commit. fn runs on the
// writer goroutine: it must be quick, and must not call the Store's own
// Submit or Update (that would wait for itself). ctx is handled as in
// Submit.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := s.do(ctx, &request{fn: fn})
	return err
}

// UpdateEach runs each of fns as Update would, in one transaction with
// one commit (one fsync) for all of them: each in its own savepoint, so
// that one failing rolls back only itself. It returns their errors in
// order, once all are committed. The daemon starts every job of a
// scheduling pass this way.
func (s *Store) UpdateEach(ctx context.Context, fns []func(tx *Tx) error) []error {
	errs := make([]error, len(fns))
	if len(fns) == 0 {
		return errs
	}
	group := make([]*request, len(fns))
	for i, fn := range fns {
		group[i] = &request{fn: fn, done: make(chan result, 1)}
	}
	if err := s.enqueue(ctx, &request{group: group}); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, r := range group {
		select {
		case res := <-r.done:
			_, errs[i] = res.unwrap()
		case <-ctx.Done():
			if r.state.CompareAndSwap(queued, abandoned) {
				errs[i] = ctx.Err()
				continue
			}
			_, errs[i] = (<-r.done).unwrap()
		}
	}
	return errs
}

// enqueue hands r to the writer.
func (s *Store) enqueue(ctx context.Context, r *request) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case s.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) do(ctx context.Context, r *request) (result, error) {
	r.done = make(chan result, 1)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return result{}, ErrClosed
	}
	select {
	case s.reqs <- r:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return result{}, ctx.Err()
	}
	select {
	case res := <-r.done:
		return res.unwrap()
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return result{}, ctx.Err()
		}
		// The writer has it: its outcome is what the caller must hear.
		return (<-r.done).unwrap()
	}
}

func (r result) unwrap() (result, error) {
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r, r.err
}

// writer is the one goroutine that writes. Each turn takes every request
// waiting (up to maxBatch), runs them in one transaction, each in its own
// savepoint so that one failing rolls back only itself, commits, and only
// then answers them. It exits when Close has closed reqs and it is empty.
func (s *Store) writer() {
	defer close(s.done)
	batch := make([]*request, 0, maxBatch)
	for first := range s.reqs {
		batch = append(batch[:0], first.members()...)
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-s.reqs:
				if !ok {
					break fill
				}
				batch = append(batch, r.members()...)
			default:
				break fill
			}
		}
		s.commit(batch)
	}
}

// commit runs one batch. The statements use a context of their own: one
// caller giving up must not roll back the others' work.
func (s *Store) commit(batch []*request) {
	ctx := context.Background()
	live := batch[:0:0]
	for _, r := range batch {
		if r.state.CompareAndSwap(queued, taken) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	// Unless the batch commits, its allocations may be undone: allocID
	// reads next_job_id again (nextID).
	committed := false
	defer func() {
		if !committed {
			s.next.ok = false
		}
	}()
	results := make([]result, len(live))
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		answerAll(live, s.full(fmt.Errorf("starting a transaction on %s: %w", s.path, err)))
		return
	}
	now := s.clock.Now()
	touched := map[uint32]struct{}{}
	written := map[uint32][]any{}
	var hi uint32 // the highest id the batch gives out
	// A request alone in its batch (every submission while the writer
	// keeps up) needs no savepoint: undoing it is undoing the whole
	// transaction. SAVEPOINT and RELEASE were two of the seven statements
	// of a lone submission.
	alone := len(live) == 1
	for i, r := range live {
		var lost error
		tx := &Tx{tx: sqlTx, now: now, stmts: s.stmts, touched: touched, written: written, next: &s.next}
		results[i], lost = s.runOne(tx, r, !alone)
		if lost != nil {
			// SQLite rolled the whole transaction back (it does on
			// I/O errors, a full disk, ...): nothing of the batch is
			// committed, and the requests left must not run outside a
			// transaction.
			sqlTx.Rollback()
			answerAll(live, s.full(fmt.Errorf("writing to %s: the transaction was rolled back: %w", s.path, lost)))
			return
		}
		if results[i].err == nil && results[i].panicked == nil {
			hi = max(hi, tx.maxID)
		} else if alone {
			sqlTx.Rollback()
			results[i].err = s.full(results[i].err)
			r.done <- results[i]
			return
		}
	}
	// The mark and the commit at once. Each is one fdatasync; in
	// sequence (the mark first) a submission waited for both, one after
	// the other, and the two were half its time in the daemon. What
	// matters is only that nobody hears an id before it is durable in
	// both, which waiting for both keeps. In a crash between the two
	// either may have landed alone: a commit without the mark leaves the
	// database ahead of the mark, which Open handles (continueFromHWM
	// starts the mark from the database); a mark without the commit names
	// ids nobody heard (IDsBehind), as a crash after the mark and before
	// the commit always could.
	prev := s.hwm.mark
	var marked chan error
	if s.hwm.needs(hi) {
		marked = make(chan error, 1)
		go func() { marked <- s.hwm.write(hi + 1) }()
	}
	err = sqlTx.Commit()
	var markErr error
	if marked != nil {
		markErr = <-marked
	}
	if err != nil {
		if marked != nil {
			// The mark may have moved: put it back (hwm.undo).
			s.hwm.mark = hi + 1
			s.hwm.undo(prev)
		}
		answerAll(live, s.full(fmt.Errorf("committing to %s: %w", s.path, err)))
		return
	}
	if marked != nil {
		if markErr != nil && !s.owedMark(hi+1, markErr) {
			answerAll(live, fmt.Errorf("the store closed before the job id high-water mark could hold the ids of what was recorded: %w", markErr))
			return
		}
		s.hwm.mark = hi + 1
	}
	committed = true
	s.commits.Add(1)
	// Before anyone hears back: a caller told "committed" must find its
	// change in the cache.
	s.refreshCache(touched, written)
	for i, r := range live {
		results[i].err = s.full(results[i].err)
		r.done <- results[i]
	}
}

// owedMark writes the mark that a committed batch needs, after its write
// beside the commit failed: the batch's ids are in the database, and no
// caller may hear them until the mark holds them too. It tries again
// with a growing pause, as long as the store is open, and reports whether
// the mark landed. A disk that cannot take 11 bytes in place is failing;
// the writer waits on it as it would on a sync that hangs.
func (s *Store) owedMark(n uint32, err error) bool {
	pause := time.Millisecond
	for err != nil {
		s.mu.RLock()
		closed := s.closed
		s.mu.RUnlock()
		if closed {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
		err = s.hwm.write(n)
	}
	return true
}

func answerAll(rs []*request, err error) {
	for _, r := range rs {
		r.done <- result{err: err}
	}
}

// runOne runs one request inside the batch's transaction, in a savepoint
// (unless savepoint is false: the request is alone, and the caller rolls
// the transaction back if it fails). lost is set when the savepoint cannot
// be closed, which means SQLite has rolled back the whole transaction.
func (s *Store) runOne(tx *Tx, r *request, savepoint bool) (res result, lost error) {
	if savepoint {
		if _, err := tx.exec(sqlSavepoint); err != nil {
			return result{}, err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			res = result{panicked: p}
		}
		if !savepoint {
			return
		}
		if res.err != nil || res.panicked != nil {
			// Undo this request only.
			tx.undone()
			tx.forgetNext()
			if _, err := tx.exec(sqlRollbackTo); err != nil {
				lost = err
				return
			}
		}
		if _, err := tx.exec(sqlRelease); err != nil {
			lost = err
		}
	}()
	if r.fn != nil {
		return result{err: r.fn(tx)}, nil
	}
	ids := make([]uint32, 0, len(r.jobs))
	for _, nj := range r.jobs {
		id, err := tx.insert(nj)
		if err != nil {
			return result{err: err}, nil
		}
		ids = append(ids, id)
	}
	return result{ids: ids}, nil
}
