package httpapi

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/job"
)

// jobListLimit is the page size of GET /v1/jobs without ?limit; at most jobListMaxLimit.
const (
	jobListLimit    = 20
	jobListMaxLimit = 100
)

// listJobs lists the caller's account's jobs, newest first, a page at a time: a caller whose
// connection dropped finds the job (and whether it was charged) here.
func (s *server) listJobs(c *fiber.Ctx) error {
	q, err := jobListQuery(c)
	if err != nil {
		return err
	}
	list, next, err := s.Jobs.List(c.UserContext(), principalOf(c).AccountID, q)
	if err != nil {
		return err
	}
	for i := range list {
		list[i].StatusURL = s.PublicBaseURL + "/v1/jobs/" + list[i].ID.String()
	}
	var cursor *string
	if next != nil {
		v := next.String()
		cursor = &v
	}
	return c.JSON(fiber.Map{"success": true, "data": fiber.Map{"jobs": list, "next_cursor": cursor}})
}

// jobListQuery reads ?limit, ?status and ?cursor, each at most once; any other parameter is
// refused, so a misspelt filter never silently lists everything.
func jobListQuery(c *fiber.Ctx) (job.ListQuery, error) {
	q := job.ListQuery{Limit: jobListLimit}
	seen := map[string]bool{}
	var err error
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		name, val := string(k), string(v)
		switch {
		case err != nil:
			return
		case name != "limit" && name != "status" && name != "cursor":
			if len(name) > 64 {
				name = name[:64] + "..."
			}
			err = apperr.Invalid("unknown query parameter %q: GET /v1/jobs takes limit, status and cursor", name)
			return
		case seen[name]:
			err = apperr.Invalid("%s is given more than once", name)
			return
		}
		seen[name] = true
		switch name {
		case "limit":
			n, perr := strconv.Atoi(val)
			if perr != nil || n < 1 || n > jobListMaxLimit {
				err = apperr.Invalid("limit must be a whole number from 1 to %d", jobListMaxLimit)
			}
			q.Limit = n
		case "status":
			switch val {
			case job.Queued, job.Running, job.Succeeded, job.Failed:
				q.Status = val
			default:
				err = apperr.Invalid("status must be queued, running, succeeded or failed")
			}
		case "cursor":
			q.After, err = job.ParseCursor(val)
		}
	})
	return q, err
}
