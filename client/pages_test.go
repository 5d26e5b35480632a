package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/contentapi/contentapi/client"
)

// rankingsPage is a rankings answer holding one keyword, continued by next (null when "").
func rankingsPage(keyword, next string) fakeAnswer {
	cursor := "null"
	if next != "" {
		cursor = `"` + next + `"`
	}
	return fakeAnswer{status: 200, body: `{"success":true,"data":{"domain":"a.example","rankings":[{"keyword":"` + keyword +
		`","position":1}],"total":3,"next_cursor":` + cursor + `},"meta":{"credits_used":5}}`}
}

// sentCursors returns the cursor of each request the fake received.
func (f *fakeAPI) sentCursors(t *testing.T) []client.Cursor {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []client.Cursor
	for _, b := range f.bodies {
		var req client.RankingsRequest
		if err := json.Unmarshal([]byte(b), &req); err != nil {
			t.Fatal(err)
		}
		out = append(out, req.Cursor)
	}
	return out
}

// Every page once, each asked with the previous page's cursor, until one without.
func TestPagesWalkEveryPage(t *testing.T) {
	f := newFake(t, rankingsPage("a", "c1"), rankingsPage("b", "c2"), rankingsPage("c", ""))
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	var got []string
	for page, err := range c.KeywordRankingsPages(context.Background(), client.RankingsRequest{Domain: "a.example"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Rankings[0].Keyword)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("pages %v", got)
	}
	if sent := f.sentCursors(t); !slices.Equal(sent, []client.Cursor{"", "c1", "c2"}) {
		t.Fatalf("cursors sent %q", sent)
	}
}

// A walk starts at the request's cursor; a break asks for no further page; walking the
// same pages again starts again from the request's cursor.
func TestPagesResumeAndBreak(t *testing.T) {
	f := newFake(t, rankingsPage("b", "c2"), rankingsPage("b", "c2"), rankingsPage("c", ""))
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	req := client.RankingsRequest{Domain: "a.example", Query: client.Query{Cursor: "c1"}}
	pages := c.KeywordRankingsPages(context.Background(), req)
	for page, err := range pages {
		if err != nil || page.NextCursor != "c2" {
			t.Fatalf("page %+v %v", page, err)
		}
		break
	}
	if sent := f.sentCursors(t); !slices.Equal(sent, []client.Cursor{"c1"}) {
		t.Fatalf("cursors sent %q", sent)
	}
	for _, err := range pages {
		if err != nil {
			t.Fatal(err)
		}
	}
	if sent := f.sentCursors(t); !slices.Equal(sent, []client.Cursor{"c1", "c1", "c2"}) {
		t.Fatalf("cursors sent %q", sent)
	}
}

// The first error is yielded and ends the walk.
func TestPagesStopAtTheFirstError(t *testing.T) {
	f := newFake(t, rankingsPage("a", "c1"),
		fakeAnswer{status: 400, body: `{"success":false,"error":{"code":"INVALID_CURSOR","message":"expired"}}`},
		rankingsPage("c", ""))
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	var steps []string
	for page, err := range c.KeywordRankingsPages(context.Background(), client.RankingsRequest{Domain: "a.example"}) {
		switch {
		case err != nil && page == nil:
			steps = append(steps, client.ErrorCode(err))
		case err == nil:
			steps = append(steps, page.Rankings[0].Keyword)
		default:
			t.Fatalf("page %+v with error %v", page, err)
		}
	}
	if !slices.Equal(steps, []string{"a", client.CodeInvalidCursor}) || f.count() != 2 {
		t.Fatalf("steps %v after %d requests", steps, f.count())
	}
}

// A cancelled context ends the walk with its error before the next page is asked.
func TestPagesHonourContext(t *testing.T) {
	f := newFake(t, rankingsPage("a", "c1"), rankingsPage("b", ""))
	c := client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error
	for _, err := range c.KeywordRankingsPages(ctx, client.RankingsRequest{Domain: "a.example"}) {
		errs = append(errs, err)
		cancel()
	}
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], context.Canceled) || f.count() != 1 {
		t.Fatalf("errors %v after %d requests", errs, f.count())
	}
}

// nextCursors walks pages and returns each page's NextCursor, as next reads it.
func nextCursors[T any](pages iter.Seq2[T, error], next func(T) client.Cursor) ([]client.Cursor, error) {
	var out []client.Cursor
	for p, err := range pages {
		if err != nil {
			return out, err
		}
		out = append(out, next(p))
	}
	return out, nil
}

// Every paged endpoint returns the one Cursor type, "" on the last page (next_cursor null),
// and its ...Pages method walks it, sending the cursor back.
func TestEveryPagedEndpointWalks(t *testing.T) {
	ctx := context.Background()
	walks := map[string]func(c *client.Client) ([]client.Cursor, error){
		`"clusters":[]`: func(c *client.Client) ([]client.Cursor, error) {
			return nextCursors(c.KeywordResearchPages(ctx, client.ResearchRequest{Domain: "a.example"}),
				func(p *client.ResearchResult) client.Cursor { return p.NextCursor })
		},
		`"gaps":[]`: func(c *client.Client) ([]client.Cursor, error) {
			return nextCursors(c.KeywordGapsPages(ctx, client.GapsRequest{Domain: "a.example"}),
				func(p *client.GapsResult) client.Cursor { return p.NextCursor })
		},
		`"competitors":[]`: func(c *client.Client) ([]client.Cursor, error) {
			return nextCursors(c.KeywordCompetitorsPages(ctx, client.CompetitorsRequest{Domain: "a.example"}),
				func(p *client.CompetitorsResult) client.Cursor { return p.NextCursor })
		},
		`"jobs":[]`: func(c *client.Client) ([]client.Cursor, error) {
			return nextCursors(c.ListJobsPages(ctx, client.ListJobsOptions{Limit: 1}),
				func(p *client.JobList) client.Cursor { return p.NextCursor })
		},
	}
	for data, walk := range walks {
		page := func(next string) fakeAnswer {
			return fakeAnswer{status: 200, body: `{"success":true,"data":{` + data + `,"next_cursor":` + next + `},"meta":{}}`}
		}
		f := newFake(t, page(`"n1"`), page(`null`))
		got, err := walk(client.New("ap_x", client.WithBaseURL(f.URL), client.WithRetryPolicy(fast)))
		if err != nil || !slices.Equal(got, []client.Cursor{"n1", ""}) {
			t.Errorf("%s: next cursors %q, %v", data, got, err)
		}
		f.mu.Lock()
		sent := client.Cursor(f.requests[1].URL.Query().Get("cursor")) // GET /v1/jobs
		if f.requests[1].Method == "POST" {
			var body client.Query
			if err := json.Unmarshal([]byte(f.bodies[1]), &body); err != nil {
				t.Error(err)
			}
			sent = body.Cursor
		}
		f.mu.Unlock()
		if sent != "n1" {
			t.Errorf("%s: the second page was asked with cursor %q", data, sent)
		}
	}
}
