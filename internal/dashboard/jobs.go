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
	Report  *reportView // when the job succeeded
	CSV     bool
	Share   shareData
	// CSRFToken is the page's form token, for the share section's forms.
	CSRFToken string
}

func (d *Dashboard) jobPage(c *fiber.Ctx) error {
	j, err := d.routeJob(c)
	if err != nil {
		return err
	}
	return d.renderJob(c, fiber.StatusOK, j, shareData{})
}

// renderJob shows a job: what was asked, its state, and once it succeeded its report, its
// downloads and its share links.
func (d *Dashboard) renderJob(c *fiber.Ctx, status int, j job.Job, sh shareData) error {
	data := jobData{Job: j, Request: indent(j.Request), Share: sh, CSRFToken: d.csrfToken(c)}
	if j.Status == job.Succeeded && len(j.Result) > 0 {
		rv, err := newReportView(j.Kind, j.Request, j.Result, j.Meta)
		if err != nil {
			return err
		}
		data.Report, data.CSV = rv, hasCSV(j.Kind)
		if rv.Audit != nil {
			rv.Audit.IssueBase = Path + "/jobs/" + j.ID.String() + "/issues/"
		}
		if a, ok := report.Lookup(j.Kind); ok && rv.Page != nil && rv.Page.Cursor != "" {
			rv.Page.Next = Path + "/new/" + slug(a) + "?from=" + j.ID.String()
		}
		if data.Share.Shares, err = d.shares(c, j.ID); err != nil {
			return err
		}
		if data.Share.Days == 0 {
			data.Share.Days = 7
		}
	}
	title := "Job " + j.ID.String()
	if data.Report != nil {
		title = data.Report.Title
		if data.Report.Subject != "" {
			title += ": " + data.Report.Subject
		}
	}
	v := view{Title: title, Nav: "jobs", Data: data}
	if !j.Done() {
		v.Refresh = jobRefresh
	}
	return d.render(c, status, "job", v)
}

// hasCSV reports whether results of the kind download as CSV.
func hasCSV(kind string) bool {
	a, ok := report.Lookup(kind)
	return ok && a.Rows != nil
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
	return sendJSON(c, j)
}

func (d *Dashboard) jobCSV(c *fiber.Ctx) error {
	j, err := d.finishedResult(c)
	if err != nil {
		return err
	}
	return sendCSV(c, j)
}

// sendJSON sends a finished job's result as a JSON download.
func sendJSON(c *fiber.Ctx, j job.Job) error {
	c.Attachment("job-" + j.ID.String() + ".json")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(j.Result)
}

// sendCSV sends a finished job's result as a CSV download, for the kinds that have rows.
func sendCSV(c *fiber.Ctx, j job.Job) error {
	if !hasCSV(j.Kind) {
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
