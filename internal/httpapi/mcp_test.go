package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contentapi/contentapi/internal/credits"
	"github.com/contentapi/contentapi/internal/httpapi"
	"github.com/contentapi/contentapi/internal/mcpserver"
	"github.com/contentapi/contentapi/internal/report"
)

// bearer adds a key to every request of an MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// mcpClient opens an MCP session over Streamable HTTP with key; progress, when set, hears
// the session's progress notifications.
func mcpClient(t testing.TB, baseURL, key string, progress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress(r.Params) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	transport := &mcp.StreamableClientTransport{Endpoint: baseURL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound on failure
	defer cancel()
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("mcp connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls a tool and fails the test on a protocol failure (a tool error is a result).
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol failure: %v", name, err)
	}
	return r
}

// structured reads a tool result's structured content as a map.
func structured(t testing.TB, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// expectOK checks a successful analysis result: data, meta with the cost, a summary.
func expectOK(t *testing.T, what string, r *mcp.CallToolResult, cost int) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s: tool error %s", what, resultText(r))
	}
	m := structured(t, r)
	meta, _ := m["meta"].(map[string]any)
	if m["data"] == nil || meta == nil || meta["credits_used"] != float64(cost) || meta["job_id"] == nil {
		t.Fatalf("%s: structured content %v", what, m)
	}
	if len(r.Content) == 0 || !strings.Contains(resultText(r), fmt.Sprintf("%d credits used", cost)) {
		t.Fatalf("%s: summary %q", what, resultText(r))
	}
	return m
}

// expectToolError checks a tool error: isError with the API's code, text naming it.
func expectToolError(t *testing.T, what string, r *mcp.CallToolResult, code string, inMessage ...string) map[string]any {
	t.Helper()
	if !r.IsError {
		t.Fatalf("%s: not a tool error: %s", what, resultText(r))
	}
	e, _ := structured(t, r)["error"].(map[string]any)
	if e == nil || e["code"] != code || !strings.HasPrefix(resultText(r), code+": ") {
		t.Fatalf("%s: error %v (%s), want %s", what, e, resultText(r), code)
	}
	for _, s := range inMessage {
		if msg, _ := e["message"].(string); !strings.Contains(msg, s) {
			t.Errorf("%s: message %q lacks %q", what, msg, s)
		}
	}
	return e
}

// grantCredits gives an account credits for a test.
func grantCredits(t *testing.T, s *stack, key string, n int) {
	t.Helper()
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: accountID(t, s.testServer, key), Amount: n,
		IssuedAt: now, ExpiresAt: now.Add(72 * time.Hour), Source: credits.SourceOperator, SourceRef: "mcp"}); err != nil {
		t.Fatal(err)
	}
}

// mcpArguments are arguments for every analysis tool, on the imported data set, the sample
// set and the local test site.
func mcpArguments(t *testing.T, site string) map[report.Kind]map[string]any {
	doms := sampleDomains(t)
	return map[report.Kind]map[string]any{
		report.KindResearch: {"domain": "honesty-shop.example", "topic": "honesty espresso", "country": importedCountry},
		report.KindGaps: {"domain": "honesty-shop.example", "competitors": []string{"honesty-rival.example"},
			"country": importedCountry},
		report.KindRankings:    {"domain": "honesty-rival.example", "country": importedCountry},
		report.KindCompetitors: {"domain": "honesty-rival.example", "country": importedCountry},
		report.KindAudit:       {"domain": site, "max_pages": 10},
		report.KindRecommend:   {"domain": site, "focus_topics": []string{"cold brew"}, "limit": 3},
		report.KindContentMap:  {"domain": doms[0], "competitors": []string{doms[1]}, "focus_topics": []string{"coffee"}},
	}
}

// Every analysis of the catalogue is a tool whose schema is valid JSON Schema generated from
// its request type and whose description states its cost; calling each charges what the
// same HTTP call charges and records a job, and the usage, job and cost tools answer.
func TestMCPToolsOverStreamableHTTP(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	_, site := testSite(t)
	key := registerBusy(t, s.testServer)
	grantCredits(t, s, key, 1000)
	cs := mcpClient(t, s.URL, key, nil)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range tools.Tools {
		byName[tool.Name] = tool
	}
	args := mcpArguments(t, site)
	for _, a := range report.Catalog {
		name := mcpserver.ToolName(a)
		tool := byName[name]
		if tool == nil {
			t.Fatalf("no tool %s for %s", name, a.Path)
		}
		if !strings.Contains(tool.Description, fmt.Sprintf("%d credits", a.Cost)) {
			t.Errorf("%s: description does not state the cost: %s", name, tool.Description)
		}
		schema := resolveSchema(t, name, tool.InputSchema)
		// The schema holds exactly the request's fields (and idempotency_key).
		want := map[string]bool{"idempotency_key": true, "callback_url": true}
		if err := schema.Validate(map[string]any{"domain": "example.com", "no_such_field": 1}); err == nil {
			t.Errorf("%s: schema accepts an unknown field", name)
		}
		if err := schema.Validate(map[string]any{}); err == nil || !strings.Contains(err.Error(), "domain") {
			t.Errorf("%s: schema accepts arguments without domain: %v", name, err)
		}
		if args[a.Kind] == nil {
			t.Fatalf("no test arguments for %s", a.Kind)
		}
		if err := schema.Validate(jsonRoundTrip(t, args[a.Kind])); err != nil {
			t.Errorf("%s: schema refuses the test's arguments: %v", name, err)
		}
		for k := range want {
			if _, ok := schemaProps(t, tool.InputSchema)[k]; !ok {
				t.Errorf("%s: schema lacks %s", name, k)
			}
		}
	}
	for _, name := range []string{"get_usage", "get_job", "estimate_cost"} {
		if byName[name] == nil {
			t.Fatalf("no tool %s", name)
		}
		resolveSchema(t, name, byName[name].InputSchema)
	}

	// Every analysis, charged as its HTTP call and recorded as a job.
	balance := s.balanceOf(t, key)
	var researchJob string
	for _, a := range report.Catalog {
		r := callTool(t, cs, mcpserver.ToolName(a), args[a.Kind])
		cost := a.Cost
		if a.ItemBlock > 0 { // a plan: charged for the recommendations delivered
			cost = a.ItemCost * blocksOf(len(structured(t, r)["data"].(map[string]any)["recommendations"].([]any)), a.ItemBlock)
		}
		m := expectOK(t, string(a.Kind), r, cost)
		balance -= cost
		if got := m["meta"].(map[string]any)["credits_remaining"]; got != float64(balance) {
			t.Errorf("%s: credits_remaining %v, want %d", a.Kind, got, balance)
		}
		if a.Kind == report.KindResearch {
			researchJob = m["meta"].(map[string]any)["job_id"].(string)
			if m["meta"].(map[string]any)["data_source"] != "imported" {
				t.Errorf("research data source %v, want imported", m["meta"])
			}
		}
	}
	if b := s.balanceOf(t, key); b != balance {
		t.Fatalf("balance %d, want %d", b, balance)
	}
	// The calls are the account's jobs, as HTTP calls are.
	jobs := do(t, "GET", s.URL+"/v1/jobs", key, nil)
	if list, _ := jobs.data()["jobs"].([]any); len(list) != len(report.Catalog) {
		t.Fatalf("jobs after the tool calls: %s", jobs.Raw)
	}

	usage := callTool(t, cs, "get_usage", nil)
	u := structured(t, usage)["data"].(map[string]any)
	if usage.IsError || u["credits_remaining"] != float64(balance) {
		t.Fatalf("usage: %s", resultText(usage))
	}
	// Usage lists the tool calls as the endpoints they called.
	called := map[string]bool{}
	for _, c := range u["recent_calls"].([]any) {
		called[c.(map[string]any)["endpoint"].(string)] = true
	}
	for _, a := range report.Catalog {
		if !called[a.Path] {
			t.Errorf("usage's recent calls %v lack %s", u["recent_calls"], a.Path)
		}
	}
	job := callTool(t, cs, "get_job", map[string]any{"job_id": researchJob})
	expectOK(t, "get_job", job, 5)
	expectToolError(t, "unknown job", callTool(t, cs, "get_job", map[string]any{"job_id": uuid.NewString()}), "NOT_FOUND")

	est := callTool(t, cs, "estimate_cost", map[string]any{"tool": "content_audit", "arguments": map[string]any{"domain": site, "render": "none"}})
	if d := structured(t, est)["data"].(map[string]any); est.IsError || d["credits_cost"] != float64(15) || d["balance_after"] != float64(balance-15) {
		t.Fatalf("estimate: %s", resultText(est))
	}
	expectToolError(t, "estimate invalid", callTool(t, cs, "estimate_cost", map[string]any{"tool": "content_audit",
		"arguments": map[string]any{"domain": site, "max_pages": 501}}), "VALIDATION_ERROR", "max_pages")
	expectToolError(t, "estimate of no tool", callTool(t, cs, "estimate_cost", map[string]any{"tool": "nothing", "arguments": map[string]any{}}), "VALIDATION_ERROR")
	if b := s.balanceOf(t, key); b != balance {
		t.Fatalf("balance %d after free tools, want %d", b, balance)
	}

	// Prompts fill their tool calls.
	prompts, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(prompts.Prompts) != 3 {
		t.Fatalf("prompts %v %v", prompts, err)
	}
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "competitor_gap_review",
		Arguments: map[string]string{"domain": "shop.example", "competitors": "a.example, b.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := p.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, `keywords_gaps with {"competitors":["a.example","b.example"],"domain":"shop.example"}`) {
		t.Fatalf("gap review prompt: %s", text)
	}
}

func resolveSchema(t *testing.T, name string, s any) *jsonschema.Resolved {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("%s: input schema %s: %v", name, raw, err)
	}
	if schema.Type != "object" {
		t.Fatalf("%s: schema type %q", name, schema.Type)
	}
	r, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: not valid JSON Schema: %v", name, err)
	}
	return r
}

func schemaProps(t *testing.T, s any) map[string]any {
	m := jsonRoundTrip(t, s)
	p, _ := m["properties"].(map[string]any)
	return p
}

func jsonRoundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(v)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Refusals are tool errors with the API's code and message, never protocol failures, and
// never charge: validation naming the field, out of credits, NO_DATA with its advice, the
// rate limit with its wait.
func TestMCPToolErrors(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	cs := mcpClient(t, s.URL, key, nil)

	expectToolError(t, "no domain", callTool(t, cs, "content_audit", map[string]any{"max_pages": 5}), "VALIDATION_ERROR", "domain")
	expectToolError(t, "bad country", callTool(t, cs, "keywords_research", map[string]any{"domain": "example.com", "country": "zz"}), "VALIDATION_ERROR", "country")
	expectToolError(t, "unknown field", callTool(t, cs, "keywords_research", map[string]any{"domain": "example.com", "colour": "red"}), "VALIDATION_ERROR", "colour")
	expectToolError(t, "bad key type", callTool(t, cs, "keywords_research", map[string]any{"domain": "example.com", "idempotency_key": 5}), "VALIDATION_ERROR", "idempotency_key")
	expectToolError(t, "no data", callTool(t, cs, "keywords_research", map[string]any{"domain": "honesty-shop.example",
		"topic": "xqzvw plorf", "country": importedCountry}), "NO_DATA", `"xqzvw plorf"`, "honesty espresso grinder", "Nothing was charged")
	expectBalance(t, s, key, 50, map[string]int{"refunded": 1})

	// Out of credits: the balance stays.
	acc := accountID(t, s.testServer, key)
	res, _ := s.Ledger.Reserve(context.Background(), acc, 48, "/test")
	_, _ = s.Ledger.Settle(context.Background(), res)
	expectToolError(t, "no credits", callTool(t, cs, "keywords_research", map[string]any{"domain": "example.com", "topic": "coffee"}), "INSUFFICIENT_CREDITS")
	expectToolError(t, "no credits, estimate", callTool(t, cs, "estimate_cost", map[string]any{"tool": "content_map",
		"arguments": map[string]any{"domain": "example.com"}}), "INSUFFICIENT_CREDITS")
	if b := s.balanceOf(t, key); b != 2 {
		t.Fatalf("balance %d, want 2", b)
	}

	// The free plan's 10 calls a minute: tool calls count (each is an API call), the
	// session's other messages do not. The eleventh is refused with the wait.
	limited := register(t, s.testServer)
	lc := mcpClient(t, s.URL, limited, nil)
	for i := 0; i < 10; i++ {
		if _, err := lc.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if r := callTool(t, lc, "get_usage", nil); r.IsError {
			t.Fatalf("call %d within the limit: %s", i+1, resultText(r))
		}
	}
	e := expectToolError(t, "over the limit", callTool(t, lc, "keywords_research", map[string]any{"domain": "example.com", "topic": "coffee"}), "RATE_LIMIT_EXCEEDED")
	if n, _ := e["retry_after"].(float64); n <= 0 {
		t.Fatalf("rate limit error without its wait: %v", e)
	}
	if b := s.balanceOf(t, limited); b != 50 {
		t.Fatalf("balance %d after a refused call, want 50", b)
	}
}

// slowSite serves a one-page site whose home page answers once release is closed; started
// is closed when the crawler first asks for it.
func slowSite(t *testing.T) (domain string, started, release chan struct{}) {
	t.Helper()
	started, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		once.Do(func() { close(started) })
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `<html><head><title>Slow</title></head><body><h1>Slow</h1><p>Coffee.</p></body></html>`)
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "127.0.0.1:" + port, started, release
}

// A slow audit reports progress while it runs, over the event stream of its call, and
// returns its result when done.
func TestMCPProgressDuringSlowAudit(t *testing.T) {
	s := startStack(t, stackConfig{configure: func(d *httpapi.Deps) { d.MCPProgressInterval = 20 * time.Millisecond }})
	key := register(t, s.testServer)
	notes := make(chan *mcp.ProgressNotificationParams, 100)
	cs := mcpClient(t, s.URL, key, func(p *mcp.ProgressNotificationParams) {
		select {
		case notes <- p:
		default:
		}
	})
	// After the client: the site's cleanup, which releases it, runs before the session's.
	domain, started, release := slowSite(t)
	type outcome struct {
		r   *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "content_audit",
			Arguments: map[string]any{"domain": domain, "max_pages": 1}, Meta: mcp.Meta{"progressToken": "audit-1"}})
		done <- outcome{r, err}
	}()
	<-started // the crawl is under way and held
	var last float64
	for i := 0; i < 3; i++ { // three notifications arrive while the page is held
		select {
		case p := <-notes:
			if p.ProgressToken != "audit-1" || p.Progress < last || p.Message == "" || p.Total != 20 {
				t.Fatalf("progress %+v after %v", p, last)
			}
			last = p.Progress
		case o := <-done:
			t.Fatalf("the call returned while its site was held: %+v %v", o.r, o.err)
		case <-time.After(30 * time.Second): // a bound on failure, not a wait for success
			t.Fatalf("%d progress notifications while the site was held, want 3: are they streamed?", i)
		}
	}
	close(release)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	expectOK(t, "slow audit", o.r, 15)
}

// An analysis still running at the sync timeout returns its job id, not an error; get_job
// returns the result once it is done.
func TestMCPPastSyncTimeoutReturnsJob(t *testing.T) {
	s := startStack(t, stackConfig{sync: 100 * time.Millisecond})
	key := register(t, s.testServer)
	cs := mcpClient(t, s.URL, key, nil)
	domain, _, release := slowSite(t)
	r := callTool(t, cs, "content_audit", map[string]any{"domain": domain, "max_pages": 1})
	if r.IsError {
		t.Fatalf("pending audit: %s", resultText(r))
	}
	d := structured(t, r)["data"].(map[string]any)
	id, _ := d["job_id"].(string)
	if id == "" || !strings.Contains(resultText(r), "get_job") {
		t.Fatalf("pending audit: %v %s", d, resultText(r))
	}
	pending := callTool(t, cs, "get_job", map[string]any{"job_id": id})
	if pending.IsError || structured(t, pending)["data"].(map[string]any)["job_id"] != id {
		t.Fatalf("get_job while running: %s", resultText(pending))
	}
	close(release)
	if _, err := s.Jobs.Wait(context.Background(), accountID(t, s.testServer, key), uuid.MustParse(id), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	expectOK(t, "get_job when done", callTool(t, cs, "get_job", map[string]any{"job_id": id}), 15)
}

// Two sessions of one key run side by side; a retry with the same idempotency key charges
// once; a key revoked mid-session is refused on its next message.
func TestMCPSessionsIdempotencyAndRevocation(t *testing.T) {
	s := startStack(t, stackConfig{})
	key := registerBusy(t, s.testServer)
	grantCredits(t, s, key, 100)
	doms := sampleDomains(t)
	a, b := mcpClient(t, s.URL, key, nil), mcpClient(t, s.URL, key, nil)
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("session ids %q and %q", a.ID(), b.ID())
	}
	start := s.balanceOf(t, key)
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 4)
	for i := range results {
		cs := a
		if i%2 == 1 {
			cs = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keywords_research",
				Arguments: map[string]any{"domain": doms[i%3], "topic": "coffee", "limit": 5}})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = r
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r != nil {
			expectOK(t, fmt.Sprintf("concurrent call %d", i), r, 5)
		}
	}
	if got := s.balanceOf(t, key); got != start-20 {
		t.Fatalf("balance %d after 4 calls, want %d", got, start-20)
	}

	// Retried with the same idempotency key, from either session: one job, one charge.
	args := map[string]any{"domain": doms[0], "topic": "espresso", "idempotency_key": "mcp-retry-" + uuid.NewString()}
	first := expectOK(t, "keyed", callTool(t, a, "keywords_research", args), 5)
	again := expectOK(t, "retry", callTool(t, b, "keywords_research", args), 5)
	if first["meta"].(map[string]any)["job_id"] != again["meta"].(map[string]any)["job_id"] {
		t.Fatalf("retry ran job %v, first %v", again["meta"], first["meta"])
	}
	if got := s.balanceOf(t, key); got != start-25 {
		t.Fatalf("balance %d after a retried call, want %d (charged once)", got, start-25)
	}

	// A second key of the account, revoked while its session is open.
	nk := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "agent"})
	other, otherID := nk.data()["api_key"].(string), nk.data()["id"].(string)
	cs := mcpClient(t, s.URL, other, nil)
	if r := callTool(t, cs, "get_usage", nil); r.IsError {
		t.Fatalf("usage before revocation: %s", resultText(r))
	}
	if r := do(t, "DELETE", s.URL+"/v1/keys/"+otherID, key, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_usage"}); err == nil {
		t.Fatal("a revoked key's session still calls tools")
	}
	// Nor can another key take over a session: it is bound to the key that opened it.
	third := do(t, "POST", s.URL+"/v1/keys", key, map[string]any{"name": "intruder"}).data()["api_key"].(string)
	req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+third)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", a.ID())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("another key on the session: %d, want 403", res.StatusCode)
	}
}

// The endpoint refuses a request without a valid key (403 with a JSON-RPC error naming the
// code, which MCP clients show, where a 401 would start their OAuth flow) and a browser
// origin other than the API's own (DNS rebinding).
func TestMCPEndpointAuthAndOrigin(t *testing.T) {
	s := startStack(t, stackConfig{noWorker: true, configure: func(d *httpapi.Deps) {
		d.MCPAllowedOrigins = []string{"https://agent.example"}
	}})
	key := register(t, s.testServer)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(auth, origin string) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	for _, c := range []struct{ key, code string }{{"", "MISSING_AUTH_HEADER"}, {"ap_nope", "INVALID_API_KEY"}} {
		st, body, h := post(c.key, "")
		var rpc struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					Code string `json:"code"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); err != nil || st != 403 || h.Get("WWW-Authenticate") != "" ||
			rpc.JSONRPC != "2.0" || rpc.Error.Code != -32001 || rpc.Error.Data.Code != c.code || !strings.HasPrefix(rpc.Error.Message, c.code+": ") {
			t.Fatalf("key %q: %d %s %v", c.key, st, body, h)
		}
	}
	for _, origin := range []string{"http://evil.example", "http://127.0.0.1.evil.example:8080", "null"} {
		if st, body, _ := post(key, origin); st != 403 || !strings.Contains(body, "FORBIDDEN") {
			t.Fatalf("origin %s: %d %s", origin, st, body)
		}
	}
	for _, origin := range []string{"", "http://api.test", "https://agent.example"} {
		if st, body, _ := post(key, origin); st != 200 || !strings.Contains(body, `"serverInfo"`) {
			t.Fatalf("origin %q: %d %s", origin, st, body)
		}
	}
	if b := s.balanceOf(t, key); b != 50 {
		t.Fatalf("balance %d", b)
	}
}

// ctl mcp's server: MCP over stdio, every call forwarded to the running API with the key.
func TestMCPOverStdio(t *testing.T) {
	importData(t)
	s := startStack(t, stackConfig{})
	key := register(t, s.testServer)
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.ServeStdio(ctx, serverR, serverW, s.URL, key, mcpserver.Options{SyncTimeout: 20 * time.Second})
	}()
	t.Cleanup(func() {
		cancel()
		_ = clientW.Close()
		if err := <-served; err != nil {
			t.Errorf("stdio server: %v", err)
		}
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != len(report.Catalog)+3 {
		t.Fatalf("tools over stdio: %v %v", tools, err)
	}
	expectOK(t, "research over stdio", callTool(t, cs, "keywords_research", map[string]any{"domain": "honesty-shop.example",
		"topic": "honesty espresso", "country": importedCountry}), 5)
	expectToolError(t, "validation over stdio", callTool(t, cs, "keywords_gaps", map[string]any{"domain": "honesty-shop.example"}), "VALIDATION_ERROR", "competitors")
	if r := callTool(t, cs, "get_usage", nil); r.IsError || structured(t, r)["data"].(map[string]any)["credits_remaining"] != float64(45) {
		t.Fatalf("usage over stdio: %s", resultText(r))
	}
	if b := s.balanceOf(t, key); b != 45 {
		t.Fatalf("balance %d, want 45", b)
	}
}

// BenchmarkMCPToolCallOverhead measures what a tool call adds to the same HTTP call:
// keywords_research over Streamable HTTP (the SDK's client) against POST
// /v1/keywords/research (net/http, keep-alive), both through a real asynq worker with a job
// that does no work of its own, alternated one call at a time. It reports each side's p50
// and p99 and the overhead: the difference of the p50s, and the p50 of the paired
// differences.
func BenchmarkMCPToolCallOverhead(b *testing.B) {
	s := startStack(b, stackConfig{runner: trivialRunner{}})
	key := register(b, s.testServer)
	acc := accountID(b, s.testServer, key)
	if err := s.Accounts.SetPlan(context.Background(), acc, "enterprise", 1_000_000_000, 0); err != nil {
		b.Fatal(err)
	}
	now := s.Clock.Now()
	if _, err := s.Ledger.Grant(context.Background(), credits.Grant{AccountID: acc, Amount: 100_000_000, IssuedAt: now,
		ExpiresAt: now.Add(24 * time.Hour), Source: credits.SourceOperator, SourceRef: "bench"}); err != nil {
		b.Fatal(err)
	}
	cs := mcpClient(b, s.URL, key, nil)
	args := map[string]any{"domain": "example.com", "topic": "coffee"}
	body := []byte(`{"domain":"example.com","topic":"coffee"}`)
	client := &http.Client{}
	httpCall := func() time.Duration {
		req, _ := http.NewRequest("POST", s.URL+"/v1/keywords/research", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		d := time.Since(start)
		if res.StatusCode != 200 {
			b.Fatalf("http call: %d", res.StatusCode)
		}
		return d
	}
	mcpCall := func() time.Duration {
		start := time.Now()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keywords_research", Arguments: args})
		d := time.Since(start)
		if err != nil || r.IsError {
			b.Fatalf("tool call: %v %+v", err, r)
		}
		return d
	}
	for range 20 { // warm both paths
		httpCall()
		mcpCall()
	}
	n := max(b.N, 500)
	hs, ms, diff := make([]time.Duration, 0, n), make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	b.ResetTimer()
	for range n {
		h, m := httpCall(), mcpCall()
		hs, ms, diff = append(hs, h), append(ms, m), append(diff, m-h)
	}
	b.StopTimer()
	ms50 := func(d []time.Duration, q int) float64 {
		slices.Sort(d)
		return float64(d[len(d)*q/100].Microseconds()) / 1000
	}
	hp50, mp50 := ms50(hs, 50), ms50(ms, 50)
	b.ReportMetric(hp50, "http-p50-ms")
	b.ReportMetric(ms50(hs, 99), "http-p99-ms")
	b.ReportMetric(mp50, "mcp-p50-ms")
	b.ReportMetric(ms50(ms, 99), "mcp-p99-ms")
	b.ReportMetric(mp50-hp50, "overhead-p50-ms")
	b.ReportMetric(ms50(diff, 50), "paired-overhead-p50-ms")
}
