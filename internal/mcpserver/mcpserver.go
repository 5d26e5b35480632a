// Package mcpserver is the API's Model Context Protocol server (the official Go SDK): every
// analysis of the report catalogue as a tool, with tools for usage and balance, a job's status
// and result and a cost estimate, and prompts for the common jobs.
//
// A tool call is an API call. Each is sent through a Caller to the API's own route, with the
// caller's key: the API authenticates it, counts it against the plan's rate limit, validates
// it, reserves and charges its credits, runs it on the job path and records it in usage, jobs
// and the dashboard, exactly as the same HTTP call. This package only translates: arguments
// to a request body, the answer to a tool result, an error envelope to a tool error. Inside
// the API the Caller dispatches in process (no network); ctl mcp's Caller sends the calls to
// a running API over HTTP.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contentapi/contentapi/internal/report"
)

// Call is one API call a tool makes.
type Call struct {
	Method         string
	Path           string // with /v1, and a query if any
	Authorization  string // the caller's Authorization header
	IdempotencyKey string
	Body           []byte // JSON; nil for none
}

// Answer is the API's answer to a Call.
type Answer struct {
	Status     int
	RetryAfter string // the Retry-After header
	Body       []byte
}

// Caller makes API calls.
type Caller interface {
	Do(ctx context.Context, c Call) (Answer, error)
}

// Options configure a server.
type Options struct {
	Caller Caller
	// Authorization returns the Authorization header a tool call is made with: the one the
	// MCP request carried (HeaderAuthorization) or a fixed key (stdio).
	Authorization func(req *mcp.CallToolRequest) string
	// ProgressInterval is how often a running analysis reports progress (when the client
	// asked for it with a progress token); zero takes 2 s.
	ProgressInterval time.Duration
	// SyncTimeout is the API's: how long an analysis call waits for its job before it
	// answers with the job's id. It is the progress notifications' total.
	SyncTimeout time.Duration
	Version     string
	Logger      *slog.Logger
}

// HeaderAuthorization reads the Authorization header of the HTTP request a tool call came in.
func HeaderAuthorization(req *mcp.CallToolRequest) string {
	if req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	return req.Extra.Header.Get("Authorization")
}

// Name is the server's name in the MCP handshake.
const Name = "contentapi"

// argIdempotencyKey is the argument every analysis and cost tool takes besides the
// request's fields.
const argIdempotencyKey = "idempotency_key"

const instructions = `Content-strategy analyses paid in credits: keyword research, competitor keyword gaps, site content audits, content recommendations with outlines and a content map. Each analysis tool's description states its credit cost; a refused or failed call costs nothing. Call estimate_cost first when the balance matters, get_usage for the balance, get_job for a job that was still running when its call returned. Errors are tool errors carrying the API's code (INSUFFICIENT_CREDITS, RATE_LIMIT_EXCEEDED with retry_after, VALIDATION_ERROR naming the field, NO_DATA with what to change).`

type server struct {
	Options
	tools map[string]report.Analysis // analysis tools by name
}

// ToolName is the tool of an analysis: its path without /v1, in snake case
// (/v1/keywords/research is keywords_research, /v1/content-map content_map).
func ToolName(a report.Analysis) string {
	return strings.NewReplacer("/", "_", "-", "_").Replace(strings.TrimPrefix(a.Path, "/v1/"))
}

// NewServer returns the MCP server: its tools, one per analysis of report.Catalog plus the
// account and job tools, and its prompts.
func NewServer(o Options) (*mcp.Server, error) {
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{Options: o, tools: map[string]report.Analysis{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Content strategy API", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: o.Logger})
	for _, a := range report.Catalog {
		schema, err := inputSchema(a)
		if err != nil {
			return nil, err
		}
		name := ToolName(a)
		s.tools[name] = a
		srv.AddTool(&mcp.Tool{
			Name:         name,
			Title:        a.Summary,
			Description:  analysisDescription(a),
			InputSchema:  schema,
			OutputSchema: outputSchema(a.Method, a.Path, resultAnswer, true),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: ptr(true)},
		}, s.analysisTool(a))
	}
	srv.AddTool(&mcp.Tool{
		Name:  "get_usage",
		Title: "Usage and balance",
		Description: "Free (no credits). The account's plan, credits used, limit and remaining balance in the " +
			"current period, period start and end, rate limit and recent calls.",
		InputSchema:  schemaFor[struct{}](),
		OutputSchema: outputSchema(http.MethodGet, "/v1/usage", resultAnswer, false),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.usageTool)
	srv.AddTool(&mcp.Tool{
		Name:  "get_job",
		Title: "A job's status and result",
		Description: "Free (no credits). A job's status, and its result once it succeeded (with meta: credits " +
			"used and remaining) or its error once it failed (failed jobs are refunded). Use it for the " +
			"job_id an analysis returned when it was still running after the sync timeout.",
		InputSchema:  schemaFor[jobArgs](),
		OutputSchema: outputSchema(http.MethodGet, "/v1/jobs/{id}", resultAnswer, true),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.jobTool)
	names := slices.Sorted(maps.Keys(s.tools))
	costSchema := schemaFor[costArgs]()
	costProps := costSchema["properties"].(map[string]any)
	costProps["tool"].(map[string]any)["enum"] = names
	srv.AddTool(&mcp.Tool{
		Name:  "estimate_cost",
		Title: "Cost estimate (dry run)",
		Description: "Free (no credits). Checks an analysis call's arguments as the real call would (errors " +
			"name the field) and answers its cost in credits, the balance and the balance after it, " +
			"without running or charging it. Too small a balance is the real call's INSUFFICIENT_CREDITS.",
		InputSchema: costSchema,
		// Every analysis's dry run answers the same shape.
		OutputSchema: outputSchema(report.Catalog[0].Method, report.Catalog[0].Path, dryRunAnswer, false),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.costTool)
	addPrompts(srv)
	return srv, nil
}

func ptr[T any](v T) *T { return &v }

// analysisDescription states what the tool does, what it costs and what it returns.
func analysisDescription(a report.Analysis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s %s). Costs %s, charged only when it succeeds: a refused or failed call costs nothing.", a.Summary, a.Method, a.Path, a.CostText())
	if t := operationText(a); t != "" {
		b.WriteString(" " + t)
	}
	b.WriteString(" Returns structured content {data, meta}")
	if r := returns(a); r != "" {
		b.WriteString("; data holds " + r)
	}
	b.WriteString("; meta holds credits_used, credits_remaining, job_id and data_source. Reports progress while it runs; " +
		"still running after the sync timeout, it returns the job_id for get_job.")
	return b.String()
}

type jobArgs struct {
	JobID string `json:"job_id" jsonschema:"the job's id, as an analysis tool returned it"`
}

type costArgs struct {
	Tool      string         `json:"tool" jsonschema:"the analysis tool to price"`
	Arguments map[string]any `json:"arguments" jsonschema:"the arguments the analysis tool would be called with"`
}

// analysisTool calls the analysis's endpoint with the arguments as its body, reporting
// progress while the call waits for its job.
func (s *server) analysisTool(a report.Analysis) mcp.ToolHandler {
	name := ToolName(a)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		body, key, bad := splitArguments(req.Params.Arguments)
		if bad != nil {
			return bad, nil
		}
		stop := s.reportProgress(ctx, req, name)
		ans, err := s.Caller.Do(ctx, Call{Method: a.Method, Path: a.Path, Authorization: s.Authorization(req),
			IdempotencyKey: key, Body: body})
		stop()
		if err != nil {
			return callFailed(err), nil
		}
		return answerResult(name, ans), nil
	}
}

func (s *server) usageTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ans, err := s.Caller.Do(ctx, Call{Method: http.MethodGet, Path: "/v1/usage", Authorization: s.Authorization(req)})
	if err != nil {
		return callFailed(err), nil
	}
	return answerResult("get_usage", ans), nil
}

func (s *server) jobTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args jobArgs
	if bad := decodeArguments(req.Params.Arguments, &args); bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(args.JobID) == "" {
		return toolError("VALIDATION_ERROR", "job_id is required", ""), nil
	}
	ans, err := s.Caller.Do(ctx, Call{Method: http.MethodGet, Path: "/v1/jobs/" + url.PathEscape(strings.TrimSpace(args.JobID)),
		Authorization: s.Authorization(req)})
	if err != nil {
		return callFailed(err), nil
	}
	return answerResult("get_job", ans), nil
}

func (s *server) costTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if bad := decodeArguments(req.Params.Arguments, &args); bad != nil {
		return bad, nil
	}
	a, ok := s.tools[args.Tool]
	if !ok {
		return toolError("VALIDATION_ERROR", fmt.Sprintf("tool must be one of %s", strings.Join(slices.Sorted(maps.Keys(s.tools)), ", ")), ""), nil
	}
	body, _, bad := splitArguments(args.Arguments)
	if bad != nil {
		return bad, nil
	}
	ans, err := s.Caller.Do(ctx, Call{Method: a.Method, Path: a.Path + "?dry_run=true", Authorization: s.Authorization(req), Body: body})
	if err != nil {
		return callFailed(err), nil
	}
	return answerResult("estimate_cost", ans), nil
}

// splitArguments turns a tool's arguments into the endpoint's body, taking out
// idempotency_key. No arguments is the empty object (the endpoint names what is missing).
func splitArguments(raw json.RawMessage) (body []byte, key string, bad *mcp.CallToolResult) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return []byte("{}"), "", nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, "", toolError("VALIDATION_ERROR", "the arguments must be a JSON object", "")
	}
	if k, ok := args[argIdempotencyKey]; ok {
		if err := json.Unmarshal(k, &key); err != nil {
			return nil, "", toolError("VALIDATION_ERROR", "idempotency_key must be a string", "")
		}
		delete(args, argIdempotencyKey)
	}
	body, err := json.Marshal(args)
	if err != nil {
		return nil, "", toolError("VALIDATION_ERROR", "the arguments must be a JSON object", "")
	}
	return body, key, nil
}

// decodeArguments reads a helper tool's arguments.
func decodeArguments(raw json.RawMessage, v any) *mcp.CallToolResult {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return toolError("VALIDATION_ERROR", "invalid arguments: "+err.Error(), "")
	}
	return nil
}

// reportProgress sends progress notifications while an analysis call waits, when the
// client asked for them: one at once, then one every ProgressInterval. Progress counts
// seconds waited; the total is the sync timeout, after which the call returns the job id.
func (s *server) reportProgress(ctx context.Context, req *mcp.CallToolRequest, name string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		tick := time.NewTicker(s.ProgressInterval)
		defer tick.Stop()
		for {
			waited := time.Since(start)
			msg := fmt.Sprintf("%s submitted; waiting for its job", name)
			if waited > 0 && waited >= s.ProgressInterval {
				msg = fmt.Sprintf("%s running: %s so far", name, waited.Round(time.Second))
			}
			p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: waited.Seconds(), Message: msg}
			if s.SyncTimeout > 0 {
				p.Total = s.SyncTimeout.Seconds()
			}
			if err := req.Session.NotifyProgress(ctx, p); err != nil && ctx.Err() == nil {
				s.Logger.Debug("mcp: progress not sent", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// callFailed is a tool error for a call that did not reach the API or got no answer.
func callFailed(err error) *mcp.CallToolResult {
	return toolError("SERVICE_UNAVAILABLE", "The API could not be reached: "+err.Error(), "")
}

// envelope is any of the API's answers: success with data and meta, an error in the
// validation shape (error is an object) or in the authentication shape (code and message at
// the top).
type envelope struct {
	Success *bool           `json:"success"`
	Data    json.RawMessage `json:"data"`
	Meta    json.RawMessage `json:"meta"`
	Error   json.RawMessage `json:"error"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// answerResult turns the API's answer into the tool's result: the envelope's data and meta
// as structured content with a one-line summary, 202 as the pending job, any error as a tool
// error with the API's code and message.
func answerResult(tool string, ans Answer) *mcp.CallToolResult {
	var env envelope
	if err := json.Unmarshal(ans.Body, &env); err != nil {
		return toolError("INTERNAL_ERROR", fmt.Sprintf("The API answered %d with a body that is not JSON.", ans.Status), "")
	}
	if ans.Status >= 400 || env.Success != nil && !*env.Success {
		var e apiError
		var detail map[string]any
		if len(env.Error) > 0 && env.Error[0] == '{' {
			_ = json.Unmarshal(env.Error, &e)
			_ = json.Unmarshal(env.Error, &detail)
		} else {
			e = apiError{Code: env.Code, Message: env.Message}
			detail = map[string]any{"code": env.Code, "message": env.Message}
		}
		if e.Code == "" {
			e.Code = "INTERNAL_ERROR"
		}
		r := toolError(e.Code, e.Message, ans.RetryAfter)
		if detail != nil {
			if n, err := strconv.Atoi(ans.RetryAfter); err == nil {
				detail["retry_after"] = n
			}
			r.StructuredContent = map[string]any{"error": detail}
		}
		return r
	}
	structured := map[string]json.RawMessage{"data": env.Data}
	if len(env.Meta) > 0 {
		structured["meta"] = env.Meta
	}
	full, _ := json.Marshal(structured)
	return &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: summarize(tool, ans.Status, env.Data, env.Meta)},
			&mcp.TextContent{Text: string(full)},
		},
		StructuredContent: structured,
	}
}

// toolError is a tool result reporting an API error: isError, "CODE: message" and, for a
// refused rate, the wait.
func toolError(code, message, retryAfter string) *mcp.CallToolResult {
	text := code + ": " + message
	detail := map[string]any{"code": code, "message": message}
	if n, err := strconv.Atoi(retryAfter); err == nil && n > 0 {
		text += fmt.Sprintf(" Retry after %d seconds.", n)
		detail["retry_after"] = n
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"error": detail}}
}
