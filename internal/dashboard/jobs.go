package dashboard

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/report"
)

// jobsPageSize is how many jobs one page of the list shows.
const jobsPageSize = 25

// jobRefresh is how often, in seconds, a job's page reloads while the job runs.
const jobRefresh = 2

// maxShownResult bounds the result shown on a job's page; larger ones are downloaded.
const maxShownResult = 256 << 10

var jobStatuses = []string{job.Queued, job.Running, job.Succeeded, job.Failed}

func (d *Dashboard) jobRoutes(r fiber.Router) {
	r.Get("/jobs", d.signedIn, d.jobsPage)
	r.Get("/jobs/:id", d.signedIn, d.jobPage)
	r.Get("/jobs/:id/result.json", d.signedIn, d.jobJSON)
	r.Get("/jobs/:id/result.csv", d.signedIn, d.jobCSV)
}

type jobsData struct {
	Jobs     []job.Summary
	Status   string
	Statuses []string
	Next     string // the next page's cursor, if any
	First    bool
}

func (d *Dashboard) jobsPage(c *fiber.Ctx) error {
	s, _ := sessionOf(c)
	q := job.ListQuery{Limit: jobsPageSize, Status: strings.Clone(c.Query("status"))}
	if q.Status != "" && !slices.Contains(jobStatuses, q.Status) {
		return apperr.Invalid("Choose a status from the list.")
	}
	if cur := c.Query("cursor"); cur != "" {
		var err error
		if q.After, err = job.ParseCursor(cur); err != nil {
			return err
		}
	}
	jobs, next, err := d.Jobs.List(c.UserContext(), s.Account.ID, q)
	if err != nil {
		return err
	}
	data := jobsData{Jobs: jobs, Status: q.Status, Statuses: jobStatuses, First: q.After.CreatedAt.IsZero()}
	if next != nil {
		data.Next = next.String()
	}
	return d.render(c, fiber.StatusOK, "jobs", view{Title: "Jobs", Nav: "jobs", Data: data})
}

// routeJob is the account's job the route names.
func (d *Dashboard) routeJob(c *fiber.Ctx) (job.Job, error) {
	s, _ := sessionOf(c)
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return job.Job{}, apperr.New(apperr.NotFound, "Job not found.")
	}
	return d.Jobs.Get(c.UserContext(), s.Account.ID, id)
}

type jobData struct {
	Job     job.Job
	Request string
	Result  string // indented; empty when too large to show or absent
	Large   bool
	CSV     bool
}

func (d *Dashboard) jobPage(c *fiber.Ctx) error {
	j, err := d.routeJob(c)
	if err != nil {
		return err
	}
	data := jobData{Job: j, Request: indent(j.Request), Large: len(j.Result) > maxShownResult}
	if !data.Large {
		data.Result = indent(j.Result)
	}
	if a, ok := report.Lookup(j.Kind); ok && a.CSV && j.Status == job.Succeeded {
		data.CSV = true
	}
	v := view{Title: "Job " + j.ID.String(), Nav: "jobs", Data: data}
	if !j.Done() {
		v.Refresh = jobRefresh
	}
	return d.render(c, fiber.StatusOK, "job", v)
}

func indent(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// finishedResult is the job's result, for download: only a succeeded job has one.
func (d *Dashboard) finishedResult(c *fiber.Ctx) (job.Job, error) {
	j, err := d.routeJob(c)
	if err != nil {
		return j, err
	}
	if j.Status != job.Succeeded || len(j.Result) == 0 {
		return j, apperr.New(apperr.NotFound, "This job has no result to download (it is %s).", j.Status)
	}
	return j, nil
}

func (d *Dashboard) jobJSON(c *fiber.Ctx) error {
	j, err := d.finishedResult(c)
	if err != nil {
		return err
	}
	c.Attachment("job-" + j.ID.String() + ".json")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(j.Result)
}

func (d *Dashboard) jobCSV(c *fiber.Ctx) error {
	j, err := d.finishedResult(c)
	if err != nil {
		return err
	}
	if a, ok := report.Lookup(j.Kind); !ok || !a.CSV {
		return apperr.New(apperr.NotFound, "Results of %s have no CSV form; download the JSON.", j.Endpoint)
	}
	body, err := report.CSV(j.Kind, j.Result)
	if err != nil {
		return err
	}
	c.Attachment("job-" + j.ID.String() + ".csv")
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	return c.Send(body)
}
