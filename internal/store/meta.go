package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The meta table keeps small named values besides the next job id:
// reservations live there as "reservation/NAME" with their JSON, so they
// need no schema step of their own.

// PutMeta sets key to value.
func (t *Tx) PutMeta(key, value string) error {
	t.forgetNext() // it may be next_job_id
	if _, err := t.exec(`INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value); err != nil {
		return fmt.Errorf("storing %s: %w", key, err)
	}
	return nil
}

// Meta returns key's value in the transaction, and whether it is there.
func (t *Tx) Meta(key string) (string, bool, error) {
	var v string
	err := t.queryRow("SELECT CAST(value AS TEXT) FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", key, err)
	}
	return v, true, nil
}

// DeleteMeta removes key; removing one not there is not an error.
func (t *Tx) DeleteMeta(key string) error {
	t.forgetNext()
	if _, err := t.exec("DELETE FROM meta WHERE key = ?", key); err != nil {
		return fmt.Errorf("removing %s: %w", key, err)
	}
	return nil
}

// MetaPrefix returns the values whose keys start with prefix, by key.
func (s *Store) MetaPrefix(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT CAST(value AS TEXT) FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
		len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("reading %s*: %w", prefix, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("reading %s*: %w", prefix, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
