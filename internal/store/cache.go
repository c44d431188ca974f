package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"
)

// jobCache mirrors the job rows that the controller's view reads over and
// over (squeue, every scheduling pass, every submission's checks): those
// not ended, and those ended within the window. Reading and decoding them
// from SQLite each time cost O(jobs) per submission, which with thousands
// of jobs queued made submission, not the disk, the limit.
//
// The writer keeps it exact: every Tx method that writes a job row names the
// row (touch), and after COMMIT, before any caller of the batch hears back,
// the writer reads those rows again and puts them in the cache (or takes
// them out). A caller that was told "committed" therefore finds its change
// in the cache. The first load also runs in the writer, between two
// batches, so that no commit can slip between the load and the cache.
// A query whose window reaches further back than the cache's goes to SQL.
type jobCache struct {
	window time.Duration

	mu     sync.RWMutex
	loaded bool
	rows   map[uint32]*Job // never changed once in: replaced
	pruned time.Time
}

// CacheJobs makes Jobs answer from memory for filters whose Since is no
// earlier than window before now (the daemon's MinJobAge): the jobs that
// are not ended, and those ended within window (and a minute), are kept
// decoded. It
// returns once the cache is loaded. Calling it again changes the window.
func (s *Store) CacheJobs(ctx context.Context, window time.Duration) error {
	s.mu.Lock()
	if s.cache == nil {
		s.cache = &jobCache{}
	}
	c := s.cache
	s.mu.Unlock()
	// A minute more than asked: a caller's "now" is a little before the
	// cache's, and its Since a little further back than window.
	window += time.Minute
	c.mu.Lock()
	if c.window != window {
		c.window, c.loaded = window, false
	}
	c.mu.Unlock()
	// An empty update: the writer loads the cache after committing it.
	return s.Update(ctx, func(*Tx) error { return nil })
}

// touch records that the transaction wrote job row id.
func (t *Tx) touch(id uint32) {
	if t.touched != nil {
		t.touched[id] = struct{}{}
	}
	// Whatever wrote it, the values inserted are no longer the row.
	delete(t.written, id)
}

// wrote records the values job row id was just inserted with: the
// refresh after the commit decodes the row from them instead of reading
// it back (rowOf).
func (t *Tx) wrote(id uint32, args []any) {
	if t.written != nil {
		t.written[id] = args
		t.added = append(t.added, id)
	}
}

// undone forgets the rows the request inserted: its savepoint was rolled
// back, and the refresh must find them gone.
func (t *Tx) undone() {
	for _, id := range t.added {
		delete(t.written, id)
	}
}

// rowOf is a job row the batch inserted, from the values it was inserted
// with, as a read of it returns it (scanJob over them). Reading back the
// row a submission had just written, and decoding it, was a tenth of the
// daemon's CPU per submission. The jobs table is STRICT: each column holds
// exactly the value bound to it, which a read gives back converted as
// database/sql converts it, as Scan here does. Any value Scan does not
// know makes ok false, and the row is read back instead.
func rowOf(args []any) (j Job, ok bool) {
	j, _, err := scanJob(argsRow(args))
	return j, err == nil
}

// argsRow scans a row from the values it was written with.
type argsRow []any

func (r argsRow) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("%d values for %d columns", len(r), len(dest))
	}
	for i, d := range dest {
		if err := scanValue(r[i], d); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// scanValue stores src, a value bound to a STRICT column, in dest as a
// read of the column would. It knows the kinds jobArgs binds.
func scanValue(src, dest any) error {
	if n, ok := dest.(*sql.NullInt64); ok {
		if src == nil {
			*n = sql.NullInt64{}
			return nil
		}
		v, ok := intOf(src)
		if !ok {
			return fmt.Errorf("%T for an integer", src)
		}
		*n = sql.NullInt64{Int64: v, Valid: true}
		return nil
	}
	dv := reflect.ValueOf(dest)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return fmt.Errorf("destination %T", dest)
	}
	dv = dv.Elem()
	switch dv.Kind() {
	case reflect.String:
		s, ok := src.(string)
		if !ok {
			return fmt.Errorf("%T for a string", src)
		}
		dv.SetString(s)
	case reflect.Bool:
		b, ok := src.(bool)
		if !ok {
			return fmt.Errorf("%T for a bool", src)
		}
		dv.SetBool(b)
	case reflect.Float64:
		f, ok := src.(float64)
		if !ok {
			return fmt.Errorf("%T for a float", src)
		}
		dv.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v, ok := intOf(src)
		if !ok || dv.OverflowInt(v) {
			return fmt.Errorf("%T %v for %s", src, src, dv.Type())
		}
		dv.SetInt(v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v, ok := intOf(src)
		if !ok || v < 0 || dv.OverflowUint(uint64(v)) {
			return fmt.Errorf("%T %v for %s", src, src, dv.Type())
		}
		dv.SetUint(uint64(v))
	default:
		return fmt.Errorf("destination %T", dest)
	}
	return nil
}

// intOf is an integer value as the column stores it.
func intOf(src any) (int64, bool) {
	v := reflect.ValueOf(src)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return 0, false
		}
		return int64(v.Uint()), true
	case reflect.Bool:
		if v.Bool() {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// refresh runs in the writer after a commit: it loads the cache if it is
// not loaded, else reads the touched rows again. On a read error the cache
// is dropped and loaded again after the next commit; queries meanwhile go
// to SQL.
func (s *Store) refreshCache(touched map[uint32]struct{}, written map[uint32][]any) {
	c := s.cache
	if c == nil {
		return
	}
	ctx := context.Background()
	now := s.clock.Now()
	c.mu.RLock()
	loaded, window := c.loaded, c.window
	c.mu.RUnlock()
	if !loaded {
		jobs, err := queryJobs(ctx, s.w, "jobs", Filter{Since: now.Add(-window)})
		rows := make(map[uint32]*Job, len(jobs))
		for _, j := range jobs {
			rows[j.ID] = clip(j)
		}
		c.mu.Lock()
		c.rows, c.loaded, c.pruned = rows, err == nil, now
		c.mu.Unlock()
		return
	}
	type change struct {
		id   uint32
		j    *Job
		gone bool
	}
	changes := make([]change, 0, len(touched))
	for id := range touched {
		if args, ok := written[id]; ok {
			if j, ok := rowOf(args); ok {
				changes = append(changes, change{id: id, j: clip(j)})
				continue
			}
		}
		// The writer's own prepared statement: preparing it for every
		// row cost more than reading the row.
		j, _, err := scanJob(s.stmts[jobByIDSQL].QueryRowContext(ctx, id))
		if errors.Is(err, sql.ErrNoRows) {
			err = ErrNotFound
		}
		switch {
		case err == nil:
			changes = append(changes, change{id: id, j: clip(j)})
		case errors.Is(err, ErrNotFound):
			changes = append(changes, change{id: id, gone: true})
		default:
			c.mu.Lock()
			c.loaded, c.rows = false, nil
			c.mu.Unlock()
			return
		}
	}
	since := now.Add(-window)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		if ch.gone || !within(ch.j, since) {
			delete(c.rows, ch.id)
		} else {
			c.rows[ch.id] = ch.j
		}
	}
	if now.Sub(c.pruned) > window/4 {
		for id, j := range c.rows {
			if !within(j, since) {
				delete(c.rows, id)
			}
		}
		c.pruned = now
	}
}

// cachedJobs answers Jobs from the cache, or ok=false when it cannot.
func (s *Store) cachedJobs(f Filter) (jobs []Job, ok bool) {
	ok = s.cachedEach(f, func(n int) { jobs = make([]Job, 0, n) }, func(j *Job) { jobs = append(jobs, *j) })
	return jobs, ok
}

// cachedEach calls fn with every cached job f matches, in id order, in
// place: no job is copied (size, when not nil, hears how many first). It
// holds the cache's read lock meanwhile, so fn must not keep the pointer,
// change the job, or call the store. It reports false, calling nothing,
// when the cache cannot answer f.
func (s *Store) cachedEach(f Filter, size func(int), fn func(*Job)) bool {
	s.mu.RLock()
	c := s.cache
	s.mu.RUnlock()
	if c == nil || f.Since.IsZero() {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.loaded || f.Since.Before(s.clock.Now().Add(-c.window)) {
		return false
	}
	var ids []uint32
	for id, j := range c.rows {
		if f.matches(j) {
			ids = append(ids, id)
		}
	}
	// Sort the ids, not the rows: a Job is large.
	slices.Sort(ids)
	if size != nil {
		size(len(ids))
	}
	for _, id := range ids {
		fn(c.rows[id])
	}
	return true
}

// within is the cache's condition: not ended, or ended at or after since.
func within(j *Job, since time.Time) bool {
	return j.End.IsZero() || j.End.UnixNano() >= since.UnixNano()
}

// matches is Filter.where evaluated on a decoded row.
func (f Filter) matches(j *Job) bool {
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, j.ID) && !slices.Contains(f.IDs, j.ArrayJobID) {
		return false
	}
	if len(f.Users) > 0 && !slices.Contains(f.Users, j.User) ||
		len(f.Accounts) > 0 && !slices.Contains(f.Accounts, j.Account) ||
		len(f.Partitions) > 0 && !slices.Contains(f.Partitions, j.Partition) ||
		len(f.Names) > 0 && !slices.Contains(f.Names, j.Name) ||
		len(f.States) > 0 && !slices.Contains(f.States, j.State) {
		return false
	}
	if !f.Since.IsZero() && !within(j, f.Since) {
		return false
	}
	if !f.Until.IsZero() && (j.Submit.IsZero() || j.Submit.UnixNano() > f.Until.UnixNano()) {
		return false
	}
	return true
}

// clip gives the row's slices no spare capacity, so that a caller's append
// to a job it was given never writes into the cache's copy.
func clip(j Job) *Job {
	j.ArrayPending = slices.Clip(j.ArrayPending)
	j.Notes = slices.Clip(j.Notes)
	j.Alloc.GPUs = slices.Clip(j.Alloc.GPUs)
	return &j
}
