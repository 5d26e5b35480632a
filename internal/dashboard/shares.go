package dashboard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
)

// A share is a read-only link to one job's report, for someone without an account: the
// link's token (32 random bytes) is the only credential, kept as its digest as sessions
// are; it shows the report and its downloads and nothing of the account, and ends at its
// expiry or when revoked.

// Share expiry bounds, in days.
const (
	minShareDays = 1
	maxShareDays = 30
)

// SharePath is where shared reports are served, under the dashboard. The token is the
// query's token parameter, not a path segment: the access log masks it there.
const SharePath = "/shared"

// shareToken is the request's share token.
func shareToken(c *fiber.Ctx) string { return strings.Clone(c.Query("token")) }

// reportRoutes serve what reports link to: audit issue pages, and share links.
func (d *Dashboard) reportRoutes(r fiber.Router) {
	r.Get("/jobs/:id/issues/:type", d.signedIn, d.jobIssuePage)
	r.Get(SharePath+"/issues/:type", d.sharedIssuePage)
	r.Post("/jobs/:id/shares", d.signedIn, d.createShare)
	r.Post("/jobs/:id/shares/:share/revoke", d.signedIn, d.revokeShare)
	r.Get(SharePath, d.sharedPage)
	r.Get(SharePath+"/result.json", d.sharedJSON)
	r.Get(SharePath+"/result.csv", d.sharedCSV)
}

// share is a link as its owner sees it on the job's page.
type share struct {
	ID        uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
	Active    bool
}

// shareData is the job page's share section.
type shareData struct {
	Shares []share
	// NewLink is a link just made, shown this once (only its digest is kept).
	NewLink string
	Error   string
	Days    int
}

func (d *Dashboard) shares(c *fiber.Ctx, jobID uuid.UUID) ([]share, error) {
	rows, err := d.Pool.Query(c.UserContext(), `
		SELECT id, created_at, expires_at, revoked_at FROM report_shares
		WHERE job_id = $1 ORDER BY created_at DESC, id`, jobID)
	if err != nil {
		return nil, fmt.Errorf("dashboard: list shares: %w", err)
	}
	now := d.Clock.Now()
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (share, error) {
		var s share
		err := row.Scan(&s.ID, &s.CreatedAt, &s.ExpiresAt, &s.RevokedAt)
		s.Active = s.RevokedAt == nil && s.ExpiresAt.After(now)
		return s, err
	})
}

// shareDays reads the form's expiry in days.
func shareDays(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < minShareDays || n > maxShareDays {
		return 0, apperr.Invalid("Choose an expiry of %d to %d days.", minShareDays, maxShareDays)
	}
	return n, nil
}

func (d *Dashboard) createShare(c *fiber.Ctx) error {
	j, err := d.routeJob(c)
	if err != nil {
		return err
	}
	if j.Status != job.Succeeded {
		return apperr.New(apperr.NotFound, "Only a finished report can be shared (this job is %s).", j.Status)
	}
	days, err := shareDays(string(c.Request().PostArgs().Peek("days")))
	if err != nil {
		e, _ := apperr.As(err)
		return d.renderJob(c, fiber.StatusBadRequest, j, shareData{Error: e.Message})
	}
	secret, token, err := newSecret()
	if err != nil {
		return err
	}
	now := d.Clock.Now()
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if _, err := d.Pool.Exec(c.UserContext(), `
		INSERT INTO report_shares (id, job_id, account_id, token_digest, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, j.ID, j.AccountID, digest(secret), now, now.AddDate(0, 0, days)); err != nil {
		return fmt.Errorf("dashboard: create share: %w", err)
	}
	return d.renderJob(c, fiber.StatusCreated, j, shareData{NewLink: d.URL + SharePath + "?token=" + token, Days: days})
}

func (d *Dashboard) revokeShare(c *fiber.Ctx) error {
	j, err := d.routeJob(c)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(c.Params("share"))
	if err != nil {
		return apperr.New(apperr.NotFound, "There is no such link.")
	}
	tag, err := d.Pool.Exec(c.UserContext(), `
		UPDATE report_shares SET revoked_at = coalesce(revoked_at, $3) WHERE id = $1 AND job_id = $2`, id, j.ID, d.Clock.Now())
	if err != nil {
		return fmt.Errorf("dashboard: revoke share: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.New(apperr.NotFound, "There is no such link.")
	}
	return c.Redirect(Path+"/jobs/"+j.ID.String()+"#share", fiber.StatusSeeOther)
}

// errShareGone answers a link revoked or past its expiry.
var errShareGone = fiber.NewError(fiber.StatusGone, "This link has expired or was revoked. Ask whoever sent it for a new one.")

// sharedJob is the job a share link's token opens: 404 for a token never made, 410 for a
// link that ended.
func (d *Dashboard) sharedJob(c *fiber.Ctx) (job.Job, error) {
	notFound := apperr.New(apperr.NotFound, "There is no such link.")
	secret, ok := readSecret(shareToken(c))
	if !ok {
		return job.Job{}, notFound
	}
	var (
		jobID     uuid.UUID
		expiresAt time.Time
		revokedAt *time.Time
	)
	err := d.Pool.QueryRow(c.UserContext(), `
		SELECT job_id, expires_at, revoked_at FROM report_shares WHERE token_digest = $1`, digest(secret)).
		Scan(&jobID, &expiresAt, &revokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return job.Job{}, notFound
	}
	if err != nil {
		return job.Job{}, fmt.Errorf("dashboard: read share: %w", err)
	}
	if revokedAt != nil || !expiresAt.After(d.Clock.Now()) {
		return job.Job{}, errShareGone
	}
	j, err := d.Jobs.Load(c.UserContext(), jobID)
	if err != nil {
		return job.Job{}, err
	}
	if j.Status != job.Succeeded || len(j.Result) == 0 {
		return job.Job{}, notFound
	}
	// The link's page is not to be indexed, nor its address sent on to other sites.
	c.Set("X-Robots-Tag", "noindex, nofollow")
	c.Set("Referrer-Policy", "no-referrer")
	return j, nil
}

// sharedView is a shared link's page: the report and its downloads.
type sharedView struct {
	Report   *reportView
	Token    string // the link's token, for the downloads
	CSV      bool
	Finished *time.Time
}

func (d *Dashboard) sharedPage(c *fiber.Ctx) error {
	j, err := d.sharedJob(c)
	if err != nil {
		return err
	}
	rv, err := newReportView(j.Kind, j.Request, j.Result, j.Meta)
	if err != nil {
		return err
	}
	data := sharedView{Report: rv, Token: shareToken(c), CSV: hasCSV(j.Kind), Finished: j.FinishedAt}
	if rv.Audit != nil {
		rv.Audit.IssueBase, rv.Audit.IssueToken = Path+SharePath+"/issues/", data.Token
	}
	return d.render(c, fiber.StatusOK, "shared", view{Title: rv.Title, Public: true, Data: data})
}

func (d *Dashboard) sharedJSON(c *fiber.Ctx) error {
	j, err := d.sharedJob(c)
	if err != nil {
		return err
	}
	return sendJSON(c, j)
}

func (d *Dashboard) sharedCSV(c *fiber.Ctx) error {
	j, err := d.sharedJob(c)
	if err != nil {
		return err
	}
	return sendCSV(c, j)
}

func (d *Dashboard) sharedIssuePage(c *fiber.Ctx) error {
	j, err := d.sharedJob(c)
	if err != nil {
		return err
	}
	return d.renderIssue(c, j, Path+SharePath+"?token="+shareToken(c), true)
}

func (d *Dashboard) jobIssuePage(c *fiber.Ctx) error {
	j, err := d.finishedResult(c)
	if err != nil {
		return err
	}
	return d.renderIssue(c, j, Path+"/jobs/"+j.ID.String(), false)
}

// renderIssue shows every URL an audit lists for one issue type; back is the report's page.
func (d *Dashboard) renderIssue(c *fiber.Ctx, j job.Job, back string, public bool) error {
	p, ok, err := newIssuePage(j.Kind, j.Request, j.Result, strings.Clone(c.Params("type")))
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.NotFound, "This report has no such issue.")
	}
	p.Back = back
	return d.render(c, fiber.StatusOK, "issue", view{Title: humanize(p.Issue.Type), Nav: "jobs", Public: public, Data: p})
}
