// Package httpapi is the HTTP front door: routes, middleware and the one place application
// errors become the status codes and body shapes of docs/api.md. It is the only package importing Fiber.
package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/billing"
	"github.com/contentapi/contentapi/internal/clock"
	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/job"
	"github.com/contentapi/contentapi/internal/metrics"
	"github.com/contentapi/contentapi/internal/ratelimit"
	"github.com/contentapi/contentapi/internal/redact"
	"github.com/contentapi/contentapi/internal/report"
)

// BodyLimit is the largest request body accepted, except on the payment webhook, whose
// Stripe events (an invoice with many lines) may be larger, up to WebhookBodyLimit.
const (
	BodyLimit        = 64 << 10
	WebhookBodyLimit = 1 << 20
	webhookPath      = "/v1/billing/webhook"
)

// Version is the API's version string in the service information document.
const Version = "1.0.0"

// Deps are what the HTTP layer needs, built in cmd/api.
type Deps struct {
	Log             *slog.Logger
	Pool            *pgxpool.Pool
	Redis           redis.UniversalClient
	Accounts        *auth.Accounts
	Gate            *auth.Gate
	Ledger          *credits.Ledger
	Limiter         *ratelimit.Limiter
	Billing         *billing.Service // Stripe checkout, portal and webhook; nil answers BILLING_NOT_CONFIGURED
	Clock           clock.Clock
	PublicBaseURL   string
	DashboardURL    string
	DocsURL         string
	RegisterLimit   int // registrations per client IP per hour
	TrustedProxies  []string
	Jobs            *job.Service
	SyncTimeout     time.Duration
	AnalysisOptions report.Options
	// Hosts checks crawl targets before anything is charged; nil skips the check.
	Hosts HostChecker
	// Renderers says whether a worker can render JavaScript, checked before a rendered
	// audit is charged; nil refuses every rendered audit.
	Renderers RenderChecker
	// Cursors checks a keyword call's cursor before anything is charged; nil refuses every
	// cursor.
	Cursors *report.Cursors
	// Metrics is exposed at /metrics and fed by every request; AdminToken guards it and
	// AdminQueues (the asynq dashboard, mounted at /admin/queues). With no token both are off.
	Metrics     *metrics.Metrics
	AdminToken  string
	AdminQueues http.Handler
	// Dashboard, when set, is mounted at /dashboard, and registration e-mails its
	// verification link.
	Dashboard Dashboard
	// Routes, when set, mounts extra routes (admin dashboards, probes in tests).
	Routes func(fiber.Router)
	// ReadTimeout bounds reading a request (a connection's first one included), WriteTimeout
	// writing an answer, IdleTimeout the wait for a keep-alive connection's next request.
	// Zero takes the default: 30 s, 30 s, 120 s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MCPAllowedOrigins are the browser origins (scheme://host[:port]) besides
	// PublicBaseURL's that may use the MCP endpoint; MCPProgressInterval is how often a
	// running tool call reports progress (zero: 2 s).
	MCPAllowedOrigins   []string
	MCPProgressInterval time.Duration
	// AccessLogSample logs one in that many successful calls (status under 400) answered
	// faster than AccessLogSlow; every error and slow call is logged, and metrics count
	// every call. Zero or one logs every call; AccessLogSlow zero counts no call as slow.
	AccessLogSample int
	AccessLogSlow   time.Duration
	// Lifetime ends when the API begins to shut down: calls waiting for their jobs then
	// answer at once with the job as it stands (202), and MCP sessions end with their event
	// streams, which would otherwise hold the drain up to its timeout. Nil never ends.
	Lifetime context.Context
}

// Dashboard is the web dashboard as the API serves it.
type Dashboard interface {
	// Mount adds its routes; clientAddr is the caller's address behind trusted proxies.
	Mount(r fiber.Router, clientAddr func(*fiber.Ctx) netip.Addr)
	// SendVerification e-mails a new account the link that verifies its address.
	SendVerification(ctx context.Context, accountID uuid.UUID, email string) error
}

// analysisForms is a dashboard that runs analyses from its forms: it is lent the checks the
// API runs on a valid request before charging it, so a form is refused as the call would be.
type analysisForms interface {
	SetPreflight(func(ctx context.Context, a report.Analysis, req report.Request) error)
}

type server struct {
	Deps
	usageCache usageCache
	proxies    []netip.Prefix // TrustedProxies, parsed
	// crossOrigin refuses cross-origin unsafe requests to the queue dashboard.
	crossOrigin *http.CrossOriginProtection
	// calls counts the successful fast calls, one in AccessLogSample of which is logged.
	calls atomic.Uint64
}

// New builds the Fiber application with every route.
func New(d Deps) *fiber.App {
	// Cached usage answers are also bounded in age, in case a change notification was lost.
	s := &server{Deps: d, usageCache: newUsageCache(),
		crossOrigin: http.NewCrossOriginProtection()}
	for _, p := range d.TrustedProxies {
		prefix, err := parseProxy(p)
		if err != nil {
			d.Log.Warn("TRUSTED_PROXIES entry ignored", "entry", p, "err", err)
			continue
		}
		s.proxies = append(s.proxies, prefix)
	}
	cfg := fiber.Config{
		AppName:               "contentapi",
		BodyLimit:             WebhookBodyLimit,
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           cmp.Or(d.ReadTimeout, 30*time.Second),
		WriteTimeout:          cmp.Or(d.WriteTimeout, 30*time.Second),
		IdleTimeout:           cmp.Or(d.IdleTimeout, 120*time.Second),
		// No route takes multipart forms: fasthttp would parse such a body before any
		// handler and answer a malformed one 400, where a JSON endpoint answers 415.
		DisablePreParseMultipartForm: true,
	}
	if len(d.TrustedProxies) > 0 {
		// Fiber then believes X-Forwarded-Host and -Proto from these peers only. The client
		// address is clientAddr's: Fiber's c.IP() would give the raw X-Forwarded-For header.
		cfg.EnableTrustedProxyCheck = true
		cfg.TrustedProxies = d.TrustedProxies
	}
	app := fiber.New(cfg)
	closeOnReadTimeout(app.Server())
	app.Use(callerContext, s.requestID, s.accessLog, s.recoverPanic, limitBody)

	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/", s.info)
	app.Get("/v1", s.info)
	app.Post("/v1/auth/register", s.register)

	v1 := app.Group("/v1")
	v1.Get("/usage", s.authenticate, s.usage)
	v1.Get("/account", s.authenticate, s.account)
	v1.Get("/keys", s.authenticate, s.listKeys)
	v1.Post("/keys", s.authenticate, s.createKey)
	v1.Delete("/keys/:id", s.authenticate, s.revokeKey)
	s.billingRoutes(v1)
	v1.Get("/jobs", s.authenticate, s.listJobs)
	v1.Get("/jobs/:id", s.authenticate, s.getJob)
	for _, a := range report.Catalog {
		v1.Add(a.Method, strings.TrimPrefix(a.Path, "/v1"), s.authenticate, s.analysis(a))
	}

	if d.Metrics != nil {
		app.Get("/metrics", s.adminOnly, adaptor.HTTPHandler(d.Metrics.Handler()))
	}
	app.Use("/admin", noFraming)
	if d.AdminQueues != nil {
		queues := adaptor.HTTPHandler(d.AdminQueues)
		app.All("/admin/queues", s.adminOnly, s.sameOrigin, queues)
		app.All("/admin/queues/*", s.adminOnly, s.sameOrigin, queues)
	}
	closeMCP := s.mountMCP(app)
	if d.Lifetime != nil {
		context.AfterFunc(d.Lifetime, func() {
			if d.Jobs != nil {
				d.Jobs.StopWaiting()
			}
			closeMCP()
		})
	}
	app.Get("/v1/openapi.json", s.openapiDocument())
	app.Get("/docs", s.docsPage())
	app.Get("/docs/*", s.docsAsset)

	if d.Dashboard != nil {
		if r, ok := d.Dashboard.(analysisForms); ok {
			r.SetPreflight(s.preflight)
		}
		d.Dashboard.Mount(app.Group("/dashboard"), s.clientAddr)
	}
	if d.Routes != nil {
		d.Routes(app)
	}
	// No catch-all route: a path no route matches ends Fiber's stack with 404, and a path
	// that another method's route matches with 405 and an Allow header listing those
	// methods (fiber's methodExist); handleError gives both their bodies.
	return app
}

// closeOnReadTimeout closes a connection whose request did not arrive within ReadTimeout
// without answering, as net/http does. fasthttp passes that timeout to the error handler
// for a connection's first request (a client that connected and sent nothing, a browser's
// preconnect, a request cut off midway), and Fiber would answer it 400 VALIDATION_ERROR
// "Request Timeout"; a keep-alive connection idle past IdleTimeout is already closed
// silently by fasthttp.
func closeOnReadTimeout(srv *fasthttp.Server) {
	answer := srv.ErrorHandler
	srv.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			// fasthttp then writes its error response to the closed connection: nothing
			// leaves, and it ends the connection as after any error.
			_ = ctx.Conn().Close()
			return
		}
		answer(ctx, err)
	}
}

// parseProxy reads one TRUSTED_PROXIES entry: an address or a CIDR prefix (config.Load
// refuses others).
func parseProxy(entry string) (netip.Prefix, error) {
	if strings.Contains(entry, "/") {
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("trusted proxy %q: %w", entry, err)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(entry)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("trusted proxy %q: %w", entry, err)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (s *server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the caller's address: the peer's, or, when the peer is a trusted proxy, the
// right-most X-Forwarded-For address that is not a trusted proxy. Each proxy appends the
// address it received the request from, so everything left of that address was written by
// the client and proves nothing. A malformed entry in the trusted part of the chain stops
// the walk at the proxy that passed it on.
func (s *server) clientAddr(c *fiber.Ctx) netip.Addr {
	addr, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	addr = addr.Unmap()
	if !s.trustedProxy(addr) {
		return addr
	}
	hops := forwardedFor(&c.Request().Header)
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			return addr
		}
		if !s.trustedProxy(hop) {
			return hop
		}
		addr = hop
	}
	return addr
}

// forwardedFor lists the X-Forwarded-For addresses of every such header, in order.
func forwardedFor(h *fasthttp.RequestHeader) []string {
	var hops []string
	for _, v := range h.PeekAll(fiber.HeaderXForwardedFor) {
		for _, hop := range strings.Split(string(v), ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	return hops
}

// parseHop reads an X-Forwarded-For entry: an address, possibly with a port.
func parseHop(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func (s *server) requestID(c *fiber.Ctx) error {
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		id = ""
	}
	setRequestID(c, id)
	return c.Next()
}

// validRequestID accepts a caller's request id only when it is short and plain, so it can
// be echoed and logged safely.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.') {
			return false
		}
	}
	return true
}

func (s *server) recoverPanic(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.Log.Error("panic", "request_id", requestIDOf(c), "panic", r, "stack", string(debug.Stack()))
			err = errPanic
		}
	}()
	return c.Next()
}

func (s *server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.handleError(c, err); herr != nil {
			return herr
		}
	}
	status := c.Response().StatusCode()
	route := c.Route().Path
	if status == fiber.StatusNotFound && route == "/" && c.Path() != "/" {
		route = "unmatched" // unknown paths would otherwise make a label per path
	}
	took := time.Since(start)
	s.Metrics.HTTP(route, methodLabel(c.Method()), status, took)
	sampled := s.AccessLogSample > 1 && status < 400 && (s.AccessLogSlow <= 0 || took < s.AccessLogSlow)
	if sampled && s.calls.Add(1)%uint64(s.AccessLogSample) != 0 {
		return nil
	}
	attrs := []any{"request_id", requestIDOf(c), "method", c.Method(), "path", c.Path(),
		"status", status, "duration_ms", float64(took.Microseconds()) / 1000}
	if sampled {
		attrs = append(attrs, "sample", s.AccessLogSample) // this line stands for that many calls
	}
	if q := c.Request().URI().QueryString(); len(q) > 0 {
		// Callers put credentials in queries too (?password=, ?token=): those stay out of logs.
		attrs = append(attrs, "query", redact.Query(string(q)))
	}
	if p, ok := c.Locals(localPrincipal).(auth.Principal); ok {
		attrs = append(attrs, "account_id", p.AccountID.String())
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	s.Log.Log(c.UserContext(), level, "request", attrs...)
	return nil
}

// methodLabel is the method as a metrics label, which outlives the request: a constant for
// the methods the API serves, else a copy out of fasthttp's reused buffer.
func methodLabel(m string) string {
	for _, known := range servedMethods {
		if m == known {
			return known
		}
	}
	return strings.Clone(m)
}

var servedMethods = [...]string{fiber.MethodGet, fiber.MethodPost, fiber.MethodDelete, fiber.MethodHead, fiber.MethodOptions}

// limitBody refuses compressed bodies and bodies over BodyLimit (everywhere but the
// webhook). Fiber's c.Body() inflates a body whose Content-Encoding it knows, without bound
// (a 255 KiB gzip body became 1 GB), so no coding but identity is accepted and the size is
// that of the body as received.
func limitBody(c *fiber.Ctx) error {
	if encodedBody(&c.Request().Header) {
		return apperr.New(apperr.UnsupportedMediaType, "Request bodies are accepted without Content-Encoding only (identity); send the body uncompressed.")
	}
	if len(c.Request().Body()) > BodyLimit && c.Path() != webhookPath {
		return fiber.ErrRequestEntityTooLarge
	}
	return c.Next()
}

// encodedBody reports whether any Content-Encoding header names a coding other than identity.
func encodedBody(h *fasthttp.RequestHeader) bool {
	for _, v := range h.PeekAll(fiber.HeaderContentEncoding) {
		for _, coding := range strings.Split(string(v), ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

func (s *server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	checks := fiber.Map{"database": "ok", "redis": "ok"}
	ready := true
	if err := s.Pool.Ping(ctx); err != nil {
		checks["database"], ready = "unavailable", false
	}
	if err := s.Redis.Ping(ctx).Err(); err != nil {
		checks["redis"], ready = "unavailable", false
	}
	if !ready {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "checks": checks})
	}
	return c.JSON(fiber.Map{"status": "ok", "checks": checks})
}

// setRateHeaders writes X-RateLimit-* (Reset in seconds until a slot frees) and, when
// refused, Retry-After.
func setRateHeaders(c *fiber.Ctx, d ratelimit.Decision) {
	if d.Limit == 0 {
		return
	}
	// Formatted on the stack: fasthttp copies the bytes into the response.
	var buf [20]byte
	h := &c.Response().Header
	h.SetBytesV("X-RateLimit-Limit", strconv.AppendInt(buf[:0], int64(d.Limit), 10))
	h.SetBytesV("X-RateLimit-Remaining", strconv.AppendInt(buf[:0], int64(d.Remaining), 10))
	h.SetBytesV("X-RateLimit-Reset", strconv.AppendInt(buf[:0], int64(d.RetryAfterSeconds()), 10))
	if !d.Allowed {
		h.SetBytesV(fiber.HeaderRetryAfter, strconv.AppendInt(buf[:0], int64(d.RetryAfterSeconds()), 10))
	}
}
