package clienttest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/contentapi/contentapi/client"
)

// ListJobs pages through the account's jobs newest first; a job the caller lost track of
// (its connection dropped) is found there charged, and fetched with GetJob.
func TestClientListJobs(t *testing.T) {
	s := startService(t, serviceConfig{})
	ctx := context.Background()
	c := s.register(t, false)
	var ids []string
	for _, topic := range []string{"coffee", "espresso", "brew"} {
		j, err := c.Submit(ctx, client.OpKeywordResearch, client.ResearchRequest{Domain: sampleDomain(), Topic: topic, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitJob(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}

	var listed []string
	opts := client.ListJobsOptions{Limit: 2}
	for page := 0; page < 3; page++ {
		list, err := c.ListJobs(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range list.Jobs {
			if j.Status != client.JobSucceeded || j.Credits.Cost != 5 || j.Credits.Status != "charged" ||
				j.Kind != "keywords:research" || j.Endpoint != "/v1/keywords/research" || j.FinishedAt == nil || j.StatusURL == "" {
				t.Fatalf("job %+v", j)
			}
			listed = append(listed, j.ID)
		}
		if list.NextCursor == "" {
			break
		}
		opts.Cursor = list.NextCursor
	}
	// The service's clock stands still here: the jobs share created_at, so only the set is
	// checked (order by time is the API's test).
	slices.Sort(listed)
	slices.Sort(ids)
	if !slices.Equal(listed, ids) {
		t.Fatalf("listed %v, want %v", listed, ids)
	}
	// ListJobsPages walks the same pages.
	var walked []string
	for list, err := range c.ListJobsPages(ctx, client.ListJobsOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range list.Jobs {
			walked = append(walked, j.ID)
		}
	}
	slices.Sort(walked)
	if !slices.Equal(walked, ids) {
		t.Fatalf("walked %v, want %v", walked, ids)
	}
	got, err := c.GetJob(ctx, listed[0])
	if err != nil || !got.Done() || got.Meta.CreditsUsed != 5 {
		t.Fatalf("the listed job's result: %+v %v", got, err)
	}

	if list, err := c.ListJobs(ctx, client.ListJobsOptions{Status: client.JobFailed}); err != nil || len(list.Jobs) != 0 {
		t.Fatalf("failed jobs: %+v %v", list, err)
	}
	_, err = c.ListJobs(ctx, client.ListJobsOptions{Limit: 500})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "VALIDATION_ERROR" {
		t.Fatalf("limit 500: %v", err)
	}
}
