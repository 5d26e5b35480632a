package job

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
)

// Summary is a job as GET /v1/jobs lists it: what it was, how it stands and what it cost.
type Summary struct {
	ID         uuid.UUID    `json:"job_id"`
	Kind       string       `json:"kind"`
	Endpoint   string       `json:"endpoint"`
	Status     string       `json:"status"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	Credits    CreditStatus `json:"credits"`
	// StatusURL is GET /v1/jobs/{id}'s address, set by the HTTP layer (which knows the
	// public base URL).
	StatusURL string `json:"status_url"`
	// Subject is what the request was about, its fields that name it (domain, topic,
	// keywords, focus_topics, competitors) as a JSON object, for lists people read.
	Subject json.RawMessage `json:"-"`
}

// CreditStatus is a job's price and what became of its reservation: reserved (the job has
// not ended), charged or refunded.
type CreditStatus struct {
	Cost   int    `json:"cost"`
	Status string `json:"status"`
}

// ListQuery selects a page of an account's jobs, newest first.
type ListQuery struct {
	Limit  int
	Status string // one of the job statuses, or "" for all
	// After is the cursor of the last job of the previous page (its NextCursor); zero for
	// the first page.
	After Cursor
}

// Cursor is a position in an account's job list: the created_at and id of a job.
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// String encodes the cursor for a query string.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID.String()))
}

// ParseCursor reads a cursor String gave; anything else is VALIDATION_ERROR.
func ParseCursor(s string) (Cursor, error) {
	bad := apperr.Invalid("cursor is not one this API gave: pass next_cursor of the previous page unchanged")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return Cursor{}, bad
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return Cursor{}, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return Cursor{}, bad
	}
	return Cursor{CreatedAt: time.UnixMicro(us).UTC(), ID: u}, nil
}

// List returns a page of the account's jobs, newest first, and the cursor of the next page
// (nil on the last). Jobs past JOB_RETENTION are no longer listed.
func (s *Service) List(ctx context.Context, accountID uuid.UUID, q ListQuery) ([]Summary, *Cursor, error) {
	var status *string
	if q.Status != "" {
		status = &q.Status
	}
	var afterAt *time.Time
	if !q.After.CreatedAt.IsZero() {
		afterAt = &q.After.CreatedAt
	}
	rows, err := s.pool.Query(ctx, `
		SELECT j.id, j.kind, j.endpoint, j.status, j.created_at, j.finished_at, j.cost,
			CASE r.status WHEN 'settled' THEN 'charged' ELSE r.status END,
			jsonb_strip_nulls(jsonb_build_object('domain', j.request->'domain', 'topic', j.request->'topic',
				'keywords', j.request->'keywords', 'focus_topics', j.request->'focus_topics',
				'competitors', j.request->'competitors'))
		FROM jobs j JOIN reservations r ON r.id = j.reservation_id
		WHERE j.account_id = $1 AND ($2::text IS NULL OR j.status = $2)
			AND ($3::timestamptz IS NULL OR (j.created_at, j.id) < ($3, $4))
		ORDER BY j.created_at DESC, j.id DESC
		LIMIT $5`, accountID, status, afterAt, q.After.ID, q.Limit+1)
	if err != nil {
		return nil, nil, fmt.Errorf("job: list: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Summary, error) {
		var j Summary
		err := row.Scan(&j.ID, &j.Kind, &j.Endpoint, &j.Status, &j.CreatedAt, &j.FinishedAt, &j.Credits.Cost, &j.Credits.Status, &j.Subject)
		return j, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("job: list: %w", err)
	}
	if len(list) <= q.Limit {
		return list, nil, nil
	}
	list = list[:q.Limit]
	last := list[len(list)-1]
	return list, &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}, nil
}
