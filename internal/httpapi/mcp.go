package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/auth"
	"github.com/contentapi/contentapi/internal/mcpserver"
)

// mcpPath is the Streamable HTTP MCP endpoint.
const mcpPath = "/mcp"

// mountMCP serves the MCP endpoint. Every message is authenticated by the key (without
// counting against the rate limit: a tool call counts, as the API call it makes); a browser
// Origin that is not the API's own or listed in MCP_ALLOWED_ORIGINS is refused (DNS
// rebinding). Tool calls are dispatched in process through app's own routes, so they are
// authenticated, rate limited, validated, charged and recorded as the same HTTP calls.
// It returns the function that ends every open session.
func (s *server) mountMCP(app *fiber.App) (closeSessions func()) {
	caller := &inProcess{app: app}
	h, err := mcpserver.NewHandler(mcpserver.HTTPOptions{
		Options: mcpserver.Options{Caller: caller, ProgressInterval: s.MCPProgressInterval, SyncTimeout: s.SyncTimeout,
			Version: Version, Logger: s.Log},
		Verify: func(r *http.Request) (string, error) {
			p, ok := r.Context().Value(mcpPrincipal{}).(auth.Principal)
			if !ok {
				return "", errors.New("not authenticated")
			}
			return p.KeyID.String(), nil
		},
		MaxBodyBytes: BodyLimit,
	})
	if err != nil {
		// The tools are built from the catalogue and the embedded OpenAPI document: a
		// failure is a programming error that every test of this package reaches.
		panic(err)
	}
	app.Hooks().OnShutdown(func() error { h.Close(); return nil })
	// The SDK refuses a request that reached a loopback address with a Host that is not a
	// loopback name (DNS rebinding of a local server); behind a proxy on the same machine
	// (TRUSTED_PROXIES) every request does, so the check is left to the Origin one there.
	lifetime := s.Lifetime
	if lifetime == nil {
		lifetime = context.Background()
	}
	serve := streamHTTP(lifetime, h, len(s.proxies) == 0)
	for _, m := range []string{fiber.MethodPost, fiber.MethodGet, fiber.MethodDelete} {
		app.Add(m, mcpPath, s.mcpOrigin, s.mcpVerify, serve)
	}
	return h.Close
}

type mcpPrincipal struct{}

// mcpKeyRefused is the JSON-RPC error code of a refused key, in the range JSON-RPC leaves to
// servers.
const mcpKeyRefused = -32001

// mcpVerify checks the key of an MCP request and refuses it when it is missing, unknown,
// revoked or expired: with 403 and a JSON-RPC error naming the code, not the API's 401. MCP
// clients read a 401 as the start of MCP's OAuth authorization (which an API-key service
// does not offer) and show the user a sign-in flow instead of the error; a 403's body they
// show.
func (s *server) mcpVerify(c *fiber.Ctx) error {
	p, err := s.Gate.Verify(c.UserContext(), c.Get(fiber.HeaderAuthorization))
	if err != nil {
		if e, ok := apperr.As(err); ok && authShaped[e.Code] {
			return c.Status(fiber.StatusForbidden).JSON(fiber.Map{"jsonrpc": "2.0", "id": nil,
				"error": fiber.Map{"code": mcpKeyRefused, "message": e.Code + ": " + e.Message,
					"data": fiber.Map{"code": e.Code, "message": e.Message}}})
		}
		return err
	}
	c.Locals(localPrincipal, p)
	return c.Next()
}

// mcpOrigin refuses a request whose Origin is neither the API's public origin nor one of
// MCP_ALLOWED_ORIGINS. A page on another site reached through DNS rebinding sends its own
// origin; MCP clients that are not browsers send none.
func (s *server) mcpOrigin(c *fiber.Ctx) error {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return c.Next()
	}
	if o := originOf(origin); o != "" && (o == originOf(s.PublicBaseURL) || slices.Contains(s.MCPAllowedOrigins, o)) {
		return c.Next()
	}
	return apperr.New(apperr.Forbidden, "Origin %q may not use the MCP endpoint; MCP clients send no Origin, and browser origins must be listed in MCP_ALLOWED_ORIGINS.", clip(origin, 100))
}

// originOf is a URL's scheme and host, lower case; "" when it has none.
func originOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// callerContext makes the context an in-process call carries the request's user context,
// so a tool call cancelled by its client stops waiting for its job.
func callerContext(c *fiber.Ctx) error {
	if ctx, ok := c.Context().UserValue(inProcessContext{}).(context.Context); ok {
		c.SetUserContext(ctx)
	}
	return c.Next()
}

type inProcessContext struct{}

// inProcess dispatches the MCP tools' API calls to the app's routes in process: a request
// built in memory runs through the same middleware and handlers as one from the network.
type inProcess struct {
	app     *fiber.App
	once    sync.Once
	handler fasthttp.RequestHandler
}

var inProcessAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}

func (p *inProcess) Do(ctx context.Context, call mcpserver.Call) (mcpserver.Answer, error) {
	p.once.Do(func() { p.handler = p.app.Handler() })
	var req fasthttp.Request
	req.Header.SetMethod(call.Method)
	req.SetRequestURI(call.Path)
	req.Header.Set(fiber.HeaderAuthorization, call.Authorization)
	req.Header.Set(fiber.HeaderAccept, fiber.MIMEApplicationJSON)
	req.Header.Set(fiber.HeaderUserAgent, "contentapi-mcp")
	if call.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", call.IdempotencyKey)
	}
	if call.Body != nil {
		req.Header.SetContentType(fiber.MIMEApplicationJSON)
		req.SetBody(call.Body)
	}
	var fc fasthttp.RequestCtx
	fc.Init(&req, inProcessAddr, nil)
	fc.SetUserValue(inProcessContext{}, ctx)
	p.handler(&fc)
	return mcpserver.Answer{
		Status:     fc.Response.StatusCode(),
		RetryAfter: string(fc.Response.Header.Peek(fiber.HeaderRetryAfter)),
		Body:       bytes.Clone(fc.Response.Body()),
	}, nil
}

// streamHTTP serves a net/http handler from Fiber with its answer streamed: what the handler
// writes reaches the client at each Flush (an MCP event stream sends progress notifications
// before the result), where Fiber's adaptor holds the whole answer until the handler
// returns. The write deadline is renewed at each flush, so a stream may last past
// WriteTimeout while it keeps sending. Each request's context ends with lifetime, so no
// stream outlives the start of the shutdown.
func streamHTTP(lifetime context.Context, h http.Handler, localAddr bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r http.Request
		if err := fasthttpadaptor.ConvertRequest(c.Context(), &r, true); err != nil {
			return err
		}
		// The body and the strings ConvertRequest points into fasthttp's buffers are copied:
		// the handler may run on after this function returns.
		body := bytes.Clone(c.Body())
		r.Body = http.NoBody
		if len(body) > 0 {
			r.Body = readCloser{bytes.NewReader(body)}
		}
		r.Header = r.Header.Clone()
		r.Method, r.Host, r.RequestURI = strings.Clone(r.Method), strings.Clone(r.Host), strings.Clone(r.RequestURI)
		r.RemoteAddr = strings.Clone(r.RemoteAddr)
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
			r.URL = u
		}
		ctx, cancel := context.WithCancel(lifetime)
		if localAddr {
			ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.Context().LocalAddr())
		}
		if p, ok := c.Locals(localPrincipal).(auth.Principal); ok {
			ctx = context.WithValue(ctx, mcpPrincipal{}, p)
		}
		w := newStreamWriter()
		go func() {
			defer w.finish()
			h.ServeHTTP(w, r.WithContext(ctx))
		}()
		<-w.started
		w.mu.Lock()
		c.Status(w.status)
		for k, vs := range w.header {
			for i, v := range vs {
				if i == 0 {
					c.Set(k, v)
				} else {
					c.Response().Header.Add(k, v)
				}
			}
		}
		w.mu.Unlock()
		conn := c.Context().Conn()
		timeout := c.App().Server().WriteTimeout
		c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
			defer cancel()
			broken := false
			for chunk := range w.chunks {
				if broken {
					continue // drain until the handler, its context cancelled, returns
				}
				if timeout > 0 {
					_ = conn.SetWriteDeadline(time.Now().Add(timeout))
				}
				if _, err := bw.Write(chunk); err != nil {
					broken = true
					cancel()
					continue
				}
				if err := bw.Flush(); err != nil {
					broken = true
					cancel()
				}
			}
		})
		return nil
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// streamWriter is the http.ResponseWriter of streamHTTP: the status and header are taken at
// the first write (or flush), the body sent in chunks at each flush and at the end.
type streamWriter struct {
	mu          sync.Mutex
	header      http.Header
	status      int
	wroteHeader bool
	pending     []byte
	started     chan struct{} // closed once the status and header are final
	chunks      chan []byte
}

func newStreamWriter() *streamWriter {
	return &streamWriter{header: http.Header{}, status: http.StatusOK, started: make(chan struct{}),
		chunks: make(chan []byte, 16)}
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(status)
}

func (w *streamWriter) writeHeaderLocked(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader, w.status = true, status
	w.header = w.header.Clone()
	close(w.started)
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
	w.pending = append(w.pending, b...)
	return len(b), nil
}

func (w *streamWriter) Flush() {
	w.mu.Lock()
	w.writeHeaderLocked(http.StatusOK)
	chunk := w.pending
	w.pending = nil
	w.mu.Unlock()
	w.chunks <- chunk // an empty chunk flushes the header
}

// finish sends what is left and ends the body.
func (w *streamWriter) finish() {
	w.Flush()
	close(w.chunks)
}
