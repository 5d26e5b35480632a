package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP handler.
type HTTPOptions struct {
	Options
	// Verify names the key an MCP request was authenticated with (the API checked it before
	// the request reached the handler); an error refuses the request with 401. A session is
	// bound to the key that opened it: another key cannot use its session id.
	Verify func(r *http.Request) (keyID string, err error)
	// SessionTimeout closes a session that has received no request for this long; zero
	// takes 30 minutes.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
}

// Handler is the Streamable HTTP endpoint (the MCP 2025-06-18 transport and later): POST
// for messages, answered as JSON or as an event stream carrying progress notifications
// before the result; GET for the session's own stream; DELETE to end it.
type Handler struct {
	http.Handler
	srv *mcp.Server
}

// Close ends every open session (at shutdown): their streams end and their goroutines exit.
func (h *Handler) Close() {
	for ss := range h.srv.Sessions() {
		_ = ss.Close()
	}
}

// NewHandler returns the Streamable HTTP endpoint.
func NewHandler(o HTTPOptions) (*Handler, error) {
	if o.Authorization == nil {
		o.Authorization = HeaderAuthorization
	}
	srv, err := NewServer(o.Options)
	if err != nil {
		return nil, err
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Logger:              o.Logger,
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
	})
	verify := func(_ context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		id, err := o.Verify(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", sdkauth.ErrInvalidToken, err)
		}
		// The SDK binds the session to UserID; keys do not expire here (the API checks
		// expiry on every request).
		return &sdkauth.TokenInfo{UserID: id}, nil
	}
	return &Handler{
		Handler: sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h),
		srv:     srv,
	}, nil
}

// ServeStdio runs the server over a stdio-style connection (newline-delimited JSON-RPC on
// in and out) until the client disconnects or ctx ends, with every tool call sent to the
// API at baseURL with key.
func ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser, baseURL, key string, o Options) error {
	if o.Caller == nil {
		o.Caller = &HTTPCaller{BaseURL: baseURL}
	}
	auth := "Bearer " + strings.TrimSpace(key)
	o.Authorization = func(*mcp.CallToolRequest) string { return auth }
	srv, err := NewServer(o)
	if err != nil {
		return err
	}
	var t mcp.Transport = &mcp.IOTransport{Reader: in, Writer: out}
	err = srv.Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// HTTPCaller makes API calls over HTTP: ctl mcp's way to a running API.
type HTTPCaller struct {
	BaseURL string
	Client  *http.Client // nil takes http.DefaultClient
	// UserAgent names the caller in the API's logs.
	UserAgent string
}

// maxAnswer bounds an answer read (results are at most a few MiB).
const maxAnswer = 64 << 20

// Do sends the call and reads the answer.
func (h *HTTPCaller) Do(ctx context.Context, c Call) (Answer, error) {
	var body io.Reader
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, strings.TrimRight(h.BaseURL, "/")+c.Path, body)
	if err != nil {
		return Answer{}, err
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Authorization != "" {
		req.Header.Set("Authorization", c.Authorization)
	}
	if c.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", c.IdempotencyKey)
	}
	req.Header.Set("User-Agent", cmp.Or(h.UserAgent, "contentapi-mcp"))
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: b}, nil
}
