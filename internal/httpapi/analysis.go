package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/crawler"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/report"
)

// HostChecker says whether a domain may be crawled; the crawler implements it.
type HostChecker interface {
	CheckHost(ctx context.Context, host string) error
}

// RenderChecker says whether some worker can render pages' JavaScript now; the worker's
// browser advertisement in Redis implements it.
type RenderChecker interface {
	RenderingAvailable(ctx context.Context) (bool, error)
}

// analysis returns the handler of one analysis endpoint: validate, reserve and enqueue, then
// wait for the job up to the sync timeout (or not at all with Prefer: respond-async).
func (s *server) analysis(spec report.Analysis) fiber.Handler {
	return func(c *fiber.Ctx) error {
		dryRun, err := analysisQuery(c)
		if err != nil {
			return err
		}
		req := spec.NewRequest()
		if err := decodeJSON(c, req); err != nil {
			return err
		}
		if err := req.Normalize(s.AnalysisOptions); err != nil {
			return err
		}
		if err := s.checkCursor(c, spec.Kind, req); err != nil {
			return err
		}
		if err := s.preflight(c.UserContext(), spec, req); err != nil {
			return err
		}
		key, err := idempotencyKey(c)
		if err != nil {
			return err
		}
		cost := spec.CostOf(req)
		if dryRun {
			return s.dryRun(c, spec, cost, spec.SettleRule(req))
		}
		p := principalOf(c)
		sub := job.Submission{AccountID: p.AccountID, Kind: string(spec.Kind), Endpoint: spec.Path, Cost: cost,
			Request: req, IdempotencyKey: key, RequestID: requestIDOf(c), CallbackURL: req.CallbackTarget(),
			KeyID: p.KeyID, Source: job.SourceAPI}
		async := strings.Contains(strings.ToLower(c.Get("Prefer")), "respond-async")
		var j job.Job
		if async {
			c.Set("Preference-Applied", "respond-async")
			j, err = s.Jobs.Submit(c.UserContext(), sub)
		} else {
			j, err = s.Jobs.SubmitAndWait(c.UserContext(), sub, s.SyncTimeout)
		}
		if err != nil {
			return err
		}
		if j.Replayed {
			c.Set("Idempotent-Replayed", "true")
		}
		if async && !j.Done() {
			return s.jobPending(c, j)
		}
		return s.jobAnswer(c, j)
	}
}

// preflight runs the checks of a valid request that look outside (addresses, renderers),
// before anything is charged; the dashboard's forms run them too.
func (s *server) preflight(ctx context.Context, spec report.Analysis, req report.Request) error {
	if err := s.checkHosts(ctx, spec.Kind, req); err != nil {
		return err
	}
	return s.checkRendering(ctx, req)
}

// checkHosts refuses, before anything is charged, a site the crawler would refuse: an audit
// of a domain that resolves to a private address or not at all, or a recommendation whose
// domain or competitors resolve to private addresses (a site that does not resolve there
// only leaves its section empty).
func (s *server) checkHosts(ctx context.Context, kind report.Kind, req report.Request) error {
	if s.Hosts == nil {
		return nil
	}
	if target := req.CallbackTarget(); target != "" {
		if u, err := url.Parse(target); err == nil {
			if err := s.Hosts.CheckHost(ctx, u.Host); err != nil {
				if errors.Is(err, crawler.ErrForbiddenAddress) || errors.Is(err, crawler.ErrInvalidDomain) {
					return apperr.Invalid("callback_url host %s resolves to a private or reserved address", u.Hostname())
				}
				if errors.Is(err, crawler.ErrUnresolvable) {
					return apperr.Invalid("callback_url host %s does not resolve to any address", u.Hostname())
				}
				return err
			}
		}
	}
	var domain string
	var competitors []string
	switch r := req.(type) {
	case *report.AuditRequest:
		domain = r.Domain
	case *report.RecommendRequest:
		domain, competitors = r.Domain, r.Competitors
	case *report.ContentMapRequest:
		domain, competitors = r.Domain, r.Competitors
	default:
		return nil
	}
	check := func(field, host string, mustResolve bool) error {
		err := s.Hosts.CheckHost(ctx, host)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, crawler.ErrForbiddenAddress) || errors.Is(err, crawler.ErrInvalidDomain):
			return apperr.Invalid("%s %s resolves to a private or reserved address and cannot be crawled", field, host)
		case errors.Is(err, crawler.ErrUnresolvable):
			if mustResolve {
				return apperr.Invalid("%s %s does not resolve to any address", field, host)
			}
			return nil
		}
		return err
	}
	if err := check("domain", domain, kind == report.KindAudit); err != nil {
		return err
	}
	for _, c := range competitors {
		if err := check("competitor", c, false); err != nil {
			return err
		}
	}
	return nil
}

// checkCursor refuses, before anything is charged, a cursor that is altered, expired, issued
// to another account or sent with another query (report.Cursors).
func (s *server) checkCursor(c *fiber.Ctx, kind report.Kind, req report.Request) error {
	p, ok := req.(report.PagedRequest)
	if !ok || p.PageQuery().Cursor == "" {
		return nil
	}
	if s.Cursors == nil {
		return apperr.New(apperr.InvalidCursor, "cursor is not accepted: this service has no cursor key")
	}
	_, err := s.Cursors.Open(kind, principalOf(c).AccountID.String(), p, s.Clock.Now())
	return err
}

// checkRendering refuses, before anything is charged, a request for JavaScript rendering
// when no worker has advertised a browser: the job could only fail.
func (s *server) checkRendering(ctx context.Context, req report.Request) error {
	if !report.Renders(req) {
		return nil
	}
	if s.Renderers == nil {
		return report.RenderingUnavailable()
	}
	ok, err := s.Renderers.RenderingAvailable(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return report.RenderingUnavailable()
	}
	return nil
}

// analysisQuery reads the query of an analysis call. dry_run is its only parameter; anything
// else is refused, so a misspelt ?dryrun=true never runs and charges a job.
func analysisQuery(c *fiber.Ctx) (dryRun bool, err error) {
	seen := false
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		switch name := string(k); {
		case err != nil:
		case name != "dry_run":
			err = apperr.Invalid("unknown query parameter %q: analysis calls take only dry_run", clip(name, 64))
		case seen:
			err = apperr.Invalid("dry_run is given more than once")
		default:
			seen = true
			dryRun, err = queryFlag("dry_run", string(v))
		}
	})
	return dryRun, err
}

// queryFlag reads a boolean query parameter in its usual spellings, any case: true, 1, yes,
// on, or the bare name (?dry_run); false, 0, no, off. Anything else is refused rather than
// read as false.
func queryFlag(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, apperr.Invalid("%s must be true or false (1/0, yes/no and on/off are accepted too)", name)
}

// idempotencyKey reads the Idempotency-Key header; "" when it was not sent. A header sent
// empty (or blank, or twice) is refused: the caller meant to make the call safe to retry,
// and running it without a key would charge each retry.
func idempotencyKey(c *fiber.Ctx) (string, error) {
	values := c.Request().Header.PeekAll("Idempotency-Key")
	if len(values) == 0 {
		return "", nil
	}
	if len(values) > 1 {
		return "", apperr.Invalid("Idempotency-Key is sent more than once; send one key")
	}
	key := strings.TrimSpace(string(values[0]))
	if key == "" {
		return "", apperr.Invalid("Idempotency-Key is empty; send a key of 1 to 255 printable characters, or no Idempotency-Key header")
	}
	if len(key) > 255 {
		return "", apperr.Invalid("Idempotency-Key must be at most 255 characters")
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return "", apperr.Invalid("Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return key, nil
}

func (s *server) jobPending(c *fiber.Ctx, j job.Job) error {
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"success": true, "data": fiber.Map{
		"job_id":     j.ID,
		"status":     j.Status,
		"status_url": s.PublicBaseURL + "/v1/jobs/" + j.ID.String(),
		"created_at": j.CreatedAt,
	}})
}

// HeaderDataSource names where a finished analysis's data came from (meta.data_source), on
// JSON and CSV answers alike: synthetic, mixed, imported, provider or crawl.
const HeaderDataSource = "X-Data-Source"

// jobAnswer answers with the job as the synchronous call would: its result with meta (and
// its data source in X-Data-Source), its failure in the validation shape (nothing was
// charged), or 202 while it runs.
func (s *server) jobAnswer(c *fiber.Ctx, j job.Job) error {
	switch j.Status {
	case job.Succeeded:
		balance := j.Balance
		if !j.Balanced {
			var err error
			if balance, err = s.Ledger.Balance(c.UserContext(), j.AccountID); err != nil {
				return err
			}
		}
		am, described := report.StoredMeta(j.Meta)
		if described {
			c.Set(HeaderDataSource, am.DataSource)
		}
		if spec, ok := report.Lookup(j.Kind); ok && spec.Rows != nil && wantsCSV(c) {
			body, err := report.CSV(j.Kind, j.Result)
			if err != nil {
				return err
			}
			c.Set("X-Credits-Used", strconv.Itoa(j.Cost))
			c.Set("X-Credits-Remaining", strconv.Itoa(balance))
			c.Set("X-Job-ID", j.ID.String())
			pagingHeaders(c, j.Result)
			c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
			c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+strings.ReplaceAll(strings.TrimPrefix(spec.Path, "/v1/"), "/", "-")+`.csv"`)
			return c.Send(body)
		}
		meta := fiber.Map{
			"credits_used":      j.Cost,
			"credits_remaining": balance,
			"request_id":        requestIDOf(c),
			"job_id":            j.ID,
			// The job's status sits beside its id in every state: data.status while it
			// runs (202), error.status when it failed, meta.status here.
			"status": j.Status,
		}
		if described {
			meta["data_source"], meta["warnings"] = am.DataSource, am.Warnings
		}
		return c.JSON(fiber.Map{"success": true, "data": j.Result, "meta": meta})
	case job.Failed:
		status, ok := statusOf[j.ErrorCode]
		if !ok {
			status = fiber.StatusBadGateway
		}
		if retry := retryAfter[j.ErrorCode]; retry > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
		}
		return c.Status(status).JSON(fiber.Map{"success": false, "error": fiber.Map{
			"code":             j.ErrorCode,
			"message":          j.ErrorMessage,
			"job_id":           j.ID,
			"status":           j.Status,
			"credits_refunded": j.Cost,
		}})
	}
	return s.jobPending(c, j)
}

// pagingHeaders carries a paged keyword list's total and next_cursor into a CSV answer's
// headers (X-Total-Count, X-Next-Cursor), which its rows cannot hold.
func pagingHeaders(c *fiber.Ctx, result []byte) {
	var p struct {
		Total      *int    `json:"total"`
		NextCursor *string `json:"next_cursor"`
	}
	if json.Unmarshal(result, &p) != nil {
		return
	}
	if p.Total != nil {
		c.Set("X-Total-Count", strconv.Itoa(*p.Total))
	}
	if p.NextCursor != nil {
		c.Set("X-Next-Cursor", *p.NextCursor)
	}
}

// wantsCSV reports whether the caller asked for CSV (Accept: text/csv) over JSON.
func wantsCSV(c *fiber.Ctx) bool {
	return c.Accepts(fiber.MIMEApplicationJSON, "text/csv") == "text/csv"
}

// dryRun answers what the call would cost at most (what it reserves) and the rule its
// charge follows, without running or charging it: the request was validated as the real
// call's is, and too small a balance is the real call's 402.
func (s *server) dryRun(c *fiber.Ctx, spec report.Analysis, cost int, rule string) error {
	balance, err := s.Ledger.Balance(c.UserContext(), principalOf(c).AccountID)
	if err != nil {
		return err
	}
	if balance < cost {
		return apperr.New(apperr.InsufficientCredits,
			"This call costs %d credits and the balance is %d. Upgrade your plan or wait for the next credit period.", cost, balance)
	}
	return c.JSON(fiber.Map{"success": true, "data": fiber.Map{
		"dry_run":           true,
		"endpoint":          spec.Path,
		"valid":             true,
		"credits_cost":      cost,
		"credits_remaining": balance,
		"balance_after":     balance - cost,
		"credits_rule":      rule,
	}, "meta": fiber.Map{"credits_used": 0, "credits_remaining": balance, "request_id": requestIDOf(c)}})
}

func (s *server) getJob(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.New(apperr.NotFound, "Job not found.")
	}
	j, err := s.Jobs.Get(c.UserContext(), principalOf(c).AccountID, id)
	if err != nil {
		return err
	}
	return s.jobAnswer(c, j)
}
