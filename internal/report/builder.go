package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/keywords"
)

// Builder builds analysis answers.
type Builder struct {
	Keywords keywords.Provider
	Crawler  *crawler.Crawler
	Clock    clock.Clock
	// ThinWords is the main-content word count under which a page is thin.
	ThinWords int
	// History, when set, gives an audit its changes since the account's previous audit of
	// the same domain; without it changes is null.
	History AuditHistory
	// Cursors seals the next_cursor of keyword answers and checks the cursor of a request;
	// without it answers carry no next_cursor and a request with a cursor fails.
	Cursors *Cursors
}

// Run builds the answer of a job from its stored request with the catalogue's run function
// of its kind; jobID names the answer where the API gives it an id (a recommendation plan's
// plan_id). The API validated and normalised the request before storing it, so it is only
// read here (see Analysis.ReadStored).
func (b *Builder) Run(ctx context.Context, kind, jobID string, request []byte) (any, error) {
	a, ok := Lookup(kind)
	if !ok {
		return nil, fmt.Errorf("report: unknown kind %q: %w", kind, ErrBadJob)
	}
	req, err := a.ReadStored(request)
	if err != nil {
		return nil, err
	}
	return a.Run(ctx, b, req, jobID)
}

// ErrBadJob marks a job whose stored request cannot be run at all.
var ErrBadJob = errors.New("job cannot be run")

// ReadStored reads a job row's request into the analysis's request type. The API stored it
// normalised, so it is not checked again (address rules are enforced again when
// connecting); a field the row lacks (a request written another way) takes its default.
func (a Analysis) ReadStored(raw []byte) (Request, error) {
	req := a.NewRequest()
	if err := json.Unmarshal(raw, req); err != nil {
		return nil, fmt.Errorf("report: stored request: %w: %w", err, ErrBadJob)
	}
	req.defaults()
	return req, nil
}

// now is the builder's clock, or the system's when none is set.
func (b *Builder) now() time.Time {
	if b.Clock == nil {
		return time.Now()
	}
	return b.Clock.Now()
}

func (b *Builder) thinWords() int {
	if b.ThinWords > 0 {
		return b.ThinWords
	}
	return defaultThinWords
}
