package pgstore

import (
	"context"
	"time"
)

// ExplainDue runs the first page query of Due at now under EXPLAIN
// ANALYZE and returns the plan as JSON.
func ExplainDue(ctx context.Context, s *Store, now time.Time) (string, error) {
	var plan string
	err := s.db.QueryRowContext(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+s.dueSQL, now, time.Time{}, "").Scan(&plan)
	return plan, err
}
