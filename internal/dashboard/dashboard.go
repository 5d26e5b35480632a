// Package dashboard is the web dashboard served under /dashboard: sign-in by e-mail link,
// browser sessions, API keys, usage, billing and jobs. Pages are rendered on the server with
// html/template; the stylesheet and the few lines of script are embedded in the binary. It
// uses Fiber because it is HTTP: internal/httpapi mounts it and lends it the client-address
// logic that honours TRUSTED_PROXIES.
package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/report"
)

// Path is where the dashboard is mounted; DASHBOARD_URL is its public address.
const Path = "/dashboard"

//go:embed templates
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Deps are what the dashboard needs, built in cmd/api.
type Deps struct {
	Log      *slog.Logger
	Pool     *pgxpool.Pool
	Accounts *auth.Accounts
	Gate     *auth.Gate
	Ledger   *credits.Ledger
	Limiter  *ratelimit.Limiter
	Billing  *billing.Service // nil or unconfigured: the billing page says so
	Jobs     *job.Service
	Mailer   Mailer
	Clock    clock.Clock
	// URL is the dashboard's public address (DASHBOARD_URL), used in e-mailed links; when
	// it is https the session cookie is Secure.
	URL string
	// SignInPerEmail and SignInPerAddress bound sign-in link requests per hour for one
	// e-mail address and for one client address; zero takes 5 and 20.
	SignInPerEmail, SignInPerAddress int
	// AnalysisOptions are the analyses' validation options, as the API's.
	AnalysisOptions report.Options
	// Cursors checks a form's cursor (a "Next page") before anything is charged, as the
	// API checks a call's; nil leaves the check to the worker, which fails the job.
	Cursors *report.Cursors
}

// Dashboard serves the dashboard's pages.
type Dashboard struct {
	Deps
	pages       map[string]*template.Template
	secure      bool
	crossOrigin *http.CrossOriginProtection
	clientAddr  func(*fiber.Ctx) netip.Addr
	preflight   Preflight
}

// New parses the templates and returns the dashboard.
func New(d Deps) (*Dashboard, error) {
	if d.SignInPerEmail == 0 {
		d.SignInPerEmail = 5
	}
	if d.SignInPerAddress == 0 {
		d.SignInPerAddress = 20
	}
	d.URL = strings.TrimRight(d.URL, "/")
	dash := &Dashboard{Deps: d, pages: map[string]*template.Template{},
		secure: strings.HasPrefix(d.URL, "https://"), crossOrigin: http.NewCrossOriginProtection()}
	// Every committed credit change may have lowered a balance under its e-mail threshold.
	if d.Ledger != nil && d.Pool != nil && d.Mailer != nil {
		d.Ledger.OnChange(dash.CheckLowBalance)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if page == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials/*.html", name)
		if err != nil {
			return nil, fmt.Errorf("dashboard: parse %s: %w", name, err)
		}
		dash.pages[page] = t
	}
	return dash, nil
}

// Mount adds the dashboard's routes to r (the /dashboard group). clientAddr gives the
// caller's address as the API sees it (behind trusted proxies, the forwarded one).
func (d *Dashboard) Mount(r fiber.Router, clientAddr func(*fiber.Ctx) netip.Addr) {
	d.clientAddr = clientAddr
	static, _ := fs.Sub(staticFS, "static")
	r.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static), MaxAge: 3600}))
	r.Use(d.htmlErrors, d.securityHeaders, d.loadSession, d.sameOrigin)
	d.signInRoutes(r)
	d.overviewRoutes(r)
	d.keyRoutes(r)
	d.jobRoutes(r)
	d.runRoutes(r)
	d.usageRoutes(r)
	d.billingRoutes(r)
	d.reportRoutes(r)
	r.Use(func(c *fiber.Ctx) error { return apperr.New(apperr.NotFound, "There is no such page.") })
}

// securityHeaders keeps pages out of frames and caches, and scripts to our own. Forms post
// here, but checkout and the portal answer with a redirect to the payment provider's https
// pages, which form-action also governs.
func (d *Dashboard) securityHeaders(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self' https:")
	c.Set(fiber.HeaderXFrameOptions, "DENY") // frame-ancestors for browsers without CSP 2
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// view is what every page template receives.
type view struct {
	Title   string
	Nav     string // the current section, for aria-current
	Account *auth.Account
	CSRF    string
	Notice  string
	// Refresh, when positive, reloads the page after that many seconds, by script (a job's
	// page while the job runs; without script it offers a reload link).
	Refresh int
	Data    any
	// Public marks a page for anyone with its link (a shared report): it shows no account
	// and carries no form token.
	Public bool
}

func (d *Dashboard) render(c *fiber.Ctx, status int, page string, v view) error {
	t, ok := d.pages[page]
	if !ok {
		return fmt.Errorf("dashboard: no template %q", page)
	}
	if v.CSRF == "" && !v.Public {
		v.CSRF = d.csrfToken(c)
	}
	if v.Account == nil && !v.Public {
		if s, ok := sessionOf(c); ok {
			v.Account = &s.Account
		}
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return fmt.Errorf("dashboard: render %s: %w", page, err)
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(b.String())
}

// htmlErrors renders an error from a handler as a page: the message of an application
// error, or a generic one (logged) for anything else.
func (d *Dashboard) htmlErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	status, msg := fiber.StatusInternalServerError, "Something went wrong on our side. Please try again."
	var fe *fiber.Error
	if e, ok := apperr.As(err); ok {
		status, msg = statusOf(e.Code), e.Message
	} else if errors.As(err, &fe) {
		status, msg = fe.Code, fe.Message
	} else if errors.Is(err, context.Canceled) {
		return err
	} else {
		d.Log.Error("dashboard", "path", c.Path(), "err", err)
	}
	if rerr := d.render(c, status, "error", view{Title: "Error", Data: msg}); rerr != nil {
		d.Log.Error("dashboard: render error page", "err", rerr)
		return c.Status(status).SendString(msg)
	}
	return nil
}

func statusOf(code string) int {
	switch code {
	case apperr.Validation, apperr.InvalidPlan, apperr.InvalidURL, apperr.PromoCodeInvalid:
		return fiber.StatusBadRequest
	case apperr.NotFound:
		return fiber.StatusNotFound
	case apperr.Forbidden:
		return fiber.StatusForbidden
	case apperr.RateLimitExceeded:
		return fiber.StatusTooManyRequests
	case apperr.AlreadySubscribed:
		return fiber.StatusConflict
	case apperr.BillingNotConfigured, apperr.ServiceUnavailable:
		return fiber.StatusServiceUnavailable
	}
	return fiber.StatusBadRequest
}

var funcs = template.FuncMap{
	"date": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"datetime": func(t time.Time) string {
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"optdate": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"derefTime": func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	},
	"stacked": stacked,
}
